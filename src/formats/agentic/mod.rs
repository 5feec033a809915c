//! `agentic_v2_eval` rubrics: scoring rubrics (criteria with integer levels, thresholds,
//! hard gates) and judge rubrics (dimensions with prompt templates).

pub mod conventions;
mod judge;
mod judge_prompt;
mod scoring;
mod write;

pub use judge::read as read_judge_rubric;
pub use judge_prompt::read as read_evaluator_rubrics;
pub use scoring::read_scoring_rubric;
pub use write::write;
