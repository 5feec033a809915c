//! `rubricate runs import`: other systems' results kept as runs — agentv results JSONL
//! matched to its eval file by test id, an autorubric experiment folder to its dataset by
//! position — scored by the rubric's arithmetic (autorubric's own scores come back).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/imports");

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

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = rubricate(dir.path(), &["init", "."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The imported run's rows (`runs show --format jsonl`).
fn rows(ws: &Path, id: &str) -> Vec<Value> {
    let out = rubricate(ws, &["runs", "show", id, "--format", "jsonl"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn run_id(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':')
        .to_owned()
}

#[test]
fn an_agentv_baseline_becomes_a_run_of_its_eval_file() {
    let ws = workspace();
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/agentv/suite.baseline.jsonl"),
            "--dataset",
            &format!("{FIXTURES}/agentv/suite.yaml"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("4 items, 14 cells imported from agentv results"),
        "{stdout}"
    );
    // summary-task's hits name criteria the eval file no longer has, and the script
    // grader's check is not a rubric criterion: said, and left out.
    assert!(
        text(&out.stderr).contains("5 verdicts name no criterion"),
        "{}",
        text(&out.stderr)
    );
    let rows = rows(ws.path(), &run_id(&stdout));
    let by = |id: &str| rows.iter().find(|r| r["item"] == id).cloned().unwrap();
    // Its rubric grader scored 0.5: two of four criteria met.
    let q = by("code-quality-multi-eval");
    assert_eq!(q["score"], 0.5);
    assert_eq!(q["passed"], false);
    // A score-range grader: 10/10 and 9/10 at weights 2 and 1.
    let s = by("summary-multi-criteria-score-ranges-proposed");
    assert!(
        (s["score"].as_f64().unwrap() - 0.966_666_666_666_666_7).abs() < 1e-12,
        "{s}"
    );
}

#[test]
fn an_autorubric_experiment_keeps_autorubrics_scores() {
    let ws = workspace();
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/autorubric/fake-run"),
            "--dataset",
            &format!("{FIXTURES}/autorubric/essays.json"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = rows(ws.path(), &run_id(&text(&out.stdout)));
    let expected: Vec<Value> =
        std::fs::read_to_string(format!("{FIXTURES}/autorubric/fake-run/items.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    assert_eq!(rows.len(), expected.len());
    for (row, e) in rows.iter().zip(&expected) {
        let want = e["report"]["score"].as_f64().unwrap();
        let got = row["score"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-12,
            "item {}: {got} vs autorubric {want}",
            e["item_idx"]
        );
    }
}

#[test]
fn an_autorubric_panel_of_graded_records_imports_with_autorubrics_scores() {
    let ws = workspace();
    let panel = format!("{FIXTURES}/autorubric/graded_records.json");
    // Named for what it is, with the command that keeps it.
    let said = rubricate(ws.path(), &["inspect", &panel]);
    assert!(
        text(&said.stdout).contains("an autorubric ensemble's graded records"),
        "{}{}",
        text(&said.stdout),
        text(&said.stderr)
    );
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &panel,
            "--dataset",
            &format!("{FIXTURES}/autorubric/essays.json"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = rows(ws.path(), &run_id(&text(&out.stdout)));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&panel).unwrap()).unwrap();
    let expected = doc["graded_records"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len());
    for (row, e) in rows.iter().zip(expected) {
        let want = e["report"]["score"].as_f64().unwrap();
        let got = row["score"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-12,
            "item {}: {got} vs {want}",
            e["item_idx"]
        );
    }
}

#[test]
fn what_cannot_be_imported_says_what_to_give() {
    let ws = workspace();
    // agentv results do not carry the items they graded.
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/agentv/suite.baseline.jsonl"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--dataset FILE"),
        "{}",
        text(&out.stderr)
    );
    // An experiment's items.jsonl alone: the folder names the run.
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/autorubric/fake-run/items.jsonl"),
            "--dataset",
            &format!("{FIXTURES}/autorubric/essays.json"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("import its folder"),
        "{}",
        text(&out.stderr)
    );
    // Results of another dataset: nothing matches, nothing is kept quietly.
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/agentv/suite.baseline.jsonl"),
            "--dataset",
            &format!("{FIXTURES}/autorubric/essays.json"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no result matched"),
        "{}",
        text(&out.stderr)
    );
    let listed = text(&rubricate(ws.path(), &["runs", "list"]).stdout);
    assert!(
        listed.contains("no runs yet"),
        "no empty run is kept: {listed}"
    );
}

#[test]
fn agentv_yaml_results_of_the_oldest_generation_import_too() {
    let ws = workspace();
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            &format!("{FIXTURES}/agentv/old.results.yaml"),
            "--dataset",
            &format!("{FIXTURES}/agentv/old.eval.yaml"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("2 items, 3 cells imported from agentv results"),
        "{stdout}"
    );
    let rows = rows(ws.path(), &run_id(&stdout));
    let by = |id: &str| rows.iter().find(|r| r["item"] == id).cloned().unwrap();
    // One `---` document per test: hits are met, misses unmet.
    assert_eq!(by("greet")["score"], 0.5);
    assert_eq!(by("bye")["score"], 1.0);
    assert_eq!(by("bye")["passed"], true);
    // `inspect` names the file and says how to import it.
    let out = rubricate(
        ws.path(),
        &["inspect", &format!("{FIXTURES}/agentv/old.results.yaml")],
    );
    assert!(
        text(&out.stdout).contains("agentv results (YAML)")
            && text(&out.stdout).contains("runs import"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn results_whose_verdicts_name_no_criterion_say_so() {
    let ws = workspace();
    let dir = ws.path().join("evals");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("suite.yaml"),
        "tests:\n  - id: t\n    input: q\n    criteria: Answers the question\n",
    )
    .unwrap();
    // agentv's default judge writes its own aspects, which no criterion of the file names.
    std::fs::write(
        dir.join("suite.baseline.jsonl"),
        r#"{"test_id":"t","score":1,"assertions":[{"text":"Is polite","passed":true}]}"#.to_owned()
            + "\n",
    )
    .unwrap();
    let out = rubricate(
        ws.path(),
        &[
            "runs",
            "import",
            "evals/suite.baseline.jsonl",
            "--dataset",
            "evals/suite.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("1 results are for items of")
            && err.contains("none of their 1 verdicts names a criterion"),
        "{err}"
    );
}
