//! The run's pause gate: every attempt of every call (the first, each retry, repair
//! requests) waits here before it takes a concurrency slot and is sent. Paused, no new
//! request leaves; stopped, waiting calls end with [`LlmError::Cancelled`]. Requests already
//! sent always finish. Open, passing costs one atomic load.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use tokio::sync::Notify;

use super::LlmError;

const OPEN: u8 = 0;
const PAUSED: u8 = 1;
const STOPPED: u8 = 2;

/// Shared by every client of a run (clones are the same gate).
#[derive(Debug, Clone, Default)]
pub struct Gate {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    state: AtomicU8,
    changed: Notify,
    /// Requests being sent now.
    in_flight: AtomicUsize,
    /// Calls held at the gate now.
    waiting: AtomicUsize,
}

impl Gate {
    /// An open gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// No new request starts until [`resume`](Self::resume) (requests already sent finish).
    /// Does nothing once stopped.
    pub fn pause(&self) {
        let _ =
            self.inner
                .state
                .compare_exchange(OPEN, PAUSED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Lets held calls go. Does nothing once stopped.
    pub fn resume(&self) {
        if self
            .inner
            .state
            .compare_exchange(PAUSED, OPEN, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.inner.changed.notify_waiters();
        }
    }

    /// Cancels for good: no new request starts, and every call waiting (at the gate, for a
    /// slot, or between retries) ends with [`LlmError::Cancelled`].
    pub fn stop(&self) {
        self.inner.state.store(STOPPED, Ordering::Release);
        self.inner.changed.notify_waiters();
    }

    /// Paused: calls wait before they are sent.
    pub fn is_paused(&self) -> bool {
        self.state() == PAUSED
    }

    /// Stopped for good: calls end as cancelled.
    pub fn is_stopped(&self) -> bool {
        self.state() == STOPPED
    }

    /// Requests being sent now by the clients using this gate.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::Acquire)
    }

    /// Calls held at the gate now (paused).
    pub fn waiting(&self) -> usize {
        self.inner.waiting.load(Ordering::Acquire)
    }

    fn state(&self) -> u8 {
        self.inner.state.load(Ordering::Acquire)
    }

    pub(crate) fn is_open(&self) -> bool {
        self.state() == OPEN
    }

    /// Passes an open gate at once, waits while it is paused, and fails once it is stopped.
    pub(crate) async fn wait(&self) -> Result<(), LlmError> {
        match self.state() {
            OPEN => return Ok(()),
            STOPPED => return Err(LlmError::Cancelled),
            _ => {}
        }
        self.inner.waiting.fetch_add(1, Ordering::AcqRel);
        let _held = Held(&self.inner.waiting);
        loop {
            // Registered before the state is read again, so no change is missed.
            let mut changed = pin!(self.inner.changed.notified());
            changed.as_mut().enable();
            match self.state() {
                OPEN => return Ok(()),
                STOPPED => return Err(LlmError::Cancelled),
                _ => changed.await,
            }
        }
    }

    /// Resolves once the gate is stopped.
    pub(crate) async fn stopped(&self) {
        loop {
            let mut changed = pin!(self.inner.changed.notified());
            changed.as_mut().enable();
            if self.state() == STOPPED {
                return;
            }
            changed.await;
        }
    }

    /// Counts a request in flight until the guard is dropped.
    pub(crate) fn sending(&self) -> Sending<'_> {
        self.inner.in_flight.fetch_add(1, Ordering::AcqRel);
        Sending(&self.inner.in_flight)
    }
}

/// A request in flight; uncounted when dropped.
#[derive(Debug)]
pub(crate) struct Sending<'a>(&'a AtomicUsize);

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A call held at the gate; uncounted when it leaves (or is dropped).
struct Held<'a>(&'a AtomicUsize);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paused_calls_wait_resumed_they_go_stopped_they_are_cancelled() {
        let gate = Gate::new();
        assert!(gate.wait().await.is_ok(), "open by default");
        gate.pause();
        assert!(gate.is_paused());
        let waiter = tokio::spawn({
            let gate = gate.clone();
            async move { gate.wait().await }
        });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        gate.resume();
        assert_eq!(waiter.await.ok(), Some(Ok(())));
        assert_eq!(gate.waiting(), 0);

        gate.pause();
        let waiter = tokio::spawn({
            let gate = gate.clone();
            async move { gate.wait().await }
        });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        gate.stop();
        assert_eq!(waiter.await.ok(), Some(Err(LlmError::Cancelled)));
        gate.resume();
        assert!(gate.is_stopped(), "a stop is for good");
        assert_eq!(gate.wait().await, Err(LlmError::Cancelled));
        gate.stopped().await;
    }

    #[test]
    fn in_flight_counts_requests_being_sent() {
        let gate = Gate::new();
        let other = gate.clone();
        let a = gate.sending();
        let b = other.sending();
        assert_eq!(gate.in_flight(), 2);
        drop(a);
        assert_eq!(other.in_flight(), 1);
        drop(b);
        assert_eq!(gate.in_flight(), 0);
    }
}
