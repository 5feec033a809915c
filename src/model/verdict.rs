use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Criterion, Kind, MethodKind, VerdictError};

/// What a judge or check said about one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The criterion holds.
    #[serde(rename = "MET")]
    Met,
    /// The criterion does not hold.
    #[serde(rename = "UNMET")]
    Unmet,
    /// The judge cannot tell from what it was given: an abstention.
    #[serde(rename = "CANNOT_ASSESS")]
    CannotAssess,
    /// A level id of a `levels` criterion.
    Level(String),
    /// An option label of an `options` criterion.
    Choice(String),
    /// A number on a `scale` criterion.
    Score(f64),
}

impl Verdict {
    /// Parses the three binary verdict words, case-insensitively.
    pub fn parse_binary(text: &str) -> Option<Verdict> {
        match text
            .trim()
            .to_ascii_uppercase()
            .replace([' ', '-'], "_")
            .as_str()
        {
            "MET" => Some(Verdict::Met),
            "UNMET" | "NOT_MET" => Some(Verdict::Unmet),
            "CANNOT_ASSESS" => Some(Verdict::CannotAssess),
            _ => None,
        }
    }
}

impl Verdict {
    /// The verdict as a label stores it: the word, option label or level id as text; a
    /// number for a scale.
    pub fn label_value(&self) -> serde_json::Value {
        match self {
            Verdict::Score(x) => serde_json::json!(x),
            other => serde_json::Value::String(other.to_string()),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Met => f.write_str("MET"),
            Verdict::Unmet => f.write_str("UNMET"),
            Verdict::CannotAssess => f.write_str("CANNOT_ASSESS"),
            Verdict::Level(id) => f.write_str(id),
            Verdict::Choice(label) => f.write_str(label),
            Verdict::Score(x) => write!(f, "{x}"),
        }
    }
}

/// Why a criterion could not be scored. Never a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// An error, or a reply that could not be read.
    pub kind: FailureKind,
    /// Where it went wrong: `judge`, `check`, `schema`, `template`, `command`.
    pub category: String,
    /// What went wrong, for the user.
    pub message: String,
}

/// The failure category of a judge call the cost limit kept from being sent.
pub const UNSENT_BUDGET: &str = "budget";
/// The failure category of a judge call a stopped (cancelled) run never sent.
pub const UNSENT_CANCELLED: &str = "cancelled";
/// The failure category of a judge call waiting in a provider batch (a batch run's pass).
pub const UNSENT_BATCHED: &str = "batched";

impl Failure {
    /// The cell was never graded (the run stopped first): a run's journal leaves it out,
    /// so resuming grades it.
    pub fn unsent(&self) -> bool {
        self.category == UNSENT_BUDGET
            || self.category == UNSENT_CANCELLED
            || self.category == UNSENT_BATCHED
    }

    /// A failure of kind `Error` in `category`.
    pub fn error(category: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: FailureKind::Error,
            category: category.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FailureKind::Error => write!(f, "error [{}]: {}", self.category, self.message),
            FailureKind::UnableToEvaluate => {
                write!(
                    f,
                    "unable_to_evaluate [{}]: {}",
                    self.category, self.message
                )
            }
        }
    }
}

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A check raised, a schema could not load, a template failed.
    Error,
    /// The judge's reply could not be read after the repair attempt.
    UnableToEvaluate,
}

/// Token counts reported by a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Reply tokens (reasoning tokens included: providers bill them as output).
    pub output_tokens: u64,
    /// Of the reply tokens, those a reasoning judge spent thinking, where the provider
    /// says (OpenAI-compatible servers); 0 otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The record of an LLM call behind a judged result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// The judge's model id.
    pub model: String,
    /// How it was asked (`per_criterion`, `one_shot`, …).
    pub strategy: String,
    /// SHA-256 of the request sent, to tell which prompt gave the verdict.
    pub prompt_hash: String,
    /// SHA-256 of the reply's text.
    pub response_hash: String,
    /// When the call was made (RFC 3339).
    pub timestamp: String,
    /// Tokens the call used.
    pub usage: Usage,
    /// From the call to its answer, retries included.
    pub latency_ms: u64,
    /// Requests sent (0: answered from the cache).
    pub attempts: u32,
    /// Answered without a request of its own.
    pub cache_hit: bool,
    /// How sure the judge was of its verdict: the probability of the verdict's first token
    /// (when log-probabilities were asked for and given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// The outcome for one criterion of one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion's id.
    pub criterion_id: String,
    /// `None` when the criterion failed.
    pub verdict: Option<Verdict>,
    /// The value in [0,1]; `None` when abstained or failed.
    pub value: Option<f64>,
    /// Why, in the judge's (or check's) words.
    #[serde(default)]
    pub reason: String,
    /// Quotes from the submission that support the verdict.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Who answered.
    pub method: MethodKind,
    /// Why there is no verdict, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Boxed, as is `ensemble`: most results (every check's) have neither, and a result
    /// is moved several times on its way to the output — half its size to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<Box<Invocation>>,
    /// The votes behind an ensemble's (or several samples') verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ensemble: Option<Box<Ensemble>>,
    /// A `scope: turn` criterion's verdict on each assistant turn, in order (empty for
    /// any other).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<super::TurnVerdict>,
}

/// How several judges (or samples) voted on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ensemble {
    /// `majority`, `weighted`, `unanimous` or `any` (and the value rule for graded kinds).
    pub rule: String,
    /// The share of counted votes equal to the final verdict; `None` when none counted.
    pub agreement: Option<f64>,
    /// Every vote, judges in order, samples within.
    pub votes: Vec<Vote>,
}

/// One judge's (or one sample's) answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vote {
    /// The judge's model id.
    pub judge: String,
    /// Which of its samples (0 for the first).
    pub sample: u32,
    /// Its verdict; `None` when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why, in its words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Why it gave no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

impl CriterionResult {
    /// A result with no verdict, for `failure`.
    pub fn failed(criterion_id: &str, method: MethodKind, failure: Failure) -> Self {
        Self {
            criterion_id: criterion_id.to_owned(),
            verdict: None,
            value: None,
            reason: String::new(),
            evidence: Vec::new(),
            method,
            failure: Some(failure),
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        }
    }
}

/// Reads a verdict written as text (by a command, or a person): the binary words, else a
/// level id or label, an option label or a number, as the criterion takes.
pub fn parse_verdict_text(c: &Criterion, text: &str) -> Result<Verdict, VerdictError> {
    let t = text.trim();
    if let Some(v) = Verdict::parse_binary(t) {
        return Ok(v);
    }
    let v = match &c.kind {
        Kind::Binary => return Err(VerdictError::NotBinary(t.to_owned())),
        Kind::Levels(levels) => levels
            .iter()
            .find(|l| l.id.eq_ignore_ascii_case(t) || l.label.eq_ignore_ascii_case(t))
            .map(|l| Verdict::Level(l.id.clone()))
            .ok_or_else(|| VerdictError::NotALevel {
                given: t.to_owned(),
                criterion: c.id.clone(),
            })?,
        // The option's own label, however it was written.
        Kind::Options { options, .. } => Verdict::Choice(
            super::find_option(options, t).map_or_else(|| t.to_owned(), |o| o.label.clone()),
        ),
        Kind::Scale(_) => Verdict::Score(
            t.parse()
                .map_err(|_| VerdictError::NotANumber(t.to_owned()))?,
        ),
    };
    c.value_of(&v)?;
    Ok(v)
}

/// The result of criterion `id`, the `position`-th of its rubric: where it usually is
/// (results come in rubric order), else the first with that id.
pub fn result_of<'r>(
    results: &'r [CriterionResult],
    position: usize,
    id: &str,
) -> Option<&'r CriterionResult> {
    match results.get(position) {
        Some(r) if r.criterion_id == id => Some(r),
        _ => results.iter().find(|r| r.criterion_id == id),
    }
}

/// Results by criterion id (the first of each): one pass, so looking every criterion's
/// result up stays linear in the number of criteria.
pub fn results_by_id(
    results: &[CriterionResult],
) -> std::collections::HashMap<&str, &CriterionResult> {
    let mut by = std::collections::HashMap::with_capacity(results.len());
    for r in results {
        by.entry(r.criterion_id.as_str()).or_insert(r);
    }
    by
}
