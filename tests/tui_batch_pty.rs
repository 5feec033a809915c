//! The real binary in tmux at 80×24: a batch run from the Grade pane (`b`, then enter)
//! against a loopback server speaking `OpenAI`'s batch API — the set-up shows the batch
//! state as the UI asks about it, and the run finishes with every cell in its journal.
//! Skipped (with a note) where tmux is missing, except under `CI=true`.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
#[path = "support/tmux.rs"]
mod tmux;

use serde_json::json;
use support::batch::{BatchServer, Outcome};
use tmux::Tmux;

#[test]
fn a_batch_run_from_the_grade_pane_is_watched_to_its_end() {
    if !Tmux::required() {
        return;
    }
    // A batch ends at its tenth status call: the UI shows it in flight first.
    let server = BatchServer::start(10, |_| {
        Outcome::Text(json!({"reason": "looks right", "verdict": "MET"}).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("rubrics")).unwrap();
    std::fs::create_dir_all(ws.join("datasets")).unwrap();
    std::fs::write(
        ws.join("rubricate.yaml"),
        "annotator: pat\njudge:\n  model: openai/judge\n  batch_poll: 0.3\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("rubrics/answer.yaml"),
        "id: answer\nname: Answer\ncriteria:\n  - { id: correct, requirement: Names the right city, weight: 2 }\n  - { id: polite, requirement: Is polite, weight: 1 }\n",
    )
    .unwrap();
    let lines: String = (0..20)
        .map(|i| {
            json!({"id": format!("a{i}"), "submission": format!("Answer {i}: Paris.")}).to_string()
                + "\n"
        })
        .collect();
    std::fs::write(ws.join("datasets/answers.jsonl"), lines).unwrap();
    let env = [
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "sk-e2e".to_owned()),
        (
            "RUBRICATE_CACHE_DIR",
            ws.join("cache").display().to_string(),
        ),
    ];
    let t = Tmux::start("batch", ws, 80, 24, &Tmux::rubricate(&env));
    t.wait_for("answers");
    t.keys(&["D", "Enter"]);
    t.wait_for("a0");
    t.keys(&["G"]);
    t.wait_for("answer.yaml");
    t.wait_for("calls    live");
    t.keys(&["b"]);
    t.wait_for("calls    provider batches");
    t.keys(&["Enter"]);
    t.wait_for("in provider batches");
    t.wait_for("40 requests");
    eprintln!("{}", t.screen());
    t.wait_for("is finished: its results are in Results");
    t.keys(&["q"]);
    t.wait_gone();

    let runs: Vec<_> = rubricate::store::runs::list_runs(&ws.join("runs"))
        .into_iter()
        .map(|m| m.unwrap())
        .collect();
    assert_eq!(runs.len(), 1);
    let m = &runs[0];
    assert!(m.finished_at.is_some());
    assert_eq!(m.batches.len(), 1);
    let journal =
        std::fs::read_to_string(ws.join("runs").join(&m.id).join("results.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 41, "20 items × 2 criteria");
    assert_eq!(server.submitted().len(), 40);
    assert!(server.submitted().values().all(|n| *n == 1));
}
