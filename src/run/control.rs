//! Pause, resume and cancel for a run, shared by its front end and the loop: pausing
//! closes the gate every judge call and every item start waits at (calls already sent
//! finish: at most the concurrency limit more); cancelling stops both for good, and the
//! cells never graded stay out of the journal, so the run can be resumed.

use crate::engine::CancelToken;
use crate::llm::Gate;

#[derive(Debug, Clone, Default)]
pub struct Control {
    cancel: CancelToken,
    gate: Gate,
}

impl Control {
    pub fn pause(&self) {
        self.gate.pause();
    }

    pub fn resume(&self) {
        self.gate.resume();
    }

    pub fn is_paused(&self) -> bool {
        self.gate.is_paused()
    }

    /// No new item or call starts; calls in flight finish.
    pub fn cancel(&self) {
        self.cancel.cancel();
        self.gate.stop();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Judge calls sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.gate.in_flight()
    }

    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}
