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

/// The stderr of a command that must exit `code`.
fn refused(dir: &Path, args: &[&str], code: i32) -> String {
    let out = rubricate(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    err
}

#[test]
fn a_needs_revision_artifact_is_submitted_again_only_once_its_content_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    std::fs::write(
        d.join("steps.yaml"),
        "id: steps\nname: Steps\nversion: 1.0.0\ncriteria:\n  - id: steps\n    requirement: Gives steps\n    method: { check: contains, args: { text: step } }\n",
    )
    .unwrap();
    std::fs::write(d.join("reply.txt"), "Restart it.").unwrap();
    std::fs::write(d.join("same.txt"), "Restart it.").unwrap();
    std::fs::write(d.join("better.txt"), "First step: restart it.").unwrap();
    let out = rubricate(
        d,
        &[
            "artifacts",
            "create",
            "--type",
            "reply",
            "--name",
            "R",
            "--content",
            "reply.txt",
            "--rubric",
            "steps.yaml",
        ],
    );
    assert!(out.status.success());
    let id = stdout(&out).split_whitespace().next().unwrap().to_owned();
    refused(d, &["artifacts", "submit", &id], 1);
    assert_eq!(show(d, &id)["status"], "needs_revision");

    // Sent again as it is: refused, saying what to do, and nothing moves.
    let err = refused(d, &["artifacts", "submit", &id], 2);
    assert!(
        err.contains(&format!("artifact {id} needs revision: its review of "))
            && err.contains("asked for changes (\"a required rubric failed\")")
            && err.contains(&format!(
                "revise it first (`rubricate artifacts revise {id} --content FILE`, or `e` in the Review pane), then submit it"
            )),
        "{err}"
    );
    assert_eq!(show(d, &id)["status"], "needs_revision");
    assert_eq!(show(d, &id)["history"].as_array().unwrap().len(), 4);

    // A "revision" with the same content is refused too.
    let err = refused(d, &["artifacts", "revise", &id, "--content", "same.txt"], 2);
    assert!(
        err.contains("the new content is the content its review asked changes to"),
        "{err}"
    );
    assert_eq!(show(d, &id)["status"], "needs_revision");

    // A request for changes by hand, on content that was then not changed, holds as well.
    assert!(
        rubricate(d, &["artifacts", "revise", &id, "--content", "better.txt"])
            .status
            .success()
    );
    let file = d.join("artifacts").join(format!("{id}.json"));
    let mut a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(a["status"], "draft");
    // Hand-edited back to the reviewed content (as a script or a merge might).
    a["content"] = "Restart it.".into();
    std::fs::write(&file, a.to_string()).unwrap();
    let err = refused(d, &["artifacts", "submit", &id], 2);
    assert!(
        err.contains(&format!(
            "artifact {id}'s content is unchanged since its review of "
        )),
        "{err}"
    );
    a["content"] = "First step: restart it.".into();
    std::fs::write(&file, a.to_string()).unwrap();

    // Revised: submitted and approved.
    refused(d, &["artifacts", "submit", &id], 0);
    let a = show(d, &id);
    assert_eq!(a["status"], "approved");
    assert_eq!(a["reviews"].as_array().unwrap().len(), 2);
}
