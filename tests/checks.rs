//! Every built-in check, the `schema` method, the `command` check and judge criteria without a
//! judge, through the library API: a rubric is parsed from text, compiled, and one item is
//! graded with `evaluate_item`. Each case asserts the verdict, the value and the evidence text a
//! person reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use rubricate::engine::checks::CheckInput;
use rubricate::engine::executor::{ExecOptions, evaluate_item, score_criterion};
use rubricate::engine::{CompiledRubric, compile};
use rubricate::formats::parse_rubric_text;
use rubricate::model::{CriterionResult, Evaluation, Item, Verdict};

/// The folder relative schema paths resolve against in these tests.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid")
}

/// Parses and compiles a rubric given as JSON (the native format, written as JSON so regexes
/// and quotes need no YAML escaping).
fn rubric(doc: &Value) -> CompiledRubric {
    let text = serde_json::to_string_pretty(doc).unwrap();
    let loaded = parse_rubric_text("inline.json", &text, "inline", &fixtures(), None)
        .unwrap_or_else(|d| panic!("the test rubric does not load:\n{d}\n{text}"));
    compile(&loaded).unwrap_or_else(|d| panic!("the test rubric does not compile:\n{d}\n{text}"))
}

/// A rubric of one binary criterion `c` graded by `method`.
fn one_criterion(method: &Value) -> CompiledRubric {
    rubric(&json!({
        "id": "t",
        "criteria": [{ "id": "c", "requirement": "what is checked", "method": method }]
    }))
}

fn item(submission: &str) -> Item {
    Item {
        id: "item-1".into(),
        submission: submission.into(),
        origin: "test".into(),
        ..Item::default()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn evaluate_with(rubric: &CompiledRubric, item: &Item, allow_commands: bool) -> Evaluation {
    let (tx, _rx) = mpsc::channel(1024);
    let opts = ExecOptions {
        allow_commands,
        ..ExecOptions::default()
    };
    block_on(evaluate_item(Some(rubric), item, 0, &opts, &tx))
}

fn evaluate(rubric: &CompiledRubric, item: &Item) -> Evaluation {
    evaluate_with(rubric, item, false)
}

/// Grades `submission` with a one-criterion rubric using `check` with `args`.
fn check(name: &str, args: &Value, submission: &str) -> CriterionResult {
    run_check(name, args, &item(submission))
}

fn run_check(name: &str, args: &Value, item: &Item) -> CriterionResult {
    let r = one_criterion(&json!({ "check": name, "args": args }));
    let mut e = evaluate(&r, item);
    assert_eq!(e.results.len(), 1);
    e.results.remove(0)
}

/// Asserts a scored (not failed) binary result and returns its evidence.
#[track_caller]
fn assert_binary(r: &CriterionResult, met: bool) -> &[String] {
    assert!(r.failure.is_none(), "unexpected failure: {:?}", r.failure);
    let (verdict, value) = if met {
        (Verdict::Met, 1.0)
    } else {
        (Verdict::Unmet, 0.0)
    };
    assert_eq!(
        r.verdict.as_ref(),
        Some(&verdict),
        "evidence: {:?}",
        r.evidence
    );
    assert_eq!(r.value, Some(value));
    assert_eq!(
        r.reason,
        r.evidence.first().cloned().unwrap_or_default(),
        "the reason is the first piece of evidence"
    );
    &r.evidence
}

#[track_caller]
fn assert_met(r: &CriterionResult, evidence: &[&str]) {
    assert_eq!(assert_binary(r, true), evidence);
}

#[track_caller]
fn assert_unmet(r: &CriterionResult, evidence: &[&str]) {
    assert_eq!(assert_binary(r, false), evidence);
}

// ---------------------------------------------------------------------------------------------
// contains / not_contains

#[test]
fn contains_is_case_insensitive_and_quotes_the_submissions_casing_with_line_and_column() {
    let r = check(
        "contains",
        &json!({ "text": "PARIS" }),
        "Hello.\nThe capital is Paris.",
    );
    assert_met(&r, &["found \"Paris\" at line 2, column 16"]);
}

#[test]
fn contains_unmet_says_what_was_not_found() {
    let r = check("contains", &json!({ "text": "Paris" }), "It is Lyon.");
    assert_unmet(&r, &["\"Paris\" not found"]);
}

#[test]
fn contains_case_sensitive_does_not_match_other_casing() {
    let r = check(
        "contains",
        &json!({ "text": "Paris", "case_sensitive": true }),
        "paris",
    );
    assert_unmet(&r, &["\"Paris\" not found"]);
    let r = check(
        "contains",
        &json!({ "text": "Paris", "case_sensitive": true }),
        "in Paris",
    );
    assert_met(&r, &["found \"Paris\" at line 1, column 4"]);
}

#[test]
fn contains_any_and_all() {
    let any = json!({ "any": ["Paris", "Lyon"] });
    assert_met(
        &check("contains", &any, "Lyon, surely"),
        &["\"Paris\" not found", "found \"Lyon\" at line 1, column 1"],
    );
    let all = json!({ "all": ["Paris", "France"] });
    assert_unmet(
        &check("contains", &all, "Paris!"),
        &[
            "found \"Paris\" at line 1, column 1",
            "\"France\" not found",
        ],
    );
    assert_met(
        &check("contains", &all, "france: paris"),
        &[
            "found \"paris\" at line 1, column 9",
            "found \"france\" at line 1, column 1",
        ],
    );
}

/// Lowercasing some letters changes their length in bytes ("İ" is 2 bytes, its lowercase
/// "i̇" is 3). The position must still be the one in the submission (column 10: "İstanbul "
/// is 9 characters), and the quote the submission's own text.
#[test]
fn contains_reports_submission_positions_when_lowercasing_changes_lengths() {
    let r = check("contains", &json!({ "text": "paris" }), "İstanbul Paris");
    assert_met(&r, &["found \"Paris\" at line 1, column 10"]);
}

#[test]
fn not_contains_met_when_absent_and_unmet_with_the_place_when_present() {
    let args = json!({ "text": "as an AI" });
    assert_met(
        &check("not_contains", &args, "Paris."),
        &["\"as an AI\" not found"],
    );
    assert_unmet(
        &check("not_contains", &args, "Well.\n  As an AI, I say Paris."),
        &["found \"As an AI\" at line 2, column 3"],
    );
}

// ---------------------------------------------------------------------------------------------
// regex

#[test]
fn regex_quotes_the_match_with_line_and_column() {
    let args = json!({ "pattern": r"\b\d{4}\b" });
    assert_met(
        &check("regex", &args, "Built in\nthe year 1889 for the fair"),
        &["matched \"1889\" at line 2, column 10"],
    );
    assert_unmet(
        &check("regex", &args, "long ago"),
        &[r"no match for /\b\d{4}\b/"],
    );
}

#[test]
fn regex_case_insensitive_multiline_and_negate() {
    let args = json!({ "pattern": "^great question", "case_insensitive": true });
    assert_met(
        &check("regex", &args, "Sure.\nGREAT QUESTION! Paris."),
        &["matched \"GREAT QUESTION\" at line 2, column 1"],
    );
    let negated = json!({ "pattern": "^great question", "negate": true });
    assert_unmet(
        &check("regex", &negated, "great question"),
        &["matched \"great question\" at line 1, column 1"],
    );
    assert_met(
        &check("regex", &negated, "Paris"),
        &["no match for /^great question/"],
    );
}

// ---------------------------------------------------------------------------------------------
// equals, starts_with, ends_with

#[test]
fn equals_trims_by_default_and_is_case_sensitive_by_default() {
    let args = json!({ "value": "Paris" });
    assert_met(&check("equals", &args, "  Paris \n"), &["equals \"Paris\""]);
    assert_unmet(
        &check("equals", &args, "paris"),
        &["\"paris\" differs from \"Paris\""],
    );
    let loose = json!({ "value": "Paris", "case_sensitive": false });
    assert_met(&check("equals", &loose, "PARIS"), &["equals \"Paris\""]);
    let exact = json!({ "value": "Paris", "trim": false });
    assert_unmet(
        &check("equals", &exact, " Paris"),
        &["\" Paris\" differs from \"Paris\""],
    );
}

#[test]
fn starts_with_and_ends_with() {
    let args = json!({ "text": "Answer:" });
    assert_met(
        &check("starts_with", &args, "  Answer: Paris"),
        &["starts with \"Answer:\""],
    );
    assert_unmet(
        &check("starts_with", &args, "Paris. Answer:"),
        &["does not start with \"Answer:\""],
    );
    assert_unmet(
        &check("starts_with", &args, "answer: Paris"),
        &["does not start with \"Answer:\""],
    );
    let ci = json!({ "text": "Answer:", "case_sensitive": false });
    assert_met(
        &check("starts_with", &ci, "ANSWER: Paris"),
        &["starts with \"Answer:\""],
    );
    let dot = json!({ "text": "." });
    assert_met(&check("ends_with", &dot, "Paris.\n"), &["ends with \".\""]);
    assert_unmet(
        &check("ends_with", &dot, "Paris"),
        &["does not end with \".\""],
    );
}

// ---------------------------------------------------------------------------------------------
// length, word_count, max_sentences, count

#[test]
fn length_counts_characters_within_bounds() {
    let args = json!({ "min": 3, "max": 10 });
    assert_met(
        &check("length", &args, "Ça va"),
        &["5 characters (allowed 3..10)"],
    );
    assert_met(
        &check("length", &args, "abc"),
        &["3 characters (allowed 3..10)"],
    );
    assert_unmet(
        &check("length", &args, "ab"),
        &["2 characters (allowed 3..10)"],
    );
    assert_unmet(
        &check("length", &args, "Lyon is nice"),
        &["12 characters (allowed 3..10)"],
    );
    assert_met(
        &check("length", &json!({ "max": 1 }), "é"),
        &["1 character (allowed at most 1)"],
    );
}

#[test]
fn word_count_bounds() {
    assert_unmet(
        &check("word_count", &json!({ "min": 2 }), "Paris"),
        &["1 word (allowed at least 2)"],
    );
    assert_met(
        &check("word_count", &json!({ "min": 2 }), "in   Paris\n"),
        &["2 words (allowed at least 2)"],
    );
    assert_met(
        &check("word_count", &json!({ "max": 3 }), "a b c"),
        &["3 words (allowed at most 3)"],
    );
    assert_unmet(
        &check("word_count", &json!({ "min": 1, "max": 3 }), "a b c d"),
        &["4 words (allowed 1..3)"],
    );
}

#[test]
fn max_sentences_counts_sentence_ends() {
    let args = json!({ "n": 2 });
    assert_unmet(
        &check("max_sentences", &args, "One. Two! Three?"),
        &["3 sentences (allowed at most 2)"],
    );
    assert_met(
        &check("max_sentences", &args, "Pi is 3.14 exactly."),
        &["1 sentence (allowed at most 2)"],
    );
    assert_met(
        &check("max_sentences", &args, "Paris. It is lovely"),
        &["2 sentences (allowed at most 2)"],
    );
}

/// The count check's evidence with "matchs" read as "matches": the wording is pinned by
/// `count_evidence_says_matches`, so the counting itself is tested apart from it.
#[track_caller]
fn count_evidence(r: &CriterionResult, met: bool) -> Vec<String> {
    assert_binary(r, met)
        .iter()
        .map(|e| e.replace(" matchs ", " matches "))
        .collect()
}

#[test]
fn count_of_text_and_of_pattern() {
    let q = json!({ "text": "?", "min": 2 });
    assert_eq!(
        count_evidence(&check("count", &q, "Why? How?"), true),
        [r"2 matches of /\?/ (allowed at least 2)"]
    );
    assert_eq!(
        count_evidence(&check("count", &q, "Why?"), false),
        [r"1 match of /\?/ (allowed at least 2)"]
    );
    let the = json!({ "pattern": r"\bthe\b", "case_insensitive": true, "max": 1 });
    assert_eq!(
        count_evidence(&check("count", &the, "The cat and the dog"), false),
        [r"2 matches of /\bthe\b/ (allowed at most 1)"]
    );
    assert_eq!(
        count_evidence(&check("count", &the, "A cat, then the dog"), true),
        [r"1 match of /\bthe\b/ (allowed at most 1)"]
    );
    let range = json!({ "text": "a", "min": 1, "max": 2 });
    assert_eq!(
        count_evidence(&check("count", &range, "bbb"), false),
        [r"0 matches of /a/ (allowed 1..2)"]
    );
}

/// The plural of "match" is "matches" (0 and 2 or more), not "matchs".
#[test]
fn count_evidence_says_matches() {
    let q = json!({ "text": "?", "min": 1 });
    assert_met(
        &check("count", &q, "Why? How?"),
        &[r"2 matches of /\?/ (allowed at least 1)"],
    );
    assert_unmet(
        &check("count", &q, "Fine."),
        &[r"0 matches of /\?/ (allowed at least 1)"],
    );
}

// ---------------------------------------------------------------------------------------------
// is_json, json_path

#[test]
fn is_json_met_names_the_type() {
    assert_met(
        &check("is_json", &json!({}), r#"{"a": 1}"#),
        &["valid JSON (an object)"],
    );
    assert_met(
        &check("is_json", &json!({}), "[1, 2]"),
        &["valid JSON (a list)"],
    );
}

#[test]
fn is_json_unmet_gives_the_error_position() {
    assert_unmet(
        &check("is_json", &json!({}), "{\"a\": 1,\n}"),
        &["the submission is not JSON: trailing comma at line 2 column 1"],
    );
    assert_unmet(
        &check("is_json", &json!({}), "Paris"),
        &["the submission is not JSON: expected value at line 1 column 1"],
    );
}

const DOC: &str =
    r#"{"a": {"b": ["first", "second"]}, "name": "Bob", "tags": ["x", "y", "z"], "n": 4}"#;

#[test]
fn json_path_exists_with_dollar_paths_and_json_pointers() {
    assert_met(
        &check("json_path", &json!({ "path": "$.a.b[0]" }), DOC),
        &["$.a.b[0] exists"],
    );
    assert_met(
        &check("json_path", &json!({ "path": "/a/b" }), DOC),
        &["/a/b exists"],
    );
    assert_unmet(
        &check("json_path", &json!({ "path": "$.a.b[2]" }), DOC),
        &["$.a.b[2] is missing"],
    );
    assert_unmet(
        &check("json_path", &json!({ "path": "/a/c" }), DOC),
        &["/a/c is missing"],
    );
    assert_met(
        &check(
            "json_path",
            &json!({ "path": "$.missing", "exists": false }),
            DOC,
        ),
        &["$.missing is missing"],
    );
    assert_unmet(
        &check(
            "json_path",
            &json!({ "path": "$.name", "exists": false }),
            DOC,
        ),
        &["$.name exists"],
    );
}

#[test]
fn json_path_equals() {
    assert_met(
        &check(
            "json_path",
            &json!({ "path": "$.a.b[1]", "equals": "second" }),
            DOC,
        ),
        &["$.a.b[1] = \"second\""],
    );
    assert_met(
        &check("json_path", &json!({ "path": "/n", "equals": 4 }), DOC),
        &["/n = 4"],
    );
    let r = check(
        "json_path",
        &json!({ "path": "$.name", "equals": "Alice" }),
        DOC,
    );
    let ev = assert_binary(&r, false);
    assert_eq!(ev.len(), 1);
    assert!(ev[0].starts_with("$.name is "), "{ev:?}");
    assert!(
        ev[0].contains("Bob") && ev[0].ends_with("expected \"Alice\""),
        "{ev:?}"
    );
    assert_unmet(
        &check(
            "json_path",
            &json!({ "path": "$.nope", "equals": "Alice" }),
            DOC,
        ),
        &["$.nope is missing"],
    );
}

#[test]
fn json_path_min_and_max_length() {
    assert_met(
        &check(
            "json_path",
            &json!({ "path": "$.tags", "min_length": 2 }),
            DOC,
        ),
        &["$.tags has length 3 (allowed at least 2)"],
    );
    assert_unmet(
        &check(
            "json_path",
            &json!({ "path": "/a/b", "min_length": 3 }),
            DOC,
        ),
        &["/a/b has length 2 (allowed at least 3)"],
    );
    assert_unmet(
        &check(
            "json_path",
            &json!({ "path": "$.a.b[0]", "max_length": 3 }),
            DOC,
        ),
        &["$.a.b[0] has length 5 (allowed at most 3)"],
    );
}

#[test]
fn json_path_on_a_submission_that_is_not_json() {
    assert_unmet(
        &check("json_path", &json!({ "path": "$.a" }), "not json"),
        &["the submission is not JSON: expected ident at line 1 column 2"],
    );
}

// ---------------------------------------------------------------------------------------------
// similarity

#[test]
fn similarity_against_the_items_reference() {
    let mut it = item("the capital of france is paris.");
    it.reference = Some("The capital of France is Paris.".into());
    assert_met(
        &run_check("similarity", &json!({ "min": 0.9 }), &it),
        &["similarity 1.000 to the reference (allowed at least 0.9)"],
    );
    // Three letters differ in case out of 31: 1 − 3/31 = 0.903.
    let strict = json!({ "min": 0.95, "case_sensitive": true });
    assert_unmet(
        &run_check("similarity", &strict, &it),
        &["similarity 0.903 to the reference (allowed at least 0.95)"],
    );
}

#[test]
fn similarity_against_an_explicit_reference_wins_over_the_items() {
    // kitten → sitting: distance 3 over 7 characters, similarity 0.571.
    let mut it = item("sitting");
    it.reference = Some("sitting".into());
    assert_met(
        &run_check(
            "similarity",
            &json!({ "reference": "kitten", "min": 0.5 }),
            &it,
        ),
        &["similarity 0.571 to the reference (allowed at least 0.5)"],
    );
    assert_unmet(
        &run_check(
            "similarity",
            &json!({ "reference": "kitten", "min": 0.6 }),
            &it,
        ),
        &["similarity 0.571 to the reference (allowed at least 0.6)"],
    );
}

#[test]
fn similarity_without_any_reference_is_a_check_failure() {
    let r = check("similarity", &json!({ "min": 0.5 }), "Paris");
    assert_eq!(r.verdict, None);
    assert_eq!(r.value, None);
    let f = r.failure.expect("a failure, not a verdict");
    assert_eq!(f.category, "check");
    assert!(f.message.contains("no reference"), "{}", f.message);
}

// ---------------------------------------------------------------------------------------------
// map_levels, and MET/UNMET on graded criteria

fn length_levels() -> CompiledRubric {
    rubric(&json!({
        "id": "levels",
        "criteria": [{
            "id": "length",
            "requirement": "Length of the answer",
            "kind": "levels",
            "levels": [
                { "id": "short", "label": "Short", "score": 0 },
                { "id": "medium", "label": "Medium", "score": 0.5 },
                { "id": "long", "label": "Long", "score": 1 }
            ],
            "method": {
                "check": "map_levels",
                "args": {
                    "of": { "check": "word_count" },
                    "thresholds": [
                        { "at_least": 2, "level": "medium" },
                        { "at_least": 5, "level": "long" }
                    ],
                    "otherwise": "short"
                }
            }
        }]
    }))
}

#[test]
fn map_levels_maps_a_word_count_to_level_ids() {
    let r = length_levels();
    let cases: [(&str, &str, f64, &[&str]); 4] = [
        (
            "one",
            "short",
            0.0,
            &["1 word (allowed any)", "1 is below every threshold → short"],
        ),
        (
            "one two",
            "medium",
            0.5,
            &["2 words (allowed any)", "2 ≥ 2 → medium"],
        ),
        (
            "one two three four",
            "medium",
            0.5,
            &["4 words (allowed any)", "4 ≥ 2 → medium"],
        ),
        (
            "a b c d e f",
            "long",
            1.0,
            &["6 words (allowed any)", "6 ≥ 5 → long"],
        ),
    ];
    for (submission, level, value, evidence) in cases {
        let e = evaluate(&r, &item(submission));
        let res = &e.results[0];
        assert!(res.failure.is_none(), "{:?}", res.failure);
        assert_eq!(
            res.verdict,
            Some(Verdict::Level(level.into())),
            "{submission}"
        );
        assert_eq!(res.value, Some(value), "{submission}");
        assert_eq!(res.evidence, evidence, "{submission}");
        assert_eq!(e.score, Some(value));
    }
}

#[test]
fn map_levels_without_otherwise_falls_to_the_lowest_level() {
    let r = rubric(&json!({
        "id": "levels",
        "criteria": [{
            "id": "questions",
            "requirement": "Asks questions",
            "kind": "levels",
            "levels": [
                { "id": "none", "label": "None", "score": 0 },
                { "id": "some", "label": "Some", "score": 1 }
            ],
            "method": {
                "check": "map_levels",
                "args": {
                    "of": { "check": "count", "args": { "text": "?" } },
                    "thresholds": [{ "at_least": 1, "level": "some" }]
                }
            }
        }]
    }));
    let e = evaluate(&r, &item("No questions here."));
    assert_eq!(e.results[0].verdict, Some(Verdict::Level("none".into())));
    assert_eq!(e.results[0].value, Some(0.0));
    assert_eq!(e.results[0].evidence.len(), 2);
    assert_eq!(
        e.results[0].evidence[1],
        "0 is below every threshold → none"
    );
    let e = evaluate(&r, &item("Why?"));
    assert_eq!(e.results[0].verdict, Some(Verdict::Level("some".into())));
    assert_eq!(
        e.results[0].evidence,
        [r"1 match of /\?/ (allowed any)", "1 ≥ 1 → some"]
    );
}

#[test]
fn map_levels_on_a_binary_criterion_gives_met_or_unmet() {
    let r = one_criterion(&json!({
        "check": "map_levels",
        "args": {
            "of": { "check": "word_count" },
            "thresholds": [{ "at_least": 3, "level": "MET" }],
            "otherwise": "UNMET"
        }
    }));
    let e = evaluate(&r, &item("Paris is lovely"));
    assert_met(&e.results[0], &["3 words (allowed any)", "3 ≥ 3 → MET"]);
    let e = evaluate(&r, &item("Paris"));
    assert_unmet(
        &e.results[0],
        &["1 word (allowed any)", "1 is below every threshold → UNMET"],
    );
}

/// A check that says MET/UNMET on a levels, options or scale criterion gives its best/worst.
#[test]
fn met_and_unmet_on_graded_criteria_map_to_best_and_worst() {
    let contains = json!({ "check": "contains", "args": { "text": "Paris" } });
    let r = rubric(&json!({
        "id": "graded",
        "criteria": [
            {
                "id": "lv", "requirement": "levels", "kind": "levels",
                "levels": [
                    { "id": "low", "label": "Low", "score": 0.2 },
                    { "id": "mid", "label": "Mid", "score": 0.6 },
                    { "id": "high", "label": "High", "score": 0.9 }
                ],
                "method": contains
            },
            {
                "id": "op", "requirement": "options", "kind": "options",
                "options": [
                    { "label": "N/A", "value": 1, "na": true },
                    { "label": "Good", "value": 1 },
                    { "label": "Bad", "value": 0 },
                    { "label": "Fair", "value": 0.5 }
                ],
                "method": contains
            },
            {
                "id": "sc", "requirement": "scale", "kind": "scale",
                "scale": { "min": 1, "max": 5 },
                "method": contains
            }
        ]
    }));
    let met = evaluate(&r, &item("Paris"));
    let verdicts: Vec<_> = met.results.iter().map(|r| r.verdict.clone()).collect();
    assert_eq!(
        verdicts,
        [
            Some(Verdict::Level("high".into())),
            Some(Verdict::Choice("Good".into())),
            Some(Verdict::Score(5.0)),
        ]
    );
    let values: Vec<_> = met.results.iter().map(|r| r.value).collect();
    assert_eq!(values, [Some(0.9), Some(1.0), Some(1.0)]);
    assert_eq!(
        met.results[0].evidence,
        ["found \"Paris\" at line 1, column 1"]
    );

    let unmet = evaluate(&r, &item("Lyon"));
    let verdicts: Vec<_> = unmet.results.iter().map(|r| r.verdict.clone()).collect();
    assert_eq!(
        verdicts,
        [
            Some(Verdict::Level("low".into())),
            Some(Verdict::Choice("Bad".into())),
            Some(Verdict::Score(1.0)),
        ]
    );
    let values: Vec<_> = unmet.results.iter().map(|r| r.value).collect();
    assert_eq!(values, [Some(0.2), Some(0.0), Some(0.0)]);
    assert!(unmet.results.iter().all(|r| r.failure.is_none()));
}

// ---------------------------------------------------------------------------------------------
// schema method

fn person_schema() -> Value {
    json!({
        "type": "object",
        "required": ["name", "age"],
        "properties": {
            "name": { "type": "string" },
            "age": { "type": "integer", "minimum": 0 }
        }
    })
}

#[test]
fn schema_valid_is_met() {
    let r = one_criterion(&json!({ "schema": person_schema() }));
    let e = evaluate(&r, &item(r#"{"name": "Ada", "age": 36}"#));
    assert_met(&e.results[0], &["valid against the schema"]);
    assert_eq!(e.score, Some(1.0));
}

#[test]
fn schema_invalid_is_unmet_with_every_error_as_evidence() {
    let r = one_criterion(&json!({ "schema": person_schema() }));
    let e = evaluate(&r, &item(r#"{"name": 5, "age": -1}"#));
    assert_unmet(
        &e.results[0],
        &[
            "/name: 5 is not of type \"string\"",
            "/age: -1 is less than the minimum of 0",
        ],
    );
    let e = evaluate(&r, &item("{}"));
    assert_unmet(
        &e.results[0],
        &[
            "/: \"name\" is a required property",
            "/: \"age\" is a required property",
        ],
    );
    let e = evaluate(&r, &item(r#"{"people": [{"name": 1}]}"#));
    let ev = assert_binary(&e.results[0], false);
    assert_eq!(ev.len(), 2, "{ev:?}");
}

/// Every error is listed up to 50; past that the rest are counted in one last line.
#[test]
fn schema_lists_every_error_up_to_fifty() {
    let r = one_criterion(&json!({ "schema": { "type": "array", "items": { "type": "string" } } }));
    let numbers: Vec<usize> = (0..50).collect();
    let e = evaluate(&r, &item(&serde_json::to_string(&numbers).unwrap()));
    let ev = assert_binary(&e.results[0], false);
    let want: Vec<String> = (0..50)
        .map(|i| format!("/{i}: {i} is not of type \"string\""))
        .collect();
    assert_eq!(ev, want);

    let numbers: Vec<usize> = (0..62).collect();
    let e = evaluate(&r, &item(&serde_json::to_string(&numbers).unwrap()));
    let ev = assert_binary(&e.results[0], false);
    assert_eq!(ev.len(), 51);
    assert_eq!(ev[49], "/49: 49 is not of type \"string\"");
    assert_eq!(ev[50], "… and 12 more errors");
    assert_eq!(e.results[0].value, Some(0.0));
}

#[test]
fn schema_errors_deep_in_the_document_name_their_instance_path() {
    let schema = json!({
        "type": "object",
        "properties": {
            "people": { "type": "array", "items": person_schema() }
        }
    });
    let r = one_criterion(&json!({ "schema": schema }));
    let e = evaluate(
        &r,
        &item(r#"{"people": [{"name": "Ada", "age": 36}, {"name": "Bob", "age": 1.5}]}"#),
    );
    assert_unmet(
        &e.results[0],
        &["/people/1/age: 1.5 is not of type \"integer\""],
    );
}

#[test]
fn schema_on_a_submission_that_is_not_json_is_unmet_saying_so() {
    let r = one_criterion(&json!({ "schema": person_schema() }));
    let e = evaluate(&r, &item("Ada, 36"));
    assert_unmet(
        &e.results[0],
        &["the submission is not JSON: expected value at line 1 column 1"],
    );
}

#[test]
fn schema_on_a_levels_criterion_gives_the_highest_or_lowest_level() {
    let r = rubric(&json!({
        "id": "schema-levels",
        "criteria": [{
            "id": "shape", "requirement": "shape", "kind": "levels",
            "levels": [
                { "id": "broken", "label": "Broken", "score": 0 },
                { "id": "valid", "label": "Valid", "score": 1 }
            ],
            "method": { "schema": person_schema() }
        }]
    }));
    let e = evaluate(&r, &item(r#"{"name": "Ada", "age": 36}"#));
    assert_eq!(e.results[0].verdict, Some(Verdict::Level("valid".into())));
    assert_eq!(e.results[0].value, Some(1.0));
    let e = evaluate(&r, &item(r#"{"name": "Ada"}"#));
    assert_eq!(e.results[0].verdict, Some(Verdict::Level("broken".into())));
    assert_eq!(e.results[0].evidence, ["/: \"age\" is a required property"]);
}

/// `tests/fixtures/valid/answer.schema.json`, named relative to the rubric's folder.
#[test]
fn schema_from_a_file_relative_to_the_rubric() {
    let r = one_criterion(&json!({ "schema": "answer.schema.json" }));
    let e = evaluate(&r, &item(r#"{"city": "Paris", "population": 2100000}"#));
    assert_met(&e.results[0], &["valid against the schema"]);
    let e = evaluate(&r, &item(r#"{"city": 75, "population": -1}"#));
    assert_unmet(
        &e.results[0],
        &[
            "/city: 75 is not of type \"string\"",
            "/population: -1 is less than the minimum of 0",
        ],
    );
}

#[test]
fn schema_from_a_file_through_the_binary_resolves_against_the_rubric_not_the_cwd() {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .args([
            "grade",
            "--rubric",
            "tests/fixtures/valid/schema_file.yaml",
            "tests/fixtures/valid/schema_answers.jsonl",
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let rows: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let evidence: Vec<&Value> = rows.iter().map(|r| &r["criteria"][0]["evidence"]).collect();
    assert_eq!(
        evidence,
        [
            &json!(["valid against the schema"]),
            &json!([
                "/city: 75 is not of type \"string\"",
                "/population: -1 is less than the minimum of 0"
            ]),
            &json!(["the submission is not JSON: expected value at line 1 column 1"]),
        ]
    );
    let verdicts: Vec<&Value> = rows.iter().map(|r| &r["criteria"][0]["verdict"]).collect();
    assert_eq!(verdicts, [&json!("MET"), &json!("UNMET"), &json!("UNMET")]);
}

// ---------------------------------------------------------------------------------------------
// command

fn sh(script: &str, timeout: f64) -> CompiledRubric {
    one_criterion(&json!({
        "check": "command",
        "args": { "program": "sh", "args": ["-c", script], "timeout_secs": timeout }
    }))
}

const GREP_PARIS: &str = "grep -q Paris && echo MET || echo UNMET";

#[test]
fn command_is_refused_without_opt_in() {
    let r = sh(GREP_PARIS, 10.0);
    let e = evaluate_with(&r, &item("Paris"), false);
    let res = &e.results[0];
    assert_eq!(res.verdict, None);
    assert_eq!(res.value, None);
    let f = res.failure.as_ref().expect("refused, as a failure");
    assert_eq!(f.category, "command");
    assert!(f.message.contains("--allow-commands"), "{}", f.message);
    assert!(f.message.contains("allow_commands: true"), "{}", f.message);
    assert!(e.incomplete);
    assert_eq!(e.failures, 1);
    assert_eq!(e.score, None);
}

#[test]
fn command_runs_with_opt_in_and_reads_the_item_on_stdin() {
    let r = sh(GREP_PARIS, 10.0);
    let e = evaluate_with(&r, &item("The capital is Paris."), true);
    assert_met(&e.results[0], &["`sh` printed \"MET\""]);
    let e = evaluate_with(&r, &item("Lyon"), true);
    assert_unmet(&e.results[0], &["`sh` printed \"UNMET\""]);
    assert!(!e.incomplete);
}

#[test]
fn command_can_name_a_level() {
    let r = rubric(&json!({
        "id": "cmd-levels",
        "criteria": [{
            "id": "size", "requirement": "size", "kind": "levels",
            "levels": [
                { "id": "small", "label": "Small", "score": 0 },
                { "id": "big", "label": "Big", "score": 1 }
            ],
            "method": {
                "check": "command",
                "args": { "program": "sh", "args": ["-c", "cat >/dev/null; echo; echo '  Big  '"] }
            }
        }]
    }));
    let e = evaluate_with(&r, &item("anything"), true);
    assert_eq!(e.results[0].verdict, Some(Verdict::Level("big".into())));
    assert_eq!(e.results[0].evidence, ["`sh` printed \"Big\""]);
}

#[test]
fn command_timeout_is_a_failure() {
    let r = sh("exec sleep 5", 0.2);
    let e = evaluate_with(&r, &item("Paris"), true);
    let f = e.results[0].failure.as_ref().expect("a timeout failure");
    assert_eq!(f.category, "command");
    assert_eq!(
        f.message,
        "`sh` did not finish within 200ms; it was stopped"
    );
    assert_eq!(e.results[0].verdict, None);
    assert!(e.incomplete);
}

#[test]
fn command_non_zero_exit_is_a_failure_with_the_stderr_tail() {
    let r = sh(
        "cat >/dev/null; echo first >&2; echo 'it broke' >&2; exit 3",
        10.0,
    );
    let e = evaluate_with(&r, &item("Paris"), true);
    let f = e.results[0].failure.as_ref().expect("a failure");
    assert_eq!(f.category, "command");
    assert!(f.message.starts_with("`sh` exited with "), "{}", f.message);
    assert!(f.message.contains('3'), "{}", f.message);
    assert!(f.message.ends_with(": it broke"), "{}", f.message);
    assert!(!f.message.contains("first"), "{}", f.message);
}

#[test]
fn command_output_that_is_no_verdict_is_a_failure() {
    let r = sh("cat >/dev/null; echo maybe", 10.0);
    let e = evaluate_with(&r, &item("Paris"), true);
    let f = e.results[0].failure.as_ref().expect("a failure");
    assert_eq!(f.category, "command");
    assert!(f.message.contains("maybe"), "{}", f.message);
    let r = sh("cat >/dev/null", 10.0);
    let e = evaluate_with(&r, &item("Paris"), true);
    let f = e.results[0].failure.as_ref().expect("a failure");
    assert_eq!(f.message, "`sh` printed no verdict");
}

/// A program that writes a lot to stderr before its verdict must not be stalled by a full
/// stderr pipe while stdout is read (it would then "time out" with a verdict on its way).
#[test]
fn command_with_a_lot_of_stderr_still_gives_its_verdict() {
    let r = sh(
        "cat >/dev/null; head -c 200000 /dev/zero | tr '\\0' x >&2; echo MET",
        2.0,
    );
    let e = evaluate_with(&r, &item("Paris"), true);
    assert_met(&e.results[0], &["`sh` printed \"MET\""]);
}

/// Output past the 64 KiB that is read must not stall the program either: the verdict is the
/// first line.
#[test]
fn command_with_more_output_than_is_read_still_gives_its_first_line() {
    let r = sh("cat >/dev/null; yes MET | head -c 200000", 2.0);
    let e = evaluate_with(&r, &item("Paris"), true);
    assert_met(&e.results[0], &["`sh` printed \"MET\""]);
}

// ---------------------------------------------------------------------------------------------
// judge criteria without a judge

#[test]
fn judge_criteria_without_a_judge_fail_and_the_evaluation_is_incomplete() {
    let r = rubric(&json!({
        "id": "judged",
        "criteria": [
            { "id": "correct", "requirement": "Names Paris",
              "method": { "check": "contains", "args": { "text": "Paris" } } },
            { "id": "polite", "requirement": "Is polite" }
        ]
    }));
    let e = evaluate(&r, &item("Paris"));
    let judged = &e.results[1];
    assert_eq!(judged.criterion_id, "polite");
    assert_eq!(judged.verdict, None, "a failure is never a verdict");
    assert_eq!(judged.value, None);
    let f = judged.failure.as_ref().expect("a judge failure");
    assert_eq!(f.category, "judge");
    assert!(f.message.contains("no judge"), "{}", f.message);
    assert!(e.incomplete);
    assert_eq!(e.failures, 1);
    // The failed criterion abstains; the deterministic one still counts.
    assert_eq!(e.score, Some(1.0));
    assert_eq!(e.results[0].verdict, Some(Verdict::Met));
}

#[test]
fn score_criterion_directly_on_a_check_input() {
    let r = one_criterion(&json!({ "check": "word_count", "args": { "max": 2 } }));
    let it = item("Paris, France");
    let input = CheckInput::new(&it);
    let c = &r.rubric().criteria[0];
    let res = block_on(score_criterion(
        c,
        &r.methods[0],
        &input,
        &ExecOptions::default(),
    ));
    assert_met(&res, &["2 words (allowed at most 2)"]);
    assert_eq!(input.text(), "Paris, France");
    assert!(input.json().is_err());
}
