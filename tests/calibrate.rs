//! `rubricate calibrate` end to end against loopback judges with scripted biases: one
//! accurate, one lenient, one strict, graded on the labelled items only and ranked by their
//! agreement with the labels.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, verdict};

fn rubricate(dir: &Path, server: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{server}/v1"))
        .env("OPENAI_API_KEY", "sk-calibrate")
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

/// A workspace of 48 answers, 40 of them labelled by `pat` (MET when the answer is good),
/// and a server whose judges answer by their model's name: `accurate` (and its twin
/// `accurate-too`) right but for one item in eight, `lenient` always MET, `strict` never.
fn setup() -> (tempfile::TempDir, LlmServer) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "annotator: pat\n").unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: quality\nname: Quality\ncriteria:\n  - { id: good, requirement: The answer is good }\n",
    )
    .unwrap();
    let mut items = String::new();
    let mut labels = String::from("item,criterion,verdict\n");
    for i in 0..48 {
        let good = i % 2 == 0;
        let text = if good { "good" } else { "bad" };
        items.push_str(
            &json!({"id": format!("a{i}"), "submission": format!("{text} answer number {i}")})
                .to_string(),
        );
        items.push('\n');
        if i < 40 {
            let v = if good { "MET" } else { "UNMET" };
            let _ = writeln!(labels, "a{i},good,{v}");
        }
    }
    std::fs::write(d.join("answers.jsonl"), items).unwrap();
    std::fs::write(d.join("labels.csv"), labels).unwrap();
    let server = LlmServer::start(Duration::from_millis(1), |seen| {
        let model = seen.body["model"].as_str().unwrap_or_default().to_owned();
        let prompt = seen.prompt();
        let good = prompt.contains("good answer");
        // One item in eight the accurate judges get wrong: 3, 11, 19, 27, 35.
        let number: Option<u32> = prompt
            .split("answer number ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        let slip = number.is_some_and(|n| n % 8 == 3);
        // A system prompt that says STRICT makes any judge strict.
        let met = match model.as_str() {
            _ if prompt.contains("STRICT") => false,
            "lenient" => true,
            "strict" => false,
            _ => good != slip,
        };
        let reply = verdict("scripted", json!(if met { "MET" } else { "UNMET" }));
        // The `unsure` judge is as accurate, but sure of itself only off the fives.
        match (model.as_str(), reply) {
            ("unsure", support::Reply::Text(text)) => {
                let p = if number.is_some_and(|n| n % 5 == 0) {
                    0.55
                } else {
                    0.99
                };
                support::Reply::Confident(text, p)
            }
            (_, reply) => reply,
        }
    });
    let out = rubricate(
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
    );
    ok(&out);
    (dir, server)
}

fn calibrate(d: &Path, server: &LlmServer, judges: &[&str]) -> Value {
    let mut args = vec![
        "calibrate",
        "--dataset",
        "answers.jsonl",
        "--rubric",
        "rubric.yaml",
        "--format",
        "json",
        "--bootstrap",
        "300",
    ];
    for j in judges {
        args.extend(["--judge", j]);
    }
    serde_json::from_str(&ok(&rubricate(d, &server.url, &args))).unwrap()
}

#[test]
fn the_accurate_judge_ranks_first_and_biases_show_their_sign() {
    let (dir, server) = setup();
    let d = dir.path();
    let report = calibrate(
        d,
        &server,
        &["openai/lenient", "openai/accurate", "openai/strict"],
    );
    let names: Vec<&str> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "openai/accurate", "{report}");
    assert_eq!(report["best"], "openai/accurate");
    let by = |name: &str| {
        report["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["candidate"] == name)
            .unwrap()
            .clone()
    };
    // 40 labels, 35 right: accuracy 0.875; always-MET / never-MET judges have κ 0 and
    // leniency ±50 points (the people say MET for half).
    let accurate = by("openai/accurate");
    let kappa = accurate["kappa"].as_f64().unwrap();
    assert!(kappa > 0.6, "{accurate}");
    assert!((accurate["pooled"]["accuracy"].as_f64().unwrap() - 0.875).abs() < 1e-9);
    assert!((by("openai/lenient")["pooled"]["leniency"].as_f64().unwrap() - 50.0).abs() < 1e-9);
    assert!((by("openai/strict")["pooled"]["leniency"].as_f64().unwrap() + 50.0).abs() < 1e-9);
    assert!(by("openai/lenient")["kappa"].as_f64().unwrap().abs() < 1e-9);
    // The best clears the runner-up: distinguishable.
    assert_eq!(report["distinguishable"], true, "{report}");
    assert_eq!(
        report["best_per_criterion"]["good"]["candidate"],
        "openai/accurate"
    );
    // Only the 40 labelled items were graded, once per candidate.
    assert_eq!(server.seen().len(), 3 * 40);
    assert_eq!(accurate["calls"], 40);
}

#[test]
fn identical_judges_are_not_distinguishable() {
    let (dir, server) = setup();
    let d = dir.path();
    let report = calibrate(d, &server, &["openai/accurate", "openai/accurate-too"]);
    assert_eq!(report["distinguishable"], false, "{report}");
    assert!(
        report["note"]
            .as_str()
            .unwrap()
            .contains("not distinguishable at 40 labels"),
        "{report}"
    );
    // A run already made joins as a candidate; the table names the best.
    let first = report["candidates"][0]["run"].as_str().unwrap().to_owned();
    let table = ok(&rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--run",
            &first,
            "--bootstrap",
            "100",
        ],
    ));
    assert!(table.contains("best overall: run "), "{table}");
    assert!(
        table.contains("against pat's labels of 40 items"),
        "{table}"
    );
}

#[test]
fn calibrate_says_what_it_needs() {
    let (dir, server) = setup();
    let d = dir.path();
    let out = rubricate(d, &server.url, &["calibrate", "--dataset", "answers.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to compare"));
    let out = rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--judge",
            "openai/accurate",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --rubric"));
}

#[test]
fn a_dry_run_shows_each_candidates_calls_and_sends_nothing() {
    let (dir, server) = setup();
    let d = dir.path();
    let out = ok(&rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--rubric",
            "rubric.yaml",
            "--judge",
            "openai/accurate",
            "--judge",
            "openai/strict",
            "--dry-run",
        ],
    ));
    assert!(
        out.contains("openai/accurate:") && out.contains("openai/strict:"),
        "{out}"
    );
    assert_eq!(out.matches("40 items, 40 judge calls").count(), 2, "{out}");
    assert!(server.seen().is_empty());
    assert!(
        !d.join("runs").exists() || std::fs::read_dir(d.join("runs")).unwrap().next().is_none()
    );
}

#[test]
fn adopt_writes_the_winner_into_a_new_version_of_the_rubric() {
    let (dir, server) = setup();
    let d = dir.path();
    let out = ok(&rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--rubric",
            "rubric.yaml",
            "--judge",
            "openai/strict",
            "--judge",
            "openai/accurate",
            "--temperature",
            "0.2",
            "--adopt",
        ],
    ));
    assert!(
        out.contains("adopted: quality@1.1.0 now judges with openai/accurate"),
        "{out}"
    );
    let shown = ok(&rubricate(d, &server.url, &["rubrics", "show", "quality"]));
    assert!(shown.contains("model: openai/accurate"), "{shown}");
    assert!(shown.contains("temperature: 0.2"), "{shown}");
    let history = ok(&rubricate(
        d,
        &server.url,
        &["rubrics", "history", "quality"],
    ));
    assert!(
        history.contains("calibrate: judge openai/accurate adopted") && history.contains("κ 0.750"),
        "{history}"
    );
}

#[test]
fn each_system_prompt_and_strategy_is_a_candidate_and_the_winners_prompt_is_adopted() {
    let (dir, server) = setup();
    let d = dir.path();
    std::fs::write(d.join("plain.txt"), "You grade answers carefully.").unwrap();
    std::fs::write(d.join("harsh.txt"), "You grade answers. Be STRICT.").unwrap();
    let out = ok(&rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--rubric",
            "rubric.yaml",
            "--judge",
            "openai/accurate",
            "--system-prompt",
            "harsh.txt",
            "--system-prompt",
            "plain.txt",
            "--format",
            "json",
            "--bootstrap",
            "300",
            "--adopt",
        ],
    ));
    let r: Value = serde_json::from_str(&out).unwrap();
    let labels: Vec<&str> = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["openai/accurate +plain", "openai/accurate +harsh"]);
    assert!(
        r["candidates"][1]["pooled"]["leniency"].as_f64().unwrap() < 0.0,
        "the harsh prompt is strict"
    );
    assert_eq!(r["adopted"]["model"], "openai/accurate");
    let shown = ok(&rubricate(d, &server.url, &["rubrics", "show", "quality"]));
    assert!(shown.contains("You grade answers carefully."), "{shown}");
    // Several strategies make several candidates (a dry run names them).
    let dry = ok(&rubricate(
        d,
        &server.url,
        &[
            "calibrate",
            "--dataset",
            "answers.jsonl",
            "--rubric",
            "rubric.yaml",
            "--judge",
            "openai/accurate",
            "--strategy",
            "per-criterion",
            "--strategy",
            "one-shot",
            "--dry-run",
        ],
    ));
    assert!(
        dry.contains("openai/accurate per-criterion:") && dry.contains("openai/accurate one-shot:"),
        "{dry}"
    );
    // grade takes one of each.
    let two = rubricate(
        d,
        &server.url,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "answers.jsonl",
            "--strategy",
            "one-shot",
            "--strategy",
            "per-criterion",
        ],
    );
    assert_eq!(two.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&two.stderr).contains("calibrate"));
}

/// `labels next --format json`.
fn next(d: &Path, server: &LlmServer, annotator: &str) -> Value {
    serde_json::from_str(&ok(&rubricate(
        d,
        &server.url,
        &[
            "labels",
            "next",
            "--dataset",
            "answers.jsonl",
            "--annotator",
            annotator,
            "-n",
            "8",
            "--format",
            "json",
        ],
    )))
    .unwrap()
}

#[test]
fn labels_next_puts_disagreements_first_and_its_estimate_falls_as_labels_arrive() {
    let (dir, server) = setup();
    let d = dir.path();
    // Two runs over the whole dataset: the lenient judge, then the accurate one (latest).
    for judge in ["openai/lenient", "openai/accurate"] {
        // Exit 1: some answers fail the rubric.
        let out = rubricate(
            d,
            &server.url,
            &[
                "grade",
                "--rubric",
                "rubric.yaml",
                "answers.jsonl",
                "--judge",
                judge,
                "--save",
                "--format",
                "jsonl",
            ],
        );
        assert!(out.status.code().is_some_and(|c| c <= 1));
    }
    // pat labelled a0..a39; of a40..a47 the judges disagree on the bad answers the accurate
    // judge gets right: a41, a45, a47 (a43 it gets wrong, agreeing with the lenient one).
    let plan = next(d, &server, "pat");
    let order: Vec<&str> = plan["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item"].as_str().unwrap())
        .collect();
    assert_eq!(order.len(), 8, "{plan}");
    let mut first: Vec<&str> = order[..3].to_vec();
    first.sort_unstable();
    assert_eq!(first, ["a41", "a45", "a47"], "{plan}");
    assert!(
        plan["next"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("judges disagree on good")
    );
    assert!(order[3..].iter().all(|i| !first.contains(i)));
    // The stop rule: sam labels 16 items, then 16 more; the labels still needed fall.
    let import = |range: std::ops::Range<usize>| {
        let mut csv = String::from("item,criterion,verdict\n");
        for i in range {
            let _ = writeln!(
                csv,
                "a{i},good,{}",
                if i % 2 == 0 { "MET" } else { "UNMET" }
            );
        }
        std::fs::write(d.join("sam.csv"), csv).unwrap();
        ok(&rubricate(
            d,
            &server.url,
            &[
                "labels",
                "import",
                "sam.csv",
                "--dataset",
                "answers.jsonl",
                "--annotator",
                "sam",
            ],
        ));
    };
    import(0..16);
    let before = next(d, &server, "sam")["criteria"][0].clone();
    import(16..32);
    let after = next(d, &server, "sam")["criteria"][0].clone();
    assert_eq!(before["labelled"], 16, "{before}");
    assert_eq!(after["labelled"], 32, "{after}");
    let (b, a) = (
        before["more_needed"].as_u64().unwrap(),
        after["more_needed"].as_u64().unwrap(),
    );
    assert!(a < b, "more needed {b} → {a}");
    assert!(after["half_width"].as_f64().unwrap() < before["half_width"].as_f64().unwrap());
}

#[test]
fn log_probabilities_give_each_verdict_a_confidence_and_labels_next_asks_where_it_is_low() {
    let (dir, server) = setup();
    let d = dir.path();
    let grade = |extra: &[&str]| {
        let mut args = vec![
            "grade",
            "--rubric",
            "rubric.yaml",
            "answers.jsonl",
            "--judge",
            "openai/unsure",
            "--format",
            "jsonl",
            "--no-cache",
        ];
        args.extend_from_slice(extra);
        let out = rubricate(d, &server.url, &args);
        assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Not asked for: none sent, none recorded.
    let unasked = grade(&[]);
    assert!(!unasked.contains("confidence"), "{unasked}");
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.body.get("logprobs").is_none())
    );
    let out = grade(&["--logprobs", "--save"]);
    assert!(server.seen().iter().any(|s| s.body["logprobs"] == true));
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let n: u32 = v["item"].as_str().unwrap()[1..].parse().unwrap();
        let p = v["criteria"][0]["invocation"]["confidence"]
            .as_f64()
            .unwrap();
        let want = if n.is_multiple_of(5) { 0.55 } else { 0.99 };
        assert!((p - want).abs() < 1e-9, "a{n}: {p}");
    }
    // pat labelled a0..a39: of the rest, a40 and a45 are where the judge was unsure.
    let plan = next(d, &server, "pat");
    let mut first: Vec<&str> = plan["next"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|i| i["item"].as_str().unwrap())
        .collect();
    first.sort_unstable();
    assert_eq!(first, ["a40", "a45"], "{plan}");
    assert!(
        plan["next"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("the judge was unsure of good (p 0.55)"),
        "{plan}"
    );
}

#[test]
fn a_server_that_refuses_log_probabilities_is_asked_again_without_them() {
    let (dir, server) = setup();
    let d = dir.path();
    server.script([support::Reply::Status(
        400,
        None,
        "Unrecognized request argument supplied: logprobs".into(),
    )]);
    let out = rubricate(
        d,
        &server.url,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "answers.jsonl",
            "--judge",
            "openai/accurate",
            "--logprobs",
            "--concurrency",
            "1",
            "--format",
            "jsonl",
        ],
    );
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 48);
    assert!(!text.contains("\"failure\":{"), "{text}");
    let seen = server.seen();
    assert_eq!(seen[0].body["logprobs"], true);
    // Asked again without, and not asked for again.
    assert!(seen[1..].iter().all(|s| s.body.get("logprobs").is_none()));
    assert_eq!(seen.len(), 49);
}

/// Two runs of different rubrics: each criterion's best is a run whose rubric has it (not
/// the κ of another criterion at the same position), and each candidate says which run it
/// is — id, rubric and version, judge model, when — so adopting is never blind.
#[test]
fn best_per_criterion_matches_criteria_by_id_and_candidates_say_which_run_they_are() {
    let (dir, server) = setup();
    let d = dir.path();
    std::fs::write(
        d.join("tone.yaml"),
        "id: tone\nname: Tone\nversion: 2.0.0\ncriteria:\n  - { id: polite, requirement: The answer is polite }\n",
    )
    .unwrap();
    // `polite` is labelled as the accurate judge answers (its slips included): κ 1, above
    // its 0.75 on `good`.
    let mut labels = String::from("item,criterion,verdict\n");
    for i in 0..40 {
        let met = (i % 2 == 0) != (i % 8 == 3);
        let _ = writeln!(labels, "a{i},polite,{}", if met { "MET" } else { "UNMET" });
    }
    std::fs::write(d.join("polite.csv"), labels).unwrap();
    ok(&rubricate(
        d,
        &server.url,
        &[
            "labels",
            "import",
            "polite.csv",
            "--dataset",
            "answers.jsonl",
            "--annotator",
            "pat",
        ],
    ));
    let run_of = |rubric: &str| {
        let out = ok(&rubricate(
            d,
            &server.url,
            &[
                "calibrate",
                "--dataset",
                "answers.jsonl",
                "--rubric",
                rubric,
                "--judge",
                "openai/accurate",
                "--format",
                "json",
                "--bootstrap",
                "50",
            ],
        ));
        let v: Value = serde_json::from_str(&out).unwrap();
        v["candidates"][0]["run"].as_str().unwrap().to_owned()
    };
    let (good_run, tone_run) = (run_of("rubric.yaml"), run_of("tone.yaml"));
    let args = |format: &str| {
        vec![
            "calibrate".to_owned(),
            "--dataset".into(),
            "answers.jsonl".into(),
            "--run".into(),
            good_run.clone(),
            "--run".into(),
            tone_run.clone(),
            "--bootstrap".into(),
            "50".into(),
            "--format".into(),
            format.into(),
        ]
    };
    let json_args = args("json");
    let json_args: Vec<&str> = json_args.iter().map(String::as_str).collect();
    let report: Value = serde_json::from_str(&ok(&rubricate(d, &server.url, &json_args))).unwrap();
    let best = &report["best_per_criterion"];
    assert_eq!(
        best["good"]["candidate"],
        format!("run {good_run}"),
        "{report}"
    );
    assert_eq!(
        best["polite"]["candidate"],
        format!("run {tone_run}"),
        "{report}"
    );
    assert!((best["good"]["kappa"].as_f64().unwrap() - 0.75).abs() < 1e-9);
    assert!((best["polite"]["kappa"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(best.as_object().unwrap().len(), 2, "{report}");
    // Each candidate says which run it is.
    for (run, rubric) in [(&good_run, "quality@"), (&tone_run, "tone@2.0.0")] {
        let c = report["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["run"] == run.as_str())
            .unwrap();
        let about = c["about"].as_str().unwrap();
        assert!(
            about.starts_with(&format!("run {run} · {rubric}"))
                && about.contains(" · openai/accurate · 20"),
            "{about}"
        );
    }
    // The table names them too, each line within 80 columns.
    let table_args = args("table");
    let table_args: Vec<&str> = table_args.iter().map(String::as_str).collect();
    let table = ok(&rubricate(d, &server.url, &table_args));
    assert!(
        table.contains(&format!(
            "  run {tone_run} · tone@2.0.0 · openai/accurate · "
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!("best on good: run {good_run} (κ 0.750)")),
        "{table}"
    );
    assert!(
        table.contains(&format!("best on polite: run {tone_run} (κ 1.000)")),
        "{table}"
    );
}

/// `labels next --between A B`: the items that would tell two candidates apart first —
/// only their runs count, whatever else was graded.
#[test]
fn labels_next_between_two_candidates_puts_where_they_disagree_first() {
    let (dir, server) = setup();
    let d = dir.path();
    for (judge, name) in [
        ("openai/lenient", "lenient"),
        ("openai/accurate", "accurate"),
        ("openai/strict", "strict"),
    ] {
        let out = rubricate(
            d,
            &server.url,
            &[
                "grade",
                "--rubric",
                "rubric.yaml",
                "answers.jsonl",
                "--judge",
                judge,
                "--name",
                name,
                "--format",
                "jsonl",
            ],
        );
        assert!(out.status.code().is_some_and(|c| c <= 1));
    }
    let plan: Value = serde_json::from_str(&ok(&rubricate(
        d,
        &server.url,
        &[
            "labels",
            "next",
            "--dataset",
            "answers.jsonl",
            "--annotator",
            "pat",
            "--between",
            "lenient",
            "--between",
            "accurate",
            "--format",
            "json",
        ],
    )))
    .unwrap();
    assert_eq!(plan["runs"], 2, "{plan}");
    let mut first: Vec<&str> = plan["next"].as_array().unwrap()[..3]
        .iter()
        .map(|i| i["item"].as_str().unwrap())
        .collect();
    first.sort_unstable();
    // Where the lenient and the accurate judges part (see the test above).
    assert_eq!(first, ["a41", "a45", "a47"], "{plan}");
    let one = rubricate(
        d,
        &server.url,
        &[
            "labels",
            "next",
            "--dataset",
            "answers.jsonl",
            "--annotator",
            "pat",
            "--between",
            "lenient",
        ],
    );
    assert_eq!(one.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&one.stderr).contains("two runs or more"));
}
