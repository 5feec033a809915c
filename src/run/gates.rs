//! Checking a run against its gates (`--gate`, the rubric's and `rubricate.yaml`'s
//! `gates:`): the figures each gate looks at, added up one evaluation at a time, and the
//! verdict per gate that the output names and the exit code follows.

use std::collections::BTreeMap;

use crate::engine::checks::plural;
use crate::model::{Evaluation, GateMetric, Rubric, RunGate, met_as_wanted};

use super::Summary;

/// Where a gate was set (said next to it, so a failing gate can be found).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateSource {
    /// `--gate` (or `--fail-under`, a gate on the mean).
    Flag,
    /// The rubric's `gates:`.
    Rubric,
    /// `rubricate.yaml`'s `gates:`.
    Config,
}

impl GateSource {
    /// How the output names it.
    pub fn label(self) -> &'static str {
        match self {
            GateSource::Flag => "--gate",
            GateSource::Rubric => "rubric",
            GateSource::Config => "rubricate.yaml",
        }
    }
}

/// A gate and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SetGate {
    pub gate: RunGate,
    pub source: GateSource,
}

/// One gate, checked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GateCheck {
    /// The gate as written (`pass_rate>=0.9`).
    pub gate: String,
    pub source: GateSource,
    /// The run's figure; `None` when no item gave one (then the gate fails).
    pub value: Option<f64>,
    pub held: bool,
    /// What the figure counts (`17 of 20 items`).
    pub basis: String,
}

/// The per-criterion counts the criterion gates need: items seen, items met.
#[derive(Debug, Clone, Default)]
struct Met {
    penalty: bool,
    seen: usize,
    held: usize,
}

/// The run's gates and the figures only they need, added up as items finish.
#[derive(Debug, Clone, Default)]
pub struct GateTally {
    gates: Vec<SetGate>,
    criteria: BTreeMap<String, Met>,
}

impl GateTally {
    /// The gates to check; `rubric` (the main one) says which criteria are penalties.
    pub fn new(gates: Vec<SetGate>, rubric: Option<&Rubric>) -> Self {
        let mut criteria = BTreeMap::new();
        for g in &gates {
            if let GateMetric::Criterion(id) = &g.gate.metric {
                let penalty = rubric
                    .and_then(|r| r.criterion(id))
                    .is_some_and(|c| c.weight < 0.0);
                criteria.insert(
                    id.clone(),
                    Met {
                        penalty,
                        ..Met::default()
                    },
                );
            }
        }
        Self { gates, criteria }
    }

    /// Whether there is any gate to check.
    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }

    /// Adds one graded item.
    pub fn add(&mut self, e: &Evaluation) {
        if self.criteria.is_empty() {
            return;
        }
        for r in &e.results {
            if let Some(m) = self.criteria.get_mut(&r.criterion_id) {
                m.seen += 1;
                m.held += usize::from(r.value.is_some_and(|v| met_as_wanted(v, m.penalty)));
            }
        }
    }

    /// Every gate against the run's totals, in the order they were set.
    pub fn check(&self, summary: &Summary) -> Vec<GateCheck> {
        self.gates
            .iter()
            .map(|set| {
                let (value, basis) = self.figure(&set.gate.metric, summary);
                GateCheck {
                    gate: set.gate.to_string(),
                    source: set.source,
                    value,
                    held: value.is_some_and(|v| set.gate.op.holds(v, set.gate.threshold)),
                    basis,
                }
            })
            .collect()
    }

    #[allow(clippy::cast_precision_loss)] // counts
    fn figure(&self, metric: &GateMetric, s: &Summary) -> (Option<f64>, String) {
        let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
        match metric {
            GateMetric::PassRate => (
                share(s.passed, s.items),
                format!("{} of {} passed", s.passed, plural(s.items, "item")),
            ),
            GateMetric::Mean => (
                s.mean_score(),
                format!("over {} scored", plural(s.items - s.unscored, "item")),
            ),
            GateMetric::Criterion(id) => {
                let m = self.criteria.get(id).cloned().unwrap_or_default();
                (
                    share(m.held, m.seen),
                    format!("met on {} of {}", m.held, plural(m.seen, "item")),
                )
            }
            GateMetric::Tag(tag) => match s.tags.get(tag) {
                Some(v) if !v.is_empty() => (
                    Some(v.iter().sum::<f64>() / v.len() as f64),
                    format!("over {}", plural(v.len(), "item")),
                ),
                _ => (None, "no item has the tag".to_owned()),
            },
        }
    }
}

/// Refuses, before anything is graded, a gate naming a criterion or tag the rubric does
/// not have (a typo would otherwise fail the job only after paying for the run).
pub fn check_names(gates: &[SetGate], rubric: &Rubric) -> Result<(), String> {
    for set in gates {
        if let Some(why) = set.gate.unknown_in(rubric) {
            return Err(format!(
                "gate `{}` ({}): {why}",
                set.gate,
                set.source.label()
            ));
        }
    }
    Ok(())
}
