//! A workspace whose rubric is a check (MET when the submission says "yes"), so `grade
//! --save` runs through the real binary with no judge; and the binary run in it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// A workspace with `rubric.yaml` (the check) and `items.jsonl`: one item per `(id,
/// submission)`.
pub fn workspace(items: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: yes\nname: Says yes\ncriteria:\n  - { id: yes, requirement: Says yes, weight: 1, method: { check: contains, args: { text: yes } } }\n",
    )
    .unwrap();
    let mut lines = String::new();
    for (id, submission) in items {
        lines += &serde_json::json!({"id": id, "submission": submission}).to_string();
        lines.push('\n');
    }
    std::fs::write(d.join("items.jsonl"), lines).unwrap();
    dir
}

/// The binary in `dir`, without colour; a stray judge call fails at once (nothing listens).
pub fn rubricate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("OPENAI_API_KEY", "sk-checked")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap()
}

/// `grade` of the workspace's items with its rubric, saved as run `name`, in `format`.
pub fn grade_saved(dir: &Path, name: &str, format: &str) -> Output {
    rubricate(
        dir,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--name",
            name,
            "--format",
            format,
        ],
    )
}

/// Its stdout and stderr, as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The ids of the workspace's runs, sorted.
pub fn run_ids(d: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(d.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    ids.sort();
    ids
}

/// Its stdout, when it exited 0 or 1 (graded; some items failed); else a panic with both.
#[track_caller]
pub fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "exit {:?}\nstdout:\n{out}\nstderr:\n{err}",
        o.status.code()
    );
    out
}
