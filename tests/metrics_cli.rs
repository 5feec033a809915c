//! `rubricate metrics` end to end: a saved run (deterministic checks, no judge server)
//! against imported human labels gives SCORING.md's public case.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn rubricate(dir: &Path, args: &[&str]) -> String {
    rubricate_with(dir, args, "http://127.0.0.1:9")
}

fn rubricate_with(dir: &Path, args: &[&str], server: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{server}/v1"))
        .env("OPENAI_API_KEY", "sk-metrics")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_public_case_through_a_saved_run_and_imported_labels() {
    // The "judge" is a check: MET when the answer says "yes".
    // Judge: M, U, U, U. Human (labels.csv): M, M, U, U.
    let dir = support::checked::workspace(&[("a", "yes"), ("b", "no"), ("c", "no"), ("d", "no")]);
    let d = dir.path();
    std::fs::write(
        d.join("labels.csv"),
        "item,criterion,verdict\na,yes,MET\nb,yes,MET\nc,yes,UNMET\nd,yes,UNMET\n",
    )
    .unwrap();
    rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--format",
            "jsonl",
        ],
    );
    rubricate(
        d,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "hana",
        ],
    );
    let run = std::fs::read_dir(d.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let run = run.to_string_lossy();
    let json: Value = serde_json::from_str(&rubricate(
        d,
        &[
            "metrics",
            "--run",
            &run,
            "--format",
            "json",
            "--bootstrap",
            "200",
            "--seed",
            "1",
        ],
    ))
    .unwrap();
    let c = &json["report"]["criteria"][0];
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-5;
    assert!(close(&c["accuracy"], 0.75), "{c}");
    assert!(close(&c["precision"], 1.0), "{c}");
    assert!(close(&c["recall"], 0.5), "{c}");
    assert!(close(&c["f1"], 0.666_667), "{c}");
    assert!(close(&c["kappa"], 0.5), "{c}");
    assert!(close(&c["phi"], 0.577_35), "{c}");
    assert!(close(&c["leniency"], -25.0), "{c}");
    assert_eq!(json["annotator"], "hana");
    // The same seed gives the same intervals.
    let again: Value = serde_json::from_str(&rubricate(
        d,
        &[
            "metrics",
            "--run",
            &run,
            "--format",
            "json",
            "--bootstrap",
            "200",
            "--seed",
            "1",
        ],
    ))
    .unwrap();
    assert_eq!(json, again);
    let table = rubricate(d, &["metrics", "--run", &run, "--bootstrap", "0"]);
    assert!(table.contains("against hana's labels"), "{table}");
}

#[test]
fn an_ensemble_run_reports_agreement_between_its_judges() {
    // Judge "a" says MET to everything; "b" only to answers saying "yes".
    let server = support::LlmServer::start(std::time::Duration::ZERO, |seen| {
        let yes = seen.prompt().contains("yes please");
        let met = seen.body["model"] == "a" || yes;
        support::verdict("v", serde_json::json!(if met { "MET" } else { "UNMET" }))
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: r\nname: R\ncriteria:\n  - { id: ok, requirement: Agrees, weight: 1 }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("items.jsonl"),
        "{\"id\": \"a\", \"submission\": \"yes please\"}\n{\"id\": \"b\", \"submission\": \"no\"}\n{\"id\": \"c\", \"submission\": \"yes please\"}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("labels.csv"),
        "item,criterion,verdict\na,ok,MET\nb,ok,UNMET\nc,ok,MET\n",
    )
    .unwrap();
    rubricate_with(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--format",
            "jsonl",
            "--judge",
            "openai/a",
            "--judge",
            "openai/b",
        ],
        &server.url,
    );
    rubricate(
        d,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "hana",
        ],
    );
    let run = std::fs::read_dir(d.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let json: Value = serde_json::from_str(&rubricate(
        d,
        &[
            "metrics",
            "--run",
            &run.to_string_lossy(),
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    ))
    .unwrap();
    let between = &json["between_judges"]["ok"];
    assert_eq!(between["raters"], 2, "{json}");
    // Votes (a, b): (M, M), (M, U), (M, M): observed disagreement equals chance's, α = 0;
    // Fleiss' κ = (P̄ − P̄e) / (1 − P̄e) = (2/3 − 13/18) / (5/18) = −0.2.
    assert!(
        between["krippendorff_alpha"].as_f64().unwrap().abs() < 1e-9,
        "{between}"
    );
    assert!(
        (between["fleiss_kappa"]["kappa"].as_f64().unwrap() + 0.2).abs() < 1e-9,
        "{between}"
    );
}

/// The figure to quote: the judge's mean over the whole run corrected by the labelled items
/// (prediction-powered inference), against a hand computation.
#[test]
fn the_judges_figures_are_corrected_by_the_labelled_items() {
    // Five blocks of eight items. Judge (a check, MET on "yes") per block: a b c d e f g h =
    // 1 1 1 1 0 1 0 1 (raw 0.75). People labelled a b e f of each: 1 0 0 1. Judge − people
    // there: 0 1 0 0 ×5 (mean 0.25, s² = 20·0.1875/19); the unlabelled c d g h: 1 1 0 1 ×5
    // (mean 0.75, the same s²). θ̂ = 0.75 − 0.25 = 0.5; se = √(2·s²/20).
    let ids: Vec<String> = (0..5)
        .flat_map(|b| ["a", "b", "c", "d", "e", "f", "g", "h"].map(|x| format!("{x}{b}")))
        .collect();
    let says = ["yes", "yes", "yes", "yes", "no", "yes", "no", "yes"];
    let items: Vec<(&str, &str)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), says[i % 8]))
        .collect();
    let dir = support::checked::workspace(&items);
    let d = dir.path();
    let mut labels = String::from("item,criterion,verdict\n");
    for b in 0..5 {
        for (x, v) in [("a", "MET"), ("b", "UNMET"), ("e", "UNMET"), ("f", "MET")] {
            let _ = writeln!(labels, "{x}{b},yes,{v}");
        }
    }
    std::fs::write(d.join("labels.csv"), labels).unwrap();
    rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--name",
            "r",
            "--format",
            "jsonl",
        ],
    );
    rubricate(
        d,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "hana",
        ],
    );
    let json: Value = serde_json::from_str(&rubricate(
        d,
        &["metrics", "--run", "r", "--format", "json"],
    ))
    .unwrap();
    let s2 = 20.0 * 0.1875 / 19.0;
    let half = 1.959_963_984_540_054 * (2.0_f64 * s2 / 20.0).sqrt();
    for figure in ["score", "pass_rate"] {
        let c = &json["corrected"][figure];
        let close = |got: &Value, want: f64| {
            let got = got.as_f64().unwrap();
            assert!((got - want).abs() < 1e-9, "{figure}: {got} want {want}");
        };
        close(&c["raw"], 0.75);
        close(&c["corrected"], 0.5);
        close(&c["bias"], 0.25);
        close(&c["people_only"], 0.5);
        close(&c["ci"]["low"], 0.5 - half);
        close(&c["ci"]["high"], 0.5 + half);
        assert_eq!(
            (c["items"].as_u64(), c["labelled"].as_u64()),
            (Some(40), Some(20))
        );
    }
    let table = rubricate(d, &["metrics", "--run", "r"]);
    assert!(
        table.contains("mean score  judge 0.750 · corrected 0.500 95% CI [0.225, 0.775]"),
        "{table}"
    );
}
