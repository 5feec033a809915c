//! Names as the terminal UI lists them work on the command line: a rubric file of the
//! workspace's `rubrics/` and a dataset file of its `datasets/` by name (registered or not),
//! a saved rubric version as `name@version`, and an unknown name says what was tried.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Output;

use support::checked::rubricate;

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    rubricate::store::workspace::create_demo(dir.path()).unwrap();
    dir
}

#[test]
fn a_rubric_and_a_dataset_of_the_workspace_by_name() {
    let dir = demo();
    let d = dir.path();
    // From a folder inside the workspace, too.
    let inside = d.join("rubrics");
    let out = rubricate(&inside, &["validate", "support-answer-judged"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        said(&out).contains("support-answer-judged"),
        "{}",
        said(&out)
    );
    let out = rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "support-answer",
            "datasets/support-answers.jsonl",
            "--format",
            "csv",
        ],
    );
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", said(&out));
    // The dataset by its name in datasets/, unregistered: listed, and found.
    let out = rubricate(d, &["datasets", "list"]);
    assert!(said(&out).contains("support-answers"), "{}", said(&out));
    assert!(said(&out).contains("in datasets/"), "{}", said(&out));
    let out = rubricate(
        d,
        &[
            "labels",
            "next",
            "--dataset",
            "support-answers",
            "--annotator",
            "alice",
        ],
    );
    assert!(out.status.success(), "{}", said(&out));
}

#[test]
fn a_saved_version_by_name_at_version_and_an_unknown_name() {
    let dir = demo();
    let d = dir.path();
    let out = rubricate(
        d,
        &[
            "rubrics",
            "add",
            "rubrics/support-answer.yaml",
            "--note",
            "first",
        ],
    );
    assert!(out.status.success(), "{}", said(&out));
    let out = rubricate(d, &["lint", "support-answer@1.0.0"]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", said(&out));
    let out = rubricate(d, &["lint", "support-answer@9.0.0"]);
    assert!(!out.status.success());
    assert!(said(&out).contains("9.0.0"), "{}", said(&out));
    let out = rubricate(d, &["validate", "no-such-rubric"]);
    assert!(!out.status.success());
    let text = said(&out);
    assert!(text.contains("no rubric 'no-such-rubric'"), "{text}");
    assert!(text.contains("rubrics"), "{text}");
}
