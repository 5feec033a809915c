//! `rubricate align` over 2,000 labelled items and 3 weak criteria, 2 rounds of 3
//! candidates each (6 per criterion), through the real binary against a scripted judge and
//! proposer on loopback: once with every answer asked for, then again from the cache
//! (every judge and proposer answer already there). Prints each pass's wall time, calls and
//! runs, and the ratio.
//!
//! Run: `cargo bench --bench align` (release build). `BENCH_ITEMS=N` changes the items.
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

const WORDS: [&str; 3] = ["alpha", "beta", "gamma"];

fn rubricate(dir: &Path, url: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env("OPENAI_API_KEY", "sk-bench")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The judge says MET to everything until a requirement names its word's flag ("ALIGNED
/// alpha"); then it is right: MET exactly when the submission says `alpha-yes`. The
/// proposer always proposes that wording.
fn reply(seen: &support::Seen) -> support::Reply {
    let prompt = seen.prompt();
    let Some(word) = WORDS
        .iter()
        .find(|w| prompt.contains(&format!("Mentions {w}")))
    else {
        return support::verdict("no criterion", json!("CANNOT_ASSESS"));
    };
    if seen.body["model"] == "proposer" {
        return support::Reply::Text(
            json!({"requirement": format!("Mentions {word} (ALIGNED {word}: only {word}-yes counts)"),
                   "rule": format!("{word}-no never counts")})
            .to_string(),
        );
    }
    // The item's own submission is the block after this heading (examples come before).
    let submission = prompt
        .rsplit("The submission (everything between the markers")
        .next()
        .unwrap_or_default();
    let met =
        !prompt.contains(&format!("ALIGNED {word}")) || submission.contains(&format!("{word}-yes"));
    support::verdict("scripted", json!(if met { "MET" } else { "UNMET" }))
}

fn main() {
    let items: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "annotator: pat\n").unwrap();
    let mut rubric = String::from("id: bench\nname: Bench\nversion: 1.0.0\ncriteria:\n");
    for w in WORDS {
        let _ = writeln!(rubric, "  - {{ id: {w}, requirement: Mentions {w} }}");
    }
    std::fs::write(d.join("rubric.yaml"), rubric).unwrap();
    let mut data = String::new();
    let mut labels = String::from("item,criterion,verdict\n");
    for i in 0..items {
        let mut said = Vec::new();
        for (k, w) in WORDS.iter().enumerate() {
            let yes = (i * (k + 2) + k) % 5 < 2;
            said.push(format!("{w}-{}", if yes { "yes" } else { "no" }));
            let _ = writeln!(labels, "i{i},{w},{}", if yes { "MET" } else { "UNMET" });
        }
        let _ = writeln!(
            data,
            "{}",
            json!({"id": format!("i{i}"), "submission": format!("answer {i}: {}", said.join(" "))})
        );
    }
    std::fs::write(d.join("items.jsonl"), data).unwrap();
    std::fs::write(d.join("labels.csv"), labels).unwrap();
    let server = support::LlmServer::start(Duration::ZERO, reply);
    rubricate(
        d,
        &server.url,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "pat",
        ],
    );
    let args = [
        "align",
        "--dataset",
        "items.jsonl",
        "--rubric",
        "rubric.yaml",
        "--judge",
        "openai/judge",
        "--proposer",
        "openai/proposer",
        "--rounds",
        "2",
        "--format",
        "json",
    ];
    let runs = |d: &Path| std::fs::read_dir(d.join("runs")).map_or(0, Iterator::count);
    let mut passes = Vec::new();
    for pass in ["asked", "cached"] {
        let (calls, made) = (server.seen().len(), runs(d));
        let start = Instant::now();
        let report: serde_json::Value =
            serde_json::from_str(&rubricate(d, &server.url, &args)).expect("align's JSON");
        let took = start.elapsed().as_secs_f64();
        let tried = report["candidates"].as_array().map_or(0, Vec::len);
        let weak = report["weak_criteria"].as_array().map_or(0, Vec::len);
        println!(
            "align ({pass}): {items} labelled items, {weak} weak criteria, {tried} candidates \
             ranked (the originals included): {took:.2} s, {} calls, {} runs",
            server.seen().len() - calls,
            runs(d) - made
        );
        passes.push(took);
    }
    println!(
        "cached / asked: {:.2}× the time",
        passes[1] / passes[0].max(f64::MIN_POSITIVE)
    );
}
