//! People's preferences on pairs: a person labels a pair item per *written* criterion with
//! the id of the candidate that meets it better, or `tie` (never "A" or "B": the Label pane
//! shows pairs blind and shuffled, so a side means nothing once saved). The judge's verdict
//! to compare with is its combined one: both orders put together (`model::pair::combine`),
//! an order-dependent answer a tie.
//!
//! Both are read as verdicts of a *preference rubric*: one nominal options criterion per
//! written criterion whose options are the two candidates' ids and `tie`. So κ, accuracy
//! and their bootstrap intervals are the ones every other criterion gets
//! (`judge_vs_human::agreement_of`), and an item's person score (the first candidate's share
//! of wins, a tie half) is on the scale of the pairwise run's item score.

use crate::model::pair::{
    ANSWER_TIE, Preference, combine, order_id, pair_order, preference, quoted, written,
};
use crate::model::{CriterionResult, Kind, OptionChoice, OptionScale, Rubric, Verdict};

/// The rubric people's preferences are read against, for a pairwise run's expanded rubric
/// of two candidates; `None` for any other rubric (with three or more candidates a
/// preference per criterion would not say which pair it is about).
pub fn preference_rubric(expanded: &Rubric) -> Option<Rubric> {
    let [first, second] = expanded.systems.as_slice() else {
        return None;
    };
    let option = |label: &str, value: f64| OptionChoice {
        label: label.to_owned(),
        value,
        na: false,
    };
    let mut out = written(expanded);
    for c in &mut out.criteria {
        c.kind = Kind::Options {
            options: vec![
                option(first, 1.0),
                option(second, 0.0),
                option(ANSWER_TIE, 0.5),
            ],
            scale: OptionScale::Nominal,
        };
    }
    Some(out)
}

/// The judge's combined verdict on written criterion `criterion` of one item, from the
/// item's cells: the winning candidate's id or `tie`; `None` until both orders of the pair
/// have a verdict.
pub fn judge_preference(
    expanded: &Rubric,
    results: &[CriterionResult],
    criterion: &str,
) -> Option<Verdict> {
    let said = |first: usize, second: usize| {
        let id = order_id(criterion, first, second);
        let cell = expanded.criterion(&id).and_then(pair_order)?;
        let r = results.iter().find(|r| r.criterion_id == id)?;
        preference(cell, r.verdict.as_ref()?)
    };
    let outcome = combine(said(0, 1)?, said(1, 0)?).outcome;
    Some(Verdict::Choice(match outcome {
        Preference::Wins(w) => expanded.systems.get(w)?.clone(),
        Preference::Tie => ANSWER_TIE.to_owned(),
    }))
}

/// The rubric a run's labels are measured against: a two-candidate pairwise run's
/// preference rubric, else the run's own.
pub fn measured(run: &Rubric) -> std::borrow::Cow<'_, Rubric> {
    preference_rubric(run).map_or(std::borrow::Cow::Borrowed(run), std::borrow::Cow::Owned)
}

/// An item's cells as people's labels are compared with them: a two-candidate pairwise
/// run's as one preference per written criterion (the judge's combined verdict, `None`
/// until both orders have one), any other run's as they are.
pub fn compared_cells(run: &Rubric, results: &[CriterionResult]) -> Vec<(String, Option<Verdict>)> {
    match preference_rubric(run) {
        Some(prefs) => prefs
            .criteria
            .iter()
            .map(|c| (c.id.clone(), judge_preference(run, results, &c.id)))
            .collect(),
        None => results
            .iter()
            .map(|r| (r.criterion_id.clone(), r.verdict.clone()))
            .collect(),
    }
}

/// A person's preference as a label stores it: the candidate's id as the item writes it
/// (however it was typed), or `tie`; an error says what the item's candidates are.
pub fn parse_preference(candidates: &[String], text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case(ANSWER_TIE) {
        return Ok(ANSWER_TIE.to_owned());
    }
    candidates
        .iter()
        .find(|c| c.as_str() == t)
        .or_else(|| candidates.iter().find(|c| c.eq_ignore_ascii_case(t)))
        .cloned()
        .ok_or_else(|| {
            format!(
                "'{t}' is not a candidate of this pair; name the better one by its id ({}) or say tie",
                quoted(candidates)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::CriterionMetrics;
    use crate::metrics::judge_vs_human::{Cell, agreement, human_verdicts};
    use crate::model::pair::{Mode, expand};
    use crate::model::{Criterion, Failure, MethodKind};
    use std::collections::BTreeMap;

    fn expanded() -> Rubric {
        let mut r = Rubric::new("r", vec![Criterion::binary("acc", "Is accurate", 1.0)]);
        r.mode = Mode::Pairwise;
        expand(&r, &["gpt".to_owned(), "claude".to_owned()])
    }

    fn cell(id: &str, verdict: &str) -> CriterionResult {
        let mut r = CriterionResult::failed(id, MethodKind::Judge, Failure::error("", ""));
        r.failure = None;
        r.verdict = Some(Verdict::Choice(verdict.into()));
        r
    }

    #[test]
    fn the_judges_preference_is_both_orders_combined() {
        let x = expanded();
        let said = |ab: &str, ba: &str| {
            judge_preference(&x, &[cell("acc.ab", ab), cell("acc.ba", ba)], "acc")
        };
        // gpt shown first wins; shown second (as B) it wins again: gpt.
        assert_eq!(said("A", "B"), Some(Verdict::Choice("gpt".into())));
        assert_eq!(said("B", "A"), Some(Verdict::Choice("claude".into())));
        // Always the first shown: order-dependent, a tie.
        assert_eq!(said("A", "A"), Some(Verdict::Choice("tie".into())));
        assert_eq!(judge_preference(&x, &[cell("acc.ab", "A")], "acc"), None);
    }

    #[test]
    fn a_preference_names_a_candidate_or_a_tie() {
        let c = ["gpt".to_owned(), "claude".to_owned()];
        assert_eq!(parse_preference(&c, "Claude").unwrap(), "claude");
        assert_eq!(parse_preference(&c, " TIE ").unwrap(), "tie");
        let e = parse_preference(&c, "A").unwrap_err();
        assert!(e.contains("'gpt', 'claude'"), "{e}");
    }

    /// By hand, people [gpt, gpt, claude, tie, claude] against the judge [gpt, claude,
    /// claude, tie, tie]: 3 of 5 agree (`p_o` 0.6); marginals people gpt 2, claude 2, tie 1,
    /// judge gpt 1, claude 2, tie 2, so `p_e` = (2·1 + 2·2 + 1·2)/25 = 0.32 and
    /// κ = (0.6 − 0.32)/(1 − 0.32) = 0.28/0.68 = 7/17.
    #[test]
    fn kappa_over_preferences_by_hand() {
        let rubric = preference_rubric(&expanded()).unwrap();
        assert_eq!(rubric.criteria.len(), 1);
        let cells = |v: [&str; 5]| -> BTreeMap<Cell, serde_json::Value> {
            v.iter()
                .enumerate()
                .map(|(i, l)| ((format!("i{i}"), "acc".into()), serde_json::json!(l)))
                .collect()
        };
        let people = human_verdicts(&rubric, cells(["gpt", "gpt", "claude", "tie", "claude"]));
        let judge = human_verdicts(&rubric, cells(["gpt", "claude", "claude", "tie", "tie"]));
        assert_eq!(people.len(), 5);
        let report = agreement(&rubric, &people, &judge, None);
        let CriterionMetrics::Nominal(m) = &report.criteria[0].metrics else {
            panic!("{:?}", report.criteria[0].metrics)
        };
        assert!(
            (m.metrics.kappa.unwrap() - 7.0 / 17.0).abs() < 1e-12,
            "{m:?}"
        );
        assert!((m.metrics.accuracy.unwrap() - 0.6).abs() < 1e-12);
    }
}
