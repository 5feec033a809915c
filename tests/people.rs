//! People against people, through the real binary: an assignment with an overlap, κ per
//! pair and Krippendorff's α against a hand computation, the judge beside each person, and
//! the adjudicated labels as the reference `metrics` uses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn rubricate(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.join(".user-config"))
        .env_remove("RUBRICATE_ANNOTATOR")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const DATASET: &str = "datasets/d.jsonl";

/// Ten items; a check marks `x` present on q1–q5 (the judge), and `y` on every item.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(&rubricate(dir.path(), &["init", "."], None));
    std::fs::write(
        dir.path().join("rubrics/r.yaml"),
        "id: r\ncriteria:\n  - { id: x, requirement: Has an x, method: { check: regex, args: { pattern: x } } }\n  - { id: y, requirement: Has a y, method: { check: regex, args: { pattern: y } } }\n",
    )
    .unwrap();
    let mut items = String::new();
    for i in 1..=10 {
        let text = if i <= 5 { "x y" } else { "y" };
        let _ = writeln!(items, "{{\"id\": \"q{i}\", \"submission\": \"{text}\"}}");
    }
    std::fs::write(dir.path().join(DATASET), items).unwrap();
    // Exit 1: some items fail the rubric (a verdict, not an error).
    let graded = rubricate(
        dir.path(),
        &["grade", "--rubric", "rubrics/r.yaml", DATASET, "--save"],
        None,
    );
    assert_eq!(
        graded.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&graded.stderr)
    );
    dir
}

/// `who` labels criterion x MET on `met` (UNMET elsewhere) for q1–q10.
fn label(dir: &Path, who: &str, met: &[u32]) {
    let verdicts: Vec<(u32, &str)> = (1..=10)
        .map(|i| (i, if met.contains(&i) { "MET" } else { "UNMET" }))
        .collect();
    label_each(dir, who, &verdicts);
}

/// The workspace's only run.
fn the_run(dir: &Path) -> String {
    std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap()
}

/// `labels agreement` as a table.
fn agreement_table(dir: &Path) -> String {
    ok(&rubricate(
        dir,
        &[
            "labels",
            "agreement",
            "--dataset",
            DATASET,
            "--bootstrap",
            "0",
        ],
        None,
    ))
}

fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(&rubricate(dir, args, None))).unwrap()
}

fn kappa_of(report: &serde_json::Value, criterion: &str) -> f64 {
    report["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["criterion"] == criterion)
        .unwrap()["kappa"]
        .as_f64()
        .unwrap()
}

#[test]
fn pairs_and_alpha_match_a_hand_computation_beside_the_judge() {
    let ws = workspace();
    // alice agrees with the judge; bob differs on q5 and q6.
    label(ws.path(), "alice", &[1, 2, 3, 4, 5]);
    label(ws.path(), "bob", &[1, 2, 3, 4, 6]);
    let r = json(
        ws.path(),
        &[
            "labels",
            "agreement",
            "--dataset",
            DATASET,
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    );
    assert_eq!(r["annotators"], serde_json::json!(["alice", "bob"]));
    // Both MET 4, both UNMET 4, one each way: p₀ 0.8, pₑ 0.5 → κ 0.6.
    let pair = &r["pairs"][0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("alice"), Some("bob"))
    );
    assert_eq!(pair["items"], 10);
    assert!((kappa_of(&pair["report"], "x") - 0.6).abs() < 1e-9);
    // α (nominal, two coders, 20 pairable values): 1 − 19 · 4 / (10 · 10 · 2) = 0.62.
    let alpha = r["alpha"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["criterion"] == "x")
        .unwrap();
    assert_eq!(alpha["level"], "nominal");
    assert_eq!(alpha["items"], 10);
    assert!(
        (alpha["alpha"].as_f64().unwrap() - 0.62).abs() < 1e-9,
        "{alpha}"
    );
    // The judge against each: alice exactly, bob as alice does.
    let judge = r["judge"].as_array().unwrap();
    assert_eq!(judge[0]["annotator"], "alice");
    assert!((kappa_of(&judge[0]["report"], "x") - 1.0).abs() < 1e-9);
    assert!((kappa_of(&judge[1]["report"], "x") - 0.6).abs() < 1e-9);
    let table = agreement_table(ws.path());
    for line in [
        "κ alice ~ bob",
        "κ judge ~ alice",
        "α (nominal, all people)",
    ] {
        assert!(table.contains(line), "{table}");
    }
}

#[test]
fn adjudicated_labels_are_the_reference_metrics_use() {
    let ws = workspace();
    label(ws.path(), "alice", &[1, 2, 3, 4, 6]);
    label(ws.path(), "bob", &[1, 2, 3, 5, 6]);
    let run = the_run(ws.path());
    let metrics = |extra: &[&str]| {
        let mut args = vec![
            "metrics",
            "--run",
            run.as_str(),
            "--format",
            "json",
            "--bootstrap",
            "0",
        ];
        args.extend_from_slice(extra);
        rubricate(ws.path(), &args, None)
    };
    // Two annotators and no adjudication: metrics asks whose labels are the truth.
    assert!(!metrics(&[]).status.success());
    // Adjudicated where they differ: q4 MET, q5 MET, the rest as both said — the judge's.
    label(ws.path(), "adjudicated", &[1, 2, 3, 4, 5]);
    let by_default: serde_json::Value = serde_json::from_str(&ok(&metrics(&[]))).unwrap();
    assert_eq!(by_default["annotator"], "adjudicated");
    // Between annotators: alice and bob only (they differ on q4 and q5: α 0.62).
    let alpha = by_default["between_annotators"]["x"]["krippendorff_alpha"]
        .as_f64()
        .unwrap();
    assert!((alpha - 0.62).abs() < 1e-9, "{alpha}");
    assert!((kappa_of(&by_default["report"], "x") - 1.0).abs() < 1e-9);
    let asked: serde_json::Value =
        serde_json::from_str(&ok(&metrics(&["--reference", "adjudicated"]))).unwrap();
    assert_eq!(asked["annotator"], "adjudicated");
    let alice: serde_json::Value =
        serde_json::from_str(&ok(&metrics(&["--reference", "alice"]))).unwrap();
    assert!((kappa_of(&alice["report"], "x") - 0.6).abs() < 1e-9);
    // The adjudicated labels are not a person: people are alice and bob; the judge is
    // compared with them and with the adjudication, last.
    let r = json(
        ws.path(),
        &[
            "labels",
            "agreement",
            "--dataset",
            DATASET,
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    );
    assert_eq!(r["annotators"], serde_json::json!(["alice", "bob"]));
    assert_eq!(r["pairs"].as_array().unwrap().len(), 1);
    assert_eq!(r["judge"][2]["annotator"], "adjudicated");
}

#[test]
fn an_assignment_gives_each_their_items_and_labels_next_keeps_to_them() {
    let ws = workspace();
    let out = ok(&rubricate(
        ws.path(),
        &[
            "labels",
            "assign",
            "--dataset",
            DATASET,
            "--annotators",
            "alice,bob",
            "--overlap",
            "0.2",
            "--seed",
            "3",
        ],
        None,
    ));
    assert!(
        out.contains("10 items of 'd' assigned (2 to two people)"),
        "{out}"
    );
    let file = ws.path().join("labels/d/assignment.json");
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mine = |who: &str| -> Vec<String> {
        a["items"][who]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let (alice, bob) = (mine("alice"), mine("bob"));
    assert_eq!(
        alice.len() + bob.len(),
        12,
        "each item once, two of them twice"
    );
    assert_eq!(alice.len(), 6);
    let shared: Vec<&String> = alice.iter().filter(|i| bob.contains(i)).collect();
    assert_eq!(shared.len(), 2);
    // The same seed gives the same assignment.
    let before = std::fs::read_to_string(&file).unwrap();
    ok(&rubricate(
        ws.path(),
        &[
            "labels",
            "assign",
            "--dataset",
            DATASET,
            "--annotators",
            "alice,bob",
            "--overlap",
            "0.2",
            "--seed",
            "3",
        ],
        None,
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let plan = json(
        ws.path(),
        &[
            "labels",
            "next",
            "--dataset",
            DATASET,
            "--annotator",
            "bob",
            "--format",
            "json",
            "-n",
            "50",
        ],
    );
    assert_eq!(plan["assigned"], 6);
    let planned: Vec<&str> = plan["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["item"].as_str().unwrap())
        .collect();
    assert_eq!(planned.len(), 6);
    assert!(
        planned.iter().all(|i| bob.iter().any(|b| b == i)),
        "{planned:?} vs {bob:?}"
    );
    // A share that is not one is refused, and names what it wants.
    let bad = rubricate(
        ws.path(),
        &[
            "labels",
            "assign",
            "--dataset",
            DATASET,
            "--annotators",
            "alice,bob",
            "--overlap",
            "20",
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("between 0 and 1"));
}

/// `who`'s verdicts on criterion x, one `(item number, verdict)` each.
fn label_each(dir: &Path, who: &str, verdicts: &[(u32, &str)]) {
    let mut lines = String::new();
    for (i, v) in verdicts {
        let _ = writeln!(lines, "q{i} x {v}");
    }
    ok(&rubricate(
        dir,
        &[
            "labels",
            "set",
            "--dataset",
            DATASET,
            "--annotator",
            who,
            "--rubric",
            "rubrics/r.yaml",
            "--stdin",
        ],
        Some(&lines),
    ));
}

#[test]
fn labels_agreement_and_metrics_give_people_the_same_alpha_over_the_same_items() {
    let ws = workspace();
    // alice MET on q1–q5; bob MET on q1–q4 and q6, and cannot assess q9 and q10 (an
    // abstention is no value: those items have one rating and are not units).
    label(ws.path(), "alice", &[1, 2, 3, 4, 5]);
    let mut bob: Vec<(u32, &str)> = (1..=8)
        .map(|i| {
            (
                i,
                if [1, 2, 3, 4, 6].contains(&i) {
                    "MET"
                } else {
                    "UNMET"
                },
            )
        })
        .collect();
    bob.extend([(9, "CANNOT_ASSESS"), (10, "CANNOT_ASSESS")]);
    label_each(ws.path(), "bob", &bob);
    // By hand: 8 units, 16 values (10 MET, 6 UNMET), q5 and q6 disagree:
    // α = 1 − (n − 1)·D_o/D_e = 1 − 15 · 4 / (16² − 10² − 6²) = 0.5.
    let people = json(
        ws.path(),
        &[
            "labels",
            "agreement",
            "--dataset",
            DATASET,
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    );
    let x = &people["alpha"][0];
    assert_eq!(x["criterion"], "x");
    assert_eq!(x["items"], 8, "{x}");
    assert!((x["alpha"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{x}");
    let run = the_run(ws.path());
    let metrics = json(
        ws.path(),
        &[
            "metrics",
            "--run",
            &run,
            "--annotator",
            "alice",
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    );
    let between = &metrics["between_annotators"]["x"];
    assert_eq!(between["items"], x["items"], "{between}");
    assert_eq!(between["krippendorff_alpha"], x["alpha"], "{between}");
    assert_eq!(between["level"], "nominal");
    assert_eq!(between["fleiss_kappa"]["units"], 8, "{between}");
    // The tables print the same α and N.
    let table = agreement_table(ws.path());
    let row = table
        .lines()
        .find(|l| l.starts_with("x ") && l.contains("α (nominal, all people)"))
        .unwrap();
    assert_eq!(
        row.split_whitespace().rev().take(2).collect::<Vec<_>>(),
        ["0.500", "8"],
        "{table}"
    );
    let table = ok(&rubricate(
        ws.path(),
        &[
            "metrics",
            "--run",
            &run,
            "--annotator",
            "alice",
            "--bootstrap",
            "0",
        ],
        None,
    ));
    assert!(
        table.contains("x                      α (nominal, all people) 0.500 over 8 items"),
        "{table}"
    );
}
