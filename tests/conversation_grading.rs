//! A conversation dataset graded whole and per turn through the real binary, with a
//! scripted judge on loopback: the judge reads a transcript, a turn criterion is judged once
//! per assistant turn with the conversation up to it, the turns are combined by the stated
//! rule and the per-turn verdicts are kept in the run's journal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, Reply, Seen};

/// MET, except the last turn of the weather conversation ("No, the sky is clear today.").
fn judge(seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    let verdict = if prompt.contains("assistant turn 3 of 3") && prompt.contains("umbrella") {
        "UNMET"
    } else {
        "MET"
    };
    Reply::Text(json!({"reason": format!("judged {verdict}"), "verdict": verdict}).to_string())
}

#[test]
fn a_conversation_dataset_is_graded_whole_and_per_turn() {
    let server = LlmServer::start(Duration::from_millis(1), judge);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conversations");
    for f in ["support.jsonl", "support-rubric.yaml"] {
        std::fs::copy(fixtures.join(f), d.join(f)).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(d)
        .args([
            "grade",
            "support.jsonl",
            "--rubric",
            "support-rubric.yaml",
            "--judge",
            "openai/j",
            "--save",
            "--format",
            "jsonl",
        ])
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("RUBRICATE_CACHE_DIR", d.join("cache"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{stderr}");
    // One call for the whole conversation, two per turn for each turn criterion.
    // Turns: weather 3, refund 3, greeting 1 → 3 + 2 × 7.
    let seen = server.seen();
    assert_eq!(seen.len(), 3 + 2 * 7);
    let whole = seen
        .iter()
        .find(|s| {
            s.prompt().contains("Resolves what the user asked") && s.prompt().contains("umbrella")
        })
        .unwrap()
        .prompt();
    assert!(
        whole.contains("The submission is a conversation, as a transcript"),
        "{whole}"
    );
    assert!(whole.contains("<<<CONVERSATION "), "{whole}");
    assert!(whole.contains("[assistant]\n→ get_weather({\"city\": \"Paris\", \"unit\": \"C\"})\n← {\"temp\": 18, \"sky\": \"sunny\"}"), "{whole}");
    // A turn sees the conversation up to it, and not after.
    let first_turn = seen
        .iter()
        .map(Seen::prompt)
        .find(|p| p.contains("assistant turn 1 of 3") && p.contains("Paris"))
        .unwrap();
    assert!(first_turn.contains("get_weather"), "{first_turn}");
    assert!(!first_turn.contains("umbrella"), "{first_turn}");

    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let weather = &lines[0];
    assert_eq!(weather["item"], "weather");
    let by_id = |item: &Value, id: &str| {
        item["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_id(weather, "resolved")["verdict"], "MET");
    // all: the third turn decides.
    assert_eq!(by_id(weather, "polite")["verdict"], "UNMET");
    assert_eq!(by_id(weather, "polite")["value"], 0.0);
    // The results say each turn's verdict too, written as a criterion's.
    let turns = by_id(weather, "polite")["turns"].clone();
    assert_eq!(turns.as_array().unwrap().len(), 3, "{turns}");
    assert_eq!(turns[2]["turn"], 3);
    assert_eq!(turns[2]["verdict"], "UNMET");
    assert!(by_id(weather, "resolved").get("turns").is_none());
    // mean: two of three turns.
    let mean = by_id(weather, "polite_mostly")["value"].as_f64().unwrap();
    assert!((mean - 2.0 / 3.0).abs() < 1e-9, "{mean}");
    // (1 + 0 + 2/3) / 3
    let score = weather["score"].as_f64().unwrap();
    assert!((score - 5.0 / 9.0).abs() < 1e-9, "{score}");
    let refund = &lines[1];
    assert_eq!(by_id(refund, "polite")["verdict"], "MET");
    assert_eq!(refund["score"], 1.0);

    // The run's journal keeps each turn's verdict.
    let runs = d.join("runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").exists())
        .unwrap();
    let journal = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let weather_line = journal
        .lines()
        .find(|l| l.contains("\"weather\"") && l.contains("\"turns\""))
        .unwrap_or_else(|| panic!("{journal}"));
    let v: Value = serde_json::from_str(weather_line).unwrap();
    assert_eq!(v["result"]["criterion_id"], "polite");
    assert_eq!(
        v["result"]["turns"],
        json!([
            {"turn": 1, "verdict": "MET", "value": 1.0, "reason": "judged MET"},
            {"turn": 2, "verdict": "MET", "value": 1.0, "reason": "judged MET"},
            {"turn": 3, "verdict": "UNMET", "value": 0.0, "reason": "judged UNMET"}
        ])
    );
    // The three turns' calls are counted.
    assert_eq!(v["result"]["invocation"]["attempts"], 3);
}

#[test]
fn a_dry_run_counts_one_call_per_turn_for_turn_criteria() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(d)
        .args([
            "grade",
            "tests/fixtures/conversations/support.jsonl",
            "--rubric",
            "tests/fixtures/conversations/support-rubric.yaml",
            "--judge",
            "openai/j",
            "--dry-run",
        ])
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("OPENAI_API_KEY", "sk-test")
        .env("RUBRICATE_CACHE_DIR", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The executor's 17 calls (see above).
    assert!(
        text.starts_with("dry run: 3 items, 17 judge calls"),
        "{text}"
    );
}
