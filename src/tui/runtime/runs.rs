//! The runtime's live grading: what a run would cost, a run started, continued, paused,
//! cancelled, and chosen cells graded again. The sessions of the run engine behind them are
//! `sessions.rs`'s; this file turns the effects into calls and their failures into words.

use super::sessions::{self, RunSpec};
use super::{Runtime, Topic, failed, misrouted};
use crate::tui::effect::Effect;
use crate::tui::msg::FailureKind;
use crate::tui::msg::Msg;

/// Why a grading effect failed, worded once for the UI.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("the run did not start: {0}")]
    Start(String),
    #[error("run {run_id} did not continue: {error}")]
    Continue { run_id: String, error: String },
    /// A retry's own words (its run is no longer open here, or it did not continue).
    #[error("{0}")]
    Retry(String),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        FailureKind::Other
    }
}

impl Runtime {
    /// Carries out a grading effect (`Topic::Runs`).
    pub(super) fn handle_runs(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::Estimate {
                dataset,
                rubric,
                judge,
                strategy,
                max_cost,
                after,
            } => {
                let spec = RunSpec::chosen(rubric.as_deref(), judge.as_deref(), strategy, max_cost);
                self.estimate(dataset, &spec)
                    .map(|result| Msg::Estimate { result, after })
            }
            Effect::StartRun {
                tag,
                dataset,
                rubric,
                judge,
                strategy,
                max_cost,
                changed_only,
                name,
            } => {
                let spec = RunSpec {
                    changed_only,
                    name: name.as_deref(),
                    ..RunSpec::chosen(rubric.as_deref(), judge.as_deref(), strategy, max_cost)
                };
                self.start_run(tag, dataset, &spec)
            }
            Effect::ResumeRun {
                tag,
                dataset,
                run_id,
                max_cost,
            } => self.resume_run(tag, dataset, run_id, max_cost),
            Effect::PauseRun { tag, paused } => {
                self.runs.pause(tag, paused, self.ui());
                None
            }
            Effect::CancelRun { tag } => {
                self.runs.cancel(tag);
                None
            }
            Effect::RetryCells {
                tag,
                cells,
                max_cost,
            } => {
                let tx = self.ui()?;
                self.runs
                    .retry(&self.ws, tag, &cells, max_cost, tx)
                    .err()
                    .map(|e| failed(&Failure::Retry(e)))
            }
            other => Some(misrouted(Topic::Runs, &other)),
        }
    }

    /// What grading `dataset` as `spec` says would cost; progress goes to the UI as the
    /// items are walked, and a quit stops the walk.
    fn estimate(
        &self,
        dataset: usize,
        spec: &RunSpec<'_>,
    ) -> Option<Result<crate::run::estimate::Estimate, String>> {
        let d = &self.dataset(dataset)?;
        let ui = self.ui();
        let mut progress = |items| {
            if let Some(ui) = &ui {
                let _ = ui.try_send(Msg::EstimateProgress(items));
            }
        };
        Some(sessions::estimate(
            &self.ws,
            d,
            spec,
            &self.quitting,
            &mut progress,
        ))
    }

    /// Starts grading `dataset`; its events go to the UI tagged `tag`.
    fn start_run(&self, tag: u64, dataset: usize, spec: &RunSpec<'_>) -> Option<Msg> {
        let d = &self.dataset(dataset)?;
        let tx = self.ui()?;
        match sessions::start(&self.ws, tag, d, spec, tx) {
            Ok((control, id)) => {
                self.runs.insert(tag, control, id, d.clone());
                None
            }
            Err(e) => Some(failed(&Failure::Start(e))),
        }
    }

    /// Continues the saved run `run_id` of `dataset` within the set-up's cost limit.
    fn resume_run(
        &self,
        tag: u64,
        dataset: usize,
        run_id: String,
        max_cost: Option<f64>,
    ) -> Option<Msg> {
        let d = &self.dataset(dataset)?;
        let tx = self.ui()?;
        match sessions::reopen(&self.ws, tag, d, &run_id, &[], max_cost, tx) {
            Ok(control) => {
                self.runs.insert(tag, control, run_id, d.clone());
                None
            }
            Err(error) => Some(failed(&Failure::Continue { run_id, error })),
        }
    }
}
