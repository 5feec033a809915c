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
