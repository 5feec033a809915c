//! The real binary in tmux, end to end: edit a criterion (through `$EDITOR`), save it as a
//! new version, grade 20 items with it against the loopback judge in the Grade pane, and
//! find every cell in the run's journal; then change one criterion and re-grade only it.
//! Skipped (with a note) where tmux is missing.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{LlmServer, verdict};

fn tmux(socket: &str, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_for(socket: &str, text: &str) {
    let start = Instant::now();
    loop {
        let screen = tmux(socket, &["capture-pane", "-p", "-t", "e2e"]);
        if screen.contains(text) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{text:?} never showed:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn keys(socket: &str, keys: &[&str]) {
    for k in keys {
        tmux(socket, &["send-keys", "-t", "e2e", k]);
        std::thread::sleep(Duration::from_millis(60));
    }
}

#[test]
fn edit_save_a_version_then_grade_twenty_items_live() {
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("tmux is not installed: the pseudo-terminal test is skipped");
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
    let socket = format!("rubricate-e2e-{}", std::process::id());
    let command = format!(
        "cd {} && exec env OPENAI_BASE_URL={}/v1 OPENAI_API_KEY=sk-e2e RUBRICATE_CACHE_DIR={}/cache TERM=xterm-256color EDITOR=\"sed -i 's/weight: 2/weight: 3/; s/version: 1.0.0/version: 1.1.0/'\" {}",
        ws.display(),
        server.url,
        ws.display(),
        env!("CARGO_BIN_EXE_rubricate")
    );
    let ok = Command::new("tmux")
        .args([
            "-L",
            &socket,
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            "140",
            "-y",
            "40",
            &command,
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    wait_for(&socket, "answers");
    // Rubrics: open the rubric, edit it in $EDITOR, save it as a new version.
    keys(&socket, &["B"]);
    wait_for(&socket, "answer.yaml");
    keys(&socket, &["Enter"]);
    wait_for(&socket, "correct — correct (weight 2");
    keys(&socket, &["C-e"]);
    wait_for(&socket, "correct — correct (weight 3");
    keys(&socket, &["s", "heavier correctness", "Enter"]);
    wait_for(&socket, "saved answer 1.1.0");
    // Grade: open the dataset, start a run with the edited rubric, watch it finish.
    keys(&socket, &["D", "Enter"]);
    wait_for(&socket, "a0");
    keys(&socket, &["G"]);
    wait_for(&socket, "answer.yaml");
    keys(&socket, &["Enter"]);
    wait_for(&socket, "finished · 20/20 items");
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
    keys(&socket, &["B", "Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    keys(&socket, &["Enter"]);
    wait_for(&socket, "draft (s saves a version)");
    keys(&socket, &["j", "j"]);
    wait_for(&socket, "Is polite and warm");
    keys(&socket, &["s", "warmer", "Enter"]);
    wait_for(&socket, "saved answer 1.2.0");
    keys(&socket, &["G", "Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    keys(&socket, &["u"]);
    wait_for(&socket, "20 cells of unchanged criteria copied");
    wait_for(&socket, "finished · 20/20 items");
    assert_eq!(
        server.seen().len(),
        first_calls + 20,
        "only the changed criterion was asked"
    );
    keys(&socket, &["q"]);
    tmux(&socket, &["kill-server"]);

    let registry = ws.join(".rubricate/registry/answer/1.1.0.yaml");
    assert!(
        std::fs::read_to_string(&registry)
            .unwrap()
            .contains("weight: 3")
    );
    let mut runs: Vec<_> = std::fs::read_dir(ws.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
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
    assert!(manifest["finished_at"].is_string());
    assert!(
        server.seen().iter().all(|s| s.body["stream"] == true),
        "the UI streams"
    );
}

#[test]
fn a_run_left_by_quitting_continues_when_the_ui_opens_again() {
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("tmux is not installed: the pseudo-terminal test is skipped");
        return;
    }
    let server = LlmServer::start(Duration::from_millis(150), |_| {
        verdict("fine", json!("MET"))
    });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("rubrics")).unwrap();
    std::fs::create_dir_all(ws.join("datasets")).unwrap();
    std::fs::write(
        ws.join("rubricate.yaml"),
        "annotator: pat\njudge:\n  model: openai/judge\n  concurrency: 2\n",
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
    let socket = format!("rubricate-resume-{}", std::process::id());
    let command = format!(
        "cd {} && exec env OPENAI_BASE_URL={}/v1 OPENAI_API_KEY=sk-e2e RUBRICATE_CACHE_DIR={}/cache TERM=xterm-256color {}",
        ws.display(),
        server.url,
        ws.display(),
        env!("CARGO_BIN_EXE_rubricate")
    );
    let start = |socket: &str| {
        let ok = Command::new("tmux")
            .args([
                "-L",
                socket,
                "new-session",
                "-d",
                "-s",
                "e2e",
                "-x",
                "140",
                "-y",
                "40",
                &command,
            ])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    start(&socket);
    wait_for(&socket, "answers");
    keys(&socket, &["Enter"]);
    wait_for(&socket, "a0");
    keys(&socket, &["G", "Enter"]);
    wait_for(&socket, "running ·");
    // Quit in the middle of the run (2 calls at a time, 150 ms each: 40 calls take 3 s).
    while server.seen().len() < 6 {
        std::thread::sleep(Duration::from_millis(20));
    }
    keys(&socket, &["q"]);
    let t = Instant::now();
    while Command::new("tmux")
        .args(["-L", &socket, "has-session", "-t", "e2e"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(t.elapsed() < Duration::from_secs(20), "the UI did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
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
    start(&socket);
    wait_for(&socket, "answers");
    keys(&socket, &["Enter"]);
    wait_for(&socket, "a0");
    keys(&socket, &["G"]);
    wait_for(&socket, "is unfinished: c continues it");
    keys(&socket, &["c"]);
    wait_for(&socket, "finished · ");
    keys(&socket, &["q"]);
    tmux(&socket, &["kill-server"]);
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
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("tmux is not installed: the pseudo-terminal test is skipped");
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
    let created = Command::new(env!("CARGO_BIN_EXE_rubricate"))
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
    let socket = format!("rubricate-review-{}", std::process::id());
    let command = format!(
        "cd {} && exec env OPENAI_BASE_URL={}/v1 OPENAI_API_KEY=sk-e2e RUBRICATE_CACHE_DIR={}/cache TERM=xterm-256color {}",
        ws.display(),
        server.url,
        ws.display(),
        env!("CARGO_BIN_EXE_rubricate")
    );
    let ok = Command::new("tmux")
        .args([
            "-L",
            &socket,
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            "140",
            "-y",
            "30",
            &command,
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    wait_for(&socket, "Datasets");
    keys(&socket, &["V"]);
    wait_for(&socket, "Maths");
    keys(&socket, &["s"]);
    wait_for(&socket, "approved");
    keys(&socket, &["G"]);
    wait_for(&socket, "review of art_");
    wait_for(&socket, "finished · 1/1 items · 2 cells");
    wait_for(&socket, "quiz@1.0.0");
    keys(&socket, &["q"]);
    tmux(&socket, &["kill-server"]);
    assert_eq!(server.seen().len(), 2, "both criteria judged once");
}
