//! `CPython` 3.12 made `sum()` of floats compensated, and rubric, dataknobs and
//! `agentic_v2_eval` total with it: the same file scores differently, in the last bit, on
//! Python 3.11 and 3.12+. rubricate sums as 3.12+ by default and as 3.11 under
//! `RUBRICATE_PYTHON=3.11`; `inspect` says which. The expected numbers are the libraries'
//! own (rubric 2.2.0 `PerCriterionGrader.aggregate`, dataknobs-bots 0.6.9
//! `RubricExecutor.evaluate`, scorer.py at tafreeman/prompts 8007ca8), run under `CPython`
//! 3.11.7 and 3.13.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn rubricate(python: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env_remove("RUBRICATE_PYTHON");
    if let Some(v) = python {
        cmd.env("RUBRICATE_PYTHON", v);
    }
    cmd.output().unwrap()
}

/// (score, passed) of the one item under each Python.
fn scored(
    dir: &Path,
    rubric: &str,
    text: &str,
    truth: &Value,
    python: Option<&str>,
) -> (f64, bool) {
    let r = dir.join(rubric);
    std::fs::write(&r, text).unwrap();
    let d = dir.join("items.jsonl");
    std::fs::write(
        &d,
        json!({"id": "x", "submission": "s", "ground_truth": *truth}).to_string() + "\n",
    )
    .unwrap();
    let out = rubricate(
        python,
        &[
            "score",
            d.to_str().unwrap(),
            "--rubric",
            r.to_str().unwrap(),
            "--format",
            "jsonl",
        ],
    );
    let row: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (
        row["score"].as_f64().unwrap(),
        row["passed"].as_bool().unwrap(),
    )
}

#[test]
fn dataknobs_passes_an_exact_tie_on_python_3_12_and_fails_it_on_3_11() {
    let dir = tempfile::tempdir().unwrap();
    let level = |i: usize, w: f64| {
        json!({"id": format!("c{i}"), "name": format!("C{i}"), "description": "x", "weight": w,
               "levels": [{"id": "fail", "label": "Fail", "description": "no", "score": 0.0},
                          {"id": "pass", "label": "Pass", "description": "yes", "score": 0.7}],
               "scoring_method": {"type": "deterministic", "function_ref": format!("app:f{i}")}})
    };
    let rubric = json!({"id": "sum", "name": "Sum", "description": "d", "version": "1.0.0",
        "target_type": "content", "pass_threshold": 0.7,
        "criteria": [level(0, 0.1), level(1, 0.2), level(2, 0.3)]})
    .to_string();
    let truth = json!(["pass", "pass", "pass"]);
    // dataknobs on 3.13: 0.7, passed; on 3.11: 0.6999999999999997, failed.
    assert_eq!(
        scored(dir.path(), "dk.json", &rubric, &truth, None),
        (0.7, true)
    );
    assert_eq!(
        scored(dir.path(), "dk.json", &rubric, &truth, Some("3.11")),
        (0.699_999_999_999_999_7, false)
    );
    assert_eq!(
        scored(dir.path(), "dk.json", &rubric, &truth, Some("3.13")),
        (0.7, true)
    );
}

#[test]
fn rubric_and_agentic_sum_as_their_python_does() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = r#"[{"weight": 0.1, "requirement": "a"}, {"weight": 0.2, "requirement": "b"},
        {"weight": 0.3, "requirement": "c"}, {"weight": 0.4, "requirement": "d"}]"#;
    let truth = json!(["MET", "MET", "MET", "UNMET"]);
    // rubric on 3.13: 0.6; on 3.11: 0.6000000000000001.
    assert_eq!(scored(dir.path(), "r.json", rubric, &truth, None).0, 0.6);
    assert_eq!(
        scored(dir.path(), "r.json", rubric, &truth, Some("3.11")).0,
        0.600_000_000_000_000_1
    );
    let agentic = "criteria:\n  - {name: a, weight: 0.1}\n  - {name: b, weight: 0.2}\n  - {name: c, weight: 0.3}\n";
    let truth = json!([0.7, 0.7, 0.7]);
    // The Scorer on 3.13: 0.7; on 3.11: 0.6999999999999997.
    assert_eq!(scored(dir.path(), "a.yaml", agentic, &truth, None).0, 0.7);
    assert_eq!(
        scored(dir.path(), "a.yaml", agentic, &truth, Some("3.11")).0,
        0.699_999_999_999_999_7
    );
}

#[test]
fn inspect_says_which_python_the_totals_follow_and_a_bad_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.json");
    std::fs::write(&r, r#"[{"weight": 1, "requirement": "a"}]"#).unwrap();
    let r = r.to_str().unwrap();
    let said = String::from_utf8_lossy(&rubricate(None, &["inspect", r]).stdout).into_owned();
    assert!(
        said.contains("totals summed as Python 3.12+'s sum() (compensated); RUBRICATE_PYTHON=3.11 sums them in order"),
        "{said}"
    );
    let said =
        String::from_utf8_lossy(&rubricate(Some("3.11"), &["inspect", r]).stdout).into_owned();
    assert!(
        said.contains("totals summed in order, as Python 3.11 and earlier"),
        "{said}"
    );
    let out = rubricate(Some("latest"), &["inspect", r]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("RUBRICATE_PYTHON is 'latest': give the Python version your other systems' libraries run on, such as 3.11 or 3.13"),
        "{err}"
    );
    // rubricate's own format sums in order unless it says `summation: compensated`.
    let native = dir.path().join("n.yaml");
    std::fs::write(&native, "id: n\ncriteria:\n  - {id: a, requirement: A}\n").unwrap();
    let said =
        String::from_utf8_lossy(&rubricate(None, &["inspect", native.to_str().unwrap()]).stdout)
            .into_owned();
    assert!(!said.contains("totals summed"), "{said}");
}

#[test]
fn rubrics_in_rubric_s_rubrics_jsonl_layout_sum_as_its_yaml_rubrics_do() {
    let dir = tempfile::tempdir().unwrap();
    // A line of rubric's `scripts/rubrics.jsonl` (query, rubric with titled sections, golden
    // response), with the weights of the test above: rubric scores it 0.6 on 3.13 and
    // 0.6000000000000001 on 3.11, as it scores the same rubric from a file.
    let line = json!({"query": "q", "goldenResponse": "g",
        "rubric": {"id": "r", "sections": [{"id": "s", "title": "S", "criteria": [
            {"id": "a", "requirement": "A", "weight": 0.1}, {"id": "b", "requirement": "B", "weight": 0.2},
            {"id": "c", "requirement": "C", "weight": 0.3}, {"id": "d", "requirement": "D", "weight": 0.4}]}]},
        "ground_truth": ["MET", "MET", "MET", "UNMET"]});
    let jsonl = dir.path().join("rubrics.jsonl");
    std::fs::write(&jsonl, line.to_string() + "\n").unwrap();
    let list = dir.path().join("rubrics.json");
    std::fs::write(&list, json!([line]).to_string()).unwrap();
    for file in [&jsonl, &list] {
        for (python, want) in [
            (None, 0.6),
            (Some("3.13"), 0.6),
            (Some("3.11"), 0.600_000_000_000_000_1),
        ] {
            let out = rubricate(
                python,
                &["score", file.to_str().unwrap(), "--format", "jsonl"],
            );
            let row: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
            assert_eq!(row["score"].as_f64(), Some(want), "{python:?} {row}");
        }
    }
    let said = rubricate(Some("3.11"), &["inspect", jsonl.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.contains("1 of them rubric's (its rubrics.jsonl layout): totals summed in order"),
        "{said}"
    );
}
