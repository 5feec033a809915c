//! The figures the Results pane's criteria tables show for a run — each criterion's
//! full-marks rate and its agreement with the annotator's labels (the report `rubricate
//! metrics` prints). The agreement comes from the run joined with the labels by a pass in
//! the runtime ([`LabelJoin`]: the judge's verdicts on the labelled cells only); it is asked
//! for when the run or the labels change, and worked into figures once when it arrives.

use std::sync::Arc;

use super::app::Effect;
use super::data::{Labels, RunData};
use super::run_data::ItemDetail;
use super::run_scan::LabelJoin;
use crate::metrics::{LabelPair, MetricsReport, judge_vs_human};

/// One run's per-criterion figures, by the criterion's position in the run's rubric.
#[derive(Debug, Clone)]
pub struct RunStats {
    pub report: MetricsReport,
    /// Share of items with full marks on each criterion.
    pub full: Vec<f64>,
    /// Each criterion tag's mean score over the items, with its interval.
    pub tags: Vec<crate::run::TagScore>,
    /// The mean score and pass rate corrected by the labelled items (none while the join
    /// is under way, or with fewer than two items labelled on every criterion).
    pub corrected: crate::run::agreement::CorrectedFigures,
}

/// A run's figures: its agreement with the labels from its join with them (the judge's
/// verdicts on the labelled items; none while the join is under way), the rest from its
/// pass. The pairs borrow the cells from the labels (no second map of their keys).
pub fn run_stats(run: &RunData, labels: &Labels, join: Option<&LabelJoin>) -> RunStats {
    // A pairwise run is measured on people's preferences, one per written criterion.
    let rubric = crate::metrics::preference::measured(&run.rubric);
    // In cell order, as `metrics` pairs them.
    let pairs: Vec<(
        &(String, String),
        crate::model::Verdict,
        &crate::model::Verdict,
    )> = join
        .map(|join| {
            labels
                .iter()
                .filter_map(|(cell, h)| {
                    let j = join.verdict(&cell.0, &cell.1)?;
                    let c = rubric.criteria.iter().find(|c| c.id == cell.1)?;
                    Some((cell, judge_vs_human::label_verdict(c, h)?, j))
                })
                .collect()
        })
        .unwrap_or_default();
    let report = judge_vs_human::agreement_of(
        &rubric,
        |criterion| {
            pairs
                .iter()
                .filter(|(cell, _, _)| cell.1 == criterion)
                .map(|(cell, human, judge)| LabelPair {
                    item: &cell.0,
                    human,
                    judge,
                })
                .collect()
        },
        None,
    );
    RunStats {
        report,
        full: run.figures.full.clone(),
        tags: run.figures.tags.clone(),
        corrected: join.map(|j| j.correcting.figures()).unwrap_or_default(),
    }
}

/// A run's join with the labels and the figures worked out from it.
#[derive(Debug, Clone)]
struct Joined {
    join: Arc<LabelJoin>,
    stats: Arc<RunStats>,
}

/// The joins of the runs the UI shows (the dataset's latest, both sides of a comparison)
/// with the labels, and their figures.
#[derive(Debug, Default, Clone)]
pub struct StatsCache {
    runs: Vec<Joined>,
    /// Joins asked for and not answered yet: (run, labels' generation).
    pending: Vec<(String, u64)>,
    /// A join that failed (not asked again for that generation).
    failed: Option<(String, u64)>,
}

impl StatsCache {
    /// The joins to ask for: each of `runs` without one for this generation of the labels
    /// (one at a time per run: a newer generation is asked for when the older answers).
    /// Joins of runs no longer shown are dropped.
    pub fn want(
        &mut self,
        runs: &[&RunData],
        labels: &Arc<Labels>,
        labels_gen: u64,
    ) -> Vec<Effect> {
        self.runs
            .retain(|j| runs.iter().any(|r| r.manifest.id == j.join.run_id));
        let mut out = Vec::new();
        for run in runs {
            let id = &run.manifest.id;
            let fresh = self
                .runs
                .iter()
                .any(|j| j.join.run_id == *id && j.join.labels_gen == labels_gen);
            let asked = self.pending.iter().any(|(r, _)| r == id);
            let failed = self.failed.as_ref() == Some(&(id.clone(), labels_gen));
            if fresh || asked || failed {
                continue;
            }
            self.pending.push((id.clone(), labels_gen));
            out.push(Effect::JoinLabels {
                run_id: id.clone(),
                labels: Arc::clone(labels),
                labels_gen,
            });
        }
        out
    }

    /// A join came back: kept (with its figures) while `run` is its run.
    pub fn joined(
        &mut self,
        run: Option<&RunData>,
        labels: &Labels,
        run_id: &str,
        labels_gen: u64,
        join: Result<Arc<LabelJoin>, String>,
    ) -> Result<(), String> {
        self.pending.retain(|(r, _)| r != run_id);
        let join = join.inspect_err(|_| self.failed = Some((run_id.to_owned(), labels_gen)))?;
        let Some(run) = run.filter(|r| r.manifest.id == run_id) else {
            return Ok(());
        };
        let stats = Arc::new(run_stats(run, labels, Some(&join)));
        self.runs.retain(|j| j.join.run_id != run_id);
        self.runs.push(Joined { join, stats });
        Ok(())
    }

    /// One label changed (generation `labels_gen`) on an item whose cells are held: the
    /// run's join of the generation before is brought up to date for that item without a
    /// pass (labelling a large run does not read it again per label). Otherwise the join is
    /// left to be asked for again.
    pub fn patch(
        &mut self,
        run: &RunData,
        labels: &Labels,
        labels_gen: u64,
        position: usize,
        item: &ItemDetail,
    ) {
        let Some(j) = self
            .runs
            .iter_mut()
            .find(|j| j.join.run_id == run.manifest.id && j.join.labels_gen + 1 == labels_gen)
        else {
            return;
        };
        let join = Arc::make_mut(&mut j.join);
        let cells = crate::metrics::preference::compared_cells(&run.rubric, &item.cells);
        let cells = cells.iter().map(|(c, v)| (c.as_str(), v.as_ref()));
        let differs = join.add_item(position, &item.id, cells, labels);
        // An item with cells still to come counts in no figure yet.
        if run
            .rubric
            .criteria
            .iter()
            .all(|c| item.cell(&c.id).is_some())
        {
            let measured = crate::metrics::preference::measured(&run.rubric);
            join.correcting
                .relabel(Some(&measured), &item.id, item.score, item.passed, labels);
        }
        match (join.disagree.binary_search(&position), differs) {
            (Err(at), true) => join.disagree.insert(at, position),
            (Ok(at), false) => {
                join.disagree.remove(at);
            }
            _ => {}
        }
        join.labels_gen = labels_gen;
        j.stats = Arc::new(run_stats(run, labels, Some(join)));
    }

    /// Whether a join is under way (the "labels next" plan waits for it: the two passes
    /// would hold their work at once).
    pub fn joining(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The run's latest join with the labels (perhaps of an older generation while a newer
    /// one is under way).
    pub fn join(&self, run_id: &str) -> Option<&LabelJoin> {
        self.runs
            .iter()
            .find(|j| j.join.run_id == run_id)
            .map(|j| &*j.join)
    }

    /// A run's figures: from its latest join, or without agreement until one arrives.
    pub fn stats(&self, run: &RunData, labels: &Labels) -> Arc<RunStats> {
        self.runs
            .iter()
            .find(|j| j.join.run_id == run.manifest.id)
            .map_or_else(
                || Arc::new(run_stats(run, labels, None)),
                |j| Arc::clone(&j.stats),
            )
    }
}
