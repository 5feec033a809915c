//! dataknobs' scoring methods as dataknobs reads them. `function_ref` is `module:function`,
//! imported as written: only rubricate's own module (`rubricate.checks:NAME`, what
//! `convert` writes) and dataknobs' meta-rubric functions are built-in checks; any other
//! function is the application's code — judged on its levels with a note, never replaced
//! by a built-in check that shares its name. A method lacking its field (a `schema_ref`,
//! which dataknobs never reads; no `function_ref`; no `decode_prompt`) loads, and that
//! criterion errors and scores 0, with a note.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

fn rubricate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

const FILE: &str = "tests/fixtures/dataknobs_app/function_refs.yaml";

#[test]
fn only_rubricates_own_functions_are_built_in_checks() {
    let out = rubricate(&["inspect", FILE, "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let methods: Vec<String> = v["rubrics"][0]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c["id"].as_str().unwrap(), c["method"]["check"]))
        .collect();
    assert_eq!(
        methods,
        [
            // No method: judged (on its levels).
            "json null",
            "cov null",
            "words null",
            "own \"is_json\"",
            "meta \"rubric_coverage\"",
        ],
        "{v}"
    );
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 3, "{notes:#?}");
    assert!(
        notes[0].ends_with(
            "function_ref 'myapp:json_valid' is the application's own code, which rubricate does not run: this criterion is judged by an LLM on its levels instead; rubricate's check 'json_valid' has the same name but is not that function, so it is not used (name a built-in check as 'rubricate.checks:NAME', or use a native `command` check)"
        ),
        "{}",
        notes[0]
    );
    assert!(notes[1].contains("'quiz.checks:coverage' is the application's own code"));
    assert!(notes[2].contains("'myapp.metrics:word_count' is the application's own code"));
}

/// dataknobs' own test rubrics (`test_executor.py`: `test:has_title`, `test:word_count`)
/// load, their functions the application's, and score from the levels those functions
/// returned as dataknobs scores them (the numbers in the corpus's SCORES.tsv).
#[test]
fn dataknobs_own_test_rubrics_load_and_score() {
    let dir = "tests/fixtures/corpus/KBS-Labs_dataknobs/packages/bots/tests/unit/rubrics";
    let rubric = format!("{dir}/test_executor.py--test_multi_criteria_weighted.json");
    let data = format!("{dir}/test_executor.py--test_multi_criteria_weighted-targets.jsonl");
    let inspect = rubricate(&["inspect", &rubric]);
    let said = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    assert!(
        said.contains("function_ref 'test:word_count' is the application's own code"),
        "{said}"
    );
    let out = rubricate(&["score", &data, "--rubric", &rubric, "--format", "jsonl"]);
    let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    // dataknobs-bots 0.6.9 on CPython 3.11 and 3.13: 0.4 × 0.7 + 0.6 × 1.0, 0, 0.7.
    assert_eq!(scores, [0.879_999_999_999_999_9, 0.0, 0.7]);
    let passed: Vec<bool> = rows
        .iter()
        .map(|r| r["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed, [true, false, true]);
}

fn graded(rubric: &str, data: &str) -> Vec<(f64, bool, Vec<Option<String>>)> {
    let out = rubricate(&["grade", data, "--rubric", rubric, "--format", "jsonl"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            let failures = r["criteria"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["failure"]["message"].as_str().map(str::to_owned))
                .collect();
            (
                r["score"].as_f64().unwrap(),
                r["passed"].as_bool().unwrap(),
                failures,
            )
        })
        .collect()
}

/// dataknobs-bots 0.6.9 (`CPython` 3.11.7 and 3.13.0) on the same files: `schema_ref` only →
/// "has SCHEMA scoring but no schema defined", score 0 for that criterion (0.5 and passed,
/// 0.0 and failed); no `function_ref` → "has DETERMINISTIC scoring but no `function_ref`", 0.0.
#[test]
fn a_method_lacking_its_field_loads_and_its_criterion_errors_as_in_dataknobs() {
    let corpus = "tests/fixtures/corpus/KBS-Labs_dataknobs/packages/bots";
    let rows = graded(
        &format!("{corpus}/docs/RUBRICS.md--schema_ref.json"),
        &format!("{corpus}/docs/RUBRICS.md--schema_ref-targets.jsonl"),
    );
    let never_read = Some(
        "schema_ref 'schemas/order.json' is never read by dataknobs (its executor checks `schema` only)"
            .to_owned(),
    );
    assert_eq!(
        rows,
        [
            (0.5, true, vec![None, never_read.clone()]),
            (0.0, false, vec![None, never_read]),
        ]
    );
    let rows = graded(
        &format!("{corpus}/tests/unit/rubrics/test_executor.py--test_missing_function_ref.json"),
        &format!(
            "{corpus}/tests/unit/rubrics/test_executor.py--test_missing_function_ref-targets.jsonl"
        ),
    );
    assert_eq!(
        rows,
        [(
            0.0,
            false,
            vec![Some(
                "a deterministic scoring_method without `function_ref`".to_owned()
            )]
        )]
    );
    // inspect says so, for each kind of missing field.
    for (file, says) in [
        (
            format!("{corpus}/docs/RUBRICS.md--schema_ref.json"),
            "this criterion errors on every item and scores 0, as in dataknobs; to have the schema checked, write it inline as `schema`",
        ),
        (
            "tests/fixtures/dataknobs_app/schema_without_schema.yaml".to_owned(),
            "16:7: a schema scoring_method without `schema`: this criterion errors on every item and scores 0",
        ),
        (
            "tests/fixtures/dataknobs_app/llm_decode_without_prompt.yaml".to_owned(),
            "18:11: an llm_decode scoring_method without `decode_prompt`: this criterion errors on every item and scores 0",
        ),
    ] {
        let out = rubricate(&["inspect", &file]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.contains(says),
            "{file}: {said}"
        );
    }
}
