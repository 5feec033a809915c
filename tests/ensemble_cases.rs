//! Table tests for ensembles (SCORING.md "Ensembles"), run through the one place votes
//! become a verdict: `engine::judge::ensemble::combine`. Each vote is a judge's text read
//! the way a judge's reply is read (`parse_verdict_text`), so option labels arrive as the
//! option's own label, however the judge wrote them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/scoring.rs"]
mod scoring;

use rubricate::engine::judge::ensemble::{Ballot, Rule, ValueRule, combine};
use rubricate::model::{
    Criterion, CriterionResult, Kind, MethodKind, OptionChoice, OptionScale, Verdict,
    parse_verdict_text,
};

use scoring::{na, option, verdict};

const TOL: f64 = 1e-6;

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= TOL
}

/// One judge's answer, weighted, as the judge layer hands it to `combine`.
fn ballot(c: &Criterion, index: usize, verdict: Verdict, weight: f64) -> Ballot {
    let value = c.value_of(&verdict).expect("verdict fits the criterion");
    Ballot {
        judge: format!("j{index}"),
        sample: 0,
        weight,
        result: CriterionResult {
            criterion_id: c.id.clone(),
            verdict: Some(verdict),
            value,
            reason: format!("j{index}'s reason"),
            evidence: Vec::new(),
            method: MethodKind::Judge,
            failure: None,
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        },
    }
}

// ---------------------------------------------------------------------------------------
// binary ensembles

fn votes(codes: &str) -> Vec<(Verdict, f64)> {
    codes.chars().map(|code| (verdict(code), 1.0)).collect()
}

#[track_caller]
fn assert_ensemble(
    weight: f64,
    votes: &[(Verdict, f64)],
    rule: Rule,
    expected: char,
    agreement: Option<f64>,
) {
    let c = Criterion::binary("c", "requirement", weight);
    let ballots: Vec<Ballot> = votes
        .iter()
        .enumerate()
        .map(|(i, (v, w))| ballot(&c, i, v.clone(), *w))
        .collect();
    let r = combine(&c, &ballots, rule, ValueRule::Mean);
    assert_eq!(
        r.verdict,
        Some(verdict(expected)),
        "{rule:?} w={weight} {votes:?}"
    );
    if let Some(expected_agreement) = agreement {
        let a = r.ensemble.and_then(|e| e.agreement).expect("an agreement");
        assert!(
            close(a, expected_agreement),
            "{rule:?} w={weight} {votes:?}: agreement {a}, expected {expected_agreement}"
        );
    }
}

#[test]
fn majority_ensemble() {
    use Rule::Majority;
    assert_eq!(Rule::default(), Majority);
    assert_ensemble(1.0, &votes("MMU"), Majority, 'M', Some(2.0 / 3.0));
    assert_ensemble(1.0, &votes("UUM"), Majority, 'U', Some(2.0 / 3.0));
    assert_ensemble(-1.0, &votes("UUM"), Majority, 'U', Some(2.0 / 3.0));
    assert_ensemble(1.0, &votes("MMM"), Majority, 'M', Some(1.0));
    // ties go to the worst case for the sign
    assert_ensemble(1.0, &votes("MU"), Majority, 'U', Some(0.5));
    assert_ensemble(0.0, &votes("MU"), Majority, 'U', Some(0.5));
    assert_ensemble(-1.0, &votes("MU"), Majority, 'M', Some(0.5));
    // abstaining votes are set aside (M beats U 2–1 despite 3 abstentions) …
    assert_ensemble(1.0, &votes("MMUAAA"), Majority, 'M', None);
    // … so a 1–1 with an abstention is still a tie
    assert_ensemble(1.0, &votes("MUA"), Majority, 'U', None);
    assert_ensemble(-1.0, &votes("MUA"), Majority, 'M', None);
    // all abstain → abstain
    assert_ensemble(1.0, &votes("AAA"), Majority, 'A', Some(1.0));
    assert_ensemble(-1.0, &votes("A"), Majority, 'A', Some(1.0));
}

#[test]
fn no_votes_at_all_is_a_failure_not_a_verdict() {
    let c = Criterion::binary("c", "requirement", 1.0);
    let r = combine(&c, &[], Rule::Majority, ValueRule::Mean);
    assert_eq!(r.verdict, None);
    assert_eq!(r.value, None);
    let failure = r.failure.expect("a failure");
    assert!(failure.message.contains("no judge answered"), "{failure:?}");
}

#[test]
fn agreement_is_the_share_of_votes_equal_to_the_verdict() {
    // Reading pinned here: the share is over all votes cast, abstentions included.
    assert_ensemble(1.0, &votes("MMUA"), Rule::Majority, 'M', Some(0.5));
    assert_ensemble(1.0, &votes("MAA"), Rule::Majority, 'M', Some(1.0 / 3.0));
}

#[test]
fn weighted_ensemble() {
    use Rule::Weighted;
    let v = |code: char, w: f64| (verdict(code), w);
    // the weights decide, not the count
    let heavy_met = [v('M', 1.0), v('U', 0.4), v('U', 0.4)];
    assert_ensemble(1.0, &heavy_met, Weighted, 'M', None);
    assert_ensemble(1.0, &heavy_met, Rule::Majority, 'U', None);
    let heavy_unmet = [v('M', 1.0), v('M', 1.0), v('U', 3.0)];
    assert_ensemble(-1.0, &heavy_unmet, Weighted, 'U', None);
    // weighted ties go to the worst case for the sign
    let tie = [v('M', 2.0), v('U', 1.0), v('U', 1.0)];
    assert_ensemble(1.0, &tie, Weighted, 'U', None);
    assert_ensemble(-1.0, &tie, Weighted, 'M', None);
    // abstentions carry no weight
    let with_abstain = [v('M', 1.0), v('A', 5.0), v('U', 0.5)];
    assert_ensemble(1.0, &with_abstain, Weighted, 'M', None);
    assert_ensemble(1.0, &[v('A', 2.0), v('A', 1.0)], Weighted, 'A', None);
}

#[test]
fn unanimous_ensemble() {
    use Rule::Unanimous;
    assert_ensemble(1.0, &votes("MMM"), Unanimous, 'M', Some(1.0));
    assert_ensemble(1.0, &votes("MMU"), Unanimous, 'U', Some(1.0 / 3.0));
    assert_ensemble(-1.0, &votes("MMU"), Unanimous, 'U', Some(1.0 / 3.0));
    assert_ensemble(1.0, &votes("MMA"), Unanimous, 'M', Some(2.0 / 3.0));
    assert_ensemble(1.0, &votes("UA"), Unanimous, 'U', Some(0.5));
    assert_ensemble(1.0, &votes("AA"), Unanimous, 'A', Some(1.0));
}

#[test]
fn any_ensemble() {
    use Rule::Any;
    assert_ensemble(1.0, &votes("UUM"), Any, 'M', Some(1.0 / 3.0));
    assert_ensemble(-1.0, &votes("UUM"), Any, 'M', Some(1.0 / 3.0));
    assert_ensemble(1.0, &votes("UUU"), Any, 'U', Some(1.0));
    assert_ensemble(1.0, &votes("UA"), Any, 'U', Some(0.5));
    assert_ensemble(1.0, &votes("AMA"), Any, 'M', Some(1.0 / 3.0));
    assert_ensemble(1.0, &votes("AA"), Any, 'A', Some(1.0));
}

// ---------------------------------------------------------------------------------------
// options ensembles

fn quality_options() -> Vec<OptionChoice> {
    vec![
        option("Poor", 0.0),
        option("Fair", 0.5),
        option("Good", 1.0),
        na("N/A"),
    ]
}

fn options_criterion(weight: f64, options: &[OptionChoice]) -> Criterion {
    let mut c = Criterion::binary("quality", "The quality", weight);
    c.kind = Kind::Options {
        options: options.to_vec(),
        scale: OptionScale::default(),
    };
    c
}

/// The options ensemble of the judges' answers `vote_labels` (majority, equal weights).
fn combine_options(
    weight: f64,
    options: &[OptionChoice],
    vote_labels: &[&str],
    rule: ValueRule,
) -> CriterionResult {
    let c = options_criterion(weight, options);
    let ballots: Vec<Ballot> = vote_labels
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let v = parse_verdict_text(&c, text).expect("an answer the criterion has");
            ballot(&c, i, v, 1.0)
        })
        .collect();
    combine(&c, &ballots, Rule::Majority, rule)
}

#[track_caller]
fn assert_options(
    weight: f64,
    options: &[OptionChoice],
    vote_labels: &[&str],
    rule: ValueRule,
    expected: Option<&str>,
    agreement: f64,
) {
    let r = combine_options(weight, options, vote_labels, rule);
    // `None`: every vote abstained, and so does the ensemble.
    let label = match (&r.verdict, r.value) {
        (Some(Verdict::Choice(label)), Some(_)) => Some(label.as_str()),
        (_, None) => None,
        (other, value) => panic!("not an option: {other:?} ({value:?})"),
    };
    assert_eq!(label, expected, "{rule:?} w={weight} {vote_labels:?}");
    let a = r.ensemble.and_then(|e| e.agreement).expect("an agreement");
    assert!(
        close(a, agreement),
        "{rule:?} w={weight} {vote_labels:?}: agreement {a}, expected {agreement}"
    );
}

#[test]
fn options_ensemble_rules() {
    use ValueRule::{Max, Mean, Median, Min, Mode};
    let o = quality_options();
    assert_eq!(ValueRule::default(), Mean);
    let three = ["Good", "Fair", "Fair"];
    // mean 2/3 snaps to Fair (0.5), not Good (1.0)
    assert_options(1.0, &o, &three, Mean, Some("Fair"), 2.0 / 3.0);
    assert_options(1.0, &o, &three, Median, Some("Fair"), 2.0 / 3.0);
    assert_options(1.0, &o, &three, Mode, Some("Fair"), 2.0 / 3.0);
    assert_options(1.0, &o, &three, Min, Some("Fair"), 2.0 / 3.0);
    assert_options(1.0, &o, &three, Max, Some("Good"), 1.0 / 3.0);

    let split = ["Good", "Poor"];
    // mean and median 0.5 land on Fair exactly
    assert_options(1.0, &o, &split, Mean, Some("Fair"), 0.0);
    assert_options(1.0, &o, &split, Median, Some("Fair"), 0.0);
    // a mode tie goes to the worse option for the sign
    assert_options(1.0, &o, &split, Mode, Some("Poor"), 0.5);
    assert_options(-1.0, &o, &split, Mode, Some("Good"), 0.5);
    assert_options(1.0, &o, &split, Min, Some("Poor"), 0.5);
    assert_options(1.0, &o, &split, Max, Some("Good"), 0.5);

    // median of an odd count
    assert_options(
        1.0,
        &o,
        &["Poor", "Good", "Good"],
        Median,
        Some("Good"),
        2.0 / 3.0,
    );
    // mode with a clear winner
    assert_options(
        -1.0,
        &o,
        &["Poor", "Poor", "Good"],
        Mode,
        Some("Poor"),
        2.0 / 3.0,
    );
}

#[test]
fn options_snap_to_the_nearest_non_na_option_ties_to_the_worse() {
    use ValueRule::{Mean, Median};
    let two = vec![option("Bad", 0.0), na("Unsure"), option("Great", 1.0)];
    // 0.5 is equidistant: the worse for the sign wins
    assert_options(1.0, &two, &["Great", "Bad"], Mean, Some("Bad"), 0.5);
    assert_options(0.0, &two, &["Great", "Bad"], Mean, Some("Bad"), 0.5);
    assert_options(-1.0, &two, &["Great", "Bad"], Mean, Some("Great"), 0.5);
    assert_options(1.0, &two, &["Great", "Bad"], Median, Some("Bad"), 0.5);
    assert_options(-1.0, &two, &["Great", "Bad"], Median, Some("Great"), 0.5);

    // NA votes are set aside: mean of (1, 0.5) = 0.75 is a tie between Fair and Good
    let o = quality_options();
    assert_options(
        1.0,
        &o,
        &["Good", "N/A", "Fair"],
        Mean,
        Some("Fair"),
        1.0 / 3.0,
    );
    assert_options(
        -1.0,
        &o,
        &["Good", "N/A", "Fair"],
        Mean,
        Some("Good"),
        1.0 / 3.0,
    );

    // snapping is to the nearest option, not to the one below
    let uneven = vec![option("Low", 0.0), option("Mid", 0.4), option("High", 1.0)];
    assert_options(1.0, &uneven, &["Low", "High"], Mean, Some("Mid"), 0.0);
    assert_options(
        1.0,
        &uneven,
        &["Mid", "High", "High"],
        Mean,
        Some("High"),
        2.0 / 3.0,
    );

    // labels are matched trimmed and case-insensitively
    assert_options(
        1.0,
        &o,
        &[" good", "GOOD ", "fair"],
        ValueRule::Mode,
        Some("Good"),
        2.0 / 3.0,
    );
}

#[test]
fn options_ensemble_all_abstain() {
    let o = quality_options();
    for rule in [
        ValueRule::Mean,
        ValueRule::Median,
        ValueRule::Mode,
        ValueRule::Min,
        ValueRule::Max,
    ] {
        assert_options(1.0, &o, &["N/A", "n/a"], rule, None, 1.0);
        let nobody = combine_options(1.0, &o, &[], rule);
        assert_eq!(nobody.value, None, "{rule:?}");
        assert!(nobody.failure.is_some(), "{rule:?}");
    }
}
