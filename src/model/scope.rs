//! A criterion's scope over a conversation: the whole conversation (the default), or each
//! assistant turn judged with the conversation up to it, the turns' verdicts combined by a
//! stated rule into the criterion's one result.

use serde::{Deserialize, Serialize};

use super::{Criterion, CriterionResult, Failure, Invocation, Verdict};

/// What a criterion judges of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "combine")]
pub enum Scope {
    /// The whole conversation at once (its transcript is the submission).
    #[default]
    Conversation,
    /// Each assistant turn, with the conversation up to it; the turns combined by the rule.
    Turn(Combine),
}

impl Scope {
    /// Whether this is the default scope (left out when a rubric is written).
    pub fn is_conversation(&self) -> bool {
        *self == Scope::Conversation
    }
}

/// How the verdicts of a conversation's turns become the criterion's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Every turn must meet it: the lowest value (MET only if every turn is MET).
    All,
    /// One turn is enough: the highest value (MET if any turn is MET).
    Any,
    /// The mean of the turns' values (the verdict of the turn nearest it, ties to the lower).
    Mean,
    /// The lowest value (as `all`).
    Min,
}

impl Combine {
    /// The rule's name as rubrics write it.
    pub fn name(self) -> &'static str {
        match self {
            Combine::All => "all",
            Combine::Any => "any",
            Combine::Mean => "mean",
            Combine::Min => "min",
        }
    }

    /// Reads a rule's name.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "all" => Some(Combine::All),
            "any" => Some(Combine::Any),
            "mean" => Some(Combine::Mean),
            "min" => Some(Combine::Min),
            _ => None,
        }
    }

    /// The rule when a rubric states none: the worst turn decides — `all` for a criterion
    /// that should hold, `any` for a penalty (the fault counts if any turn commits it).
    pub fn default_for(weight: f64) -> Self {
        if weight < 0.0 {
            Combine::Any
        } else {
            Combine::All
        }
    }
}

/// One assistant turn's verdict on a `scope: turn` criterion, kept in the run's journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnVerdict {
    /// The turn's number among the conversation's assistant turns, from 1.
    pub turn: usize,
    /// Its verdict; `None` when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Its value in [0,1]; `None` when abstained or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Why, in the judge's (or check's) words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Why there is no verdict, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

/// Combines the results of a criterion's turns (in turn order) into its result: a failed
/// turn fails the criterion (the turn named); abstaining turns are left out, and all
/// abstaining is an abstention. The per-turn verdicts are kept on the result, and the
/// judge calls of every turn are counted in its invocation (tokens, attempts).
pub fn combine_turns(
    criterion: &Criterion,
    rule: Combine,
    turns: &[CriterionResult],
) -> CriterionResult {
    let method = criterion.method.kind();
    let answered = |verdict: Verdict, value: Option<f64>, reason: String| CriterionResult {
        verdict: Some(verdict),
        value,
        reason,
        failure: None,
        ..CriterionResult::failed(&criterion.id, method, Failure::error("", ""))
    };
    let valued: Vec<(usize, f64)> = turns
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.value.map(|v| (i, v)))
        .collect();
    let failed = turns
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.failure.as_ref().map(|f| (i + 1, f)));
    let mut out = if let Some((n, f)) = failed {
        let failure = Failure {
            message: format!("turn {n}: {}", f.message),
            ..f.clone()
        };
        CriterionResult::failed(&criterion.id, method, failure)
    } else if turns.is_empty() {
        answered(
            Verdict::CannotAssess,
            None,
            "the conversation has no assistant turn to judge".into(),
        )
    } else if valued.is_empty() {
        answered(
            Verdict::CannotAssess,
            None,
            format!("all {} turns abstained", turns.len()),
        )
    } else {
        let lowest = || valued.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let (i, value) = match rule {
            Combine::All | Combine::Min => lowest().copied(),
            // The first of equally high turns.
            Combine::Any => valued
                .iter()
                .rev()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .copied(),
            Combine::Mean => {
                let mean = valued.iter().map(|p| p.1).sum::<f64>() / valued.len() as f64;
                valued
                    .iter()
                    .min_by(|a, b| {
                        (a.1 - mean)
                            .abs()
                            .total_cmp(&(b.1 - mean).abs())
                            .then(a.1.total_cmp(&b.1))
                    })
                    .map(|&(i, _)| (i, mean))
            }
        }
        .unwrap_or((0, 0.0));
        let r = &turns[i];
        let verdict = r.verdict.clone().unwrap_or(Verdict::CannotAssess);
        let reason = match rule {
            Combine::Mean => format!(
                "mean of {} turns {value:.3}; nearest, turn {}: {}",
                valued.len(),
                i + 1,
                r.reason
            ),
            _ => format!(
                "turn {} of {} decides ({}): {}",
                i + 1,
                turns.len(),
                rule.name(),
                r.reason
            ),
        };
        let mut out = answered(verdict, Some(value), reason);
        out.evidence.clone_from(&r.evidence);
        out
    };
    out.invocation = summed_invocation(turns);
    out.turns = turns
        .iter()
        .enumerate()
        .map(|(i, r)| TurnVerdict {
            turn: i + 1,
            verdict: r.verdict.clone(),
            value: r.value,
            reason: r.reason.clone(),
            failure: r.failure.clone(),
        })
        .collect();
    out
}

/// The first turn's judge call with every turn's tokens and attempts added, so a run's
/// cost counts them all.
fn summed_invocation(turns: &[CriterionResult]) -> Option<Box<Invocation>> {
    let mut calls = turns.iter().filter_map(|r| r.invocation.as_deref());
    let mut sum = calls.next()?.clone();
    for c in calls {
        sum.usage.input_tokens += c.usage.input_tokens;
        sum.usage.output_tokens += c.usage.output_tokens;
        sum.usage.reasoning_tokens += c.usage.reasoning_tokens;
        sum.attempts += c.attempts;
        sum.latency_ms += c.latency_ms;
        sum.cache_hit &= c.cache_hit;
    }
    Some(Box::new(sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MethodKind;

    fn turn(v: Verdict, value: Option<f64>) -> CriterionResult {
        CriterionResult {
            verdict: Some(v),
            value,
            failure: None,
            ..CriterionResult::failed("c", MethodKind::Judge, Failure::error("", ""))
        }
    }

    #[test]
    fn each_rule_combines_the_turns() {
        let c = Criterion::binary("c", "Is polite", 1.0);
        let turns = [
            turn(Verdict::Met, Some(1.0)),
            turn(Verdict::CannotAssess, None),
            turn(Verdict::Unmet, Some(0.0)),
            turn(Verdict::Met, Some(1.0)),
        ];
        let all = combine_turns(&c, Combine::All, &turns);
        assert_eq!((all.verdict, all.value), (Some(Verdict::Unmet), Some(0.0)));
        assert!(
            all.reason.starts_with("turn 3 of 4 decides (all)"),
            "{}",
            all.reason
        );
        assert_eq!(all.turns.len(), 4);
        assert_eq!(all.turns[1].verdict, Some(Verdict::CannotAssess));
        let any = combine_turns(&c, Combine::Any, &turns);
        assert_eq!((any.verdict, any.value), (Some(Verdict::Met), Some(1.0)));
        assert!(any.reason.starts_with("turn 1 of 4"), "{}", any.reason);
        let mean = combine_turns(&c, Combine::Mean, &turns);
        assert!((mean.value.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(mean.verdict, Some(Verdict::Met));
        let min = combine_turns(&c, Combine::Min, &turns);
        assert_eq!(min.value, Some(0.0));
        // A penalty's default: any turn that commits the fault.
        assert_eq!(Combine::default_for(-1.0), Combine::Any);
        assert_eq!(Combine::default_for(2.0), Combine::All);
    }

    #[test]
    fn a_failed_turn_fails_and_no_turns_abstain() {
        let c = Criterion::binary("c", "Is polite", 1.0);
        let failed =
            CriterionResult::failed("c", MethodKind::Judge, Failure::error("judge", "timed out"));
        let out = combine_turns(&c, Combine::All, &[turn(Verdict::Met, Some(1.0)), failed]);
        assert_eq!(out.verdict, None);
        assert_eq!(out.failure.unwrap().message, "turn 2: timed out");
        let none = combine_turns(&c, Combine::All, &[]);
        assert_eq!(
            (none.verdict, none.value),
            (Some(Verdict::CannotAssess), None)
        );
        assert!(none.failure.is_none());
        let abstained = combine_turns(&c, Combine::Mean, &[turn(Verdict::CannotAssess, None)]);
        assert_eq!(abstained.verdict, Some(Verdict::CannotAssess));
    }
}
