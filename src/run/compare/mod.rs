//! Two runs of one dataset compared: per criterion the change, the items that moved most
//! (regressions first), streamed by position when the runs share their dataset and joined by
//! id otherwise; the regression gate (what regresses and the paired tests) is in [`gate`].
//! `runs compare`, `grade --baseline` and `report A B` all read it from here.

mod gate;

use std::collections::{BTreeMap, BinaryHeap};

pub use gate::{FailOn, Gate, GateOptions, Regression, SIGNIFICANCE};

use super::{Error, Recording};
use crate::model::Evaluation;

/// B compared with A, and what the gate makes of it.
pub fn compare(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
) -> Result<(Comparison, Gate), Error> {
    options.check()?;
    let (top, tolerance) = (options.top, options.tolerance);
    let comparison = if a.manifest.dataset.hash == b.manifest.dataset.hash {
        match compare_by_position(a, b, top, tolerance)? {
            Some(c) => c,
            None => compare_by_id(a, b, top, tolerance)?,
        }
    } else {
        compare_by_id(a, b, top, tolerance)?
    };
    let gate = Gate::of(&comparison, options);
    Ok((comparison, gate))
}

/// Two runs over the same dataset, read side by side in item order (memory does not grow
/// with the runs). `None` when an item's id differs between them at the same position
/// (the dataset read otherwise): then they are joined by id.
pub(crate) fn compare_by_position(
    run_a: &Recording,
    run_b: &Recording,
    top: usize,
    tolerance: f64,
) -> Result<Option<Comparison>, Error> {
    fn pull(all: &mut super::Evaluations) -> Result<Option<(usize, Evaluation)>, Error> {
        all.next().transpose()
    }
    let (mut all_a, mut all_b) = (run_a.evaluations()?, run_b.evaluations()?);
    let mut sum = Comparison::new(top, tolerance);
    let (mut next_a, mut next_b) = (pull(&mut all_a)?, pull(&mut all_b)?);
    loop {
        match (&next_a, &next_b) {
            (None, None) => break,
            (Some((at_a, in_a)), Some((at_b, in_b))) if at_a == at_b => {
                if in_a.target_id != in_b.target_id {
                    return Ok(None);
                }
                sum.pair(&in_a.target_id, in_a, in_b);
                (next_a, next_b) = (pull(&mut all_a)?, pull(&mut all_b)?);
            }
            (Some((at_a, _)), Some((at_b, _))) if at_a < at_b => {
                sum.only_a += 1;
                next_a = pull(&mut all_a)?;
            }
            (Some(_), None) => {
                sum.only_a += 1;
                next_a = pull(&mut all_a)?;
            }
            _ => {
                sum.only_b += 1;
                next_b = pull(&mut all_b)?;
            }
        }
    }
    Ok(Some(sum))
}

/// Two runs joined by item id, in memory (runs over different datasets).
pub(crate) fn compare_by_id(
    a: &Recording,
    b: &Recording,
    top: usize,
    tolerance: f64,
) -> Result<Comparison, Error> {
    let collect = |run: &Recording| -> Result<BTreeMap<String, Evaluation>, Error> {
        let mut out = BTreeMap::new();
        run.replay(|_, e| {
            out.insert(e.target_id.clone(), e.clone());
        })?;
        Ok(out)
    };
    let (ea, eb) = (collect(a)?, collect(b)?);
    let mut c = Comparison::new(top, tolerance);
    for (id, x) in &ea {
        if let Some(y) = eb.get(id) {
            c.pair(id, x, y);
        }
    }
    c.only_a = ea.len() - c.both;
    c.only_b = eb.len() - c.both;
    Ok(c)
}

/// What comparing two runs adds up: per criterion, pass rates and changed verdicts; per
/// item, score deltas, of which only the `top` most changed are kept (regressions first).
pub struct Comparison {
    pub(crate) both: usize,
    pub(crate) only_a: usize,
    pub(crate) only_b: usize,
    /// Per criterion: items in both, full marks in A, in B, verdict changed.
    pub(crate) criteria: BTreeMap<String, (usize, usize, usize, usize)>,
    /// Items in both with cells still to come in either run: compared on the criteria
    /// both have, never by score (a missing cell is not a regression).
    pub(crate) pending: usize,
    /// Items whose score or pass changed.
    pub(crate) changed: usize,
    pub(crate) top: usize,
    /// The `top` first in rank; the last in rank at the root.
    pub(crate) ranked: BinaryHeap<Changed>,
    /// What the regression gate and its paired tests need.
    pub(crate) tally: gate::Tally,
}

/// An item whose score or pass changed.
pub struct Changed {
    pub(crate) id: String,
    /// Its scores in A and in B.
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) delta: f64,
    pub(crate) regression: bool,
}

impl Ord for Changed {
    /// Rank order: regressions first, then the largest changes, then by id.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .regression
            .cmp(&self.regression)
            .then(other.delta.abs().total_cmp(&self.delta.abs()))
            .then_with(|| self.id.cmp(&other.id))
    }
}

impl PartialOrd for Changed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Changed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Changed {}

impl Comparison {
    pub(crate) fn new(top: usize, tolerance: f64) -> Self {
        Self {
            both: 0,
            only_a: 0,
            only_b: 0,
            criteria: BTreeMap::new(),
            pending: 0,
            changed: 0,
            top,
            ranked: BinaryHeap::new(),
            tally: gate::Tally::new(tolerance),
        }
    }

    /// An item in both runs: `x` in A, `y` in B.
    pub(crate) fn pair(&mut self, id: &str, x: &Evaluation, y: &Evaluation) {
        self.both += 1;
        // Per criterion: share of items whose value is full marks, and verdict changes.
        for rx in &x.results {
            let Some(ry) = y.results.iter().find(|r| r.criterion_id == rx.criterion_id) else {
                continue;
            };
            let entry = match self.criteria.get_mut(&rx.criterion_id) {
                Some(e) => e,
                None => self.criteria.entry(rx.criterion_id.clone()).or_default(),
            };
            entry.0 += 1;
            entry.1 += usize::from(rx.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.2 += usize::from(ry.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.3 += usize::from(rx.verdict != ry.verdict);
            self.tally.criterion(&rx.criterion_id, rx.value, ry.value);
        }
        if !x.pending.is_empty() || !y.pending.is_empty() {
            self.pending += 1;
            return;
        }
        let (a, b) = (x.score.unwrap_or(0.0), y.score.unwrap_or(0.0));
        let delta = b - a;
        let regression = self.tally.item(x.passed, y.passed, a, b);
        if delta.abs() > 1e-12 || x.passed != y.passed {
            self.changed += 1;
            if self.top > 0 {
                self.ranked.push(Changed {
                    id: id.to_owned(),
                    a,
                    b,
                    delta,
                    regression,
                });
                if self.ranked.len() > self.top {
                    self.ranked.pop();
                }
            }
        }
    }
}

impl Comparison {
    /// The items kept, in rank order (regressions first).
    pub fn ranked_items(&self) -> Vec<&Changed> {
        let mut all: Vec<&Changed> = self.ranked.iter().collect();
        all.sort();
        all
    }
}
