//! Names that would become paths outside the workspace (or no path at all) are refused at
//! every entry point before anything is written, whether typed on the command line or read
//! back from the workspace's own files; journals are never written through a symlink. The
//! real binary, in a workspace inside a sandbox folder: after each refusal nothing new
//! exists anywhere in the sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Twenty hostile names: traversal, absolute paths, separators, NUL, CR/LF, escapes,
/// hidden names, characters file systems refuse, and 300 characters.
fn hostile() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        ".",
        "..",
        "../x",
        "../../outside",
        "/abs",
        "/tmp/abs-name",
        "a/b",
        "a\\b",
        "..\\x",
        "line\nbreak",
        "carriage\rreturn",
        "esc\x1b[31mred",
        ".hidden",
        "tab\tname",
        "pipe|name",
        "star*",
        "C:evil",
        "qu\"ote",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.push("n".repeat(300));
    v
}

/// `labels set` of one MET label as `annotator` (item `a`, criterion `c`).
fn label_set(annotator: &str) -> Vec<&str> {
    vec![
        "labels",
        "set",
        "--dataset",
        "datasets/d.jsonl",
        "--annotator",
        annotator,
        "--rubric",
        "rubrics/r.yaml",
        "a",
        "c",
        "MET",
    ]
}

fn rubricate(ws: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(ws)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", ws.join(".user-config"))
        .args(args)
        .output()
        .unwrap()
}

/// Every path under `root`, for before/after comparisons.
fn tree(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A sandbox with a workspace at `sandbox/ws` holding one dataset.
fn sandbox() -> (tempfile::TempDir, PathBuf) {
    let sandbox = tempfile::tempdir().unwrap();
    let ws = sandbox.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let o = rubricate(&ws, &["init", "."]);
    assert!(o.status.success());
    std::fs::write(
        ws.join("datasets/d.jsonl"),
        "{\"id\":\"a\",\"submission\":\"x\"}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("rubrics/r.yaml"),
        "id: r\ncriteria:\n  - id: c\n    requirement: Is fine\n",
    )
    .unwrap();
    (sandbox, ws)
}

#[test]
fn every_entry_point_refuses_every_hostile_name_before_writing() {
    let (sandbox, ws) = sandbox();
    // Warm up what a first command writes (folders), so only a refusal's writes count.
    rubricate(&ws, &["datasets", "list"]);
    let before = tree(sandbox.path());
    for name in hostile() {
        let attempts: Vec<Vec<&str>> = vec![
            vec!["datasets", "add", "datasets/d.jsonl", "--name", &name],
            label_set(&name),
            vec!["runs", "show", &name],
            vec!["runs", "resume", &name],
            vec!["artifacts", "show", &name],
            vec!["rubrics", "show", &name],
        ];
        for args in attempts {
            let o = rubricate(&ws, &args);
            assert_ne!(
                o.status.code(),
                Some(0),
                "{args:?} was accepted: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            let said = String::from_utf8_lossy(&o.stderr);
            assert!(!said.contains("panicked"), "{args:?}: {said}");
            assert_eq!(tree(sandbox.path()), before, "{args:?} wrote something");
        }
    }
}

#[test]
fn names_read_back_from_the_workspace_files_are_checked_too() {
    let (_sandbox, ws) = sandbox();
    // A dataset list edited by hand (or sent by someone) with a traversal name.
    std::fs::write(
        ws.join(".rubricate/datasets.json"),
        r#"[{"name": "../../evil", "path": "datasets/d.jsonl", "hash": "x", "bytes": 1, "items": 1, "added_at": "2026-01-01T00:00:00Z"}]"#,
    )
    .unwrap();
    let o = rubricate(&ws, &["datasets", "show", "../../evil"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot name a file"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A run whose manifest names another folder is not read (nor resumed into it).
    std::fs::write(
        ws.join("rubrics/det.yaml"),
        "id: det\ncriteria:\n  - id: x\n    requirement: Has an x\n    method: { check: regex, args: { pattern: x } }\n",
    )
    .unwrap();
    let o = rubricate(
        &ws,
        &[
            "grade",
            "--rubric",
            "rubrics/det.yaml",
            "datasets/d.jsonl",
            "--save",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = std::fs::read_dir(ws.join("runs"))
        .unwrap()
        .next()
        .expect("a saved run")
        .unwrap()
        .path();
    let manifest = run.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["id"] = "../../escaped".into();
    m["finished_at"] = serde_json::Value::Null;
    std::fs::write(&manifest, m.to_string()).unwrap();
    let id = run.file_name().unwrap().to_str().unwrap().to_owned();
    for args in [
        ["runs", "resume", id.as_str()],
        ["runs", "show", id.as_str()],
    ] {
        let o = rubricate(&ws, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("is not its folder's name"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert!(!ws.parent().unwrap().join("escaped").exists());
}

#[cfg(unix)]
#[test]
fn a_label_journal_that_is_a_symlink_is_refused_and_nothing_is_written_through_it() {
    let (sandbox, ws) = sandbox();
    let outside = sandbox.path().join("outside.jsonl");
    std::fs::create_dir_all(ws.join("labels/d")).unwrap();
    // Dangling: following it would create a file outside the workspace.
    std::os::unix::fs::symlink(&outside, ws.join("labels/d/pat.jsonl")).unwrap();
    let o = rubricate(&ws, &label_set("pat"));
    assert_ne!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("symbolic link"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!outside.exists(), "nothing created through the link");
    // Pointing at an existing file: that file is not appended to either.
    std::fs::write(&outside, "untouched\n").unwrap();
    let o = rubricate(&ws, &label_set("pat"));
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "untouched\n");
}
