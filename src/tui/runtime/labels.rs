//! The runtime's work for labelling and judge trust: a label saved and undone in the
//! annotator's journal, who the annotator is, what an opened dataset brings for them, the
//! "labels next" plan (with people against people), and ranking and adopting judges for
//! the Calibrate view. Each reads or writes the workspace off the UI loop.

use crate::tui::msg::FailureKind;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::reads;
use super::{Runtime, Topic, misrouted, typed};
use crate::store::labels::{Journal, Op};
use crate::tui::data::{DatasetInfo, RunData};
use crate::tui::effect::Effect;
use crate::tui::msg::Msg;

/// How many items of the "labels next" order the Label pane keeps (its queue walks them in
/// turn; past them it goes on with the unlabelled items in order).
const PLAN_ITEMS: usize = 5000;

/// Why a label effect failed, worded once for the UI.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("the label was NOT saved: {0}")]
    Save(String),
    #[error("undo failed: {0}")]
    Undo(String),
    #[error("nothing adopted: {0}")]
    Adopt(String),
    #[error("the annotator was not remembered: {0}")]
    RememberAnnotator(String),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        match self {
            // A label or an undo: the person's work did not reach the disk.
            Failure::Save(_) | Failure::Undo(_) => FailureKind::Unwritten,
            Failure::Adopt(_) | Failure::RememberAnnotator(_) => FailureKind::Other,
        }
    }
}

impl Runtime {
    /// Carries out a label effect (`Topic::Labels`).
    pub(super) fn handle_labels(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::SaveLabel {
                dataset,
                item,
                criterion,
                verdict,
                note,
                rubric,
                rubric_version,
            } => {
                let op = Op::Set {
                    item: item.clone(),
                    criterion: criterion.clone(),
                    verdict: verdict.clone(),
                    note: note.clone(),
                    rubric,
                    rubric_version,
                };
                Some(
                    match self.with_journal(dataset, |j| j.append(op).map_err(|e| e.to_string())) {
                        Ok(seq) => Msg::LabelSaved {
                            seq,
                            item,
                            criterion,
                            verdict,
                            note,
                        },
                        Err(e) => Msg::LabelFailed(typed(&Failure::Save(e))),
                    },
                )
            }
            Effect::Undo {
                dataset,
                seq,
                item,
                criterion,
            } => Some(match self.undo(dataset, seq, &item, &criterion) {
                Ok(verdict) => Msg::LabelUndone {
                    item,
                    criterion,
                    verdict,
                },
                Err(e) => Msg::LabelFailed(typed(&Failure::Undo(e))),
            }),
            Effect::SetAnnotator { name, dataset } => self.set_annotator(name, dataset),
            Effect::Open { dataset } => {
                let d = &self.dataset(dataset)?;
                let run = reads::latest_run(&self.ws, &d.path).map(Arc::new);
                let rubric = reads::labelling_rubric(&self.ws, d, run.as_deref());
                Some(self.opened(dataset, d, run, rubric))
            }
            Effect::PlanLabels {
                dataset,
                annotator,
                labels_gen,
                between_top_two,
            } => Some(self.plan_labels(
                &self.dataset(dataset)?,
                dataset,
                annotator,
                labels_gen,
                between_top_two,
            )),
            Effect::Calibrate {
                dataset,
                annotator,
                labels_gen,
            } => Some(Msg::Calibrated {
                labels_gen,
                ranked: self
                    .calibration(&self.dataset(dataset)?, &annotator)
                    .map(Arc::new),
            }),
            Effect::Adopt {
                dataset,
                annotator,
                run_id,
            } => Some(self.adopt(&self.dataset(dataset)?, &annotator, &run_id)),
            other => Some(misrouted(Topic::Labels, &other)),
        }
    }

    /// Appends an undo of label `seq` and reads back what the cell holds now.
    fn undo(
        &self,
        dataset: usize,
        seq: u64,
        item: &str,
        criterion: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        self.with_journal(dataset, |j| {
            j.append(Op::Undo { undoes: seq })
                .map_err(|e| e.to_string())?;
            let (events, _) = crate::store::labels::read(j.path()).map_err(|e| e.to_string())?;
            let now = crate::store::labels::fold(&events);
            Ok(now
                .get(&(item.to_owned(), criterion.to_owned()))
                .map(|l| l.verdict.clone()))
        })
    }

    /// Labels from now on are `name`'s; with a dataset open, it opens again as theirs.
    fn set_annotator(&self, name: String, dataset: Option<usize>) -> Option<Msg> {
        // Adjudicating is a mode, not who the user is: the UI comes back as them.
        if name != crate::store::labels::ADJUDICATED
            && let Err(e) = crate::tui::ui_state::remember_annotator(&self.ws, &name)
        {
            tracing::warn!("{}", Failure::RememberAnnotator(e.to_string()));
        }
        if let Ok(mut a) = self.annotator.lock() {
            *a = name;
        }
        // The next label opens this annotator's journal.
        if let Ok(mut j) = self.journal.lock() {
            *j = None;
        }
        let dataset = dataset?;
        let d = &self.dataset(dataset)?;
        let run = reads::latest_run(&self.ws, &d.path).map(Arc::new);
        Some(self.opened(dataset, d, run, None))
    }

    /// Runs `f` on the annotator's journal of `dataset`, opening it first when another one
    /// (or none) is open.
    fn with_journal<T>(
        &self,
        dataset: usize,
        f: impl FnOnce(&mut Journal) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut slot = self
            .journal
            .lock()
            .map_err(|_| "the label journal is unavailable")?;
        if slot.as_ref().is_none_or(|(d, _)| *d != dataset) {
            let d = &self.dataset(dataset).ok_or("no such dataset")?;
            *slot = None; // release the previous journal's lock first
            let j = Journal::open(&self.ws.labels_dir(), &d.key, &self.annotator())
                .map_err(|e| e.to_string())?;
            *slot = Some((dataset, j));
        }
        let (_, j) = slot.as_mut().ok_or("the label journal is unavailable")?;
        f(j)
    }

    /// What belongs to an open dataset for the annotator: their labels and notes, everyone
    /// with a journal, the items assigned to them, and — while adjudicating — every other
    /// annotator's labels.
    fn opened(
        &self,
        dataset: usize,
        d: &DatasetInfo,
        run: Option<Arc<RunData>>,
        rubric: Option<Arc<crate::model::Rubric>>,
    ) -> Msg {
        let annotator = self.annotator();
        let labels_dir = self.ws.labels_dir();
        let annotators = crate::store::labels::annotators(&labels_dir, &d.key);
        let peers = if annotator == crate::store::labels::ADJUDICATED {
            annotators
                .iter()
                .filter(|a| **a != annotator)
                .map(|a| (a.clone(), reads::labels(&self.ws, &d.key, a)))
                .collect()
        } else {
            BTreeMap::new()
        };
        let assignment = match crate::store::assignments::read(&labels_dir, &d.key) {
            Ok(a) => a.and_then(|a| a.of(&annotator)),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        };
        let (labels, notes) = reads::labels_and_notes(&self.ws, &d.key, &annotator);
        Msg::Opened {
            dataset,
            run,
            rubric,
            labels,
            notes,
            annotators,
            peers,
            assignment,
        }
    }

    /// The dataset's runs of one rubric ranked against `annotator`'s labels.
    fn calibration(
        &self,
        d: &DatasetInfo,
        annotator: &str,
    ) -> Result<crate::run::calibration::Calibration, String> {
        let runs = crate::run::calibration::dataset_runs(&self.ws, &d.path);
        if runs.is_empty() {
            return Err("no run of one rubric over this dataset yet: grade it (G), once per judge to compare".into());
        }
        crate::run::calibration::rank(
            &self.ws,
            &d.key,
            annotator,
            runs,
            Some(&crate::metrics::Bootstrap::default()),
        )
        .map_err(|e| e.to_string())
    }

    /// The "labels next" plan for `annotator` (between the two runs that agree best with
    /// their labels when `between_top_two`), and people against people once two people have
    /// labels.
    fn plan_labels(
        &self,
        d: &DatasetInfo,
        dataset: usize,
        annotator: String,
        labels_gen: u64,
        between_top_two: bool,
    ) -> Msg {
        // Three times the last plan's time since it finished (at most 10 s): labels typed
        // meanwhile are read with the rest.
        let (finished, took) = self.plan_cost.lock().map_or((None, Duration::ZERO), |c| *c);
        if let Some(done) = finished {
            let rest = (took * 3)
                .min(Duration::from_secs(10))
                .saturating_sub(done.elapsed());
            if !rest.is_zero() {
                std::thread::sleep(rest);
            }
        }
        let start = Instant::now();
        let top_two = between_top_two.then(|| {
            crate::run::calibration::top_two(&self.ws, &d.path, &d.key, &annotator)
                .map_err(|e| e.to_string())
        });
        let between: Vec<String> = match &top_two {
            Some(Ok(two)) => two.iter().map(|(_, id)| id.clone()).collect(),
            _ => Vec::new(),
        };
        let plan = match &top_two {
            Some(Err(e)) => Err(e.clone()),
            _ => crate::run::label_next::plan(
                &self.ws,
                &d.path,
                &annotator,
                PLAN_ITEMS,
                crate::run::label_next::DEFAULT_TARGET,
                &crate::metrics::Bootstrap::default(),
                &between,
            )
            .map(Arc::new)
            .map_err(|e| e.to_string()),
        };
        // Said even when there are not two: the plan held is the one asked for.
        let between_top_two = top_two.map(|t| match t {
            Ok([(a, _), (b, _)]) => [a, b],
            Err(_) => [String::new(), String::new()],
        });
        let people = crate::run::people::people(&self.ws, &d.path, None)
            .ok()
            .filter(|r| !r.pairs.is_empty())
            .map(Arc::new);
        if let Ok(mut cost) = self.plan_cost.lock() {
            *cost = (Some(Instant::now()), start.elapsed());
        }
        Msg::LabelPlan {
            dataset,
            annotator,
            labels_gen,
            between_top_two,
            plan,
            people,
        }
    }

    /// Writes the judge of run `run_id`, ranked against `annotator`'s labels, into its
    /// rubric as the next registry version; what happened, to tell.
    fn adopt(&self, d: &DatasetInfo, annotator: &str, run_id: &str) -> Msg {
        let adopted = self.calibration(d, annotator).and_then(|cal| {
            let chosen = cal
                .candidates
                .iter()
                .find(|c| c.agreement.manifest.id == run_id)
                .ok_or_else(|| format!("run {run_id} is no longer a candidate"))?;
            crate::run::calibration::adopt(&self.ws, &cal, chosen).map_err(|e| e.to_string())
        });
        Msg::Info(match adopted {
            Ok(a) => format!(
                "adopted: {}@{} now judges with {} (the figures are in its history)",
                a.rubric, a.version, a.model
            ),
            Err(e) => Failure::Adopt(e).to_string(),
        })
    }
}
