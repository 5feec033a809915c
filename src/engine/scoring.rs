//! Scoring from given verdicts (ground truth, human labels): no judge, no checks — the
//! verdicts go straight through the one aggregation.

use super::executor::build_evaluation;
use crate::model::{CriterionResult, Evaluation, Item, Rubric, Verdict};

/// Why an item's ground truth cannot be scored; the message names the item.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("item '{item}' has no ground_truth to score")]
    /// The item carries no ground truth.
    NoGroundTruth {
        /// The item's id.
        item: String,
    },
    #[error("item '{item}': {source}")]
    /// The item's ground truth does not fit the rubric.
    GroundTruth {
        /// The item's id.
        item: String,
        /// What does not fit.
        #[source]
        source: crate::model::GroundTruthError,
    },
}

/// Scores `item` from its ground truth against `rubric`. An error names the item and the
/// criterion whose verdict does not fit.
pub fn score_ground_truth(
    rubric: &Rubric,
    item: &Item,
    evaluated_by: &str,
) -> Result<Evaluation, ScoreError> {
    let Some(gt) = &item.ground_truth else {
        return Err(ScoreError::NoGroundTruth {
            item: item.id.clone(),
        });
    };
    let verdicts = gt
        .resolve(rubric)
        .map_err(|source| ScoreError::GroundTruth {
            item: item.id.clone(),
            source,
        })?;
    Ok(score_verdicts(rubric, item, &verdicts, evaluated_by))
}

/// Scores given verdicts (one per criterion; `None` = not given, an abstention).
fn score_verdicts(
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
                turns: Vec::new(),
            }
        })
        .collect();
    build_evaluation(rubric, item, results, evaluated_by)
}
