//! Pure data: rubrics, criteria, verdicts, results, evaluations and dataset items.
//!
//! Nothing here does I/O or async work; `formats` reads and writes these types and
//! `engine` scores them.

pub mod checks;
mod conversation;
mod criterion;
mod errors;
mod evaluation;
mod examples;
mod item;
pub mod pair;
mod reasoning;
mod rubric;
mod run_gate;
mod scope;
mod validate;
mod verdict;

pub use conversation::{
    Conversation, ConversationError, ConversationTally, Message, Role, ToolCall, kind as json_kind,
    template_fields as conversation_fields,
};
pub use criterion::{
    Anchor, CheckSpec, Criterion, Gate, JudgeMethod, Kind, Level, Method, MethodKind, OptionChoice,
    OptionScale, Scale, SchemaSource, find_option, met_as_wanted,
};
pub use errors::{GroundTruthError, VerdictError};
pub use evaluation::{Evaluation, GraderScore, new_evaluation_id};
pub use examples::{Balance, DrawSource, Example, Examples, LabelDraw, RubricExample};
pub use item::{GroundTruth, Item};
pub use pair::{Candidate, Mode, PairOrder};
pub use reasoning::{
    CLIENT_OWNED_FIELDS, MIN_THINKING_BUDGET, ReasoningEffort, owned_extra_field,
    thinking_budget_problem,
};
pub use rubric::{
    AbstainPolicy, AggregateMode, ErrorPolicy, FeedbackStyle, GateRule, Grader, JudgeSettings,
    LengthPenalty, PenaltyCount, Rubric, Scoring, Summation, THRESHOLD_TOLERANCE, ThresholdRule,
};
pub use run_gate::{GATE_FORMS, GateMetric, GateOp, RunGate};
pub use scope::{Combine, Scope, TurnVerdict, combine_turns};
pub use validate::{Problem, is_semver, validate_rubric};
pub use verdict::{
    CriterionResult, Ensemble, Failure, FailureKind, Invocation, UNSENT_BATCHED, UNSENT_BUDGET,
    UNSENT_CANCELLED, Usage, Verdict, Vote, parse_verdict_text, result_of, results_by_id,
};

/// Turns a display name into an identifier: lowercase ASCII letters, digits, `_` and `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut last_dash = true;
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
            last_dash = false;
        } else if ch == '_' {
            out.push('_');
            last_dash = false;
        } else if !last_dash {
            out.push('-');
            last_dash = true;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::slugify;

    #[test]
    fn slugify_keeps_words_and_drops_punctuation() {
        assert_eq!(slugify("Content Quality"), "content-quality");
        assert_eq!(slugify("  Code  -- Quality! "), "code-quality");
        assert_eq!(slugify("snake_case"), "snake_case");
        assert_eq!(slugify("¿¡"), "");
    }
}
