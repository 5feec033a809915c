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

/// Works a run's figures out: one pass over its cells, then the metrics report.
pub fn run_stats(run: &RunData, labels: &Labels) -> RunStats {
    let positions = run.rubric.positions();
    let mut full_count = vec![0usize; run.rubric.criteria.len()];
    let mut judged = std::collections::BTreeMap::new();
    let mut tags: std::collections::BTreeMap<String, Vec<f64>> = std::collections::BTreeMap::new();
    // In dataset order, so the bootstrap's interval is the same every time.
    for r in run.order.iter().filter_map(|id| run.by_item.get(id)) {
        for (t, v) in &r.tags {
            tags.entry(t.clone()).or_default().push(*v);
        }
    }
    for (id, r) in &run.by_item {
        for x in &r.results {
            if let Some(&i) = positions.get(x.criterion_id.as_str())
                && x.value.is_some_and(|v| v >= 1.0 - 1e-9)
            {
                full_count[i] += 1;
            }
            // Only labelled cells are compared: the rest of the run is not held twice.
            if let Some(v) = &x.verdict {
                let cell = (id.clone(), x.criterion_id.clone());
                if labels.contains_key(&cell) {
                    judged.insert(cell, v.clone());
                }
            }
        }
    }
    let items = run.by_item.len();
    #[allow(clippy::cast_precision_loss)]
    let full = full_count
        .into_iter()
        .map(|n| {
            if items == 0 {
                0.0
            } else {
                n as f64 / items as f64
            }
        })
        .collect();
    let human = judge_vs_human::human_verdicts(
        &run.rubric,
        labels.iter().map(|(cell, v)| (cell.clone(), v)),
    );
    RunStats {
        report: judge_vs_human::agreement(&run.rubric, &human, &judged, None),
        full,
        tags: crate::run::tag_scores(&tags, 1000),
    }
}

/// Per criterion id, the items whose verdict in `b` differs from the one they had in `a`
/// (items `a` did not grade on it are not counted).
pub fn changed_verdicts(a: &RunData, b: &RunData) -> Changed {
    let mut changed = HashMap::new();
    for (id, rb) in &b.by_item {
        let Some(ra) = a.by_item.get(id) else {
            continue;
        };
        let after: HashMap<&str, _> = rb
            .results
            .iter()
            .map(|x| (x.criterion_id.as_str(), x.verdict.as_ref()))
            .collect();
        for x in &ra.results {
            if let Some(va) = &x.verdict
                && after.get(x.criterion_id.as_str()).copied().flatten() != Some(va)
            {
                *changed.entry(x.criterion_id.clone()).or_insert(0) += 1;
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
