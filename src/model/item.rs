use std::sync::Arc;

use serde_json::{Map, Value};

use super::errors::{GroundTruthError, quoted_list};
use super::{Conversation, Rubric, Verdict};

/// One submission to grade, with what came with it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Item {
    /// The given id, else the item's position (1-based line or index).
    pub id: String,
    /// The output to grade: the text, a conversation's transcript
    /// ([`Conversation::transcript`]) when the item holds one, or for a pair item its
    /// candidates written one after another, for people to read.
    pub submission: String,
    /// Two or more answers to compare (a pair item); empty for an item of one answer.
    pub candidates: Vec<super::Candidate>,
    /// The conversation the item holds (its `messages`), when it holds one.
    pub conversation: Option<Arc<Conversation>>,
    /// What the submission answers, when given.
    pub prompt: Option<String>,
    /// A reference answer, when given.
    pub reference: Option<String>,
    /// What the item is about, shown to people labelling it.
    pub description: Option<String>,
    /// Human verdicts that came with the item, to measure the judge against.
    pub ground_truth: Option<GroundTruth>,
    /// A rubric of this item alone (autorubric per-item rubrics).
    pub rubric: Option<Arc<Rubric>>,
    /// Any other fields the item had, kept for templates and exports.
    pub metadata: Map<String, Value>,
    /// Where the item came from, for error messages: `file:line` or `file item N`.
    pub origin: String,
}

impl Item {
    /// The item as one assistant turn `k` (from 0) of its conversation sees it: the
    /// conversation cut at that turn (the turn marked), its transcript the submission.
    /// `None` without a conversation or past its last turn.
    pub fn at_turn(&self, k: usize) -> Option<Item> {
        let cut = self.conversation.as_deref()?.at_turn(k)?;
        Some(Item {
            submission: cut.transcript(),
            conversation: Some(Arc::new(cut)),
            ..self.clone()
        })
    }
}

/// Human verdicts for an item: by position (autorubric) or by criterion id.
#[derive(Debug, Clone, PartialEq)]
pub enum GroundTruth {
    /// One verdict per criterion, in the rubric's order.
    ByPosition(Vec<Value>),
    /// Verdicts named by criterion id.
    ById(Vec<(String, Value)>),
}

impl GroundTruth {
    /// Resolves each entry to a verdict for `rubric`'s criteria (in criterion order).
    /// Errors name the criterion and what was expected.
    pub fn resolve(&self, rubric: &Rubric) -> Result<Vec<Option<Verdict>>, GroundTruthError> {
        let mut out = vec![None; rubric.criteria.len()];
        match self {
            GroundTruth::ByPosition(values) => {
                if values.len() != rubric.criteria.len() {
                    return Err(GroundTruthError::Count {
                        given: values.len(),
                        rubric: rubric.id.clone(),
                        expected: rubric.criteria.len(),
                    });
                }
                for (i, v) in values.iter().enumerate() {
                    out[i] = Some(entry_verdict(rubric, i, v)?);
                }
            }
            GroundTruth::ById(pairs) => {
                let positions = rubric.positions();
                for (id, v) in pairs {
                    let Some(&i) = positions.get(id.as_str()) else {
                        return Err(GroundTruthError::UnknownCriterion {
                            id: id.clone(),
                            rubric: rubric.id.clone(),
                            known: quoted_list(rubric.criteria.iter().map(|c| c.id.as_str())),
                        });
                    };
                    out[i] = Some(entry_verdict(rubric, i, v)?);
                }
            }
        }
        Ok(out)
    }
}

fn entry_verdict(
    rubric: &Rubric,
    index: usize,
    value: &Value,
) -> Result<Verdict, GroundTruthError> {
    use super::Kind;
    let c = &rubric.criteria[index];
    let fail = |problem: String| GroundTruthError::Entry {
        criterion: c.id.clone(),
        number: index + 1,
        problem,
    };
    let verdict = match (&c.kind, value) {
        (Kind::Scale(_), Value::Number(n)) => Verdict::Score(n.as_f64().unwrap_or(f64::NAN)),
        (Kind::Scale(_), Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(x) => Verdict::Score(x),
            Err(_) if Verdict::parse_binary(s) == Some(Verdict::CannotAssess) => {
                Verdict::CannotAssess
            }
            Err(_) => return Err(fail(format!("is '{s}', expected a number"))),
        },
        (Kind::Binary, Value::Bool(b)) => {
            if *b {
                Verdict::Met
            } else {
                Verdict::Unmet
            }
        }
        (Kind::Binary, Value::String(s)) => Verdict::parse_binary(s)
            .ok_or_else(|| fail(format!("is '{s}', expected MET, UNMET or CANNOT_ASSESS")))?,
        (Kind::Levels(_), Value::String(s)) => match Verdict::parse_binary(s) {
            Some(Verdict::CannotAssess) => Verdict::CannotAssess,
            _ => Verdict::Level(s.trim().to_owned()),
        },
        // The rubric's own spelling of the label, when it matches.
        (Kind::Options { options, .. }, Value::String(s)) => Verdict::Choice(
            super::find_option(options, s).map_or_else(|| s.clone(), |o| o.label.clone()),
        ),
        (Kind::Options { .. } | Kind::Levels(_) | _, Value::Null) => Verdict::CannotAssess,
        (kind, other) => {
            return Err(fail(format!(
                "is {other}, which does not fit a {} criterion",
                kind.name()
            )));
        }
    };
    c.value_of(&verdict)
        .map_err(|source| GroundTruthError::Verdict {
            criterion: c.id.clone(),
            number: index + 1,
            source,
        })?;
    Ok(verdict)
}
