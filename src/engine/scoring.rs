//! Scoring from given verdicts (ground truth, human labels): no judge, no checks — the
//! verdicts go straight through the one aggregation.

use super::executor::build_evaluation;
use crate::model::{CriterionResult, Evaluation, Item, Rubric, Verdict};

/// Scores `item` from its ground truth against `rubric`. An error names the item and the
/// criterion whose verdict does not fit.
pub fn score_ground_truth(
    rubric: &Rubric,
    item: &Item,
    evaluated_by: &str,
) -> Result<Evaluation, String> {
    let Some(gt) = &item.ground_truth else {
        return Err(format!("item '{}' has no ground_truth to score", item.id));
    };
    let verdicts = gt
        .resolve(rubric)
        .map_err(|e| format!("item '{}': {e}", item.id))?;
    Ok(score_verdicts(rubric, item, &verdicts, evaluated_by))
}

/// Scores given verdicts (one per criterion; `None` = not given, an abstention).
pub fn score_verdicts(
    rubric: &Rubric,
    item: &Item,
    verdicts: &[Option<Verdict>],
    evaluated_by: &str,
) -> Evaluation {
    let results = rubric
        .criteria
        .iter()
        .zip(verdicts)
        .map(|(c, v)| {
            let verdict = v.clone().unwrap_or(Verdict::CannotAssess);
            let value = c.value_of(&verdict).ok().flatten();
            CriterionResult {
                criterion_id: c.id.clone(),
                reason: if v.is_some() {
                    "given verdict".into()
                } else {
                    "no verdict given".into()
                },
                verdict: Some(verdict),
                value,
                evidence: Vec::new(),
                method: c.method.kind(),
                failure: None,
                invocation: None,
                ensemble: None,
            }
        })
        .collect();
    build_evaluation(rubric, item, results, evaluated_by)
}
