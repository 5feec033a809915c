//! The runtime's side of batch runs in the UI: start one (recorded, then its first step
//! sends the judge calls to the providers' batch engines) and watch it — a step now, then
//! one every `judge.batch_poll` seconds until it is finished, fails, or the UI quits —
//! telling the UI after each step.

use crate::tui::msg::FailureKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::sessions::{self, RunSpec};
use super::{Runtime, Topic, failed, misrouted};
use crate::tui::effect::Effect;
use crate::tui::msg::BatchShown;
use crate::tui::msg::Msg;

/// Seconds between steps of a watched batch run when the workspace sets none.
const DEFAULT_POLL: f64 = 60.0;

/// Why a batch effect failed, worded once for the UI.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("the batch run did not start: {0}")]
    Start(#[source] crate::run::Error),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        let Failure::Start(e) = self;
        FailureKind::of_run(e)
    }
}

impl Runtime {
    /// Carries out a batch effect (`Topic::Batch`).
    pub(super) fn handle_batch(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::StartBatch {
                dataset,
                rubric,
                judge,
                strategy,
                name,
            } => self.start_batch(
                dataset,
                &RunSpec {
                    name: name.as_deref(),
                    ..RunSpec::chosen(rubric.as_deref(), judge.as_deref(), strategy, None)
                },
            ),
            Effect::WatchBatch { dataset, run_id } => self.watch_batch(dataset, &run_id),
            other => Some(misrouted(Topic::Batch, &other)),
        }
    }

    /// Starts a batch run of `dataset` and watches it.
    fn start_batch(&self, dataset: usize, spec: &RunSpec<'_>) -> Option<Msg> {
        let d = self.dataset(dataset)?;
        match sessions::start_batch(&self.ws, &d, spec) {
            Ok(run_id) => self.watch_batch(dataset, &run_id),
            Err(e) => Some(failed(&Failure::Start(e))),
        }
    }

    /// Steps the batch run `run_id` now and then every poll interval until it is finished,
    /// a step fails, or the UI quits. A run already watched is only woken (asked now).
    fn watch_batch(&self, dataset: usize, run_id: &str) -> Option<Msg> {
        let wake = {
            let mut watched = self.batch_watch.lock().ok()?;
            if let Some(wake) = watched.get(run_id) {
                wake.store(true, Ordering::SeqCst);
                return Some(Msg::Info(format!(
                    "asking about run {run_id}'s batches now"
                )));
            }
            let wake = Arc::new(AtomicBool::new(false));
            watched.insert(run_id.to_owned(), Arc::clone(&wake));
            wake
        };
        let poll = Duration::from_secs_f64(self.ws.config.judge.batch_poll.unwrap_or(DEFAULT_POLL));
        let tx = self.ui();
        let last = loop {
            let result = sessions::step_batch(&self.ws, run_id)
                .map(|r| BatchShown::of(&r))
                .map_err(|e| e.to_string());
            let done = result.as_ref().map_or(true, |s| s.finished || s.stuck);
            let msg = Msg::BatchStepped {
                dataset,
                run_id: run_id.to_owned(),
                result,
            };
            if done || self.quitting.load(Ordering::SeqCst) {
                break Some(msg);
            }
            if let Some(tx) = &tx {
                let _ = tx.blocking_send(msg);
            }
            let until = Instant::now() + poll;
            while Instant::now() < until
                && !self.quitting.load(Ordering::SeqCst)
                && !wake.swap(false, Ordering::SeqCst)
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            if self.quitting.load(Ordering::SeqCst) {
                break None;
            }
        };
        if let Ok(mut watched) = self.batch_watch.lock() {
            watched.remove(run_id);
        }
        last
    }
}
