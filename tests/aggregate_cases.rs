//! Table tests pinning every public acceptance case of `design/SCORING.md` (metrics
//! excepted), plus the aggregation knobs, reconciliation and feedback text
//! (ensembles: `ensemble_cases.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/scoring.rs"]
mod scoring;

use rubricate::engine::aggregate::{
    Aggregate, Input, Outcome, aggregate, aggregate_results, holistic, inputs_for, reaches,
    reconcile_double_pass,
};
use rubricate::engine::feedback::summary;
use rubricate::model::{
    AbstainPolicy, AggregateMode, Criterion, CriterionResult, ErrorPolicy, Failure, FailureKind,
    Gate, Kind, Level, MethodKind, OptionScale, Rubric, Scale, Scoring, Verdict,
};

use scoring::{na, option, verdict};

const TOL: f64 = 1e-6;

// ---------------------------------------------------------------------------------------
// helpers

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= TOL
}

#[track_caller]
fn assert_close(actual: Option<f64>, expected: f64, what: &str) {
    let actual = actual.unwrap_or_else(|| panic!("{what}: expected {expected}, got None"));
    assert!(
        close(actual, expected),
        "{what}: expected {expected}, got {actual}"
    );
}

fn verdicts(codes: &str) -> Vec<Verdict> {
    codes
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(verdict)
        .collect()
}

fn scoring(aggregate: AggregateMode, abstain: AbstainPolicy, errors: ErrorPolicy) -> Scoring {
    Scoring {
        aggregate,
        abstain,
        errors,
        ..Scoring::default()
    }
}

fn with_abstain(abstain: AbstainPolicy) -> Scoring {
    Scoring {
        abstain,
        ..Scoring::default()
    }
}

/// Binary criteria `c0`, `c1`, … with the given weights.
fn binary_rubric(weights: &[f64]) -> Rubric {
    let criteria = weights
        .iter()
        .enumerate()
        .map(|(i, w)| Criterion::binary(format!("c{i}"), format!("requirement {i}"), *w))
        .collect();
    Rubric::new("binary", criteria)
}

/// A judged result whose value comes from `Criterion::value_of`.
fn judged(c: &Criterion, v: Verdict) -> CriterionResult {
    let value = c.value_of(&v).expect("verdict fits the criterion");
    CriterionResult {
        criterion_id: c.id.clone(),
        verdict: Some(v),
        value,
        reason: String::new(),
        evidence: Vec::new(),
        method: MethodKind::Judge,
        failure: None,
        invocation: None,
        ensemble: None,
        turns: Vec::new(),
    }
}

fn results_for(rubric: &Rubric, vs: Vec<Verdict>) -> Vec<CriterionResult> {
    assert_eq!(rubric.criteria.len(), vs.len());
    rubric
        .criteria
        .iter()
        .zip(vs)
        .map(|(c, v)| judged(c, v))
        .collect()
}

fn outcome_of(v: &Verdict) -> Outcome {
    match v {
        Verdict::Met => Outcome::Value(1.0),
        Verdict::Unmet => Outcome::Value(0.0),
        Verdict::CannotAssess => Outcome::Abstain,
        other => panic!("not binary: {other}"),
    }
}

/// Scores a binary rubric both through `aggregate_results` (rubric + results) and directly
/// through `aggregate` (inputs), checks the two agree and returns the result.
fn score_binary(weights: &[f64], codes: &str, scoring: Scoring, threshold: f64) -> Aggregate {
    let mut rubric = binary_rubric(weights);
    rubric.scoring = scoring;
    rubric.pass_threshold = threshold;
    let vs = verdicts(codes);
    let inputs: Vec<Input> = weights
        .iter()
        .zip(&vs)
        .map(|(w, v)| Input {
            weight: *w,
            outcome: outcome_of(v),
            gate: None,
            // A binary criterion's worst: UNMET, or MET for a penalty.
            worst: Some(if *w < 0.0 { 1.0 } else { 0.0 }),
        })
        .collect();
    let results = results_for(&rubric, vs);
    assert_eq!(
        inputs_for(&rubric, &results),
        inputs,
        "inputs_for for {weights:?} {codes}"
    );
    let via_results = aggregate_results(&rubric, &results);
    let direct = aggregate(&scoring, threshold, &inputs);
    assert_eq!(
        via_results, direct,
        "rubric path and input path disagree for {weights:?} {codes}"
    );
    via_results
}

fn input(weight: f64, outcome: Outcome) -> Input {
    Input {
        weight,
        outcome,
        gate: None,
        worst: None,
    }
}

fn levels() -> Vec<Level> {
    let level = |id: &str, label: &str, description: &str, score: f64| Level {
        id: id.into(),
        label: label.into(),
        description: description.into(),
        score,
        indicators: Vec::new(),
    };
    vec![
        level("fail", "Fail", "Misses the point", 0.0),
        level("pass", "Pass", "Covers the basics", 0.7),
        level(
            "excellent",
            "Excellent",
            "Covers all required topics with depth",
            1.0,
        ),
    ]
}

fn levels_criterion(id: &str, weight: f64) -> Criterion {
    let mut c = Criterion::binary(id, format!("{id} requirement"), weight);
    c.kind = Kind::Levels(levels());
    c
}

fn scale_criterion(id: &str, weight: f64, min: f64, max: f64) -> Criterion {
    let mut c = Criterion::binary(id, format!("{id} requirement"), weight);
    c.kind = Kind::Scale(Scale {
        min,
        max,
        anchors: Vec::new(),
    });
    c
}

// ---------------------------------------------------------------------------------------
// binary / points

struct PointsCase {
    weights: &'static [f64],
    verdicts: &'static str,
    abstain: AbstainPolicy,
    partial_credit: f64,
    normalized: f64,
    raw: f64,
}

const fn case(
    weights: &'static [f64],
    verdicts: &'static str,
    abstain: AbstainPolicy,
    normalized: f64,
    raw: f64,
) -> PointsCase {
    PointsCase {
        weights,
        verdicts,
        abstain,
        partial_credit: 0.5,
        normalized,
        raw,
    }
}

#[test]
fn binary_points_table_of_scoring_md() {
    use AbstainPolicy::{Partial, Skip, Zero};
    let cases = [
        case(&[10.0, 5.0], "MU", Skip, 0.666_667, 10.0),
        case(&[10.0, 8.0, -15.0], "MMM", Skip, 0.166_667, 3.0),
        case(&[10.0, 8.0, -15.0], "MMU", Skip, 1.0, 18.0),
        case(&[10.0, 8.0, -15.0], "UUM", Skip, 0.0, -15.0),
        case(&[-1.0, -1.0, -1.0], "UUU", Skip, 1.0, 0.0),
        case(&[-1.0, -1.0, -1.0], "MUU", Skip, 0.666_667, -1.0),
        case(&[2.0, 1.0, 1.0, -0.5], "MMMU", Skip, 1.0, 4.0),
        case(&[5.0, 10.0, 3.0], "MAU", Skip, 0.625, 5.0),
        case(&[5.0, 10.0, 3.0], "MAU", Zero, 0.277_778, 5.0),
        PointsCase {
            partial_credit: 0.5,
            ..case(&[5.0, 10.0, 3.0], "MAU", Partial, 0.555_556, 10.0)
        },
        case(&[0.0, 0.0], "MM", Skip, 0.0, 0.0),
    ];
    for c in &cases {
        let knobs = Scoring {
            abstain: c.abstain,
            partial_credit: c.partial_credit,
            ..Scoring::default()
        };
        let what = format!("{:?} {} {:?}", c.weights, c.verdicts, c.abstain);
        let normalized = score_binary(c.weights, c.verdicts, knobs, 0.7);
        assert_close(
            normalized.score,
            c.normalized,
            &format!("normalized score of {what}"),
        );
        assert_close(normalized.raw, c.raw, &format!("raw of {what}"));
        assert_eq!(
            normalized.passed,
            normalized.score.unwrap() >= 0.7,
            "passed of {what}"
        );
        assert!(!normalized.incomplete, "{what} is complete");
        assert_eq!(normalized.failures, 0);

        let raw_knobs = Scoring {
            normalize: false,
            ..knobs
        };
        let raw = score_binary(c.weights, c.verdicts, raw_knobs, 0.7);
        assert_close(
            raw.score,
            c.raw,
            &format!("normalize:false score of {what}"),
        );
        assert_close(raw.raw, c.raw, &format!("normalize:false raw of {what}"));
    }
}

#[test]
fn zero_weight_rubric_counts_but_scores_zero() {
    let agg = score_binary(&[0.0, 0.0], "MM", Scoring::default(), 0.7);
    assert_eq!(agg.score, Some(0.0));
    assert_eq!(agg.raw, Some(0.0));
    assert!(!agg.passed);
    assert!(
        !agg.incomplete,
        "something was counted, so the run is complete"
    );
}

#[test]
fn default_knobs_are_points_skip_half_abstain_normalized() {
    let s = Scoring::default();
    assert_eq!(s.aggregate, AggregateMode::Points);
    assert_eq!(s.abstain, AbstainPolicy::Skip);
    assert_eq!(s.partial_credit, 0.5);
    assert_eq!(s.errors, ErrorPolicy::Abstain);
    assert!(s.normalize);
    let r = Rubric::new("r", vec![Criterion::binary("a", "A", 1.0)]);
    assert_eq!(r.pass_threshold, 0.7);
    assert_eq!(r.criteria[0].weight, 1.0);
    assert!(!r.criteria[0].required);
}

#[test]
fn partial_credit_knob_is_used_for_positive_weights_only() {
    // 5·1 + 10·0.25 + 3·0 = 7.5 over P = 18.
    let knobs = Scoring {
        abstain: AbstainPolicy::Partial,
        partial_credit: 0.25,
        ..Scoring::default()
    };
    let agg = score_binary(&[5.0, 10.0, 3.0], "MAU", knobs, 0.7);
    assert_close(agg.raw, 7.5, "raw");
    assert_close(agg.score, 7.5 / 18.0, "score");
    // A penalty that abstains under `partial` counts 0 (the penalty is absent).
    let agg = score_binary(&[10.0, -5.0], "MA", knobs, 0.7);
    assert_close(agg.raw, 10.0, "raw");
    assert_close(agg.score, 1.0, "score");
}

#[test]
fn abstain_worst_takes_the_worst_value_for_the_sign() {
    let worst = with_abstain(AbstainPolicy::Worst);
    // positive: counted as 0 → 5 / 18.
    let agg = score_binary(&[5.0, 10.0, 3.0], "MAU", worst, 0.7);
    assert_close(agg.raw, 5.0, "raw");
    assert_close(agg.score, 5.0 / 18.0, "score");
    // penalty: counted as 1 (the bad thing is assumed present) → (10 − 5) / 10.
    let agg = score_binary(&[10.0, -5.0], "MA", worst, 0.7);
    assert_close(agg.raw, 5.0, "raw");
    assert_close(agg.score, 0.5, "score");
    // all-negative rubric, abstaining penalty counted MET → 1 − 1/2.
    let agg = score_binary(&[-1.0, -1.0], "UA", worst, 0.7);
    assert_close(agg.raw, -1.0, "raw");
    assert_close(agg.score, 0.5, "score");
    // zero weight counts as the positive side: value 0.
    let agg = score_binary(&[1.0, 0.0], "MA", worst, 0.7);
    assert_close(agg.raw, 1.0, "raw");
    assert_close(agg.score, 1.0, "score");

    // compare the other policies on the penalty case
    let agg = score_binary(&[10.0, -5.0], "MA", with_abstain(AbstainPolicy::Skip), 0.7);
    assert_close(agg.score, 1.0, "skip");
    let agg = score_binary(&[10.0, -5.0], "MA", with_abstain(AbstainPolicy::Zero), 0.7);
    assert_close(agg.score, 1.0, "zero");
    assert_close(agg.raw, 10.0, "zero raw");
}

#[test]
fn abstain_zero_counts_the_weight() {
    // All-negative with an abstention counted 0: N grows, raw does not.
    let agg = score_binary(&[-1.0, -1.0], "MA", with_abstain(AbstainPolicy::Zero), 0.7);
    assert_close(agg.raw, -1.0, "raw");
    assert_close(agg.score, 0.5, "score");
    let agg = score_binary(&[-1.0, -1.0], "MA", with_abstain(AbstainPolicy::Skip), 0.7);
    assert_close(agg.score, 0.0, "skip: only the MET penalty counts");
}

// ---------------------------------------------------------------------------------------
// levels, scale, options

fn score_levels(weights: &[f64], chosen: &[&str], threshold: f64) -> Aggregate {
    let criteria: Vec<Criterion> = weights
        .iter()
        .enumerate()
        .map(|(i, w)| levels_criterion(&format!("l{i}"), *w))
        .collect();
    let mut rubric = Rubric::new("levels", criteria);
    rubric.pass_threshold = threshold;
    let vs = chosen
        .iter()
        .map(|id| Verdict::Level((*id).to_owned()))
        .collect();
    let results = results_for(&rubric, vs);
    aggregate_results(&rubric, &results)
}

#[test]
fn levels_cases_of_scoring_md() {
    let agg = score_levels(&[0.4, 0.6], &["excellent", "pass"], 0.7);
    assert_close(agg.score, 0.82, "excellent, pass");
    assert!(agg.passed);

    let agg = score_levels(&[0.4, 0.6], &["fail", "pass"], 0.7);
    assert_close(agg.score, 0.42, "fail, pass");
    assert!(!agg.passed);

    let agg = score_levels(&[1.0], &["pass"], 0.7);
    assert_close(agg.score, 0.7, "pass alone");
    assert!(agg.passed, "the threshold is inclusive");
}

#[test]
fn level_values_come_from_the_chosen_level() {
    let c = levels_criterion("l", 1.0);
    assert_eq!(c.value_of(&Verdict::Level("fail".into())), Ok(Some(0.0)));
    assert_eq!(c.value_of(&Verdict::Level("pass".into())), Ok(Some(0.7)));
    assert_eq!(
        c.value_of(&Verdict::Level("excellent".into())),
        Ok(Some(1.0))
    );
    assert_eq!(c.value_of(&Verdict::CannotAssess), Ok(None));
    assert!(c.value_of(&Verdict::Level("great".into())).is_err());
}

#[test]
fn scale_case_passes_by_the_tolerance_rule() {
    let a = scale_criterion("a", 2.0, 0.0, 10.0);
    let b = scale_criterion("b", 1.0, 0.0, 10.0);
    assert_eq!(a.value_of(&Verdict::Score(7.0)), Ok(Some(0.7)));
    assert_eq!(b.value_of(&Verdict::Score(10.0)), Ok(Some(1.0)));
    let mut rubric = Rubric::new("scale", vec![a, b]);
    rubric.pass_threshold = 0.8;
    let results = results_for(&rubric, vec![Verdict::Score(7.0), Verdict::Score(10.0)]);
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 0.8, "scale score");
    assert_close(agg.raw, 2.4, "scale raw");
    assert!(agg.passed, "0.8 (possibly 0.7999999999999999) passes 0.8");
    assert!(reaches(0.799_999_999_999_999_9, 0.8));
    assert!(reaches(2.4 / 3.0, 0.8));
}

#[test]
fn scale_values_are_linear_and_clamped() {
    let ten = scale_criterion("s", 1.0, 0.0, 10.0);
    assert_eq!(ten.value_of(&Verdict::Score(0.0)), Ok(Some(0.0)));
    assert_eq!(ten.value_of(&Verdict::Score(-3.0)), Ok(Some(0.0)));
    assert_eq!(ten.value_of(&Verdict::Score(14.0)), Ok(Some(1.0)));
    assert_close(ten.value_of(&Verdict::Score(3.0)).unwrap(), 0.3, "3 of 10");
    let dims = scale_criterion("d", 1.0, 1.0, 5.0);
    assert_eq!(dims.value_of(&Verdict::Score(1.0)), Ok(Some(0.0)));
    assert_eq!(dims.value_of(&Verdict::Score(3.0)), Ok(Some(0.5)));
    assert_eq!(dims.value_of(&Verdict::Score(5.0)), Ok(Some(1.0)));
    assert!(dims.value_of(&Verdict::Score(f64::NAN)).is_err());
    assert_eq!(dims.value_of(&Verdict::CannotAssess), Ok(None));
}

#[test]
fn options_match_trimmed_case_insensitively_and_na_abstains() {
    let mut c = Criterion::binary("o", "Quality", 1.0);
    c.kind = Kind::Options {
        options: vec![
            option("Poor", 0.0),
            option("Fair", 0.5),
            option("Good", 1.0),
            na("N/A"),
        ],
        scale: OptionScale::Ordinal,
    };
    assert_eq!(
        c.value_of(&Verdict::Choice("  good ".into())),
        Ok(Some(1.0))
    );
    assert_eq!(c.value_of(&Verdict::Choice("FAIR".into())), Ok(Some(0.5)));
    assert_eq!(c.value_of(&Verdict::Choice("n/a".into())), Ok(None));
    assert!(c.value_of(&Verdict::Choice("Great".into())).is_err());
    // autorubric's `strip().lower()`: any Unicode case, Python's whitespace (U+001F too).
    let mut fr = Criterion::binary("f", "Qualité", 1.0);
    fr.kind = Kind::Options {
        options: vec![option("Très bien", 1.0), option("Mal", 0.0)],
        scale: OptionScale::Ordinal,
    };
    assert_eq!(
        fr.value_of(&Verdict::Choice("TRÈS BIEN".into())),
        Ok(Some(1.0))
    );
    assert_eq!(
        fr.value_of(&Verdict::Choice("\u{1f}Très bien\u{a0}".into())),
        Ok(Some(1.0))
    );

    let b = Criterion::binary("b", "Other", 1.0);
    let rubric = Rubric::new("options", vec![c, b]);
    // NA abstains and is skipped: only b counts.
    let results = results_for(&rubric, vec![Verdict::Choice("N/A".into()), Verdict::Unmet]);
    let agg = aggregate_results(&rubric, &results);
    assert_eq!(agg.score, Some(0.0));
    let results = results_for(&rubric, vec![Verdict::Choice(" fair".into()), Verdict::Met]);
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 0.75, "fair + met");
}

#[test]
fn abstain_worst_charges_the_worst_scored_option_for_the_sign() {
    // autorubric's FAIL: the worst *scored* option (NA aside), the highest for a penalty.
    let options = vec![
        option("Fair", 0.4),
        option("Good", 1.0),
        option("Okay", 0.7),
        na("N/A"),
    ];
    let mut c = Criterion::binary("o", "Quality", 2.0);
    c.kind = Kind::Options {
        options: options.clone(),
        scale: OptionScale::Ordinal,
    };
    let mut p = Criterion::binary("p", "Rambles", -1.0);
    p.kind = Kind::Options {
        options,
        scale: OptionScale::Ordinal,
    };
    let b = Criterion::binary("b", "Other", 1.0);
    let mut rubric = Rubric::new("worst", vec![c, p, b]);
    rubric.scoring = with_abstain(AbstainPolicy::Worst);
    let results = results_for(
        &rubric,
        vec![
            Verdict::Choice("N/A".into()),
            Verdict::CannotAssess,
            Verdict::Met,
        ],
    );
    let agg = aggregate_results(&rubric, &results);
    // 2·0.4 − 1·1.0 + 1 = 0.8 over P = 3.
    assert_close(agg.raw, 0.8, "raw");
    assert_close(agg.score, 0.8 / 3.0, "score");
    // errors: worst charges the same.
    let mut failed = results.clone();
    failed[0].failure = Some(rubricate::model::Failure::error("judge", "timeout"));
    failed[0].verdict = None;
    failed[0].value = None;
    rubric.scoring.errors = ErrorPolicy::Worst;
    rubric.scoring.abstain = AbstainPolicy::Skip;
    let agg = aggregate_results(&rubric, &failed);
    // The failed option criterion counts 0.4; the abstaining penalty is skipped.
    assert_close(agg.raw, 1.8, "raw with errors: worst");
}

// ---------------------------------------------------------------------------------------
// holistic

#[test]
fn holistic_cases_of_scoring_md() {
    let (score, raw) = holistic(&[10.0, 5.0], 85.0);
    assert_close(Some(score), 0.85, "holistic score");
    assert_close(Some(raw), 12.75, "holistic raw");

    let (score, raw) = holistic(&[-2.0, -3.0], 40.0);
    assert_close(Some(score), 0.4, "all-negative holistic score");
    assert_close(Some(raw), -3.0, "all-negative holistic raw");

    let (score, _) = holistic(&[10.0, 5.0], 120.0);
    assert_close(Some(score), 1.0, "judge 120 clamps");
    let (score, _) = holistic(&[-2.0, -3.0], 120.0);
    assert_close(Some(score), 1.0, "judge 120 clamps, all-negative");
    let (score, _) = holistic(&[10.0, 5.0], -10.0);
    assert_close(Some(score), 0.0, "judge below 0 clamps");
}

#[test]
fn holistic_edges() {
    // mixed signs: P decides.
    let (score, raw) = holistic(&[10.0, -5.0], 50.0);
    assert_close(Some(score), 0.5, "mixed score");
    assert_close(Some(raw), 5.0, "mixed raw");
    // no weight at all.
    let (score, raw) = holistic(&[0.0, 0.0], 70.0);
    assert_close(Some(score), 0.7, "zero weights score");
    assert_close(Some(raw), 0.0, "zero weights raw");
    // all-negative perfect and worst.
    let (_, raw) = holistic(&[-2.0, -3.0], 100.0);
    assert_close(Some(raw), 0.0, "all-negative, 100");
    let (_, raw) = holistic(&[-2.0, -3.0], 0.0);
    assert_close(Some(raw), -5.0, "all-negative, 0");
}

// ---------------------------------------------------------------------------------------
// required gating

fn gated_rubric() -> Rubric {
    let mut a = Criterion::binary("a", "A", 3.0);
    a.required = true;
    let b = Criterion::binary("b", "B", 1.0);
    let c = Criterion::binary("c", "C", 2.0);
    let mut rubric = Rubric::new("gated", vec![a, b, c]);
    rubric.pass_threshold = 0.8;
    rubric
}

#[test]
fn required_gating_cases_of_scoring_md() {
    let rubric = gated_rubric();
    let run = |codes: &str| aggregate_results(&rubric, &results_for(&rubric, verdicts(codes)));

    let agg = run("MMM");
    assert_close(agg.score, 1.0, "all met");
    assert!(agg.passed);
    assert!(agg.gates_failed.is_empty());

    let agg = run("UMM");
    assert_close(agg.score, 0.5, "a unmet");
    assert!(!agg.passed);
    assert_eq!(agg.gates_failed, vec![0]);

    let agg = run("MUM");
    assert_close(agg.score, 0.833_333, "b unmet");
    assert!(agg.passed);
    assert!(agg.gates_failed.is_empty());
}

#[test]
fn a_required_criterion_fails_the_gate_whatever_the_score() {
    // Lower the threshold so the score alone would pass: the gate still fails.
    let mut rubric = gated_rubric();
    rubric.pass_threshold = 0.1;
    let agg = aggregate_results(&rubric, &results_for(&rubric, verdicts("UMM")));
    assert!(!agg.passed);
    assert_eq!(agg.gates_failed, vec![0]);
    // An abstaining required criterion has no value, so it does not reach its min_score.
    let agg = aggregate_results(&rubric, &results_for(&rubric, verdicts("AMM")));
    assert_close(agg.score, 1.0, "a skipped");
    assert!(!agg.passed);
    assert_eq!(agg.gates_failed, vec![0]);
    // A failed required criterion neither.
    let results = vec![
        CriterionResult::failed("a", MethodKind::Judge, Failure::error("judge", "timeout")),
        judged(&rubric.criteria[1], Verdict::Met),
        judged(&rubric.criteria[2], Verdict::Met),
    ];
    let agg = aggregate_results(&rubric, &results);
    assert!(!agg.passed);
    assert_eq!(agg.gates_failed, vec![0]);
}

#[test]
fn graded_gates_default_to_above_zero_and_honour_min_score() {
    let mut gated = levels_criterion("g", 1.0);
    gated.required = true;
    assert_eq!(gated.gate(), Gate::AboveZero);
    let rubric = {
        let mut r = Rubric::new("g", vec![gated.clone(), levels_criterion("h", 1.0)]);
        r.pass_threshold = 0.0;
        r
    };
    let run = |rubric: &Rubric, g: &str| {
        let vs = vec![Verdict::Level(g.into()), Verdict::Level("excellent".into())];
        aggregate_results(rubric, &results_for(rubric, vs))
    };
    assert!(!run(&rubric, "fail").passed, "0 is not above zero");
    assert!(run(&rubric, "pass").passed);

    let mut strict = rubric.clone();
    strict.criteria[0].min_score = Some(1.0);
    assert_eq!(strict.criteria[0].gate(), Gate::AtLeast(1.0));
    assert!(!run(&strict, "pass").passed);
    assert!(run(&strict, "excellent").passed);

    let mut at_pass = rubric;
    at_pass.criteria[0].min_score = Some(0.7);
    assert!(run(&at_pass, "pass").passed, "min_score is inclusive");

    let mut binary = Criterion::binary("b", "B", 1.0);
    binary.required = true;
    assert_eq!(binary.gate(), Gate::AtLeast(1.0));
    assert!(Gate::AtLeast(1.0).admits(1.0));
    assert!(!Gate::AtLeast(1.0).admits(0.0));
    assert!(Gate::AboveZero.admits(0.01));
    assert!(!Gate::AboveZero.admits(0.0));
}

// ---------------------------------------------------------------------------------------
// normalize, nothing counted, mean and min

#[test]
fn normalize_false_returns_raw() {
    let raw_points = Scoring {
        normalize: false,
        ..Scoring::default()
    };
    let agg = score_binary(&[10.0, 8.0, -15.0], "UUM", raw_points, 0.7);
    assert_eq!(agg.score, Some(-15.0));
    assert_eq!(agg.raw, Some(-15.0));
    assert!(!agg.passed);
    let agg = score_binary(&[10.0, 5.0], "MU", raw_points, 7.0);
    assert_eq!(agg.score, Some(10.0));
    assert!(
        agg.passed,
        "a raw score is compared with the threshold as is"
    );
}

#[test]
fn nothing_counted_gives_no_score_and_an_incomplete_run() {
    let agg = score_binary(&[1.0, 2.0], "AA", Scoring::default(), 0.7);
    assert_eq!(agg.score, None);
    assert_eq!(agg.raw, None);
    assert!(!agg.passed);
    assert!(agg.incomplete);
    assert_eq!(agg.failures, 0);

    let agg = aggregate(&Scoring::default(), 0.0, &[]);
    assert_eq!(agg.score, None);
    assert!(!agg.passed, "no score never passes, even at threshold 0");
    assert!(agg.incomplete);

    for mode in [AggregateMode::Mean, AggregateMode::Min] {
        let s = Scoring {
            aggregate: mode,
            ..Scoring::default()
        };
        let agg = aggregate(
            &s,
            0.0,
            &[input(1.0, Outcome::Abstain), input(-1.0, Outcome::Failed)],
        );
        assert_eq!(agg.score, None, "{mode:?}");
        assert!(agg.incomplete);
        assert_eq!(agg.failures, 1);
    }
    // A result missing for a criterion counts as an abstention.
    let rubric = binary_rubric(&[1.0, 1.0]);
    let agg = aggregate_results(&rubric, &[]);
    assert_eq!(agg.score, None);
    assert!(agg.incomplete);
    let agg = aggregate_results(&rubric, &[judged(&rubric.criteria[1], Verdict::Met)]);
    assert_eq!(agg.score, Some(1.0));
}

#[test]
fn mean_ignores_weights_and_inverts_penalties() {
    let mean = scoring(
        AggregateMode::Mean,
        AbstainPolicy::Skip,
        ErrorPolicy::Abstain,
    );
    // weights ignored: 1 and 0 → 0.5.
    let agg = score_binary(&[100.0, 1.0], "MU", mean, 0.7);
    assert_close(agg.score, 0.5, "mean");
    assert_close(agg.raw, 100.0, "raw is still Σ w·v");
    // penalty UNMET is good (1), MET is bad (0).
    let agg = score_binary(&[10.0, 8.0, -15.0], "MUU", mean, 0.7);
    assert_close(agg.score, 2.0 / 3.0, "mean with a penalty absent");
    let agg = score_binary(&[10.0, 8.0, -15.0], "MMM", mean, 0.7);
    assert_close(agg.score, 2.0 / 3.0, "mean with a penalty present");
    let agg = score_binary(&[-1.0, -1.0, -1.0], "UUU", mean, 0.7);
    assert_close(agg.score, 1.0, "all penalties absent");
    // abstentions: skip leaves them out, zero counts 0, worst counts the worst.
    let agg = score_binary(&[1.0, 1.0], "MA", mean, 0.7);
    assert_close(agg.score, 1.0, "mean skip");
    let agg = score_binary(
        &[1.0, 1.0],
        "MA",
        Scoring {
            abstain: AbstainPolicy::Zero,
            ..mean
        },
        0.7,
    );
    assert_close(agg.score, 0.5, "mean zero");
    let agg = score_binary(
        &[1.0, -1.0],
        "MA",
        Scoring {
            abstain: AbstainPolicy::Worst,
            ..mean
        },
        0.7,
    );
    assert_close(agg.score, 0.5, "mean worst on a penalty");
    let agg = score_binary(
        &[1.0, 1.0],
        "MA",
        Scoring {
            abstain: AbstainPolicy::Partial,
            ..mean
        },
        0.7,
    );
    assert_close(agg.score, 0.75, "mean partial");
    // graded values
    let agg = aggregate(
        &mean,
        0.7,
        &[
            input(0.4, Outcome::Value(1.0)),
            input(0.6, Outcome::Value(0.7)),
        ],
    );
    assert_close(agg.score, 0.85, "mean of levels");
    assert!(agg.passed);
}

#[test]
fn min_takes_the_weakest_value() {
    let min = scoring(
        AggregateMode::Min,
        AbstainPolicy::Skip,
        ErrorPolicy::Abstain,
    );
    let agg = aggregate(
        &min,
        0.5,
        &[
            input(1.0, Outcome::Value(0.75)),
            input(2.0, Outcome::Value(0.5)),
            input(1.0, Outcome::Value(1.0)),
        ],
    );
    assert_close(agg.score, 0.5, "min");
    assert!(agg.passed);
    // a penalty present is the weakest (oriented 0); absent it counts 1.
    let agg = score_binary(&[1.0, -1.0], "MM", min, 0.7);
    assert_close(agg.score, 0.0, "min, penalty present");
    let agg = score_binary(&[1.0, -1.0], "MU", min, 0.7);
    assert_close(agg.score, 1.0, "min, penalty absent");
    // graded penalty value 0.25 → oriented 0.75.
    let agg = aggregate(
        &min,
        0.7,
        &[
            input(-3.0, Outcome::Value(0.25)),
            input(1.0, Outcome::Value(0.9)),
        ],
    );
    assert_close(agg.score, 0.75, "min with a graded penalty");
    // skipped abstentions do not drag min down; worst does.
    let agg = score_binary(&[1.0, 1.0], "MA", min, 0.7);
    assert_close(agg.score, 1.0, "min skip");
    let agg = score_binary(
        &[1.0, 1.0],
        "MA",
        Scoring {
            abstain: AbstainPolicy::Worst,
            ..min
        },
        0.7,
    );
    assert_close(agg.score, 0.0, "min worst");
}

// ---------------------------------------------------------------------------------------
// errors policies

#[test]
fn error_policies_with_failed_outcomes() {
    // 10 → 1.0, 5 → failed, −5 → failed.
    let inputs = [
        input(10.0, Outcome::Value(1.0)),
        input(5.0, Outcome::Failed),
        input(-5.0, Outcome::Failed),
    ];
    let cases = [
        // errors: abstain follows the abstain knob
        (AbstainPolicy::Skip, ErrorPolicy::Abstain, 10.0, 1.0),
        (AbstainPolicy::Zero, ErrorPolicy::Abstain, 10.0, 10.0 / 15.0),
        (
            AbstainPolicy::Partial,
            ErrorPolicy::Abstain,
            12.5,
            12.5 / 15.0,
        ),
        (AbstainPolicy::Worst, ErrorPolicy::Abstain, 5.0, 5.0 / 15.0),
        // errors: zero counts 0 whatever the sign, and whatever the abstain knob
        (AbstainPolicy::Skip, ErrorPolicy::Zero, 10.0, 10.0 / 15.0),
        (AbstainPolicy::Worst, ErrorPolicy::Zero, 10.0, 10.0 / 15.0),
        // errors: worst counts 0 for w ≥ 0 and 1 for penalties
        (AbstainPolicy::Skip, ErrorPolicy::Worst, 5.0, 5.0 / 15.0),
        (AbstainPolicy::Partial, ErrorPolicy::Worst, 5.0, 5.0 / 15.0),
    ];
    for (abstain, errors, raw, score) in cases {
        let s = scoring(AggregateMode::Points, abstain, errors);
        let agg = aggregate(&s, 0.7, &inputs);
        let what = format!("{abstain:?}/{errors:?}");
        assert_close(agg.raw, raw, &format!("raw {what}"));
        assert_close(agg.score, score, &format!("score {what}"));
        assert_eq!(agg.passed, score >= 0.7, "passed {what}");
        assert!(agg.incomplete, "{what}: failures make the run incomplete");
        assert_eq!(agg.failures, 2, "{what}");
    }
}

#[test]
fn failures_through_results_count_and_mark_incomplete() {
    let mut rubric = binary_rubric(&[10.0, 5.0, -5.0]);
    let results = vec![
        judged(&rubric.criteria[0], Verdict::Met),
        CriterionResult::failed("c1", MethodKind::Check, Failure::error("check", "boom")),
        CriterionResult::failed(
            "c2",
            MethodKind::Judge,
            Failure {
                kind: FailureKind::UnableToEvaluate,
                category: "judge".into(),
                message: "unreadable".into(),
            },
        ),
    ];
    let agg = aggregate_results(&rubric, &results);
    assert_eq!(
        inputs_for(&rubric, &results)
            .iter()
            .map(|i| i.outcome)
            .collect::<Vec<_>>(),
        vec![Outcome::Value(1.0), Outcome::Failed, Outcome::Failed]
    );
    assert_close(agg.score, 1.0, "skip");
    assert!(
        agg.passed,
        "an incomplete run can still pass; the CLI decides"
    );
    assert!(agg.incomplete);
    assert_eq!(agg.failures, 2);

    rubric.scoring.errors = ErrorPolicy::Worst;
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 5.0 / 15.0, "worst");
    assert!(!agg.passed);
    assert_eq!(agg.failures, 2);

    // mean and min see failures too
    rubric.scoring.aggregate = AggregateMode::Mean;
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 1.0 / 3.0, "mean worst");
    rubric.scoring.aggregate = AggregateMode::Min;
    rubric.scoring.errors = ErrorPolicy::Zero;
    // zero on the penalty is its best value (oriented 1); the positive one is 0.
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 0.0, "min zero");
}

// ---------------------------------------------------------------------------------------
// threshold tolerance

#[test]
fn threshold_tolerance() {
    assert!(reaches(0.7, 0.7));
    assert!(reaches(0.8, 0.8));
    assert!(reaches(0.8 - 1e-10, 0.8));
    assert!(!reaches(0.8 - 1e-8, 0.8));
    assert!(!reaches(0.79, 0.8));
    assert!(reaches(1.0, 0.0));
    assert!(reaches(0.0, 0.0));
}

// ---------------------------------------------------------------------------------------
// reversed double pass

#[test]
fn reversed_double_pass_all_combinations() {
    // (first, second, positive result, negative result)
    let table = [
        ('M', 'M', 'M', 'M'),
        ('M', 'U', 'U', 'M'),
        ('M', 'A', 'U', 'M'),
        ('U', 'M', 'U', 'M'),
        ('U', 'U', 'U', 'U'),
        ('U', 'A', 'U', 'U'),
        ('A', 'M', 'U', 'M'),
        ('A', 'U', 'U', 'U'),
        ('A', 'A', 'A', 'A'),
    ];
    for (first, second, positive, negative) in table {
        let (f, s) = (verdict(first), verdict(second));
        for w in [1.0, 10.0, 0.0] {
            assert_eq!(
                reconcile_double_pass(w, &f, &s),
                verdict(positive),
                "w={w} {first}{second}"
            );
        }
        for w in [-1.0, -0.5] {
            assert_eq!(
                reconcile_double_pass(w, &f, &s),
                verdict(negative),
                "w={w} {first}{second}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// feedback

#[test]
fn feedback_documented_summary() {
    let mut clarity = levels_criterion("clarity", 0.5);
    clarity.name = "Clarity".into();
    let mut completeness = levels_criterion("completeness", 0.5);
    completeness.name = "Completeness".into();
    let mut rubric = Rubric::new("content_quality", vec![clarity, completeness]);
    rubric.name = "Content Quality".into();
    let results = results_for(
        &rubric,
        vec![
            Verdict::Level("excellent".into()),
            Verdict::Level("pass".into()),
        ],
    );
    let agg = aggregate_results(&rubric, &results);
    assert_eq!(
        summary(&rubric, &results, &agg),
        "Evaluation PASSED for rubric 'Content Quality'.\n\
         Overall score: 85%\n\
         \n\
         - Clarity: excellent (score: 1.00)\n\
         - Completeness: pass (score: 0.70)\n\
         \n\
         Suggestions for improvement:\n  \
         - Completeness: aim for 'Excellent' — Covers all required topics with depth"
    );
}

#[test]
fn feedback_with_a_failure_prints_category_and_message() {
    let mut thesis = Criterion::binary("thesis", "States a clear thesis", 2.0);
    thesis.name = "Thesis".into();
    let mut sources = Criterion::binary("sources", "Cites sources", 1.0);
    sources.name = "Sources".into();
    let mut plagiarism = Criterion::binary("plagiarism", "Copies text without attribution", -3.0);
    plagiarism.name = "Plagiarism".into();
    let mut style = Criterion::binary("style", "Uses a consistent style", 1.0);
    style.name = "Style".into();
    let mut rubric = Rubric::new("essay", vec![thesis, sources, plagiarism, style]);
    rubric.name = "Essay".into();
    let results = vec![
        judged(&rubric.criteria[0], Verdict::Met),
        CriterionResult::failed(
            "sources",
            MethodKind::Check,
            Failure::error("check", "regex did not compile"),
        ),
        judged(&rubric.criteria[2], Verdict::Unmet),
        CriterionResult::failed(
            "style",
            MethodKind::Judge,
            Failure {
                kind: FailureKind::UnableToEvaluate,
                category: "judge".into(),
                message: "reply could not be read".into(),
            },
        ),
    ];
    let agg = aggregate_results(&rubric, &results);
    assert_close(agg.score, 1.0, "only thesis and plagiarism count");
    assert!(agg.passed);
    assert!(agg.incomplete);
    assert_eq!(agg.failures, 2);
    let text = summary(&rubric, &results, &agg);
    assert_eq!(
        text,
        "Evaluation PASSED for rubric 'Essay'.\n\
         Overall score: 100%\n\
         Incomplete: 2 of 4 criteria could not be scored\n\
         \n\
         - Thesis: MET (score: 1.00)\n\
         - Sources: error [check]: regex did not compile\n\
         - Plagiarism: UNMET (score: 0.00)\n\
         - Style: unable_to_evaluate [judge]: reply could not be read"
    );
    assert!(
        !text.contains("Sources: error [check]: regex did not compile (score"),
        "a failure has no score"
    );
}

#[test]
fn feedback_binary_rubric_with_a_penalty() {
    let mut correct = Criterion::binary("correct", "States the correct answer", 10.0);
    correct.name = "Correct".into();
    let mut cites = Criterion::binary("cites", "Cites a source", 5.0);
    cites.name = "Cites".into();
    let mut harmful = Criterion::binary("harmful", "Gives harmful advice", -5.0);
    harmful.name = "Harmful".into();
    let mut rubric = Rubric::new("answer", vec![correct, cites, harmful]);
    rubric.name = "Answer".into();
    let results = results_for(&rubric, verdicts("MUM"));
    let agg = aggregate_results(&rubric, &results);
    // raw 10 − 5 = 5 over P = 15
    assert_close(agg.score, 1.0 / 3.0, "score");
    assert_close(agg.raw, 5.0, "raw");
    assert!(!agg.passed);
    assert_eq!(
        summary(&rubric, &results, &agg),
        "Evaluation FAILED for rubric 'Answer'.\n\
         Overall score: 33%\n\
         \n\
         - Correct: MET (score: 1.00)\n\
         - Cites: UNMET (score: 0.00)\n\
         - Harmful: MET (score: 1.00)\n\
         \n\
         Suggestions for improvement:\n  \
         - Cites: aim for 'MET' — Cites a source\n  \
         - Harmful: aim for 'UNMET' — avoid: Gives harmful advice"
    );

    // all good: no suggestions at all
    let results = results_for(&rubric, verdicts("MMU"));
    let agg = aggregate_results(&rubric, &results);
    assert_eq!(
        summary(&rubric, &results, &agg),
        "Evaluation PASSED for rubric 'Answer'.\n\
         Overall score: 100%\n\
         \n\
         - Correct: MET (score: 1.00)\n\
         - Cites: MET (score: 1.00)\n\
         - Harmful: UNMET (score: 0.00)"
    );
}
