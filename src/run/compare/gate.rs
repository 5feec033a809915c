//! The regression gate of two runs compared (`runs compare A B`, `grade --baseline`, `report
//! A B`): what counts as B regressing A, the paired
//! tests that say whether a regression is significant, and the exit code.
//!
//! A regression is an item that passed in A and fails in B or whose score dropped by more
//! than `--tolerance`, a criterion whose pass rate (share of items at full marks) dropped,
//! the share of items passing dropped, or the mean item score dropped by more than
//! `--tolerance`. Significant (`--fail-on significant`) means p < [`SIGNIFICANCE`] by the
//! exact McNemar test for pass/fail outcomes (a binary criterion, an item passing) and by a
//! paired bootstrap for the mean score; single items and graded (non-binary) criteria have
//! no test, so they fail only `--fail-on any`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Comparison;
use crate::metrics::{Bootstrap, Ci, PairedMean, mcnemar_exact, paired_bootstrap};
use crate::run::Error;

/// A regression with a p-value below this is significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// Below this a difference of scores is rounding, not a change.
const EPSILON: f64 = 1e-12;

/// What fails the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Any regression.
    Any,
    /// Only a regression a paired test finds significant (p < 0.05).
    Significant,
}

/// How two runs are compared.
#[derive(Debug, Clone, Copy)]
pub struct GateOptions {
    /// Changed items kept (regressions first).
    pub top: usize,
    /// How far an item's score or the mean score may drop before it is a regression.
    pub tolerance: f64,
    /// What fails the gate.
    pub fail_on: FailOn,
}

impl GateOptions {
    /// Refuses a tolerance that is not a score difference.
    pub fn check(&self) -> Result<(), Error> {
        if self.tolerance.is_finite() && (0.0..=1.0).contains(&self.tolerance) {
            Ok(())
        } else {
            Err(Error::input(format!(
                "--tolerance {} is not a score difference: give a number from 0 to 1 (e.g. 0.05)",
                self.tolerance
            )))
        }
    }
}

/// Pass/fail pairs that changed: `lost` passed in A and fail in B, `gained` the reverse.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discordant {
    pub lost: u64,
    pub gained: u64,
    /// Every value seen was 0 or 1 (a pass/fail criterion, where McNemar applies).
    pub binary: bool,
}

impl Discordant {
    fn add(&mut self, was: bool, now: bool) {
        self.lost += u64::from(was && !now);
        self.gained += u64::from(!was && now);
    }
}

/// What the gate adds up while the runs are read: per criterion the discordant pairs, the
/// items' pass/fail pairs, and one score difference per item (8 bytes an item, for the
/// paired bootstrap; no item's text is kept).
pub struct Tally {
    tolerance: f64,
    pub criteria: BTreeMap<String, Discordant>,
    pub items: Discordant,
    /// Per finished item in both runs: score in B minus score in A.
    deltas: Vec<f64>,
    pub sum_a: f64,
    pub sum_b: f64,
    /// Of those, items passing in A and in B.
    pub passing_a: usize,
    pub passing_b: usize,
    /// Items that regressed (passed → failed, or score dropped past the tolerance).
    pub regressed_items: usize,
}

impl Tally {
    pub fn new(tolerance: f64) -> Self {
        Self {
            tolerance,
            criteria: BTreeMap::new(),
            items: Discordant {
                binary: true,
                ..Discordant::default()
            },
            deltas: Vec::new(),
            sum_a: 0.0,
            sum_b: 0.0,
            passing_a: 0,
            passing_b: 0,
            regressed_items: 0,
        }
    }

    /// One criterion's values of one item in A and in B (full marks is a pass).
    pub fn criterion(&mut self, id: &str, a: Option<f64>, b: Option<f64>) {
        let entry = match self.criteria.get_mut(id) {
            Some(e) => e,
            None => self.criteria.entry(id.to_owned()).or_insert(Discordant {
                binary: true,
                ..Discordant::default()
            }),
        };
        let pass_or_fail =
            |v: Option<f64>| v.is_none_or(|v| v.abs() < 1e-9 || (v - 1.0).abs() < 1e-9);
        entry.binary &= pass_or_fail(a) && pass_or_fail(b);
        let full = |v: Option<f64>| v.is_some_and(|v| v >= 1.0 - 1e-9);
        entry.add(full(a), full(b));
    }

    /// One finished item in both runs; whether it regressed.
    pub fn item(&mut self, passed_a: bool, passed_b: bool, a: f64, b: f64) -> bool {
        self.items.add(passed_a, passed_b);
        self.deltas.push(b - a);
        self.sum_a += a;
        self.sum_b += b;
        self.passing_a += usize::from(passed_a);
        self.passing_b += usize::from(passed_b);
        let regressed = passed_a && !passed_b || b - a < -self.tolerance - EPSILON;
        self.regressed_items += usize::from(regressed);
        regressed
    }

    /// Finished items in both runs (those compared by score).
    pub fn scored(&self) -> usize {
        self.deltas.len()
    }
}

/// One regression, as every format lists it (first).
#[derive(Debug, Clone, Serialize)]
pub struct Regression {
    /// `mean`, `items passing`, `criterion` or `item`.
    pub kind: &'static str,
    /// The criterion's or item's id (`mean` and `items passing` have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The value in A and in B: a mean score, a pass rate, or an item's score.
    pub a: f64,
    pub b: f64,
    pub delta: f64,
    /// The paired test and its p-value, when one applies.
    pub test: Option<&'static str>,
    pub p_value: Option<f64>,
    /// The interval of the delta (the mean's paired bootstrap).
    pub ci: Option<Ci>,
    /// `p_value < 0.05`; false when no test applies.
    pub significant: bool,
}

/// A criterion's paired test, regressed or not.
#[derive(Debug, Clone, Serialize)]
pub struct CriterionTest {
    pub id: String,
    pub lost: u64,
    pub gained: u64,
    /// `exact McNemar` for a pass/fail criterion; none for a graded one.
    pub test: Option<&'static str>,
    pub p_value: Option<f64>,
}

/// The gate's verdict and what it rests on.
pub struct Gate {
    pub fail_on: FailOn,
    pub tolerance: f64,
    /// Mean scores of the finished items in both runs, and the paired bootstrap.
    pub mean_a: Option<f64>,
    pub mean_b: Option<f64>,
    pub mean: Option<PairedMean>,
    pub bootstrap: Bootstrap,
    /// Items passing in A and in B (finished items in both), and McNemar over them.
    pub items_p: f64,
    pub criteria: Vec<CriterionTest>,
    /// Mean first, then items passing, criteria, then single items (the `top` kept).
    pub regressions: Vec<Regression>,
    /// All items that regressed (the list keeps the `top` most changed).
    pub regressed_items: usize,
}

impl Gate {
    pub fn of(c: &Comparison, options: &GateOptions) -> Self {
        let tally = &c.tally;
        let bootstrap = Bootstrap::default();
        #[allow(clippy::cast_precision_loss)] // item counts
        let scored = tally.scored() as f64;
        let (mean_a, mean_b) = if tally.scored() == 0 {
            (None, None)
        } else {
            (Some(tally.sum_a / scored), Some(tally.sum_b / scored))
        };
        let mean = paired_bootstrap(&tally.deltas, &bootstrap);
        let mut regressions = Vec::new();
        if let (Some(a), Some(b), Some(m)) = (mean_a, mean_b, mean)
            && m.delta < -options.tolerance - EPSILON
        {
            regressions.push(Regression {
                kind: "mean",
                id: None,
                a,
                b,
                delta: m.delta,
                test: Some("paired bootstrap"),
                p_value: Some(m.p_value),
                ci: m.ci,
                significant: m.p_value < SIGNIFICANCE,
            });
        }
        let items_p = mcnemar_exact(tally.items.lost, tally.items.gained);
        if tally.items.lost > tally.items.gained {
            let (pass_a, pass_b) = shares(tally.passing_a, tally.passing_b, tally.scored());
            regressions.push(Regression {
                kind: "items passing",
                id: None,
                a: pass_a,
                b: pass_b,
                delta: pass_b - pass_a,
                test: Some("exact McNemar"),
                p_value: Some(items_p),
                ci: None,
                significant: items_p < SIGNIFICANCE,
            });
        }
        let mut criteria = Vec::new();
        for (id, pairs) in &tally.criteria {
            let p_value = pairs
                .binary
                .then(|| mcnemar_exact(pairs.lost, pairs.gained));
            let test = pairs.binary.then_some("exact McNemar");
            if pairs.lost > pairs.gained {
                let (compared, full_a, full_b, _) = c.criteria.get(id).copied().unwrap_or_default();
                let (a, b) = shares(full_a, full_b, compared);
                regressions.push(Regression {
                    kind: "criterion",
                    id: Some(id.clone()),
                    a,
                    b,
                    delta: b - a,
                    test,
                    p_value,
                    ci: None,
                    significant: p_value.is_some_and(|p| p < SIGNIFICANCE),
                });
            }
            criteria.push(CriterionTest {
                id: id.clone(),
                lost: pairs.lost,
                gained: pairs.gained,
                test,
                p_value,
            });
        }
        for item in c.ranked_items().into_iter().filter(|i| i.regression) {
            regressions.push(Regression {
                kind: "item",
                id: Some(item.id.clone()),
                a: item.a,
                b: item.b,
                delta: item.delta,
                test: None,
                p_value: None,
                ci: None,
                significant: false,
            });
        }
        Self {
            fail_on: options.fail_on,
            tolerance: options.tolerance,
            mean_a,
            mean_b,
            mean,
            bootstrap,
            items_p,
            criteria,
            regressions,
            regressed_items: tally.regressed_items,
        }
    }

    /// Whether B regresses A at all (items beyond `--top` included).
    pub fn regressed(&self) -> bool {
        !self.regressions.is_empty() || self.regressed_items > 0
    }

    /// Whether the job fails: any regression, or (`--fail-on significant`) a significant one.
    pub fn fails(&self) -> bool {
        match self.fail_on {
            FailOn::Any => self.regressed(),
            FailOn::Significant => self.regressions.iter().any(|r| r.significant),
        }
    }
}

/// `part / n` and `whole / n` as shares (0 when `n` is 0).
#[allow(clippy::cast_precision_loss)] // counts
fn shares(a: usize, b: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        (0.0, 0.0)
    } else {
        (a as f64 / n as f64, b as f64 / n as f64)
    }
}
