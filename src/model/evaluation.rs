use serde::{Deserialize, Serialize};

use super::CriterionResult;

/// The result of grading one target against one rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// `eval_` followed by a time-ordered UUID.
    pub id: String,
    /// The rubric graded against.
    pub rubric_id: String,
    /// Its version, so a result says which rubric text produced it.
    pub rubric_version: String,
    /// The item's id.
    pub target_id: String,
    /// What kind of output was graded (the rubric's `target_type`).
    pub target_type: String,
    /// One result per criterion, in the rubric's order.
    pub results: Vec<CriterionResult>,
    /// `None` when nothing could be scored.
    pub score: Option<f64>,
    /// Σ w·v over the counted criteria, before normalisation; `None` when nothing was counted.
    pub raw: Option<f64>,
    /// The score reaches the pass threshold and every gate holds.
    pub passed: bool,
    /// True when any criterion failed, nothing was scored, or a cell is still to come.
    pub incomplete: bool,
    /// The rubric's criteria whose cells are still to come: an item of a saved run read
    /// before the run finished (its requests in a batch at the provider, or a run that
    /// stopped). Such an item is incomplete and not passed; its score covers only the
    /// cells present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Criteria that failed (no verdict).
    pub failures: usize,
    /// A short written account of the result (deterministic, or by the judge).
    pub feedback: String,
    /// When it was graded (RFC 3339).
    pub evaluated_at: String,
    /// Who or what graded it, as the run names its graders.
    pub evaluated_by: String,
    /// Each grader's score and verdict, when the rubric is scored by graders (agentv).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graders: Vec<GraderScore>,
    /// The score per criterion tag, when the rubric's criteria carry tags.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, f64>,
}

/// One grader's part of an evaluation: its score (`None` when its judge answered none of
/// its criteria) and its own verdict (its score reaches the threshold and its criteria's
/// gates hold), which agentv reports per grader and the test verdict does not read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraderScore {
    /// The grader's id.
    pub id: String,
    /// Its score.
    pub score: Option<f64>,
    /// Its own verdict.
    pub passed: bool,
}

/// A new evaluation id: `eval_` and a time-ordered UUID, so ids sort by creation.
pub fn new_evaluation_id() -> String {
    format!("eval_{}", uuid::Uuid::now_v7().simple())
}
