//! The runtime's side of batch runs in the UI: start one (recorded, then its first step
//! sends the judge calls to the providers' batch engines) and watch it — a step now, then
//! one every `judge.batch_poll` seconds until it is finished, fails, or the UI quits —
//! telling the UI after each step.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::app::Msg;
use super::effects::Runtime;
use super::panes::grade::BatchShown;

/// Seconds between steps of a watched batch run when the workspace sets none.
const DEFAULT_POLL: f64 = 60.0;

impl Runtime {
    /// Starts a batch run of `dataset` and watches it.
    pub(super) fn start_batch(
        &self,
        dataset: usize,
        spec: &super::run::RunSpec<'_>,
    ) -> Option<Msg> {
        let d = self.dataset(dataset)?;
        match super::run::start_batch(&self.ws, &d, spec) {
            Ok(run_id) => self.watch_batch(dataset, &run_id),
            Err(e) => Some(Msg::Error(format!("the batch run did not start: {e}"))),
        }
    }

    /// Steps the batch run `run_id` now and then every poll interval until it is finished,
    /// a step fails, or the UI quits. A run already watched is only woken (asked now).
    pub(super) fn watch_batch(&self, dataset: usize, run_id: &str) -> Option<Msg> {
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
            let result = super::run::step_batch(&self.ws, run_id)
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
