//! The figures the Results pane's criteria tables show for a run — each criterion's
//! full-marks rate and its agreement with the annotator's labels (the report `rubricate
//! metrics` prints), and between two runs how many verdicts changed per criterion. Worked
//! out in `update` when the run or the labels change, never per frame: a run may hold a
//! million items.

use std::collections::HashMap;
use std::sync::Arc;

use super::data::{Labels, RunData};
use crate::metrics::{MetricsReport, judge_vs_human};

/// One run's per-criterion figures, by the criterion's position in the run's rubric.
#[derive(Debug, Clone)]
pub struct RunStats {
    pub report: MetricsReport,
    /// Share of items with full marks on each criterion.
    pub full: Vec<f64>,
    /// Each criterion tag's mean score over the items, with its interval.
    pub tags: Vec<crate::run::TagScore>,
}

/// Works a run's figures out: the judge's verdicts on the labelled cells (found by id,
/// one look-up per label), then the metrics report. The rest was worked out as the run
/// was read.
pub fn run_stats(run: &RunData, labels: &Labels) -> RunStats {
    let mut judged = std::collections::BTreeMap::new();
    for (item, criterion) in labels.keys() {
        let Some(i) = run.find(item) else { continue };
        if let Some(v) = run.cell_of(i, criterion).verdict() {
            judged.insert((item.clone(), criterion.clone()), v.clone());
        }
    }
    let human = judge_vs_human::human_verdicts(
        &run.rubric,
        labels.iter().map(|(cell, v)| (cell.clone(), v)),
    );
    RunStats {
        report: judge_vs_human::agreement(&run.rubric, &human, &judged, None),
        full: run.figures.full.clone(),
        tags: run.figures.tags.clone(),
    }
}

/// Per criterion id, the items whose verdict in `b` differs from the one they had in `a`
/// (items `a` did not grade on it are not counted).
pub fn changed_verdicts(a: &RunData, b: &RunData) -> Changed {
    let mut changed = HashMap::new();
    // Each of A's criteria, by its position in B's rubric.
    let in_b: Vec<Option<usize>> = a
        .rubric
        .criteria
        .iter()
        .map(|c| b.criterion(&c.id))
        .collect();
    for ib in 0..b.len() {
        let Some(ia) = a.find(b.id(ib)) else {
            continue;
        };
        for (ca, c) in a.rubric.criteria.iter().enumerate() {
            let Some(va) = a.cell(ia, ca).verdict() else {
                continue;
            };
            let after = in_b[ca].and_then(|cb| b.cell(ib, cb).verdict());
            if after != Some(va) {
                *changed.entry(c.id.clone()).or_insert(0) += 1;
            }
        }
    }
    changed
}

/// Per criterion id, how many verdicts changed between two runs.
pub type Changed = HashMap<String, usize>;

/// A run as a cache key: its identity (runs are shared, never changed in place) and the
/// labels' generation.
type Key = (usize, u64);

fn key(run: &RunData, labels_gen: u64) -> Key {
    (std::ptr::from_ref(run) as usize, labels_gen)
}

/// The figures of the runs on screen (the run shown and, comparing, side A).
#[derive(Debug, Default, Clone)]
pub struct StatsCache {
    runs: Vec<(Key, Arc<RunStats>)>,
    changed: Option<((usize, usize), Arc<Changed>)>,
}

impl StatsCache {
    /// Works out what is missing for `runs` (and, with two, what changed from the first to
    /// the second); drops what is no longer shown.
    pub fn refresh(&mut self, runs: &[&RunData], labels: &Labels, labels_gen: u64) {
        let mut kept = Vec::with_capacity(runs.len());
        for run in runs {
            let k = key(run, labels_gen);
            let stats = self
                .runs
                .iter()
                .find(|(have, _)| *have == k)
                .map_or_else(|| Arc::new(run_stats(run, labels)), |(_, s)| Arc::clone(s));
            kept.push((k, stats));
        }
        self.runs = kept;
        if let [a, b] = runs {
            let k = (
                std::ptr::from_ref(*a) as usize,
                std::ptr::from_ref(*b) as usize,
            );
            if self.changed.as_ref().map(|(have, _)| *have) != Some(k) {
                self.changed = Some((k, Arc::new(changed_verdicts(a, b))));
            }
        } else {
            self.changed = None;
        }
    }

    /// A run's figures, worked out now if `update` has not (they are never stale).
    pub fn stats(&self, run: &RunData, labels: &Labels, labels_gen: u64) -> Arc<RunStats> {
        let k = key(run, labels_gen);
        self.runs
            .iter()
            .find(|(have, _)| *have == k)
            .map_or_else(|| Arc::new(run_stats(run, labels)), |(_, s)| Arc::clone(s))
    }

    /// What changed from `a` to `b`, per criterion id.
    pub fn changed(&self, a: &RunData, b: &RunData) -> Arc<Changed> {
        let k = (
            std::ptr::from_ref(a) as usize,
            std::ptr::from_ref(b) as usize,
        );
        match &self.changed {
            Some((have, c)) if *have == k => Arc::clone(c),
            _ => Arc::new(changed_verdicts(a, b)),
        }
    }
}
