//! Conversation items: read from JSONL, JSON, Inspect logs and agentv files; bad shapes are
//! located errors; the transcript is the submission.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::{Path, PathBuf};

use rubricate::formats::dataset::{ReadOptions, open_dataset};
use rubricate::model::Item;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conversations")
        .join(name)
}

fn items(name: &str) -> Vec<Result<Item, String>> {
    let d = open_dataset(&fixture(name), ReadOptions::default()).unwrap();
    d.items.map(|r| r.map_err(|e| e.to_string())).collect()
}

#[test]
fn a_jsonl_conversation_dataset_reads_roles_calls_and_results() {
    let items: Vec<Item> = items("support.jsonl")
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(items.len(), 3);
    let weather = items[0].conversation.as_deref().unwrap();
    assert_eq!(weather.turns(), 3);
    assert_eq!(weather.last_assistant(), "No, the sky is clear today.");
    let call = weather.tool_calls().next().unwrap();
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments.as_ref().unwrap()["city"], "Paris");
    assert!(
        items[0].submission.contains(
            "[assistant]\n→ get_weather({\"city\": \"Paris\", \"unit\": \"C\"})\n← {\"temp\": 18, \"sky\": \"sunny\"}"
        ),
        "{}",
        items[0].submission
    );
    assert!(!items[0].metadata.contains_key("messages"));
    let refund: Vec<_> = items[1]
        .conversation
        .as_deref()
        .unwrap()
        .tool_calls()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(refund, ["lookup_order", "issue_refund"]);
    // A text submission beside `messages` is the last assistant turn.
    let greeting = items[2].conversation.as_deref().unwrap();
    assert_eq!(greeting.turns(), 1);
    assert_eq!(
        items[2].submission,
        "[user]\nHi!\n\n[assistant]\nHello! How can I help?"
    );
}

#[test]
fn a_bad_message_names_file_line_message_and_field() {
    let items = items("bad_role.jsonl");
    assert!(items[0].is_ok());
    let err = items[1].as_ref().unwrap_err();
    assert!(
        err.ends_with(
            "bad_role.jsonl:2:1: item 'broken': `messages` message 2: `tool_calls[0].function.name` is missing"
        ),
        "{err}"
    );
}

#[test]
fn an_inspect_log_reads_each_sample_as_a_conversation() {
    let items = items("inspect_log.json");
    let item = items[0].as_ref().unwrap();
    assert_eq!(item.id, "1");
    assert_eq!(item.reference.as_deref(), Some("2"));
    let c = item.conversation.as_deref().unwrap();
    assert_eq!(c.last_assistant(), "There are 2 files.");
    assert_eq!(
        c.tool_calls().next().unwrap().arguments_raw,
        r#"{"cmd":"ls /tmp/demo | wc -l"}"#
    );
    assert!(
        item.origin.ends_with("inspect_log.json:6:5"),
        "{}",
        item.origin
    );
}

#[test]
fn an_agentv_output_of_messages_is_the_items_conversation() {
    let items = items("agent_run.eval.yaml");
    let item = items[0].as_ref().unwrap();
    let c = item.conversation.as_deref().unwrap();
    let names: Vec<_> = c.tool_calls().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search_files", "read_file"]);
    assert_eq!(c.turns(), 2);
    assert!(
        item.submission.starts_with(
            "[user]\nWhich port does the service listen on?\n\n[assistant]\nLet me look.\n→ search_files({\"pattern\":\"*.toml\"})\n← [\"service.toml\"]\n→ read_file({\"path\":\"service.toml\"})\n← port = 8080"
        ),
        "{}",
        item.submission
    );
}

fn rubricate(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn validate_and_inspect_say_the_dataset_holds_conversations() {
    let out = rubricate(&["validate", "tests/fixtures/conversations/support.jsonl"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok tests/fixtures/conversations/support.jsonl (dataset, 3 items, 3 conversations (7 assistant turns, 3 tool calls))"
    );
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/conversations/inspect_log.json",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["conversations"],
        serde_json::json!({"items": 1, "assistant_turns": 2, "tool_calls": 1})
    );
    let out = rubricate(&["validate", "tests/fixtures/conversations/bad_role.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "bad_role.jsonl:2:1: item 'broken': `messages` message 2: `tool_calls[0].function.name` is missing"
        )
    );
}

/// `grade` says before grading when a `scope: turn` criterion meets items that hold no
/// conversation (every such item fails it; `lint` reads no dataset to say so).
#[test]
fn grading_plain_answers_with_turn_criteria_warns_first() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(root)
        .args([
            "grade",
            "--rubric",
            "examples/conversation-rubric.yaml",
            "examples/answers.jsonl",
            "--format",
            "csv",
            "--max-error-rate",
            "1",
        ])
        .env("NO_COLOR", "1")
        .env(
            "RUBRICATE_CACHE_DIR",
            std::env::temp_dir().join("rubricate-no-cache"),
        )
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: polite, grounded, invents_data judge each assistant turn (`scope: turn`), but item 'a1'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("holds no conversation (`messages`)"),
        "{stderr}"
    );
}
