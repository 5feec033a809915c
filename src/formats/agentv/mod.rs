//! agentv eval YAML, in all three generations of the format:
//! - seed era: `evalcases`/`eval_cases` of `{id, expected_outcome, input_messages, rubrics}`,
//!   plus file-level `execution.evaluators: [{name, type: rubric, rubrics}]`;
//! - next: `tests[].assertions: [{type: rubrics, criteria: […]}]` with `outcome`;
//! - current: `tests[].assert: [{type: llm-rubric, value: […]}]` with `vars.input`.
//!
//! File-level rubrics apply to every case and a case's own are added after them; cases are
//! expanded as agentv expands them (scenarios, prompts, array vars, `{{ vars }}`). Each
//! assertion is a grader, and a test scores the weighted mean of its graders, passing at 0.8. Each case
//! becomes a dataset item. Grader-score expectation lists (`[{test_id, grader, range}]`)
//! are read too. `tool-trajectory` graders become `tool_trajectory` checks scored as agentv
//! scores them. What agentv runs that rubricate does not (scripts, providers) is noted,
//! never a failure.

mod asserts;
mod cases;
mod entry;
mod expand;
mod external;
mod one_case;
mod tools;
mod walk;
mod write;

use crate::core::diag::Diagnostic;
use crate::formats::source::SourceMap;
use crate::model::{Item, Rubric};

pub use cases::read;
pub use entry::settle_gates;
pub use external::{case_file_root, is_case_file};
pub use write::write;

/// agentv's pass threshold for rubric graders.
pub const THRESHOLD: f64 = 0.8;

/// The knobs that reproduce agentv's rubric grader: points over the criteria the judge
/// answered (one it leaves out drops out, and is not gated), compared with the threshold
/// and the gates exactly.
pub fn scoring() -> crate::model::Scoring {
    crate::model::Scoring {
        threshold: crate::model::ThresholdRule::Exact,
        gates: crate::model::GateRule::Answered,
        ..crate::model::Scoring::default()
    }
}

/// Everything an agentv file holds.
#[derive(Debug, Default)]
pub struct AgentvFile {
    /// The file-level rubric first (when there is one), then each case's own.
    pub rubrics: Vec<(Rubric, SourceMap)>,
    /// One item per eval case, carrying its rubric.
    pub items: Vec<Item>,
    /// Expected grader score ranges (`*.grader-scores.yaml`).
    pub expectations: Vec<Expectation>,
    /// What was read but has no use in rubricate.
    pub notes: Vec<Diagnostic>,
}

/// An expected score range for one test's grader.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Expectation {
    /// The test (dataset item) the expectation is for.
    pub item: String,
    /// The grader whose score is expected.
    pub grader: String,
    /// The lowest score expected, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The highest score expected, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}
