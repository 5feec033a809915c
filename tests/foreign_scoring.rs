//! Other systems' files score as those systems' own code scores them. Each case's
//! expectation is what the home library printed for the same file (the differential
//! harnesses in `shared/difftest/` produce them on random inputs; these are the cases
//! that once differed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// Scores one item with ground truth against `rubric`; returns the JSONL row.
fn score(dir: &Path, rubric: &Value, ground_truth: &Value) -> Value {
    let rp = dir.join("rubric.json");
    std::fs::write(&rp, rubric.to_string()).unwrap();
    score_spec(dir, rp.to_str().unwrap(), ground_truth)
}

/// Scores one item with ground truth against the rubric at `spec` (`FILE` or `FILE#TEST`).
fn score_spec(dir: &Path, spec: &str, ground_truth: &Value) -> Value {
    let dp = dir.join("items.jsonl");
    std::fs::write(
        &dp,
        json!({"id": "x", "submission": "s", "ground_truth": ground_truth}).to_string() + "\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(["score"])
        .arg(&dp)
        .args(["--rubric", spec])
        .args(["--format", "jsonl"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn dk_criterion(id: &str, name: &str, weight: f64, levels: &[(&str, &str, f64)]) -> Value {
    json!({
        "id": id, "name": name, "description": format!("{name} text"), "weight": weight,
        "levels": levels.iter().map(|(i, d, s)| json!({
            "id": i, "label": title(i), "description": d, "score": s
        })).collect::<Vec<_>>(),
        "scoring_method": {"type": "deterministic", "function_ref": format!("m.{id}:is_json")}
    })
}

fn title(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn dk_rubric(criteria: &[Value], threshold: f64) -> Value {
    json!({"id": "r", "name": "R", "description": "d", "version": "1.0.0",
           "target_type": "content", "criteria": criteria, "pass_threshold": threshold})
}

const FAIL_PASS: &[(&str, &str, f64)] = &[("fail", "Bad", 0.0), ("pass", "OK", 1.0)];

#[test]
fn dataknobs_divides_by_the_signed_weight_sum_and_never_clamps() {
    let dir = tempfile::tempdir().unwrap();
    let r = dk_rubric(
        &[
            dk_criterion("a", "Alpha", 1.0, FAIL_PASS),
            dk_criterion("b", "Beta", -0.5, FAIL_PASS),
        ],
        0.7,
    );
    let row = score(dir.path(), &r, &json!({"a": "pass", "b": "fail"}));
    // dataknobs: 1 / (1 − 0.5) = 2.0, PASSED, "Overall score: 200%".
    assert_eq!(row["score"], 2.0);
    assert_eq!(row["passed"], true);
    assert_eq!(
        row["feedback"],
        "Evaluation PASSED for rubric 'R'.\nOverall score: 200%\n\n- Alpha: pass (score: 1.00)\n- Beta: fail (score: 0.00)\n\nSuggestions for improvement:\n  - Beta: aim for 'Pass' — OK"
    );
}

#[test]
fn dataknobs_never_enforces_required() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = dk_criterion("a", "Alpha", 0.5, FAIL_PASS);
    a["required"] = json!(true);
    let r = dk_rubric(&[a, dk_criterion("b", "Beta", 0.5, FAIL_PASS)], 0.5);
    let row = score(dir.path(), &r, &json!({"a": "fail", "b": "pass"}));
    assert_eq!(row["score"], 0.5);
    assert_eq!(row["passed"], true);
    assert_eq!(
        row["feedback"],
        "Evaluation PASSED for rubric 'R'.\nOverall score: 50%\n\n- Alpha: fail (score: 0.00)\n- Beta: pass (score: 1.00)\n\nSuggestions for improvement:\n  - Alpha: aim for 'Pass' — OK"
    );
}

#[test]
fn dataknobs_compares_with_the_threshold_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let lv = &[
        ("low", "Low", 0.0),
        ("mid", "Mid", 0.7),
        ("top", "Top", 1.0),
    ];
    let r = dk_rubric(
        &[
            dk_criterion("a", "Alpha", 2.0, lv),
            dk_criterion("b", "Beta", 1.0, lv),
        ],
        0.8,
    );
    let row = score(dir.path(), &r, &json!({"a": "mid", "b": "top"}));
    // (2·0.7 + 1) / 3 = 0.7999999999999999 < 0.8: FAILED in dataknobs.
    assert_eq!(row["score"], 0.799_999_999_999_999_9);
    assert_eq!(row["passed"], false);
}

#[test]
fn dataknobs_suggests_below_the_threshold_and_quotes_descriptions_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // At the threshold: no suggestion, though a better level exists.
    let r = dk_rubric(
        &[dk_criterion(
            "a",
            "Alpha",
            1.0,
            &[
                ("fail", "Bad", 0.0),
                ("pass", "Covers the basics", 0.7),
                ("excellent", "Covers all topics", 1.0),
            ],
        )],
        0.7,
    );
    let row = score(dir.path(), &r, &json!({"a": "pass"}));
    assert_eq!(
        row["feedback"],
        "Evaluation PASSED for rubric 'R'.\nOverall score: 70%\n\n- Alpha: pass (score: 0.70)"
    );
    // An empty description is quoted as empty.
    let r = dk_rubric(
        &[dk_criterion(
            "a",
            "Alpha",
            1.0,
            &[("fail", "", 0.0), ("pass", "", 1.0)],
        )],
        0.7,
    );
    let row = score(dir.path(), &r, &json!({"a": "fail"}));
    assert_eq!(
        row["feedback"],
        "Evaluation FAILED for rubric 'R'.\nOverall score: 0%\n\n- Alpha: fail (score: 0.00)\n\nSuggestions for improvement:\n  - Alpha: aim for 'Pass' — "
    );
}

#[test]
fn dataknobs_unmet_met_levels_keep_their_ids_in_the_feedback() {
    let dir = tempfile::tempdir().unwrap();
    let r = dk_rubric(
        &[dk_criterion(
            "a",
            "Alpha",
            1.0,
            &[("unmet", "", 0.0), ("met", "", 1.0)],
        )],
        0.7,
    );
    let row = score(dir.path(), &r, &json!({"a": "unmet"}));
    assert_eq!(
        row["feedback"],
        "Evaluation FAILED for rubric 'R'.\nOverall score: 0%\n\n- Alpha: unmet (score: 0.00)\n\nSuggestions for improvement:\n  - Alpha: aim for 'Met' — "
    );
}

#[test]
fn dataknobs_meta_rubric_compares_weights_float_for_float() {
    let dir = tempfile::tempdir().unwrap();
    let r = dk_rubric(
        &[
            dk_criterion("a", "Alpha", 0.51, FAIL_PASS),
            dk_criterion("b", "Beta", 0.5, FAIL_PASS),
        ],
        0.7,
    );
    let rp = dir.path().join("rubric.json");
    std::fs::write(&rp, r.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(["lint", "--format", "json"])
        .arg(&rp)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let weights = v["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "weight_distribution")
        .cloned()
        .unwrap_or_else(|| panic!("{v}"));
    // 0.51 + 0.5 is a hair over 1.01 in floats: dataknobs' check fails it.
    assert_eq!(weights["level"], "fail", "{weights}");
}

#[test]
fn autorubric_fail_charges_the_worst_scored_option() {
    let dir = tempfile::tempdir().unwrap();
    let r = json!({"criteria": [{"name": "q", "weight": 10, "requirement": "r", "options": [
        {"label": "Low", "value": 0.3}, {"label": "High", "value": 1.0},
        {"label": "NA", "value": 0, "na": true}]}], "scoring": {"abstain": "worst"}});
    let row = score(dir.path(), &r, &json!(["NA"]));
    // autorubric: compute_score(["NA"], FAIL) = 0.3, raw 3.0.
    assert_eq!(row["score"], 0.3);
    assert_eq!(row["raw"], 3.0);
}

/// An agentv suite of one test with `criteria` in its rubric grader.
fn agentv_suite(dir: &Path, criteria: &Value) -> String {
    let path = dir.join("suite.yaml");
    let suite = json!({"tests": [{"id": "t", "input": "q",
        "assertions": [{"type": "rubrics", "criteria": criteria}]}]});
    // JSON is YAML: agentv and rubricate both read it.
    std::fs::write(&path, suite.to_string()).unwrap();
    format!("{}#t", path.display())
}

#[test]
fn agentv_entries_without_ranges_are_required_unless_they_say_not() {
    let dir = tempfile::tempdir().unwrap();
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 1}, {"id": "b", "outcome": "B", "weight": 9}]),
    );
    // @agentv/core 4.42.4: score 0.9, the rubric grader's verdict fail (a is required);
    // the test passes (0.9 ≥ 0.8: its verdict reads the graders' scores, not theirs).
    let row = score_spec(dir.path(), &spec, &json!({"a": "UNMET", "b": "MET"}));
    assert_eq!(row["score"], 0.9);
    assert_eq!(row["graders"][0]["passed"], false, "{row}");
    assert_eq!(row["passed"], true);
    // A required criterion the judge left out is not gated: score 1, pass.
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 1, "required": true},
                {"id": "b", "outcome": "B", "weight": 1}]),
    );
    let row = score_spec(dir.path(), &spec, &json!({"b": "MET"}));
    assert_eq!(row["score"], 1.0);
    assert_eq!(row["graders"][0]["passed"], true, "{row}");
    assert_eq!(row["passed"], true);
}

#[test]
fn agentv_score_ranges_gate_at_min_score_and_required_needs_full_marks() {
    let dir = tempfile::tempdir().unwrap();
    // min_score gates without `required`: 8/10 < 0.9 fails though the score is 0.98.
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 1, "min_score": 0.9, "score_ranges": {"0": "no", "5": "yes"}},
                {"id": "b", "outcome": "B", "weight": 9, "score_ranges": {"0": "no", "5": "yes"}}]),
    );
    let row = score_spec(dir.path(), &spec, &json!({"a": 8, "b": 10}));
    assert!((row["score"].as_f64().unwrap() - 0.98).abs() < 1e-12);
    assert_eq!(row["graders"][0]["passed"], false, "{row}");
    assert_eq!(row["passed"], true);
    // A required ranged criterion without min_score needs 10/10: 8 fails at score 0.8.
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 1, "required": true, "score_ranges": {"0": "no", "5": "yes"}}]),
    );
    let row = score_spec(dir.path(), &spec, &json!({"a": 8}));
    assert_eq!(row["score"], 0.8);
    assert_eq!(row["graders"][0]["passed"], false, "{row}");
    assert_eq!(row["passed"], true);
}

#[test]
fn agentv_gates_entries_that_say_required_false_in_a_score_range_grader() {
    let dir = tempfile::tempdir().unwrap();
    // agentv's loader keeps `required: false`, yet its score-range grader gates each entry at
    // its min_score (or required_min_score / 10) all the same: rubricate shows required>=min.
    let criteria = json!([
        {"id": "a", "outcome": "A", "weight": 1, "required": false, "min_score": 0.9,
         "score_ranges": {"0": "no", "5": "yes"}},
        {"id": "b", "outcome": "B", "weight": 9, "required": false, "required_min_score": 7},
        {"id": "c", "outcome": "C", "weight": 1, "score_ranges": {"0": "no", "5": "yes"}}]);
    let shown = inspect(
        dir.path(),
        &json!({"tests": [{"id": "t", "input": "q",
            "assertions": [{"type": "rubrics", "criteria": criteria}]}]}),
        "agentv",
    );
    let gates: Vec<(bool, Option<f64>)> = shown["rubrics"][0]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["required"] == true, c["min_score"].as_f64()))
        .collect();
    assert_eq!(gates, [(true, Some(0.9)), (true, Some(0.7)), (false, None)]);
    let spec = agentv_suite(dir.path(), &criteria);
    // @agentv/core 4.42.4 (score, its grader's verdict, the test's): 0.9818181818181819
    // fail pass; 0.17272727272727273 fail fail; 0.9 pass pass.
    for (gt, score, grader, test) in [
        (
            json!({"a": 8, "b": "MET", "c": 10}),
            0.981_818_181_818_181_9,
            false,
            true,
        ),
        (
            json!({"a": 9, "b": "UNMET", "c": 10}),
            0.172_727_272_727_272_73,
            false,
            false,
        ),
        (json!({"a": 9, "b": "MET", "c": 0}), 0.9, true, true),
    ] {
        let row = score_spec(dir.path(), &spec, &gt);
        assert_eq!(row["score"].as_f64(), Some(score), "{row}");
        assert_eq!(row["graders"][0]["passed"], grader, "{row}");
        assert_eq!(row["passed"], test, "{row}");
    }
}

#[test]
fn agentv_grader_the_judge_answered_nothing_has_no_score() {
    let dir = tempfile::tempdir().unwrap();
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A"}, {"id": "b", "outcome": "B", "weight": 3}]),
    );
    // @agentv/core 4.42.4 gives a judge reply with no checks the score 0 (fail, fail): a
    // silent 0 rubricate does not give (a documented difference); the verdicts agree.
    let row = score_spec(dir.path(), &spec, &json!({}));
    assert_eq!(row["score"], Value::Null, "{row}");
    assert_eq!(row["incomplete"], true, "{row}");
    assert_eq!(row["graders"][0]["score"], Value::Null, "{row}");
    assert_eq!(row["graders"][0]["passed"], false, "{row}");
    assert_eq!(row["passed"], false, "{row}");
    // One weightless criterion answered is a score: 0, as agentv (its total weight is 0).
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 0}]),
    );
    let row = score_spec(dir.path(), &spec, &json!({"a": "MET"}));
    assert_eq!(row["score"], 0.0, "{row}");
}

/// An agentv test with the `assert` list given.
fn agentv_asserts(dir: &Path, asserts: &Value) -> String {
    let path = dir.join("graders.yaml");
    let suite = json!({"tests": [{"id": "t", "input": "q", "assert": asserts}]});
    std::fs::write(&path, suite.to_string()).unwrap();
    format!("{}#t", path.display())
}

#[test]
fn agentv_test_score_is_the_weighted_mean_of_its_graders() {
    let dir = tempfile::tempdir().unwrap();
    // [contains, three strings] → contains (w 1) + one llm-rubric of the strings (w 3):
    // the contains fails, the strings are met → 3/4, below 0.8 (agentv's orchestrator).
    let spec = agentv_asserts(
        dir.path(),
        &json!([{"type": "contains", "value": "x"}, "A", "B", "C"]),
    );
    let row = score_spec(
        dir.path(),
        &spec,
        // agentv numbers the strings among themselves: rubric-1 … rubric-3 (its
        // grader-parser gathers them into one llm-rubric `value` list, `rubric-${index + 1}`).
        &json!({"contains-1": "UNMET", "rubric-1": "MET", "rubric-2": "MET", "rubric-3": "MET"}),
    );
    assert_eq!(row["score"], 0.75, "{row}");
    assert_eq!(row["passed"], false);
    assert_eq!(row["graders"].as_array().unwrap().len(), 2, "{row}");
    // Weights of graders: an llm-rubric of weight 3 beside a contains of weight 1.
    let spec = agentv_asserts(
        dir.path(),
        &json!([{"type": "contains", "value": "x"},
                {"type": "llm-rubric", "value": ["A"], "weight": 3}]),
    );
    let row = score_spec(
        dir.path(),
        &spec,
        &json!({"contains-1": "UNMET", "rubric-1": "MET"}),
    );
    assert_eq!(row["score"], 0.75, "{row}");
    // A required grader below its min_score makes the test's score 0.
    let spec = agentv_asserts(
        dir.path(),
        &json!([{"type": "contains", "value": "x", "required": true},
                {"type": "llm-rubric", "value": ["A"], "weight": 9}]),
    );
    let row = score_spec(
        dir.path(),
        &spec,
        &json!({"contains-1": "UNMET", "rubric-1": "MET"}),
    );
    assert_eq!(row["score"], 0.0, "{row}");
    assert_eq!(row["passed"], false);
    assert!(
        row["feedback"]
            .as_str()
            .unwrap()
            .contains("Required graders below their minimum: contains"),
        "{row}"
    );
}

#[test]
fn agentv_compares_with_its_threshold_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let spec = agentv_suite(
        dir.path(),
        &json!([{"id": "a", "outcome": "A", "weight": 2, "score_ranges": {"0": "no", "5": "yes"}},
                {"id": "b", "outcome": "B", "weight": 1, "score_ranges": {"0": "no", "5": "yes"}}]),
    );
    // (2·0.7 + 1) / 3 = 0.7999999999999999: agentv's `score >= 0.8` fails it.
    let row = score_spec(dir.path(), &spec, &json!({"a": 7, "b": 10}));
    assert_eq!(row["passed"], false);
}

/// `inspect --from FORMAT --format json` of `data` written as a JSON file.
fn inspect(dir: &Path, data: &Value, from: &str) -> Value {
    let p = dir.join("shape.json");
    std::fs::write(&p, data.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .arg("inspect")
        .arg(&p)
        .args(["--from", from, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn sections_may_sit_in_any_list_beside_criteria() {
    let dir = tempfile::tempdir().unwrap();
    // autorubric's loader: a list mixing a section and a criterion; scored 10·1 / 15.
    let ds = json!({"prompt": "p", "rubric": [
        {"name": "S", "criteria": [{"name": "a", "weight": 10, "requirement": "r"}]},
        {"name": "b", "weight": 5, "requirement": "q"}],
        "items": [{"submission": "s", "description": "d", "ground_truth": ["MET", "UNMET"]}]});
    let p = dir.path().join("ds.json");
    std::fs::write(&p, ds.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .arg("score")
        .arg(&p)
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    let row: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!((row["score"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    // autorubric: `criteria:` holding sections.
    let v = inspect(
        dir.path(),
        &json!({"criteria": [{"name": "S", "criteria": [
            {"name": "a", "weight": 10, "requirement": "r"}, {"name": "b", "weight": 3, "requirement": "s"}]}]}),
        "autorubric",
    );
    let c = &v["rubrics"][0]["criteria"];
    assert_eq!(c.as_array().unwrap().len(), 2, "{v}");
    assert_eq!(c[0]["section"], "S");
    // rubric (LLM Data Company): sections by id and title, as scripts/rubrics.jsonl writes
    // them, beside a loose criterion.
    let v = inspect(
        dir.path(),
        &json!([{"id": "s1", "title": "Accuracy", "criteria": [{"weight": 2, "requirement": "a"}]},
                {"weight": -1, "requirement": "b"}]),
        "rubric-lib",
    );
    let c = &v["rubrics"][0]["criteria"];
    assert_eq!(c[0]["weight"], 2.0, "{v}");
    assert_eq!(c[0]["section"], "Accuracy");
    assert_eq!(c[1]["weight"], -1.0);
}

#[test]
fn autorubric_length_penalty_is_read_and_subtracted_from_the_score() {
    let dir = tempfile::tempdir().unwrap();
    // Ten words of output, four of thinking; free 2, cap 10, 1.0 at the cap, exponent 2:
    // all 14 ≥ cap → 1.0; output only, 10 ≥ cap → 1.0; thinking only, 4 → (2/8)² = 0.0625.
    let submission = "<thinking>a b c d</thinking><output>1 2 3 4 5 6 7 8 9 10</output>";
    for (count, want) in [
        ("ALL", 0.0),
        ("OUTPUT_ONLY", 0.0),
        ("THINKING_ONLY", 0.9375),
    ] {
        let rubric = json!({"criteria": [{"name": "a", "weight": 10, "requirement": "r"}],
            "length_penalty": {"free_budget": 2, "max_cap": 10, "penalty_at_cap": 1.0,
                               "exponent": 2.0, "penalty_type": count}});
        let rp = dir.path().join("rubric.json");
        std::fs::write(&rp, rubric.to_string()).unwrap();
        let dp = dir.path().join("items.jsonl");
        std::fs::write(
            &dp,
            json!({"id": "x", "submission": submission, "ground_truth": ["MET"]}).to_string()
                + "\n",
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
            .arg("score")
            .arg(&dp)
            .arg("--rubric")
            .arg(&rp)
            .args(["--format", "jsonl"])
            .output()
            .unwrap();
        let row: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(row["score"], want, "{count}");
        // The raw score keeps no penalty, as autorubric's raw_score.
        assert_eq!(row["raw"], 10.0, "{count}");
    }
}

#[test]
fn a_length_penalty_survives_native_and_autorubric_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let native = "id: short\ncriteria:\n  - id: a\n    requirement: r\nscoring:\n  length_penalty: {free_budget: 100, max_cap: 200, penalty_at_cap: 0.3, exponent: 1.0, count: output}\n";
    let np = dir.path().join("short.yaml");
    std::fs::write(&np, native).unwrap();
    let ap = dir.path().join("short.autorubric.json");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&[
        "convert",
        np.to_str().unwrap(),
        "--to",
        "autorubric",
        "-o",
        ap.to_str().unwrap(),
    ]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&ap).unwrap()).unwrap();
    assert_eq!(written["length_penalty"]["penalty_type"], "OUTPUT_ONLY");
    let v: Value =
        serde_json::from_str(&run(&["inspect", ap.to_str().unwrap(), "--format", "json"])).unwrap();
    assert_eq!(
        v["rubrics"][0]["scoring"]["length_penalty"],
        json!({"free_budget": 100, "max_cap": 200, "penalty_at_cap": 0.3, "exponent": 1.0, "count": "output"})
    );
}

#[test]
fn agentv_negated_assertions_are_graded_the_right_way_round() {
    let dir = tempfile::tempdir().unwrap();
    let eval = dir.path().join("neg.yaml");
    std::fs::write(
        &eval,
        "tests:\n  - id: t1\n    input: q\n    output: \"Send me your password please\"\n    assert:\n      - type: contains\n        value: password\n        negate: true\n      - type: regex\n        value: \"\\\\d{3}-\\\\d{2}\"\n        negate: true\n      - type: equals\n        value: x\n        negate: true\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .arg("grade")
        .arg(&eval)
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    let row: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap())
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let verdicts: Vec<(String, String)> = row["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // "must not contain password" fails on an answer asking for it; "must not match a
    // number pattern" holds; a negated `equals` (which rubricate cannot negate) is left out,
    // never graded the wrong way round.
    assert_eq!(
        verdicts,
        [
            ("not-contains-1".to_owned(), "UNMET".to_owned()),
            ("regex-2".to_owned(), "MET".to_owned())
        ]
    );
}

#[test]
fn native_graders_average_their_scores_and_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graded.yaml");
    let rubric = json!({"id": "g", "pass_threshold": 0.6, "criteria": [
            {"id": "a", "requirement": "A"}, {"id": "b", "requirement": "B", "weight": 3},
            {"id": "c", "requirement": "C"}],
        "graders": [{"id": "quality", "weight": 2, "criteria": ["a", "b"]},
                    {"id": "safety", "required": true, "min_score": 0.5, "criteria": ["c"]}]});
    std::fs::write(&path, rubric.to_string()).unwrap();
    let spec = path.display().to_string();
    // quality (1·1 + 3·0)/4 = 0.25 weighs 2, safety 1 weighs 1: (0.5 + 1) / 3 = 0.5.
    let row = score_spec(
        dir.path(),
        &spec,
        &json!({"a": "MET", "b": "UNMET", "c": "MET"}),
    );
    assert_eq!(row["score"], 0.5, "{row}");
    assert_eq!(row["passed"], false);
    assert_eq!(row["graders"][0]["id"], "quality");
    assert_eq!(row["graders"][0]["score"], 0.25);
    // safety below its min_score: 0, whatever quality scores.
    let row = score_spec(
        dir.path(),
        &spec,
        &json!({"a": "MET", "b": "MET", "c": "UNMET"}),
    );
    assert_eq!(row["score"], 0.0, "{row}");
    // A criterion in no grader is refused where it is.
    let mut broken = rubric.clone();
    broken["graders"][1]["criteria"] = json!([]);
    std::fs::write(&path, broken.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(["validate"])
        .arg(&path)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("criterion 'c' is in no grader"), "{text}");
    assert!(text.contains("grader 'safety' has no criteria"), "{text}");
}

#[test]
fn an_empty_string_in_an_agentv_assert_list_is_skipped_as_agentv_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    // agentv drops the empty string (with a warning) and numbers the rest among themselves.
    let spec = agentv_asserts(dir.path(), &json!(["A", "", "B"]));
    let row = score_spec(
        dir.path(),
        &spec,
        &json!({"rubric-1": "MET", "rubric-2": "UNMET"}),
    );
    assert_eq!(row["score"], 0.5, "{row}");
}
