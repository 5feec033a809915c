//! The stable per-item JSON shape of results (JSON/JSONL output, `runs show --format
//! jsonl`, the evaluations an artifact review stores).

use serde::Serialize;

use crate::model::{Evaluation, Failure, Verdict};

/// The stable per-item JSON shape of JSON/JSONL output, serialised without building an
/// intermediate JSON tree (this is on the hot path of every batch run).
#[derive(Serialize)]
pub struct ItemOut<'a> {
    item: &'a str,
    rubric: &'a str,
    rubric_version: &'a str,
    score: Option<f64>,
    raw: Option<f64>,
    passed: bool,
    incomplete: bool,
    criteria: Vec<CriterionOut<'a>>,
    feedback: &'a str,
}

#[derive(Serialize)]
struct CriterionOut<'a> {
    id: &'a str,
    verdict: Option<PlainVerdict<'a>>,
    value: Option<f64>,
    reason: &'a str,
    evidence: &'a [String],
    failure: Option<&'a Failure>,
    /// The LLM call behind a judged result.
    #[serde(skip_serializing_if = "Option::is_none")]
    invocation: Option<&'a crate::model::Invocation>,
    /// The votes behind an ensemble's (or several samples') verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    ensemble: Option<EnsembleOut<'a>>,
}

#[derive(Serialize)]
struct EnsembleOut<'a> {
    rule: &'a str,
    agreement: Option<f64>,
    votes: Vec<VoteOut<'a>>,
}

#[derive(Serialize)]
struct VoteOut<'a> {
    judge: &'a str,
    sample: u32,
    verdict: Option<PlainVerdict<'a>>,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
}

fn ensemble_out(e: &crate::model::Ensemble) -> EnsembleOut<'_> {
    EnsembleOut {
        rule: &e.rule,
        agreement: e.agreement,
        votes: e
            .votes
            .iter()
            .map(|v| VoteOut {
                judge: &v.judge,
                sample: v.sample,
                verdict: v.verdict.as_ref().map(PlainVerdict),
                reason: &v.reason,
                failure: v.failure.as_ref(),
            })
            .collect(),
    }
}

/// A verdict as a plain string, or a number for scales.
struct PlainVerdict<'a>(&'a Verdict);

impl Serialize for PlainVerdict<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Verdict::Score(x) => s.serialize_f64(*x),
            Verdict::Level(t) | Verdict::Choice(t) => s.serialize_str(t),
            other => s.collect_str(other),
        }
    }
}

pub fn item_json(e: &Evaluation) -> ItemOut<'_> {
    ItemOut {
        item: &e.target_id,
        rubric: &e.rubric_id,
        rubric_version: &e.rubric_version,
        score: e.score,
        raw: e.raw,
        passed: e.passed,
        incomplete: e.incomplete,
        criteria: e
            .results
            .iter()
            .map(|r| CriterionOut {
                id: &r.criterion_id,
                verdict: r.verdict.as_ref().map(PlainVerdict),
                value: r.value,
                reason: &r.reason,
                evidence: &r.evidence,
                failure: r.failure.as_ref(),
                invocation: r.invocation.as_ref(),
                ensemble: r.ensemble.as_ref().map(ensemble_out),
            })
            .collect(),
        feedback: &e.feedback,
    }
}
