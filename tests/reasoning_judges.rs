//! Reasoning judges against the loopback server: `reasoning_effort` (OpenAI-compatible),
//! Anthropic's extended thinking (`thinking_budget`) and `extra` request fields, from the
//! command line, the rubric's `judge:` block and rubricate.yaml; reasoning tokens in usage
//! and cost; all of it part of the cache key; bad settings refused with their place.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, REASONING_TOKENS, Seen, verdict};

fn rubric(judge_block: &str) -> String {
    format!(
        "id: reasoned\nname: Reasoned\n{judge_block}criteria:\n  - id: correct\n    requirement: States that the capital of France is Paris\n"
    )
}

/// MET when the submission names Paris (the thinking block always says UNMET).
fn rule(seen: &Seen) -> support::Reply {
    let met = seen.prompt().contains("Paris is the capital");
    verdict("read it", json!(if met { "MET" } else { "UNMET" }))
}

struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new(rubric: &str, config: &str) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), rubric).unwrap();
        std::fs::write(dir.path().join("rubricate.yaml"), config).unwrap();
        std::fs::write(
            dir.path().join("items.jsonl"),
            "{\"id\": \"a\", \"submission\": \"Paris is the capital of France.\"}\n",
        )
        .unwrap();
        Ws { dir }
    }

    fn grade(&self, server: &LlmServer, model: &str, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rubricate"))
            .current_dir(self.dir.path())
            .args(["grade", "--rubric", "rubric.yaml", "items.jsonl"])
            .args(["--format", "jsonl", "--judge", model])
            .args(extra)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "ak-test")
            .env("RUBRICATE_CACHE_DIR", self.dir.path().join("cache"))
            .output()
            .unwrap()
    }
}

fn first_result(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!(
            "no result; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap()
}

const PRICES: &str = "prices:\n  openai/thinker: {input: 1.0, output: 10.0}\n";

#[test]
fn reasoning_effort_and_extra_fields_reach_the_body_and_reasoning_tokens_are_counted() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(
        &rubric("judge:\n  extra: {top_p: 0.5, service_tier: flex}\n"),
        PRICES,
    );
    let out = ws.grade(&server, "openai/thinker", &["--reasoning-effort", "high"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = first_result(&out);
    let body = &server.seen()[0].body;
    assert_eq!(body["reasoning_effort"], "high", "{body}");
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["service_tier"], "flex");
    assert_eq!(
        body["model"], "thinker",
        "extra never replaces what the client writes"
    );
    let usage = &r["criteria"][0]["invocation"]["usage"];
    assert_eq!(usage["reasoning_tokens"], REASONING_TOKENS, "{r}");
    assert_eq!(usage["output_tokens"], 320);
    assert!(
        stderr.contains("320 out (300 of them reasoning)"),
        "{stderr}"
    );
    // Reasoning is billed as output: 100 in at $1/M + 320 out at $10/M.
    let cost = (100.0 * 1.0 + 320.0 * 10.0) / 1_000_000.0;
    assert!(stderr.contains(&format!("${cost:.4}")), "{stderr}");
}

#[test]
fn anthropic_thinking_is_asked_for_and_its_blocks_are_not_the_verdict() {
    let server = LlmServer::start(Duration::ZERO, rule);
    // The workspace's default budget; the flag wins over it.
    let ws = Ws::new(&rubric(""), "judge:\n  thinking_budget: 4096\n");
    let out = ws.grade(
        &server,
        "anthropic/claude-test",
        &["--thinking-budget", "2048"],
    );
    let r = first_result(&out);
    assert_eq!(
        r["criteria"][0]["verdict"], "MET",
        "the text block, not the thinking: {r}"
    );
    let body = &server.seen()[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(
        body["max_tokens"],
        1024 + 2048,
        "the budget comes on top of the reply's room"
    );
    assert!(
        body.get("temperature").is_none(),
        "thinking takes no temperature: {body}"
    );
    assert_eq!(
        r["criteria"][0]["invocation"]["usage"]["output_tokens"],
        320
    );

    let out = ws.grade(&server, "anthropic/claude-test", &["--no-cache"]);
    first_result(&out);
    let last = server.seen().last().unwrap().body.clone();
    assert_eq!(
        last["thinking"]["budget_tokens"], 4096,
        "rubricate.yaml's default"
    );
}

/// Streamed, the thinking arrives first as `thinking_delta`s of a block of its own (a
/// verdict-looking one): only the text block's deltas are the reply, and the thinking is
/// counted in the output tokens the final event gives.
#[test]
fn streamed_anthropic_thinking_is_not_the_verdict_and_is_counted() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&rubric(""), "");
    let out = ws.grade(
        &server,
        "anthropic/claude-test",
        &["--stream", "--thinking-budget", "2048"],
    );
    let r = first_result(&out);
    assert_eq!(server.seen()[0].body["stream"], true);
    assert_eq!(
        r["criteria"][0]["verdict"], "MET",
        "the text block, not the thinking: {r}"
    );
    assert_eq!(
        r["criteria"][0]["invocation"]["usage"]["output_tokens"],
        320
    );
}

#[test]
fn reasoning_settings_are_part_of_the_cache_key() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&rubric("judge:\n  reasoning_effort: low\n"), "");
    first_result(&ws.grade(&server, "openai/thinker", &[]));
    first_result(&ws.grade(&server, "openai/thinker", &[]));
    assert_eq!(
        server.seen().len(),
        1,
        "the same request is answered from the cache"
    );
    assert_eq!(server.seen()[0].body["reasoning_effort"], "low");
    first_result(&ws.grade(&server, "openai/thinker", &["--reasoning-effort", "medium"]));
    assert_eq!(server.seen().len(), 2, "another effort is another question");
    std::fs::write(
        ws.dir.path().join("rubric.yaml"),
        rubric("judge:\n  reasoning_effort: low\n  extra: {top_p: 0.9}\n"),
    )
    .unwrap();
    first_result(&ws.grade(&server, "openai/thinker", &[]));
    assert_eq!(
        server.seen().len(),
        3,
        "another extra field is another question"
    );
}

#[test]
fn bad_reasoning_settings_are_refused_with_their_place() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(
        &rubric(
            "judge:\n  reasoning_effort: extreme\n  thinking_budget: 100\n  extra: {messages: []}\n",
        ),
        "",
    );
    let out = ws.grade(&server, "openai/thinker", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("rubric.yaml:4:"), "{stderr}");
    assert!(
        stderr.contains("unknown reasoning_effort 'extreme'; use low, medium, high"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rubric.yaml:5:") && stderr.contains("at least 1024"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rubric.yaml:6:") && stderr.contains("may not set `messages`"),
        "{stderr}"
    );
    assert!(server.seen().is_empty());

    let ws = Ws::new(&rubric(""), "judge:\n  extra: {model: other}\n");
    let out = ws.grade(&server, "openai/thinker", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rubricate.yaml:2:") && stderr.contains("may not set `model`"),
        "{stderr}"
    );

    let ws = Ws::new(&rubric(""), "");
    let out = ws.grade(&server, "openai/thinker", &["--thinking-budget", "10"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("at least 1024"), "{stderr}");
    let out = ws.grade(&server, "openai/thinker", &["--reasoning-effort", "max"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("use low, medium, high"));
    assert!(server.seen().is_empty());
}
