//! A provider with several base URLs (replicas of one judge server), through the real
//! binary: calls spread over the replicas, and a replica that fails is set aside while the
//! others grade every cell.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use support::{LlmServer, Reply, verdict};

fn workspace(urls: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<String> = urls.iter().map(|u| format!("{u}/v1")).collect();
    std::fs::write(
        dir.path().join("rubricate.yaml"),
        format!(
            "judge:\n  concurrency: 2\n  max_retries: 6\nproviders:\n  local:\n    base_url: [{}]\n",
            list.join(", ")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("r.yaml"),
        "id: r\ncriteria:\n  - { id: good, requirement: The answer is good }\n",
    )
    .unwrap();
    let mut items = String::new();
    for i in 0..24 {
        let _ = writeln!(
            items,
            "{}",
            json!({"id": format!("a{i}"), "submission": format!("answer {i}")})
        );
    }
    std::fs::write(dir.path().join("d.jsonl"), items).unwrap();
    dir
}

fn grade(dir: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .args([
            "grade", "--rubric", "r.yaml", "d.jsonl", "--judge", "local/m", "--format", "jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn calls_spread_over_the_replicas_within_each_ones_concurrency() {
    let answer = |_: &support::Seen| verdict("fine", json!("MET"));
    let a = LlmServer::start(Duration::from_millis(20), answer);
    let b = LlmServer::start(Duration::from_millis(20), answer);
    let dir = workspace(&[&a.url, &b.url]);
    let out = grade(dir.path());
    assert_eq!(out.lines().count(), 24);
    assert_eq!(a.seen().len() + b.seen().len(), 24);
    for (name, s) in [("a", &a), ("b", &b)] {
        assert!(
            s.max_in_flight() <= 2,
            "{name}: {} in flight",
            s.max_in_flight()
        );
        assert!(!s.seen().is_empty(), "{name} took none");
    }
}

#[test]
fn a_failing_replica_leaves_every_cell_to_the_others() {
    let good = LlmServer::start(Duration::ZERO, |_| verdict("fine", json!("MET")));
    let bad = LlmServer::start(Duration::ZERO, |_| {
        Reply::Status(502, None, "bad gateway".into())
    });
    let dir = workspace(&[&bad.url, &good.url]);
    let out = grade(dir.path());
    assert_eq!(out.lines().count(), 24);
    assert!(!out.contains("\"failure\":{"), "{out}");
    assert_eq!(good.seen().len(), 24);
    assert!(
        bad.seen().len() <= 4,
        "the failing replica was tried {} times",
        bad.seen().len()
    );
}
