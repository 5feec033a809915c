//! Several judges, or several samples of one, voting on a criterion (SCORING.md
//! "Ensembles"): abstentions are set aside (all abstain → abstain), failed votes too (all
//! fail → the failure); binary verdicts by `majority`, `weighted`, `unanimous` or `any`;
//! graded kinds by a value rule (`mean`, `median`, `mode`, `min`, `max`) snapped to the
//! nearest answer the criterion has; ties go to the worst case for the criterion's sign.

use super::record::merge;
use crate::model::{Criterion, CriterionResult, Ensemble, Failure, Kind, Verdict, Vote};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Rule {
    #[default]
    Majority,
    /// Votes count by their judge's weight.
    Weighted,
    /// MET only if no vote says UNMET.
    Unanimous,
    /// MET if any vote says MET.
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ValueRule {
    #[default]
    Mean,
    Median,
    Mode,
    Min,
    Max,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Majority => "majority",
            Rule::Weighted => "weighted",
            Rule::Unanimous => "unanimous",
            Rule::Any => "any",
        }
    }
}

impl ValueRule {
    pub fn as_str(self) -> &'static str {
        match self {
            ValueRule::Mean => "mean",
            ValueRule::Median => "median",
            ValueRule::Mode => "mode",
            ValueRule::Min => "min",
            ValueRule::Max => "max",
        }
    }
}

/// One judge's (or sample's) result for the criterion.
#[derive(Debug, Clone)]
pub struct Ballot {
    pub judge: String,
    pub sample: u32,
    pub weight: f64,
    pub result: CriterionResult,
}

/// The criterion's result from its ballots, with the votes and their agreement.
pub fn combine(
    c: &Criterion,
    ballots: &[Ballot],
    rule: Rule,
    values: ValueRule,
) -> CriterionResult {
    let invocations: Vec<_> = ballots
        .iter()
        .filter_map(|b| b.result.invocation.as_ref())
        .collect();
    let invocation = merge(
        &invocations,
        invocations.first().map_or("", |i| i.strategy.as_str()),
    );
    let counted: Vec<(&Ballot, f64)> = ballots
        .iter()
        .filter_map(|b| b.result.value.map(|v| (b, v)))
        .collect();
    let graded = !matches!(c.kind, Kind::Binary);
    let rule_name = if graded {
        format!("{}/{}", rule.as_str(), values.as_str())
    } else {
        rule.as_str().to_owned()
    };
    let verdict = if counted.is_empty() {
        ballots.iter().find_map(|b| b.result.verdict.clone())
    } else if graded {
        graded_verdict(c, &counted, rule, values)
    } else {
        Some(binary_verdict(c, &counted, rule))
    };
    let votes: Vec<Vote> = ballots
        .iter()
        .map(|b| Vote {
            judge: b.judge.clone(),
            sample: b.sample,
            verdict: b.result.verdict.clone(),
            reason: b.result.reason.clone(),
            failure: b.result.failure.clone(),
        })
        .collect();
    let Some(verdict) = verdict else {
        // Every vote failed.
        let first = ballots
            .iter()
            .find_map(|b| b.result.failure.clone())
            .unwrap_or_else(|| Failure::error("judge", "no judge answered"));
        let mut out = CriterionResult::failed(
            &c.id,
            crate::model::MethodKind::Judge,
            Failure {
                message: format!("every vote failed; the first: {}", first.message),
                ..first
            },
        );
        out.invocation = invocation;
        out.ensemble = Some(Ensemble {
            rule: rule_name,
            agreement: None,
            votes,
        });
        return out;
    };
    let answered: Vec<&Ballot> = ballots
        .iter()
        .filter(|b| b.result.verdict.is_some())
        .collect();
    let agreeing = answered
        .iter()
        .filter(|b| b.result.verdict.as_ref() == Some(&verdict));
    #[allow(clippy::cast_precision_loss)] // vote counts are small
    let agreement =
        (!answered.is_empty()).then(|| agreeing.clone().count() as f64 / answered.len() as f64);
    let reason = agreeing
        .map(|b| b.result.reason.clone())
        .find(|r| !r.is_empty())
        .unwrap_or_default();
    match c.value_of(&verdict) {
        Ok(value) => CriterionResult {
            criterion_id: c.id.clone(),
            verdict: Some(verdict),
            value,
            reason,
            evidence: Vec::new(),
            method: crate::model::MethodKind::Judge,
            failure: None,
            invocation,
            ensemble: Some(Ensemble {
                rule: rule_name,
                agreement,
                votes,
            }),
        },
        Err(m) => CriterionResult::failed(
            &c.id,
            crate::model::MethodKind::Judge,
            Failure::error("judge", m),
        ),
    }
}

fn binary_verdict(c: &Criterion, counted: &[(&Ballot, f64)], rule: Rule) -> Verdict {
    let met = |b: &&Ballot| b.result.verdict == Some(Verdict::Met);
    let (yes, no) = match rule {
        Rule::Majority => {
            let yes = counted.iter().filter(|(b, _)| met(b)).count();
            #[allow(clippy::cast_precision_loss)]
            (yes as f64, (counted.len() - yes) as f64)
        }
        Rule::Weighted => counted.iter().fold((0.0, 0.0), |(y, n), (b, _)| {
            if met(b) {
                (y + b.weight, n)
            } else {
                (y, n + b.weight)
            }
        }),
        Rule::Unanimous => {
            let any_no = counted.iter().any(|(b, _)| !met(b));
            return if any_no { Verdict::Unmet } else { Verdict::Met };
        }
        Rule::Any => {
            let any_yes = counted.iter().any(|(b, _)| met(b));
            return if any_yes {
                Verdict::Met
            } else {
                Verdict::Unmet
            };
        }
    };
    if (yes - no).abs() < 1e-12 {
        // A tie: the worst case for the criterion's sign.
        return if c.weight < 0.0 {
            Verdict::Met
        } else {
            Verdict::Unmet
        };
    }
    if yes > no {
        Verdict::Met
    } else {
        Verdict::Unmet
    }
}

/// The value rule over the votes' values, snapped to the nearest answer the criterion
/// has (an option that is not N/A, a level, a point of the scale).
fn graded_verdict(
    c: &Criterion,
    counted: &[(&Ballot, f64)],
    rule: Rule,
    values: ValueRule,
) -> Option<Verdict> {
    let worse_first = |a: f64, b: f64| {
        if c.weight < 0.0 {
            b.total_cmp(&a)
        } else {
            a.total_cmp(&b)
        }
    };
    let mut vals: Vec<f64> = counted.iter().map(|(_, v)| *v).collect();
    vals.sort_by(f64::total_cmp);
    let target = match values {
        ValueRule::Mean => {
            let weight = |b: &Ballot| {
                if rule == Rule::Weighted {
                    b.weight
                } else {
                    1.0
                }
            };
            let total: f64 = counted.iter().map(|(b, _)| weight(b)).sum();
            if total <= 0.0 {
                return None;
            }
            counted.iter().map(|(b, v)| weight(b) * v).sum::<f64>() / total
        }
        ValueRule::Median => {
            let n = vals.len();
            if n % 2 == 1 {
                vals[n / 2]
            } else {
                f64::midpoint(vals[n / 2 - 1], vals[n / 2])
            }
        }
        ValueRule::Mode => {
            let mut best: Option<(usize, f64)> = None;
            for &v in &vals {
                let n = vals.iter().filter(|x| (**x - v).abs() < 1e-9).count();
                let better = match best {
                    None => true,
                    Some((bn, bv)) => n > bn || (n == bn && worse_first(v, bv).is_lt()),
                };
                if better {
                    best = Some((n, v));
                }
            }
            best.map_or(0.0, |(_, v)| v)
        }
        ValueRule::Min => *vals.first()?,
        ValueRule::Max => *vals.last()?,
    };
    let candidates: Vec<(Verdict, f64)> = match &c.kind {
        Kind::Binary => return None,
        Kind::Options { options, .. } => options
            .iter()
            .filter(|o| !o.na)
            .filter_map(|o| {
                let v = Verdict::Choice(o.label.clone());
                c.value_of(&v).ok().flatten().map(|x| (v, x))
            })
            .collect(),
        Kind::Levels(levels) => levels
            .iter()
            .filter_map(|l| {
                let v = Verdict::Level(l.id.clone());
                c.value_of(&v).ok().flatten().map(|x| (v, x))
            })
            .collect(),
        Kind::Scale(s) => {
            return Some(Verdict::Score(
                s.min + target.clamp(0.0, 1.0) * (s.max - s.min),
            ));
        }
    };
    candidates
        .into_iter()
        .min_by(|(_, a), (_, b)| {
            let (da, db) = ((a - target).abs(), (b - target).abs());
            if (da - db).abs() < 1e-9 {
                worse_first(*a, *b)
            } else {
                da.total_cmp(&db)
            }
        })
        .map(|(v, _)| v)
}
