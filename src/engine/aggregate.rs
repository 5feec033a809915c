//! All the scoring math of SCORING.md "Aggregation": the one place where criterion values
//! become a rubric score. Pure functions, no I/O.

use super::pysum::CompensatedSum;
use crate::model::{
    AbstainPolicy, AggregateMode, CriterionResult, ErrorPolicy, Gate, GateRule, GraderScore,
    Rubric, Scoring, Summation, ThresholdRule, Verdict,
};

/// Scores within this distance of the threshold count as reaching it.
pub use crate::model::THRESHOLD_TOLERANCE;

/// What happened to one criterion, as aggregation sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// A value in [0,1].
    Value(f64),
    /// `CANNOT_ASSESS`, an NA option, or a criterion the judge left out.
    Abstain,
    /// A check or judge error: never a verdict.
    Failed,
}

/// One criterion's contribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input {
    /// The criterion's weight (negative for a penalty).
    pub weight: f64,
    /// What the criterion's verdict came to.
    pub outcome: Outcome,
    /// `Some` when the criterion is `required` (and the rubric's gates apply).
    pub gate: Option<Gate>,
    /// The worst value this criterion can take for its sign, what `worst` charges: the
    /// lowest scored level or option (the highest for a penalty). `None`: 0, or 1 for a
    /// penalty (binary criteria).
    pub worst: Option<f64>,
}

/// An item's score from its criteria's outcomes, as the rubric's scoring says.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// `None` when nothing was counted.
    pub score: Option<f64>,
    /// Σ w·v over counted criteria; `None` when nothing was counted.
    pub raw: Option<f64>,
    /// The score reaches the threshold and every gate holds.
    pub passed: bool,
    /// A criterion failed, or nothing was counted.
    pub incomplete: bool,
    /// Criteria that failed.
    pub failures: usize,
    /// Indexes of required criteria that did not reach their `min_score`.
    pub gates_failed: Vec<usize>,
    /// Each grader's score and verdict (empty unless the rubric has graders).
    pub graders: Vec<GraderScore>,
}

/// Aggregates `inputs` under `scoring` and decides pass/fail against `threshold`.
pub fn aggregate(scoring: &Scoring, threshold: f64, inputs: &[Input]) -> Aggregate {
    let mut raw = 0.0;
    let mut signed = 0.0;
    let mut positive = 0.0;
    let mut negative = 0.0;
    let mut counted = 0usize;
    let mut oriented_sum = 0.0;
    let mut oriented_min = f64::INFINITY;
    let mut failures = 0;
    let mut gates_failed = Vec::new();
    // The same totals as Python 3.12+'s `sum()` takes them (`summation: compensated`).
    let mut py = [CompensatedSum::default(); 4];
    for (i, input) in inputs.iter().enumerate() {
        if input.outcome == Outcome::Failed {
            failures += 1;
        }
        if let Some(gate) = input.gate {
            let reached = match input.outcome {
                Outcome::Value(v) => match (gate, scoring.threshold) {
                    (Gate::AtLeast(m), ThresholdRule::Exact) => v >= m,
                    _ => gate.admits(v),
                },
                // agentv gates only what its judge answered.
                _ => scoring.gates == GateRule::Answered,
            };
            if !reached {
                gates_failed.push(i);
            }
        }
        let Some(v) = counted_value(scoring, input) else {
            continue;
        };
        let w = input.weight;
        counted += 1;
        raw += w * v;
        signed += w;
        if w > 0.0 {
            positive += w;
        } else if w < 0.0 {
            negative += -w;
        }
        for (sum, x) in py.iter_mut().zip([w * v, w, w.max(0.0), (-w).max(0.0)]) {
            sum.add(x);
        }
        // For mean/min a penalty's value is turned so that higher is always better.
        let oriented = if w < 0.0 { 1.0 - v } else { v };
        oriented_sum += oriented;
        oriented_min = oriented_min.min(oriented);
    }
    if scoring.summation == Summation::Compensated {
        // The totals the home library takes with `sum()`: rubric's graders sum Σ w·v and
        // the weights; dataknobs and agentic_v2_eval sum only Σ w (Σ w·v is a loop).
        if scoring.aggregate == AggregateMode::WeightedMean {
            signed = py[1].value();
        } else {
            (raw, positive, negative) = (py[0].value(), py[2].value(), py[3].value());
        }
    }
    let (score, raw) = if counted == 0 {
        (None, None)
    } else {
        let score = match scoring.aggregate {
            AggregateMode::Points if !scoring.normalize => raw,
            AggregateMode::Points => normalize_points(raw, positive, negative),
            AggregateMode::Mean => oriented_sum / counted as f64,
            AggregateMode::Min => oriented_min,
            AggregateMode::WeightedMean if signed == 0.0 => 0.0,
            AggregateMode::WeightedMean => raw / signed,
        };
        (Some(score), Some(raw))
    };
    let passed = score.is_some_and(|s| scoring.reaches(s, threshold)) && gates_failed.is_empty();
    Aggregate {
        score,
        raw,
        passed,
        incomplete: failures > 0 || score.is_none(),
        failures,
        gates_failed,
        graders: Vec::new(),
    }
}

/// `score ≥ threshold` with the 1e-9 tolerance (0.7999999999999999 passes 0.8).
pub fn reaches(score: f64, threshold: f64) -> bool {
    score + THRESHOLD_TOLERANCE >= threshold
}

/// raw / P when there is positive weight; 1 + raw / N for all-negative rubrics; else 0.
fn normalize_points(raw: f64, positive: f64, negative: f64) -> f64 {
    if positive > 0.0 {
        (raw / positive).clamp(0.0, 1.0)
    } else if negative > 0.0 {
        (1.0 + raw / negative).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The value a criterion counts with, or `None` when it is left out.
fn counted_value(scoring: &Scoring, input: &Input) -> Option<f64> {
    let worst = input
        .worst
        .unwrap_or(if input.weight < 0.0 { 1.0 } else { 0.0 });
    let abstained = |s: &Scoring| match s.abstain {
        AbstainPolicy::Skip => None,
        AbstainPolicy::Zero => Some(0.0),
        AbstainPolicy::Partial => Some(if input.weight > 0.0 {
            s.partial_credit
        } else {
            0.0
        }),
        AbstainPolicy::Worst => Some(worst),
    };
    match input.outcome {
        Outcome::Value(v) => Some(v),
        Outcome::Abstain => abstained(scoring),
        Outcome::Failed => match scoring.errors {
            ErrorPolicy::Abstain => abstained(scoring),
            ErrorPolicy::Zero => Some(0.0),
            ErrorPolicy::Worst => Some(worst),
        },
    }
}

/// The aggregation inputs of a rubric's results (matched by criterion id; a criterion
/// with no result abstains).
pub fn inputs_for(rubric: &Rubric, results: &[CriterionResult]) -> Vec<Input> {
    let by_id = crate::model::results_by_id(results);
    rubric
        .criteria
        .iter()
        .map(|c| {
            let result = by_id.get(c.id.as_str()).copied();
            let outcome = match result {
                Some(r) if r.failure.is_some() => Outcome::Failed,
                Some(CriterionResult { value: Some(v), .. }) => Outcome::Value(*v),
                _ => Outcome::Abstain,
            };
            Input {
                weight: c.weight,
                outcome,
                gate: (c.required && rubric.scoring.gates != GateRule::Off).then(|| c.gate()),
                worst: Some(c.worst_value()),
            }
        })
        .collect()
}

/// Aggregates a rubric's criterion results.
pub fn aggregate_results(rubric: &Rubric, results: &[CriterionResult]) -> Aggregate {
    aggregate_rubric(rubric, &inputs_for(rubric, results))
}

/// Aggregates one input per criterion of `rubric`: by its graders when it has them,
/// else all criteria as one.
pub fn aggregate_rubric(rubric: &Rubric, inputs: &[Input]) -> Aggregate {
    if rubric.graders.is_empty() {
        aggregate(&rubric.scoring, rubric.pass_threshold, inputs)
    } else {
        by_graders(rubric, inputs)
    }
}

/// agentv's test score (its orchestrator): each grader's criteria aggregated apart into
/// the grader's score; the mean of those scores weighted by the graders' weights, or 0
/// when a required grader scores below its `min_score` (the threshold when it has none);
/// passed when that reaches the threshold. A grader with no score (its judge answered
/// none of its criteria) is left out, as agentv leaves out a skipped grader, and is not
/// gated. The criteria's own gates decide only their grader's verdict, which agentv's test
/// verdict never reads.
fn by_graders(rubric: &Rubric, inputs: &[Input]) -> Aggregate {
    let positions = rubric.positions();
    let failures = inputs
        .iter()
        .filter(|i| i.outcome == Outcome::Failed)
        .count();
    let mut sum = 0.0;
    let mut weights = 0.0;
    let mut scored = false;
    let mut gates_failed = Vec::new();
    let mut each = Vec::with_capacity(rubric.graders.len());
    for grader in &rubric.graders {
        let members: Vec<usize> = grader
            .criteria
            .iter()
            .filter_map(|id| positions.get(id.as_str()).copied())
            .filter(|i| *i < inputs.len())
            .collect();
        let own: Vec<Input> = members.iter().map(|i| inputs[*i]).collect();
        let own = aggregate(&rubric.scoring, rubric.pass_threshold, &own);
        each.push(GraderScore {
            id: grader.id.clone(),
            score: own.score,
            passed: own.passed,
        });
        let Some(score) = own.score else {
            continue;
        };
        scored = true;
        if grader.required && score < grader.min_score.unwrap_or(rubric.pass_threshold) {
            gates_failed.extend(members);
        }
        sum += grader.weight * score;
        weights += grader.weight;
    }
    let score = if !scored {
        None
    } else if !gates_failed.is_empty() || weights == 0.0 {
        Some(0.0)
    } else {
        Some(sum / weights)
    };
    gates_failed.sort_unstable();
    Aggregate {
        score,
        raw: scored.then_some(sum),
        passed: score.is_some_and(|s| rubric.scoring.reaches(s, rubric.pass_threshold)),
        incomplete: failures > 0 || score.is_none(),
        failures,
        gates_failed,
        graders: each,
    }
}

/// The score per tag, `HealthBench`'s rule: over the criteria carrying the tag, the points
/// achieved (Σ w·v; a penalty that is met takes its points away; a criterion without a
/// value — unanswered, failed — achieves nothing) over the positive points possible,
/// clipped to [0, 1]. A tag without positive points has no score.
pub fn tag_scores(
    rubric: &Rubric,
    results: &[CriterionResult],
) -> std::collections::BTreeMap<String, f64> {
    let mut sums: std::collections::BTreeMap<&str, (f64, f64)> = std::collections::BTreeMap::new();
    if rubric.criteria.iter().all(|c| c.tags.is_empty()) {
        return std::collections::BTreeMap::new();
    }
    let by_id = crate::model::results_by_id(results);
    for c in &rubric.criteria {
        let value = by_id
            .get(c.id.as_str())
            .filter(|r| r.failure.is_none())
            .and_then(|r| r.value)
            .unwrap_or(0.0);
        for t in &c.tags {
            let (achieved, possible) = sums.entry(t.as_str()).or_default();
            *achieved += c.weight * value;
            if c.weight > 0.0 {
                *possible += c.weight;
            }
        }
    }
    sums.into_iter()
        .filter(|(_, (_, possible))| *possible > 0.0)
        .map(|(t, (a, p))| (t.to_owned(), (a / p).clamp(0.0, 1.0)))
        .collect()
}

/// Holistic judging: one 0–100 number for the whole rubric → `(score, raw)`.
pub fn holistic(weights: &[f64], judged: f64) -> (f64, f64) {
    let fraction = judged / 100.0;
    let positive: f64 = weights.iter().filter(|w| **w > 0.0).sum();
    let negative: f64 = weights.iter().filter(|w| **w < 0.0).map(|w| -w).sum();
    let raw = if positive > 0.0 {
        fraction * positive
    } else if negative > 0.0 {
        -negative * (1.0 - fraction)
    } else {
        0.0
    };
    (fraction.clamp(0.0, 1.0), raw)
}

/// Reversed double pass: a positive criterion is MET only if both passes say so; a
/// penalty is MET if either pass sees it; both `CANNOT_ASSESS` stays `CANNOT_ASSESS`.
pub fn reconcile_double_pass(weight: f64, first: &Verdict, second: &Verdict) -> Verdict {
    use Verdict::{CannotAssess, Met, Unmet};
    match (first, second) {
        (CannotAssess, CannotAssess) => CannotAssess,
        (Met, Met) => Met,
        (Met, _) | (_, Met) if weight < 0.0 => Met,
        _ => Unmet,
    }
}
