//! The documentation generated from the code is current: the command-line reference (from
//! clap) and the keymap table (from `assets/keymap.yaml`). `UPDATE_DOCS=1` writes them
//! again (`scripts/update-docs.sh`); CI never does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/docs.rs"]
mod docs;

use docs::current;

#[test]
fn the_command_line_reference_is_current() {
    let reference = rubricate::cli::cli_reference();
    for command in [
        "## rubricate grade",
        "## rubricate labels next",
        "## rubricate completions",
    ] {
        assert!(reference.contains(command), "{command}");
    }
    current("docs/cli-reference.md", None, &reference);
}

#[test]
fn the_keymap_table_is_current() {
    let table = rubricate::tui::keymap::Keymap::load(None)
        .unwrap()
        .markdown_table();
    assert!(table.contains("| label | "), "{table}");
    assert!(table.contains("`m` label MET"), "{table}");
    current(
        "docs/tui.md",
        Some(("<!-- keymap:start -->", "<!-- keymap:end -->")),
        &table,
    );
}

/// Every command's `--help` ends with examples, and grade's options are grouped under
/// headings (judge, output, limits…), not one block.
#[test]
fn every_command_has_examples_and_grade_has_headings() {
    let reference = rubricate::cli::cli_reference();
    for section in reference.split("\n## rubricate ").skip(1) {
        let name = section.lines().next().unwrap_or_default();
        if name.contains(' ') {
            continue; // a nested command: its parent's examples cover it
        }
        assert!(
            section.contains("Examples:"),
            "`rubricate {name} --help` has no examples"
        );
    }
    let grade = reference
        .split("\n## rubricate grade\n")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for heading in [
        "Rubric:",
        "Output:",
        "Gates:",
        "Limits:",
        "Judge:",
        "Saving:",
        "Subset:",
        "Baseline:",
    ] {
        assert!(
            grade.contains(&format!("\n{heading}\n")),
            "grade --help lacks {heading}"
        );
    }
}

/// docs/cli.md's commands in brief are written by hand: every command it names exists, and
/// every flag it gives a command is one that command takes (`--help` says so), so the brief
/// list cannot drift from the reference.
#[test]
fn the_commands_in_brief_name_only_real_commands_and_flags() {
    let reference = rubricate::cli::cli_reference();
    let sections: Vec<(String, String)> = reference
        .split("\n## ")
        .skip(1)
        .map(|s| {
            let (head, body) = s.split_once('\n').unwrap_or((s, ""));
            (head.to_owned(), body.to_owned())
        })
        .collect();
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    let block = page.split("```").nth(1).expect("the commands in brief");
    let mut checked = 0;
    for line in block.lines().filter(|l| l.starts_with("rubricate ")) {
        // The command: the words after `rubricate` up to the first that is not a subcommand.
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut name = String::from("rubricate");
        for w in &words[1..] {
            let longer = format!("{name} {w}");
            if sections.iter().any(|(h, _)| *h == longer) {
                name = longer;
            } else {
                break;
            }
        }
        assert_ne!(name, "rubricate", "{line}: names no command");
        // `runs list | show ID …` lists several subcommands: check against their parent.
        if line.contains(" | ") && name.matches(' ').count() > 1 {
            name.truncate(name.rfind(' ').unwrap_or(name.len()));
        }
        // Its help and its subcommands' (a line may list several: `runs list | show …`).
        let help: String = sections
            .iter()
            .filter(|(h, _)| *h == name || h.starts_with(&format!("{name} ")))
            .map(|(_, b)| b.as_str())
            .collect();
        for flag in line
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            assert!(
                help.contains(flag) || flag == "--workspace",
                "docs/cli.md: `{line}` gives {name} a flag it does not take: {flag}"
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} flags checked");
}

/// Every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ leads to a file
/// that exists (the reference moved into docs/; a link left behind would lead nowhere).
#[test]
fn relative_links_lead_to_files_that_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![
        root.join("README.md"),
        root.join("CONTRIBUTING.md"),
        root.join("CHANGELOG.md"),
    ];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut checked = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let base = page.parent().unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.starts_with('#') || target.contains(' ') {
                continue;
            }
            let file = target.split('#').next().unwrap_or(target);
            assert!(
                base.join(file).exists(),
                "{}: a link to {target}, which does not exist",
                page.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked} links checked");
}
