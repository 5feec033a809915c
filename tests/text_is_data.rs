//! Text from files reaches the terminal as data: escape sequences and other control
//! characters in item ids, submissions, rubric text and messages are shown escaped in
//! tables, text output and errors — never sent raw — while JSON keeps them (escaped as JSON
//! does). The real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn rubricate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.join(".user-config"))
        .args(args)
        .output()
        .unwrap()
}

/// An OSC that retitles the window, a clear-screen, a bell, a carriage return.
const HOSTILE: &str = "id\u{1b}]0;pwned\u{7}\u{1b}[2J\rX";

#[test]
fn escape_sequences_are_shown_escaped_in_tables_text_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let item = serde_json::json!({"id": HOSTILE, "submission": format!("see {HOSTILE}")});
    std::fs::write(root.join("d.jsonl"), format!("{item}\n")).unwrap();
    std::fs::write(
        root.join("r.yaml"),
        format!(
            "id: r\nname: \"R {}\"\ncriteria:\n  - id: x\n    requirement: \"Has {}\"\n    method: {{ check: regex, args: {{ pattern: see }} }}\n",
            "\\e[31mred", "\\e]0;t\\a"
        ),
    )
    .unwrap();
    let outputs = [
        rubricate(
            root,
            &[
                "grade", "--rubric", "r.yaml", "d.jsonl", "--format", "table",
            ],
        ),
        rubricate(root, &["inspect", "r.yaml"]),
        rubricate(root, &["inspect", "d.jsonl"]),
        rubricate(root, &["lint", "r.yaml"]),
    ];
    for o in &outputs {
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        assert!(
            !text.contains('\u{1b}'),
            "a raw escape reached the terminal:\n{text:?}"
        );
        assert!(!text.contains('\u{7}') && !text.contains('\r'), "{text:?}");
    }
    let table = String::from_utf8_lossy(&outputs[0].stdout);
    assert!(table.contains("id\\e]0;pwned"), "{table}");
    // JSON keeps the id exactly (JSON escapes it its own way).
    let o = rubricate(
        root,
        &[
            "grade", "--rubric", "r.yaml", "d.jsonl", "--format", "jsonl",
        ],
    );
    let row: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(row["item"], HOSTILE);
    // An error naming a hostile path: escaped too.
    let o = rubricate(
        root,
        &["grade", "--rubric", "no\u{1b}[2Jsuch.yaml", "d.jsonl"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains('\u{1b}') && err.contains("no\\e[2Jsuch.yaml"),
        "{err:?}"
    );
}
