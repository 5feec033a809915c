//! Completions and man pages from the same clap definitions as `--help`: bash loads the
//! script and completes a subcommand and a flag; every shell gets a script; the man pages
//! name every subcommand and their flags.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn rubricate(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash's completion offers for `line` (the words so far), with the script loaded.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let cword = words.len() - 1;
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = words.join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT={}; \
         _rubricate rubricate '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        line.len(),
        words[cword],
        words[cword.saturating_sub(1)],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_loads_the_completions_and_completes_a_subcommand_and_a_flag() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rubricate.bash");
    std::fs::write(&script, rubricate(&["completions", "bash"])).unwrap();
    assert_eq!(bash_completes(&script, &["rubricate", "gra"]), ["grade"]);
    let flags = bash_completes(&script, &["rubricate", "grade", "--rub"]);
    assert_eq!(flags, ["--rubric"]);
    let nested = bash_completes(&script, &["rubricate", "labels", "ne"]);
    assert_eq!(nested, ["next"]);
}

#[test]
fn every_shell_gets_a_script() {
    for (shell, mark) in [
        ("bash", "complete -F _rubricate"),
        ("zsh", "#compdef rubricate"),
        ("fish", "complete -c rubricate"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[rubricate]"),
    ] {
        let script = rubricate(&["completions", shell]);
        assert!(
            script.contains(mark),
            "{shell}: {}",
            &script[..script.len().min(300)]
        );
        assert!(script.contains("calibrate"), "{shell}");
    }
}

#[test]
fn the_man_pages_name_every_subcommand_and_their_flags() {
    let page = rubricate(&["man"]);
    assert!(page.contains(".TH rubricate 1"), "{page}");
    for sub in ["grade", "align", "labels", "completions", "man"] {
        assert!(page.contains(sub), "{sub} missing from rubricate(1)");
    }
    let dir = tempfile::tempdir().unwrap();
    rubricate(&["man", "--dir", dir.path().to_str().unwrap()]);
    let grade = std::fs::read_to_string(dir.path().join("rubricate-grade.1")).unwrap();
    assert!(grade.contains(".TH rubricate-grade 1"), "{grade}");
    assert!(grade.contains("\\-\\-rubric"), "{grade}");
    assert!(dir.path().join("rubricate-labels-next.1").is_file());
}

/// A new workspace points editors at both schemas: rubricate.yaml's first line names
/// `.rubricate/config.schema.json`, written beside the rubric schema; `schema --config`
/// prints the same.
#[test]
fn init_points_editors_at_both_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir.path())
        .args(["init"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = std::fs::read_to_string(dir.path().join("rubricate.yaml")).unwrap();
    assert!(config.starts_with("# yaml-language-server: $schema=.rubricate/config.schema.json\n"));
    let written =
        std::fs::read_to_string(dir.path().join(".rubricate/config.schema.json")).unwrap();
    assert_eq!(
        written.trim_end(),
        rubricate(&["schema", "--config"]).trim_end()
    );
    let rubric = std::fs::read_to_string(dir.path().join(".rubricate/rubric.schema.json")).unwrap();
    assert_eq!(rubric.trim_end(), rubricate(&["schema"]).trim_end());
}
