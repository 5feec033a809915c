//! The meta-rubric's checks: the structure of a rubric (given as the submission's text).

use super::{Check, CheckError, CheckInput, CheckOutput};
use crate::engine::aggregate::{Input, Outcome, aggregate};
use crate::model::{AggregateMode, Kind, Rubric, Summation, ThresholdRule, Verdict};

/// One of the meta-rubric's checks on a rubric's structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaCheck {
    /// The rubric has at least one criterion.
    Coverage,
    /// Its criteria do not repeat one another.
    Independence,
    /// Its weights sum to 1 (as the meta-rubric asks; rubricate normalises anyway).
    Weights,
    /// Its pass threshold lies within the scores it can reach.
    Threshold,
    /// Its levels ascend by score.
    LevelOrder,
}

#[derive(Debug)]
struct Meta(MetaCheck);

/// The check `which`, ready to run on a submission holding a rubric.
pub fn compile(which: MetaCheck) -> Box<dyn Check> {
    Box::new(Meta(which))
}

impl Check for Meta {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let rubric = crate::formats::native::read_rubric_lenient(input.text())
            .map_err(CheckError::NotARubric)?;
        let (level, evidence) = evaluate(self.0, &rubric);
        Ok(CheckOutput {
            verdict: Verdict::Level(level.to_owned()),
            measure: None,
            evidence,
        })
    }
}

/// The level a meta check gives `rubric`, with evidence.
pub fn evaluate(which: MetaCheck, rubric: &Rubric) -> (&'static str, Vec<String>) {
    match which {
        MetaCheck::Coverage => {
            let n = rubric.criteria.len();
            (
                if n >= 1 { "pass" } else { "fail" },
                vec![format!("{n} criteria")],
            )
        }
        MetaCheck::Independence => independence(rubric),
        MetaCheck::Weights => {
            let sum = weight_total(rubric);
            // dataknobs' comparison, float for float: 0.51 + 0.5 sums to a hair over 1.01
            // and fails there too (lint says weights are normalised anyway).
            let ok = (sum - 1.0).abs() <= 0.01;
            let mut ev = vec![format!("weights sum to {}", round4(sum))];
            if !ok {
                ev.push("rubricate normalises weights, so scores are unaffected; the meta-rubric asks for weights that sum to 1".into());
            }
            (if ok { "pass" } else { "fail" }, ev)
        }
        MetaCheck::Threshold => {
            let (worst, best) = achievable(rubric);
            let t = rubric.pass_threshold;
            let ev = vec![format!(
                "pass_threshold {t}; achievable scores {}..{}",
                round4(worst),
                round4(best)
            )];
            let exact = rubric.scoring.threshold == ThresholdRule::Exact;
            let slack = if exact { 0.0 } else { 1e-9 };
            if rubric.scoring.aggregate == AggregateMode::WeightedMean
                && weight_total(rubric) == 0.0
            {
                // dataknobs: weights summing to 0 make no threshold reachable.
                ("fail", ev)
            } else if t > best + slack {
                ("too_high", ev)
            } else if t <= worst + if exact { 0.0 } else { 1e-12 } {
                ("too_low", ev)
            } else {
                ("pass", ev)
            }
        }
        MetaCheck::LevelOrder => {
            let mut bad = Vec::new();
            for c in &rubric.criteria {
                if let Kind::Levels(levels) = &c.kind
                    && levels.windows(2).any(|w| w[1].score < w[0].score)
                {
                    bad.push(format!(
                        "criterion '{}' lists levels out of score order",
                        c.id
                    ));
                }
            }
            if bad.is_empty() {
                ("pass", vec!["levels ascend by score".into()])
            } else {
                ("fail", bad)
            }
        }
    }
}

/// Names and requirements compared exactly, as dataknobs' meta-rubric does (`lint` adds a
/// warning for those that differ only in case or spacing).
fn independence(rubric: &Rubric) -> (&'static str, Vec<String>) {
    let mut ev = Vec::new();
    let mut dup_names = false;
    let mut dup_reqs = false;
    // Each name and requirement against the first criterion that had it: one pass (a
    // rubric of 10,000 criteria is not 50,000,000 comparisons).
    let mut names: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut reqs: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (j, b) in rubric.criteria.iter().enumerate() {
        if let Some(&i) = names.get(b.name.as_str()) {
            let a = &rubric.criteria[i];
            dup_names = true;
            ev.push(format!(
                "criteria '{}' and '{}' share the name '{}'",
                a.id, b.id, a.name
            ));
        } else {
            names.insert(&b.name, j);
        }
        let req = b.requirement.as_str();
        if let Some(&i) = reqs.get(req) {
            dup_reqs = true;
            ev.push(format!(
                "criteria '{}' and '{}' have the same requirement",
                rubric.criteria[i].id, b.id
            ));
        } else {
            reqs.insert(req, j);
        }
    }
    if dup_names {
        ("fail", ev)
    } else if dup_reqs {
        ("partial", ev)
    } else {
        ("pass", vec!["names and requirements are distinct".into()])
    }
}

/// Σ w as the rubric's home library totals it: dataknobs' meta-rubric with Python's
/// `sum()` (compensated on 3.12+, `scoring.summation`), rubricate's own in order.
fn weight_total(rubric: &Rubric) -> f64 {
    let weights = rubric.criteria.iter().map(|c| c.weight);
    if rubric.scoring.summation == Summation::Compensated {
        let mut sum = crate::engine::pysum::CompensatedSum::default();
        weights.for_each(|w| sum.add(w));
        sum.value()
    } else {
        weights.sum()
    }
}

/// The lowest and highest scores the rubric can produce (gates ignored). Under
/// `weighted_mean` these are, as dataknobs' meta-rubric computes them, every criterion at
/// its lowest and at its highest level, whatever its sign.
pub fn achievable(rubric: &Rubric) -> (f64, f64) {
    if rubric.scoring.aggregate == AggregateMode::WeightedMean {
        let total = weight_total(rubric);
        if total == 0.0 {
            return (0.0, 0.0);
        }
        let (lo, hi) = rubric.criteria.iter().fold((0.0, 0.0), |(lo, hi), c| {
            let (l, h) = c.value_range();
            (lo + c.weight * l, hi + c.weight * h)
        });
        return (lo / total, hi / total);
    }
    let at = |best: bool| {
        let inputs: Vec<Input> = rubric
            .criteria
            .iter()
            .map(|c| {
                let (lo, hi) = c.value_range();
                let good = if c.weight < 0.0 { lo } else { hi };
                let bad = if c.weight < 0.0 { hi } else { lo };
                Input {
                    weight: c.weight,
                    outcome: Outcome::Value(if best { good } else { bad }),
                    gate: None,
                    worst: None,
                }
            })
            .collect();
        aggregate(&rubric.scoring, rubric.pass_threshold, &inputs)
            .score
            .unwrap_or(0.0)
    };
    (at(false), at(true))
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
