//! The real binary in tmux, end to end: edit a criterion (through `$EDITOR`), save it as a
//! new version, grade 20 items with it against the loopback judge in the Grade pane, and
//! find every cell in the run's journal; then change one criterion and re-grade only it.
//! Skipped (with a note) where tmux is missing, except under `CI=true`.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
#[path = "support/tmux.rs"]
mod tmux;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::{LlmServer, verdict};
use tmux::{Tmux, wait_for_condition};

/// The UI in the workspace `ws`, judging against `server` (with `env` besides).
fn ui(name: &str, ws: &Path, server: &LlmServer, size: (u16, u16), env: &[(&str, String)]) -> Tmux {
    let mut all = vec![
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "sk-e2e".to_owned()),
        (
            "RUBRICATE_CACHE_DIR",
            ws.join("cache").display().to_string(),
        ),
    ];
    all.extend(env.iter().cloned());
    Tmux::start(name, ws, size.0, size.1, &Tmux::rubricate(&all))
}

/// A workspace in `ws` with `config` as its rubricate.yaml, the two-criterion rubric
/// `rubrics/answer.yaml` and `items` answers in `datasets/answers.jsonl`.
fn answers_workspace(ws: &Path, config: &str, items: usize) {
    std::fs::create_dir_all(ws.join("rubrics")).unwrap();
    std::fs::create_dir_all(ws.join("datasets")).unwrap();
    std::fs::write(ws.join("rubricate.yaml"), config).unwrap();
    std::fs::write(
        ws.join("rubrics/answer.yaml"),
        "id: answer\nname: Answer\ncriteria:\n  - { id: correct, requirement: Names the right city, weight: 2 }\n  - { id: polite, requirement: Is polite, weight: 1 }\n",
    )
    .unwrap();
    let lines: String = (0..items)
        .map(|i| {
            json!({"id": format!("a{i}"), "submission": format!("Answer {i}: Paris.")}).to_string()
                + "\n"
        })
        .collect();
    std::fs::write(ws.join("datasets/answers.jsonl"), lines).unwrap();
}

/// Opens the answers dataset from the list the UI starts on.
fn open_answers(t: &Tmux) {
    t.wait_for("answers");
    t.keys(&["Enter"]);
    t.wait_for("a0");
}

#[test]
fn edit_save_a_version_then_grade_twenty_items_live() {
    if !Tmux::required() {
        return;
    }
    let server = LlmServer::start(Duration::from_millis(5), |_| {
        verdict("looks right", json!("MET"))
    });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("rubrics")).unwrap();
    std::fs::create_dir_all(ws.join("datasets")).unwrap();
    std::fs::write(
        ws.join("rubricate.yaml"),
        "annotator: pat\njudge:\n  model: openai/judge\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("rubrics/answer.yaml"),
        "id: answer\nname: Answer\nversion: 1.0.0\ncriteria:\n  - id: correct\n    requirement: Names the right city\n    weight: 2\n  - id: polite\n    requirement: Is polite\n    weight: 1\n",
    )
    .unwrap();
    let lines: String = (0..20)
        .map(|i| {
            json!({"id": format!("a{i}"), "submission": format!("Answer {i}: Paris.")}).to_string()
                + "\n"
        })
        .collect();
    std::fs::write(ws.join("datasets/answers.jsonl"), lines).unwrap();
    // The "editor" makes `correct` heavier and bumps the version.
    let editor = ws.join("edit.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/weight: 2/weight: 3/; s/version: 1.0.0/version: 1.1.0/' \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let t = ui(
        "e2e",
        ws,
        &server,
        (140, 40),
        &[("EDITOR", editor.display().to_string())],
    );
    t.wait_for("answers");
    // Rubrics: open the rubric, edit it in $EDITOR, save it as a new version.
    t.keys(&["B"]);
    t.wait_for("answer.yaml");
    t.keys(&["Enter"]);
    t.wait_for("correct — correct (weight 2");
    t.keys(&["C-e"]);
    t.wait_for("correct — correct (weight 3");
    t.keys(&["s", "heavier correctness", "Enter"]);
    t.wait_for("saved answer 1.1.0");
    // Grade: open the dataset, start a run with the edited rubric, watch it finish.
    t.keys(&["D", "Enter"]);
    t.wait_for("a0");
    t.keys(&["G"]);
    t.wait_for("answer.yaml");
    // Named before it starts.
    t.keys(&["n"]);
    t.type_text("baseline");
    t.keys(&["Enter"]);
    t.wait_for("run name baseline");
    t.keys(&["Enter"]);
    t.wait_for("finished · 20/20 items");
    let first_calls = server.seen().len();
    assert_eq!(first_calls, 40);
    // Edit only `polite` (a new version), then re-grade only what changed.
    std::fs::write(
        ws.join(".rubricate/drafts/answer.yaml"),
        std::fs::read_to_string(ws.join("rubrics/answer.yaml"))
            .unwrap()
            .replace("Is polite", "Is polite and warm")
            .replace("version: 1.1.0", "version: 1.2.0"),
    )
    .unwrap();
    t.keys(&["B", "Escape"]);
    t.wait_for("enter open");
    t.keys(&["Enter"]);
    t.wait_for("draft (s saves a version)");
    t.keys(&["j", "j"]);
    t.wait_for("Is polite and warm");
    t.keys(&["s", "warmer", "Enter"]);
    t.wait_for("saved answer 1.2.0");
    t.keys(&["G", "Escape"]);
    t.wait_for("rubric (↑/↓ to choose)");
    t.keys(&["u"]);
    t.wait_for("y goes ahead");
    t.keys(&["y"]);
    // The "20 cells … copied" line is on screen only while the run lasts (a few ms against
    // this server): the second run's manifest, finished, is what says it is done.
    wait_for_condition("the re-grade finished", || {
        let runs = rubricate::store::runs::list_runs(&ws.join("runs"));
        runs.len() == 2
            && runs
                .iter()
                .all(|m| m.as_ref().is_ok_and(|m| m.finished_at.is_some()))
    });
    t.wait_for("finished · 20/20 items");
    assert_eq!(
        server.seen().len(),
        first_calls + 20,
        "only the changed criterion was asked"
    );
    t.keys(&["q"]);
    t.wait_gone();

    let registry = ws.join(".rubricate/registry/answer/1.1.0.yaml");
    assert!(
        std::fs::read_to_string(&registry)
            .unwrap()
            .contains("weight: 3")
    );
    // Oldest first (two runs may begin within one second: their ids do not order them).
    let runs: Vec<_> = rubricate::store::runs::list_runs(&ws.join("runs"))
        .into_iter()
        .map(|m| ws.join("runs").join(m.unwrap().id))
        .collect();
    assert_eq!(runs.len(), 2);
    let second = std::fs::read_to_string(runs[1].join("results.jsonl")).unwrap();
    assert_eq!(
        second.lines().count(),
        41,
        "a full journal: 20 copied cells and 20 new ones"
    );
    let journal = std::fs::read_to_string(runs[0].join("results.jsonl")).unwrap();
    let cells: Vec<serde_json::Value> = journal
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cells.len(), 40, "20 items × 2 criteria");
    assert!(cells.iter().all(|c| c["result"]["verdict"] == "MET"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs[0].join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["rubric_version"], "1.1.0");
    assert_eq!(manifest["name"], "baseline");
    assert!(manifest["finished_at"].is_string());
    assert!(
        server.seen().iter().all(|s| s.body["stream"] == true),
        "the UI streams"
    );
}

#[test]
fn a_run_left_by_quitting_continues_when_the_ui_opens_again() {
    if !Tmux::required() {
        return;
    }
    let server = LlmServer::start(Duration::from_millis(150), |_| {
        verdict("fine", json!("MET"))
    });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    answers_workspace(
        ws,
        "annotator: pat\njudge:\n  model: openai/judge\n  concurrency: 2\n",
        20,
    );
    let t = ui("resume", ws, &server, (140, 40), &[]);
    open_answers(&t);
    t.keys(&["G", "Enter"]);
    t.wait_for("running ·");
    // Quit in the middle of the run (2 calls at a time, 150 ms each: 40 calls take 3 s).
    wait_for_condition("six judge calls", || server.seen().len() >= 6);
    t.keys(&["q"]);
    t.wait_gone();
    drop(t);
    let run = std::fs::read_dir(ws.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let partial = std::fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert!(partial < 40, "the run was cut: {partial} cells");
    // Open again: the Grade pane offers to continue; the run ends with every cell once.
    // The UI comes back where it was left: the Grade pane, the dataset open.
    let t = ui("resume", ws, &server, (140, 40), &[]);
    t.wait_for("is unfinished: c continues it");
    t.keys(&["c"]);
    t.wait_for("y goes ahead");
    t.keys(&["y"]);
    t.wait_for("finished · ");
    t.keys(&["q"]);
    t.wait_gone();
    let journal = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut seen = std::collections::HashSet::new();
    for line in journal.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            seen.insert((
                v["item"].as_u64().unwrap(),
                v["result"]["criterion_id"].as_str().unwrap().to_owned()
            )),
            "a cell twice"
        );
    }
    assert_eq!(seen.len(), 40);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["finished_at"].is_string());
}

#[test]
fn an_artifact_review_runs_live_in_the_grid() {
    if !Tmux::required() {
        return;
    }
    let server = LlmServer::start(Duration::from_millis(5), |_| verdict("fine", json!("MET")));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("rubrics")).unwrap();
    std::fs::write(
        ws.join("rubricate.yaml"),
        "annotator: pat\njudge:\n  model: openai/judge\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("rubrics/quiz.yaml"),
        "id: quiz\nname: Quiz\ncriteria:\n  - { id: clear, requirement: Questions are clear, weight: 1 }\n  - { id: varied, requirement: Questions vary in difficulty, weight: 1 }\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("quiz.json"),
        r#"{"questions": ["What is 2+2?", "Prove Fermat's last theorem."]}"#,
    )
    .unwrap();
    let created = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(ws)
        .args([
            "artifacts",
            "create",
            "--type",
            "quiz",
            "--name",
            "Maths",
            "--content",
            "quiz.json",
            "--rubric",
            "rubrics/quiz.yaml",
        ])
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let t = ui("review", ws, &server, (140, 30), &[]);
    t.wait_for("Datasets");
    t.keys(&["V"]);
    t.wait_for("Maths");
    // Submitting evaluates: asked first.
    t.keys(&["s"]);
    t.wait_for("submit 'Maths' for review?");
    t.keys(&["y"]);
    t.wait_for("approved");
    t.keys(&["G"]);
    t.wait_for("review of art_");
    t.wait_for("finished · 1/1 items · 2 cells");
    t.wait_for("quiz@1.0.0");
    t.keys(&["q"]);
    t.wait_gone();
    assert_eq!(server.seen().len(), 2, "both criteria judged once");
}

/// An agentv eval opened by path grades in the Grade pane with each case's own rubric (no
/// rubric file needed): the grid's columns are criterion positions, and Results shows the
/// run's items with agentv's test scores.
#[test]
fn an_agentv_eval_grades_with_its_cases_own_rubrics() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("rubricate.yaml"), "annotator: pat\n").unwrap();
    std::fs::write(
        ws.join("suite.yaml"),
        "tests:\n  - id: hello\n    output: hello world\n    assert:\n      - {type: contains, value: hello}\n      - {type: contains, value: bye}\n  - id: bye\n    output: bye\n    assert:\n      - {type: equals, value: bye}\n",
    )
    .unwrap();
    let t = Tmux::start(
        "agentv",
        ws,
        80,
        24,
        &Tmux::rubricate(&[("XDG_CONFIG_HOME", ws.join(".config").display().to_string())]),
    );
    t.wait_for("Welcome");
    t.keys(&["o"]);
    t.type_text("suite.yaml");
    t.keys(&["Enter"]);
    t.wait_for("registered in this workspace");
    t.keys(&["G"]);
    t.wait_for("each item's own rubric");
    t.keys(&["Enter"]);
    t.wait_for("2/2 items");
    t.wait_until("two criterion columns", |s| s.contains("c1 c2"));
    t.keys(&["R", "i"]);
    // hello: one of two graders passes (0.5); bye: its one grader passes.
    t.wait_until("the items with their scores", |s| {
        s.lines().any(|l| l.contains("hello") && l.contains("50%"))
            && s.lines().any(|l| l.contains("bye") && l.contains("100%"))
    });
    t.keys(&["q"]);
}

/// A run stopped by its cost limit continues (`c`) within the limit typed in the set-up
/// afterwards, not the one it started with: the screen's limit is the one in force.
#[test]
fn continue_spends_within_the_cost_limit_the_set_up_shows() {
    if !Tmux::required() {
        return;
    }
    let server = LlmServer::start(Duration::ZERO, |_| verdict("fine", json!("MET")));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    // Each call: 100 tokens in at $5/M and 20 out at $25/M = $0.001; 60 calls in all, so
    // the first limit stops the run, and would stop a continuation again.
    answers_workspace(
        ws,
        "annotator: pat\njudge:\n  model: openai/judge\n  concurrency: 1\n  max_cost: 0.01\nprices:\n  openai/judge: { input: 5, output: 25 }\n",
        30,
    );
    let t = ui("cost", ws, &server, (120, 40), &[]);
    open_answers(&t);
    t.keys(&["G"]);
    t.wait_for("cost limit $0.01");
    t.keys(&["Enter"]);
    t.wait_for("the cost limit ($0.01) was reached");
    let stopped = server.seen().len();
    assert!(stopped < 20, "{stopped} calls");
    // Back to the set-up, a higher limit typed, then continue.
    t.keys(&["Escape"]);
    t.wait_for("is unfinished: c continues it");
    t.keys(&["$", "C-u"]);
    t.type_text("50");
    t.keys(&["Enter"]);
    t.wait_for("cost limit $50.00");
    t.keys(&["c"]);
    t.wait_for("(cost limit $50.00)?");
    t.keys(&["y"]);
    wait_for_condition("every judge call", || server.seen().len() >= 60);
    t.wait_for("finished · ");
    t.keys(&["q"]);
    t.wait_gone();
    assert_eq!(server.seen().len(), 60, "every call sent once");
    let run = std::fs::read_dir(ws.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["finished_at"].is_string(), "{manifest}");
}
