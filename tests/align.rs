//! `rubricate align` end to end against a scripted judge and a scripted proposer on
//! loopback: the judge agrees with the people only when the requirement speaks of a
//! bracketed source; the proposer proposes exactly that. align must find and adopt the
//! better wording, never show a test item to the proposer or to a candidate, report test
//! figures a hand computation gives, and stop when `--max-cost` is spent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, Reply, verdict};

const PHRASE: &str = "bracketed source";

fn rubricate(dir: &Path, server: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{server}/v1"))
        .env("OPENAI_API_KEY", "sk-align")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// 40 answers, every one labelled by `pat`: MET when it cites `[src]` (every third one).
/// The judge says MET for every answer unless the requirement mentions a bracketed source,
/// then it is right.
fn setup(config: &str) -> (tempfile::TempDir, LlmServer) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("rubricate.yaml"),
        format!("annotator: pat\n{config}"),
    )
    .unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: cites\nname: Cites\nversion: 1.0.0\ncriteria:\n  - { id: sourced, requirement: The answer cites a source }\n  - { id: says, requirement: Says it, method: { check: contains, args: { text: says } } }\n",
    )
    .unwrap();
    let mut items = String::new();
    let mut labels = String::from("item,criterion,verdict\n");
    for i in 0..40_u32 {
        let cited = i.is_multiple_of(3);
        let text = format!(
            "answer number {i} says so{}",
            if cited { " [src]" } else { " (trust me)" }
        );
        items.push_str(&json!({"id": format!("a{i}"), "submission": text}).to_string());
        items.push('\n');
        let v = if cited { "MET" } else { "UNMET" };
        let _ = writeln!(labels, "a{i},sourced,{v}");
    }
    std::fs::write(d.join("answers.jsonl"), items).unwrap();
    std::fs::write(d.join("labels.csv"), labels).unwrap();
    let server = LlmServer::start(Duration::from_millis(1), |seen| {
        let model = seen.body["model"].as_str().unwrap_or_default();
        let prompt = seen.prompt();
        if model == "proposer" {
            return Reply::Text(
                json!({"requirement": format!("The answer cites a {PHRASE} such as [src]"), "rule": "An answer with no brackets cites nothing."})
                    .to_string(),
            );
        }
        let met = if prompt.contains(PHRASE) {
            prompt.contains("[src]") && !prompt.contains("(trust me)")
        } else {
            true
        };
        verdict("scripted", json!(if met { "MET" } else { "UNMET" }))
    });
    ok(&rubricate(
        d,
        &server.url,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "answers.jsonl",
            "--annotator",
            "pat",
        ],
    ));
    (dir, server)
}

fn align(d: &Path, server: &LlmServer, extra: &[&str]) -> Value {
    let mut args = vec![
        "align",
        "--dataset",
        "answers.jsonl",
        "--rubric",
        "rubric.yaml",
        "--judge",
        "openai/judge",
        "--proposer",
        "openai/proposer",
        "--seed",
        "3",
        "--bootstrap",
        "200",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&rubricate(d, &server.url, &args))).unwrap()
}

/// The submission of item `id` as the dataset holds it.
fn submission(id: &str) -> String {
    let i: u32 = id.trim_start_matches('a').parse().unwrap();
    format!(
        "answer number {i} says so{}",
        if i.is_multiple_of(3) {
            " [src]"
        } else {
            " (trust me)"
        }
    )
}

#[test]
fn align_finds_and_adopts_the_wording_the_people_agree_with_and_keeps_test_unseen() {
    let (dir, server) = setup("");
    let d = dir.path();
    let report = align(d, &server, &["--adopt"]);
    let split = &report["split"];
    let ids = |part: &str| -> Vec<String> {
        split[part]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let (train, dev, test) = (ids("train"), ids("dev"), ids("test"));
    assert_eq!((train.len(), dev.len(), test.len()), (8, 16, 16));
    assert_eq!(
        report["weak_criteria"],
        json!(["sourced"]),
        "the check is never worked on"
    );
    // The reworded candidate beats the original on dev, and wins.
    let candidates = report["candidates"].as_array().unwrap();
    let reworded = candidates
        .iter()
        .find(|c| c["label"] == "reworded (round 1)")
        .expect("a round-1 rewording");
    assert!(reworded["requirement"].as_str().unwrap().contains(PHRASE));
    // Few-shot candidates show train disagreements (a test item shown as an example would
    // be counted below, in the judge's requests).
    let labels: Vec<&str> = candidates
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"few-shot (round 1)"), "{labels:?}");
    assert!(
        labels.contains(&"reworded + few-shot (round 1)"),
        "{labels:?}"
    );
    let few = candidates
        .iter()
        .find(|c| c["label"] == "few-shot (round 1)")
        .unwrap();
    assert!(few["examples"].as_u64().unwrap() >= 1, "{few}");
    assert_eq!(reworded["dev"]["kappa"], 1.0, "{reworded}");
    assert_eq!(report["changed"], true);
    // On test, by hand: the original judge says MET to all 16; the people say MET to the
    // cited ones. κ of a constant judge is 0; leniency = 100 − share cited (percentage
    // points). The winner agrees everywhere: κ 1, leniency 0.
    let cited = test
        .iter()
        .filter(|id| {
            id.trim_start_matches('a')
                .parse::<u32>()
                .unwrap()
                .is_multiple_of(3)
        })
        .count();
    let sourced = report["test"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["criterion"] == "sourced")
        .unwrap();
    assert_eq!(sourced["worked_on"], true);
    assert!(
        sourced["before"]["kappa"].as_f64().unwrap().abs() < 1e-12,
        "{sourced}"
    );
    assert_eq!(sourced["after"]["kappa"], 1.0);
    let lenient = 100.0 * (16 - cited) as f64 / 16.0;
    assert!((sourced["before"]["leniency"].as_f64().unwrap() - lenient).abs() < 1e-9);
    assert_eq!(sourced["after"]["leniency"], 0.0);
    assert_eq!(sourced["before"]["disagreements"], 16 - cited);
    // Adopted as the next minor version, the figures and seed in its note.
    assert_eq!(report["adopted"], "cites@1.1.0");
    let history = ok(&rubricate(d, &server.url, &["rubrics", "history", "cites"]));
    assert!(history.contains("1.1.0"), "{history}");
    assert!(history.contains("seed 3"), "{history}");
    let shown = ok(&rubricate(d, &server.url, &["rubrics", "show", "cites"]));
    assert!(shown.contains(PHRASE), "{shown}");
    // The report is kept in the workspace, with the winner to adopt later.
    let kept: Vec<_> = std::fs::read_dir(d.join("aligns")).unwrap().collect();
    assert_eq!(kept.len(), 1);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(kept[0].as_ref().unwrap().path()).unwrap())
            .unwrap();
    assert_eq!(doc["rubric"], "cites");
    assert!(
        doc["winner"]["criteria"][0]["requirement"]
            .as_str()
            .unwrap()
            .contains(PHRASE)
    );
    // Test items reached no proposer, and were judged only twice each: once with the
    // original requirement and once with the winner's (the two test runs), never by a
    // candidate on dev.
    let seen = server.seen();
    let proposer: Vec<String> = seen
        .iter()
        .filter(|s| s.body["model"] == "proposer")
        .map(support::Seen::prompt)
        .collect();
    assert!(!proposer.is_empty());
    for id in &test {
        let said = submission(id);
        assert!(
            proposer.iter().all(|p| !p.contains(&said)),
            "{id} shown to a proposer"
        );
        let judged: Vec<String> = seen
            .iter()
            .filter(|s| s.body["model"] == "judge")
            .map(support::Seen::prompt)
            .filter(|p| p.contains(&said))
            .collect();
        assert_eq!(judged.len(), 2, "{id}");
        assert_eq!(
            judged.iter().filter(|p| p.contains(PHRASE)).count(),
            1,
            "{id}"
        );
    }
    // The proposer read train disagreements only.
    for id in &dev {
        assert!(
            proposer.iter().all(|p| !p.contains(&submission(id))),
            "{id} (dev) shown"
        );
    }
}

#[test]
fn max_cost_stops_the_search_and_test_is_still_graded() {
    // $0.01 a call (100 input tokens at $100 a million); the originals on train and dev
    // take 24 judge calls ($0.24) and a proposal $0.01, so $0.25 leaves nothing to grade a
    // candidate with.
    let (dir, server) = setup(
        "prices:\n  openai/judge: { input: 100, output: 0 }\n  openai/proposer: { input: 100, output: 0 }\n",
    );
    let d = dir.path();
    let report = align(d, &server, &["--max-cost", "0.25"]);
    let stopped = report["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("--max-cost"), "{report}");
    assert_eq!(report["changed"], false);
    assert!(
        report["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["round"] == 0)
    );
    // The proposal that tipped the budget over was never graded.
    let seen = server.seen();
    assert!(
        seen.iter()
            .filter(|s| s.body["model"] == "proposer")
            .count()
            <= 1
    );
    assert!(
        seen.iter()
            .filter(|s| s.body["model"] == "judge")
            .all(|s| !s.prompt().contains(PHRASE))
    );
    assert!(report["cost"].as_f64().unwrap() >= 0.25 - 1e-9, "{report}");
    // Test: the original only (nothing won), its figures all the same.
    let sourced = &report["test"][0];
    assert_eq!(sourced["criterion"], "sourced");
    assert!(sourced["before"]["kappa"].is_number());
}

/// The same search again is answered from the cache, the proposer's proposals included: no
/// request at all, and the same candidates with the same figures (reproducible offline).
#[test]
fn the_same_search_again_asks_nothing_and_finds_the_same() {
    let (dir, server) = setup("");
    let d = dir.path();
    let first = align(d, &server, &[]);
    let asked = server.seen().len();
    assert!(asked > 0);
    let again = align(d, &server, &[]);
    assert_eq!(server.seen().len(), asked, "a second search sent requests");
    let figures = |r: &Value| -> Vec<(Value, Value, Value)> {
        r["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["label"].clone(),
                    c["requirement"].clone(),
                    c["dev"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(figures(&first), figures(&again));
    assert_eq!(first["test"], again["test"]);
}

/// docs/workspace.md's worked example ("Aligning a judge"), on the demo workspace, against a judge on
/// loopback that says MET to every binary criterion and "Neutral" to the tone: it runs as
/// written and splits alice's 32 labelled answers 6/12/14.
#[test]
fn the_readme_example_runs_on_the_demo_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    rubricate::store::workspace::create_demo(d).unwrap();
    let server = LlmServer::start(Duration::from_millis(1), |seen| {
        let prompt = seen.prompt();
        if seen.body["model"] == "proposer" {
            return Reply::Text(
                json!({"requirement": "Tells the customer to use the reset page", "rule": "A link alone counts."})
                    .to_string(),
            );
        }
        if prompt.contains("Warm and professional") {
            verdict("scripted", json!("Neutral"))
        } else {
            verdict("scripted", json!("MET"))
        }
    });
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/workspace.md")).unwrap();
    let line = readme
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("rubricate align --dataset support-answers"))
        .expect("the worked example's command in docs/workspace.md");
    let mut args: Vec<&str> = line.split_whitespace().skip(1).collect();
    args.retain(|a| *a != "\\");
    let cmd = args.join(" ");
    let judge = args.iter().position(|a| *a == "--judge").unwrap() + 1;
    args[judge] = "openai/judge";
    args.extend_from_slice(&["--proposer", "openai/proposer", "--format", "json"]);
    let report: Value = serde_json::from_str(&ok(&rubricate(d, &server.url, &args))).unwrap();
    let sizes: Vec<usize> = ["train", "dev", "test"]
        .iter()
        .map(|p| report["split"][p].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [6, 12, 14], "{cmd}");
    assert!(!report["weak_criteria"].as_array().unwrap().is_empty());
}
