//! `rubricate runs compare A B` as a regression gate: exit codes, regressions first in every
//! format, and the paired tests against a hand computation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::Value;

const RUBRIC: &str = "id: r
name: R
version: 1.0.0
pass_threshold: 0.6
criteria:
  - id: has_x
    requirement: mentions x
    method: { check: contains, args: { text: x } }
  - id: has_y
    requirement: mentions y
    weight: 2
    method: { check: contains, args: { text: y } }
";

fn rubricate(ws: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(ws)
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", ws.join(".data"))
        .env("XDG_CONFIG_HOME", ws.join(".config"))
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Grades `outputs` (one item per output, ids `i0`, `i1`, …) and saves the run; its id.
fn saved_run(ws: &Path, name: &str, outputs: &[&str]) -> String {
    let mut data = String::new();
    for (i, o) in outputs.iter().enumerate() {
        let _ = writeln!(data, "{{\"id\":\"i{i}\",\"output\":\"{o}\"}}");
    }
    let file = ws.join(format!("{name}.jsonl"));
    std::fs::write(&file, data).unwrap();
    let out = rubricate(
        ws,
        &[
            "grade",
            "--rubric",
            "r.yaml",
            file.to_str().unwrap(),
            "--save",
        ],
    );
    let said = text(&out.stderr);
    said.lines()
        .find_map(|l| l.strip_prefix("run ")?.split(':').next().map(str::to_owned))
        .unwrap_or_else(|| panic!("no run id in: {said}"))
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = rubricate(dir.path(), &["init", "."]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(dir.path().join("r.yaml"), RUBRIC).unwrap();
    dir
}

/// A: 12 items all with x and y (score 1, pass). B: items 0..6 lose y (score 1/3, fail),
/// item 6 loses x (score 2/3, still passes), the rest unchanged.
fn regressing_pair(ws: &Path) -> (String, String) {
    let a = saved_run(ws, "a", &["x y"; 12]);
    let mut b = vec!["x"; 6];
    b.push("y");
    b.extend(["x y"; 5]);
    (a, saved_run(ws, "b", &b))
}

/// The kinds of a JSON report's regressions, in order.
fn regression_kinds(doc: &Value) -> Vec<&str> {
    doc["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect()
}

fn compare(ws: &Path, a: &str, b: &str, more: &[&str]) -> Output {
    let mut args = vec!["runs", "compare", a, b];
    args.extend(more);
    rubricate(ws, &args)
}

#[test]
fn regressions_exit_1_and_come_first_in_every_format() {
    let dir = workspace();
    let ws = dir.path();
    let (a, b) = regressing_pair(ws);

    let table = compare(ws, &a, &b, &[]);
    assert_eq!(table.status.code(), Some(1), "{}", text(&table.stderr));
    let t = text(&table.stdout);
    assert!(t.starts_with("FAIL: B regresses A"), "{t}");
    let regressions_at = t.find("REGRESSIONS").unwrap();
    assert!(regressions_at < t.find("CRITERION").unwrap(), "{t}");
    for what in [
        "mean score",
        "criterion has_y",
        "criterion has_x",
        "items passing",
        "item i0",
        "item i6",
    ] {
        assert!(
            t[regressions_at..t.find("\nA = ").unwrap()].contains(what),
            "{what}: {t}"
        );
    }

    let json = compare(ws, &a, &b, &["--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    let first_data = keys.iter().position(|k| *k == "regressions").unwrap();
    assert!(first_data < keys.iter().position(|k| *k == "criteria").unwrap());
    assert_eq!(doc["regressed"], true);
    assert_eq!(doc["regressed_items"], 7);
    let kinds: Vec<&str> = regression_kinds(&doc);
    assert_eq!(
        &kinds[..4],
        ["mean", "items passing", "criterion", "criterion"]
    );
    assert_eq!(kinds.iter().filter(|k| **k == "item").count(), 7);

    let jsonl = compare(ws, &a, &b, &["--format", "jsonl"]);
    assert_eq!(jsonl.status.code(), Some(1));
    let records: Vec<Value> = text(&jsonl.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first_other = records
        .iter()
        .position(|r| r["record"] != "regression")
        .unwrap();
    assert_eq!(first_other, kinds.len(), "regressions first");
    assert!(
        records[first_other..]
            .iter()
            .all(|r| r["record"] != "regression")
    );
    assert_eq!(records.last().unwrap()["record"], "summary");

    let md = compare(ws, &a, &b, &["--format", "md"]);
    assert_eq!(md.status.code(), Some(1));
    let m = text(&md.stdout);
    assert!(
        m.find("### Regressions").unwrap() < m.find("### Criteria").unwrap(),
        "{m}"
    );
    assert!(
        m.contains("| item i0 |") && m.contains("FAIL: B regresses A"),
        "{m}"
    );

    // Items 0..6 lost their pass: McNemar 6 to 0, p = 2/64 < 0.05; significant fails too.
    let items = doc["regressions"][1].clone();
    assert!(
        (items["p_value"].as_f64().unwrap() - 2.0 / 64.0).abs() < 1e-12,
        "{items}"
    );
    assert_eq!(items["significant"], true);
    let strict = compare(ws, &a, &b, &["--fail-on", "significant"]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict.stdout));
}

#[test]
fn identical_runs_exit_0_and_usage_errors_exit_2() {
    let dir = workspace();
    let ws = dir.path();
    let (a, _) = regressing_pair(ws);
    let again = saved_run(ws, "again", &["x y"; 12]);
    for format in ["table", "json", "jsonl", "md"] {
        let out = compare(ws, &a, &again, &["--format", format]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            text(&out.stdout)
        );
    }
    let out = compare(ws, &a, &again, &[]);
    assert!(text(&out.stdout).starts_with("PASS: no regression"));

    let unknown = compare(ws, &a, "no-such-run", &[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains("no-such-run"),
        "{}",
        text(&unknown.stderr)
    );
    assert_eq!(
        compare(ws, &a, &again, &["--tolerance", "2"]).status.code(),
        Some(2)
    );
    assert_eq!(
        compare(ws, &a, &again, &["--fail-on", "some"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        compare(ws, &a, &again, &["--format", "xml"]).status.code(),
        Some(2)
    );
}

#[test]
fn small_drops_pass_significant_and_tolerance_but_fail_any() {
    let dir = workspace();
    let ws = dir.path();
    // One item of 12 drops (x lost: 1 → 2/3, still passing): a drop, not significant.
    let a = saved_run(ws, "a", &["x y"; 12]);
    let mut b = vec!["y"];
    b.extend(["x y"; 11]);
    let b = saved_run(ws, "b", &b);
    assert_eq!(compare(ws, &a, &b, &[]).status.code(), Some(1));
    let significant = compare(
        ws,
        &a,
        &b,
        &["--fail-on", "significant", "--format", "json"],
    );
    assert_eq!(
        significant.status.code(),
        Some(0),
        "{}",
        text(&significant.stdout)
    );
    let doc: Value = serde_json::from_slice(&significant.stdout).unwrap();
    assert_eq!(doc["regressed"], true);
    assert_eq!(doc["failed"], false);
    // has_x: 1 lost, 0 gained: McNemar p = 1 (2 · ½, capped).
    let crit = &doc["criteria"].as_array().unwrap()[0];
    assert_eq!(crit["id"], "has_x");
    assert!((crit["p_value"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    // Hand computation of the paired bootstrap: 1,000 resamples from ChaCha8 seed 0, item
    // indices drawn as u32 in 0..n; two-sided p = 2·min(share ≤ 0, share ≥ 0).
    let deltas: Vec<f64> = (0..12)
        .map(|i| if i == 0 { 2.0 / 3.0 - 1.0 } else { 0.0 })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut means = Vec::new();
    for _ in 0..1000 {
        let sum: f64 = (0..12)
            .map(|_| deltas[rng.random_range(0..12_u32) as usize])
            .sum();
        means.push(sum / 12.0);
    }
    let below = means.iter().filter(|m| **m <= 0.0).count();
    let above = means.iter().filter(|m| **m >= 0.0).count();
    let p = (2.0 * below.min(above) as f64 / 1000.0).min(1.0);
    means.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        let at = q * 999.0;
        let (lo, frac) = (at.floor() as usize, at - at.floor());
        means[lo] + (means[(lo + 1).min(999)] - means[lo]) * frac
    };
    let mean = &doc["mean"];
    assert!(
        (mean["p_value"].as_f64().unwrap() - p).abs() < 1e-12,
        "{mean} vs {p}"
    );
    assert!(
        (mean["ci"]["low"].as_f64().unwrap() - quantile(0.025)).abs() < 1e-12,
        "{mean}"
    );
    assert!(
        (mean["ci"]["high"].as_f64().unwrap() - quantile(0.975)).abs() < 1e-12,
        "{mean}"
    );
    assert!(p > 0.05, "one item of twelve is not significant: {p}");
    // A tolerance above the drop (1/3 on the item, 1/36 on the mean) lets the scores
    // through; the criterion's pass rate still dropped (a tolerance is on scores only).
    let tolerant = compare(ws, &a, &b, &["--tolerance", "0.34", "--format", "json"]);
    assert_eq!(tolerant.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&tolerant.stdout).unwrap();
    let kinds: Vec<&str> = regression_kinds(&doc);
    assert_eq!(kinds, ["criterion"], "{doc}");
}
