//! Several judges, or several samples of one, voting on a criterion (SCORING.md
//! "Ensembles"): abstentions are set aside (all abstain → abstain), failed votes too (all
//! fail → the failure); binary verdicts by `majority`, `weighted`, `unanimous` or `any`;
//! graded kinds by a value rule (`mean`, `median`, `mode`, `min`, `max`) snapped to the
//! nearest answer the criterion has; ties go to the worst case for the criterion's sign.

use super::record::merge;
use crate::model::{Criterion, CriterionResult, Ensemble, Failure, Kind, Verdict, Vote};

/// How an ensemble's (or several samples') binary votes become one verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The verdict most votes give.
    #[default]
    Majority,
    /// Votes count by their judge's weight.
    Weighted,
    /// MET only if no vote says UNMET.
    Unanimous,
    /// MET if any vote says MET.
    Any,
}

/// How votes on a graded criterion (levels, options, scale) become one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueRule {
    /// The mean of the values.
    #[default]
    Mean,
    /// The median.
    Median,
    /// The most frequent value.
    Mode,
    /// The lowest (the strictest judge).
    Min,
    /// The highest (the most lenient judge).
    Max,
}

impl Rule {
    /// The name rubrics and flags use.
    pub fn as_str(self) -> &'static str {
        crate::core::choice::Choice::name(self)
    }
}

impl ValueRule {
    /// The name rubrics and flags use.
    pub fn as_str(self) -> &'static str {
        crate::core::choice::Choice::name(self)
    }
}

crate::choice_enum!(Rule, "ensemble rule", {
    Rule::Majority => "majority",
    Rule::Weighted => "weighted",
    Rule::Unanimous => "unanimous",
    Rule::Any => "any",
});

crate::choice_enum!(ValueRule, "value rule", {
    ValueRule::Mean => "mean",
    ValueRule::Median => "median",
    ValueRule::Mode => "mode",
    ValueRule::Min => "min",
    ValueRule::Max => "max",
});

/// One judge's (or sample's) result for the criterion.
#[derive(Debug, Clone)]
pub struct Ballot {
    /// The judge's model id.
    pub judge: String,
    /// Which of its samples.
    pub sample: u32,
    /// Its weight in the ensemble.
    pub weight: f64,
    /// Its result for the criterion.
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
        .filter_map(|b| b.result.invocation.as_deref())
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
        out.invocation = invocation.map(Box::new);
        out.ensemble = Some(Box::new(Ensemble {
            rule: rule_name,
            agreement: None,
            votes,
        }));
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
            invocation: invocation.map(Box::new),
            ensemble: Some(Box::new(Ensemble {
                rule: rule_name,
                agreement,
                votes,
            })),
            turns: Vec::new(),
        },
        Err(m) => CriterionResult::failed(
            &c.id,
            crate::model::MethodKind::Judge,
            Failure::error("judge", m.to_string()),
        ),
    }
}

fn binary_verdict(c: &Criterion, counted: &[(&Ballot, f64)], rule: Rule) -> Verdict {
    let met = |b: &&Ballot| b.result.verdict == Some(Verdict::Met);
    let (yes, no) = match rule {
        Rule::Majority => {
            let yes = counted.iter().filter(|(b, _)| met(b)).count();
            #[allow(clippy::cast_precision_loss)] // vote counts are small
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, OptionChoice};

    fn vote(judge: &str, c: &Criterion, v: Verdict, weight: f64) -> Ballot {
        let value = c.value_of(&v).unwrap();
        Ballot {
            judge: judge.into(),
            sample: 0,
            weight,
            result: CriterionResult {
                criterion_id: c.id.clone(),
                verdict: Some(v),
                value,
                reason: format!("{judge}'s reason"),
                evidence: Vec::new(),
                method: crate::model::MethodKind::Judge,
                failure: None,
                invocation: None,
                ensemble: None,
                turns: Vec::new(),
            },
        }
    }

    fn failed(judge: &str, c: &Criterion) -> Ballot {
        Ballot {
            judge: judge.into(),
            sample: 0,
            weight: 1.0,
            result: CriterionResult::failed(
                &c.id,
                crate::model::MethodKind::Judge,
                Failure::error("judge", "HTTP 500"),
            ),
        }
    }

    fn options() -> Criterion {
        let mut c = Criterion::binary("tone", "The tone", 1.0);
        let o = |label: &str, value: f64, na: bool| OptionChoice {
            label: label.into(),
            value,
            na,
        };
        c.kind = Kind::Options {
            options: vec![
                o("Poor", 0.0, false),
                o("Fair", 0.3, false),
                o("Good", 0.6, false),
                o("Great", 1.0, false),
                o("N/A", 0.0, true),
            ],
            scale: crate::model::OptionScale::default(),
        };
        c
    }

    fn choice(s: &str) -> Verdict {
        Verdict::Choice(s.into())
    }

    #[test]
    fn binary_rules_and_worst_case_ties() {
        use Verdict::{CannotAssess, Met, Unmet};
        let pos = Criterion::binary("p", "r", 1.0);
        let neg = Criterion::binary("n", "r", -1.0);
        let run = |c: &Criterion, votes: &[(Verdict, f64)], rule| {
            let ballots: Vec<Ballot> = votes
                .iter()
                .enumerate()
                .map(|(i, (v, w))| vote(&format!("j{i}"), c, v.clone(), *w))
                .collect();
            combine(c, &ballots, rule, ValueRule::Mean)
        };
        let r = run(
            &pos,
            &[(Met, 1.0), (Met, 1.0), (Unmet, 1.0)],
            Rule::Majority,
        );
        assert_eq!(r.verdict, Some(Met));
        let e = r.ensemble.unwrap();
        assert!((e.agreement.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.reason, "j0's reason");
        assert_eq!(
            run(&pos, &[(Met, 1.0), (Unmet, 1.0)], Rule::Majority).verdict,
            Some(Unmet)
        );
        assert_eq!(
            run(&neg, &[(Met, 1.0), (Unmet, 1.0)], Rule::Majority).verdict,
            Some(Met)
        );
        assert_eq!(
            run(&pos, &[(Met, 1.0), (Unmet, 3.0)], Rule::Weighted).verdict,
            Some(Unmet)
        );
        assert_eq!(
            run(&pos, &[(Met, 3.0), (Unmet, 1.0)], Rule::Weighted).verdict,
            Some(Met)
        );
        assert_eq!(
            run(
                &pos,
                &[(Met, 1.0), (Met, 1.0), (Unmet, 1.0)],
                Rule::Unanimous
            )
            .verdict,
            Some(Unmet)
        );
        assert_eq!(
            run(&pos, &[(Met, 1.0), (CannotAssess, 1.0)], Rule::Unanimous).verdict,
            Some(Met),
            "abstentions are set aside"
        );
        assert_eq!(
            run(&pos, &[(Unmet, 1.0), (Unmet, 1.0), (Met, 1.0)], Rule::Any).verdict,
            Some(Met)
        );
        let all_abstain = run(
            &pos,
            &[(CannotAssess, 1.0), (CannotAssess, 1.0)],
            Rule::Majority,
        );
        assert_eq!(all_abstain.verdict, Some(CannotAssess));
        assert_eq!(all_abstain.value, None);
    }

    #[test]
    fn failed_votes_are_set_aside_and_all_failed_is_a_failure() {
        let c = Criterion::binary("p", "r", 1.0);
        let r = combine(
            &c,
            &[failed("a", &c), vote("b", &c, Verdict::Met, 1.0)],
            Rule::Majority,
            ValueRule::Mean,
        );
        assert_eq!(r.verdict, Some(Verdict::Met));
        assert_eq!(r.ensemble.as_ref().unwrap().votes.len(), 2);
        assert_eq!(r.ensemble.unwrap().agreement, Some(1.0));
        let r = combine(
            &c,
            &[failed("a", &c), failed("b", &c)],
            Rule::Majority,
            ValueRule::Mean,
        );
        assert!(r.verdict.is_none());
        assert!(
            r.failure
                .unwrap()
                .message
                .starts_with("every vote failed; the first: HTTP 500")
        );
    }

    #[test]
    fn value_rules_snap_to_the_nearest_option_ties_to_the_worse() {
        let c = options();
        let run = |labels: &[&str], rule| {
            let ballots: Vec<Ballot> = labels
                .iter()
                .enumerate()
                .map(|(i, l)| vote(&format!("j{i}"), &c, choice(l), 1.0))
                .collect();
            combine(&c, &ballots, Rule::Majority, rule).verdict.unwrap()
        };
        // mean (0 + 0.6 + 1) / 3 = 0.533 → Good (0.6).
        assert_eq!(
            run(&["Poor", "Good", "Great"], ValueRule::Mean),
            choice("Good")
        );
        assert_eq!(
            run(&["Poor", "Good", "Great"], ValueRule::Median),
            choice("Good")
        );
        // median of 0.3 and 1.0 is 0.65 → Good.
        assert_eq!(run(&["Fair", "Great"], ValueRule::Median), choice("Good"));
        assert_eq!(
            run(&["Fair", "Great", "Great", "Poor"], ValueRule::Mode),
            choice("Great")
        );
        // A tie in mode goes to the worse.
        assert_eq!(run(&["Fair", "Great"], ValueRule::Mode), choice("Fair"));
        assert_eq!(run(&["Fair", "Great"], ValueRule::Min), choice("Fair"));
        assert_eq!(run(&["Fair", "Great"], ValueRule::Max), choice("Great"));
        // 0.45 is as near Fair (0.3) as Good (0.6): the worse wins.
        assert_eq!(run(&["Fair", "Good"], ValueRule::Mean), choice("Fair"));
        // N/A votes are abstentions: set aside.
        assert_eq!(run(&["N/A", "Great"], ValueRule::Mean), choice("Great"));
        assert_eq!(run(&["N/A", "N/A"], ValueRule::Mean), choice("N/A"));
    }
}
