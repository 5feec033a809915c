//! Artifacts through the real binary: create from a type defined in rubricate.yaml, submit
//! (every required rubric evaluated, from the registry), approve or send back for revision,
//! revise and resubmit, manual review decisions, and refused transitions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn rubricate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn show(dir: &Path, id: &str) -> Value {
    serde_json::from_str(&stdout(&rubricate(
        dir,
        &["artifacts", "show", id, "--json"],
    )))
    .unwrap()
}

#[test]
fn the_review_flow_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("rubricate.yaml"),
        "artifact_types:\n  quiz:\n    rubrics: [quiz-quality]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("quiz.yaml"),
        "id: quiz-quality\nname: Quiz quality\nversion: 1.0.0\ncriteria:\n  - id: count\n    requirement: Has at least five questions\n    method: { check: json_path, args: { path: \"$.questions\", min_length: 5 } }\n",
    )
    .unwrap();
    assert!(
        rubricate(d, &["rubrics", "add", "quiz.yaml"])
            .status
            .success()
    );
    std::fs::write(d.join("short.json"), r#"{"questions": ["Q1", "Q2"]}"#).unwrap();
    std::fs::write(
        d.join("long.json"),
        r#"{"questions": ["Q1", "Q2", "Q3", "Q4", "Q5"]}"#,
    )
    .unwrap();

    let out = rubricate(
        d,
        &[
            "artifacts",
            "create",
            "--type",
            "quiz",
            "--name",
            "Biology",
            "--content",
            "short.json",
            "--source",
            "bot:quizbot",
            "--provenance-kind",
            "generator",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = stdout(&out).split_whitespace().next().unwrap().to_owned();
    assert!(stdout(&out).contains("rubrics: quiz-quality"));

    // Too few questions: needs revision (exit 1), the evaluation kept with the artifact.
    let out = rubricate(d, &["artifacts", "submit", &id]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = show(d, &id);
    assert_eq!(a["status"], "needs_revision");
    assert_eq!(a["reviews"][0]["rubric_id"], "quiz-quality");
    assert_eq!(a["reviews"][0]["passed"], false);
    assert_eq!(a["provenance"]["source"], "bot:quizbot");
    let steps: Vec<&str> = a["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        ["draft", "pending_review", "in_review", "needs_revision"]
    );

    // Revised and resubmitted: approved.
    assert!(
        rubricate(
            d,
            &[
                "artifacts",
                "revise",
                &id,
                "--content",
                "long.json",
                "--note",
                "more"
            ]
        )
        .status
        .success()
    );
    let out = rubricate(d, &["artifacts", "submit", &id]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(show(d, &id)["status"], "approved");
    assert_eq!(show(d, &id)["reviews"].as_array().unwrap().len(), 2);

    // An approved artifact cannot be rejected; a reviewer can decide on one in review.
    let out = rubricate(d, &["artifacts", "review", &id, "reject"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is approved; it cannot become rejected")
    );
    let out = rubricate(
        d,
        &[
            "artifacts",
            "create",
            "--type",
            "essay",
            "--name",
            "E",
            "--content",
            "long.json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a type without rubrics is refused"
    );
    let out = rubricate(
        d,
        &[
            "artifacts",
            "create",
            "--type",
            "essay",
            "--name",
            "E",
            "--content",
            "long.json",
            "--rubric",
            "quiz.yaml",
        ],
    );
    let other = stdout(&out).split_whitespace().next().unwrap().to_owned();
    let out = rubricate(d, &["artifacts", "review", &other, "approve"]);
    assert_eq!(out.status.code(), Some(2), "a draft is not in review");
    let listed = stdout(&rubricate(
        d,
        &["artifacts", "list", "--status", "approved"],
    ));
    assert!(listed.contains(&id) && !listed.contains(&other), "{listed}");
}
