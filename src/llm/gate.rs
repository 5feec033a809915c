//! The run's gate: every judge call waits here before it is sent, so that pausing a run
//! means no new call starts (calls already sent finish), and stopping it means waiting
//! calls give up. Open, it costs one atomic load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::watch;

#[derive(Debug, Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// `true` while paused.
    paused: watch::Sender<bool>,
    stopped: AtomicBool,
    in_flight: AtomicUsize,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            inner: Arc::new(Inner {
                paused: watch::Sender::new(false),
                stopped: AtomicBool::new(false),
                in_flight: AtomicUsize::new(0),
            }),
        }
    }
}

/// The gate was stopped: the call was never sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// A call being sent; counted in `in_flight` until dropped.
#[derive(Debug)]
pub struct Passage {
    inner: Arc<Inner>,
}

impl Drop for Passage {
    fn drop(&mut self) {
        self.inner.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    pub fn pause(&self) {
        self.inner.paused.send_replace(true);
    }

    pub fn resume(&self) {
        self.inner.paused.send_replace(false);
    }

    pub fn is_paused(&self) -> bool {
        *self.inner.paused.borrow()
    }

    /// No call starts from now on; those waiting return [`Stopped`].
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        // Wake the waiters so they see the stop.
        self.inner.paused.send_replace(false);
    }

    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Calls sent through this gate and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// Waits while paused; then the call may go (and counts as in flight until the
    /// passage is dropped).
    pub async fn pass(&self) -> Result<Passage, Stopped> {
        self.wait().await?;
        self.inner.in_flight.fetch_add(1, Ordering::SeqCst);
        Ok(Passage {
            inner: Arc::clone(&self.inner),
        })
    }

    /// Waits while paused, without counting a call (an item about to start).
    pub async fn wait(&self) -> Result<(), Stopped> {
        let mut rx = self.inner.paused.subscribe();
        loop {
            if self.is_stopped() {
                return Err(Stopped);
            }
            if !*rx.borrow_and_update() {
                return Ok(());
            }
            if rx.changed().await.is_err() {
                return Err(Stopped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paused_calls_wait_and_stopped_ones_give_up() {
        let gate = Gate::default();
        let p = gate.pass().await.unwrap();
        assert_eq!(gate.in_flight(), 1);
        drop(p);
        assert_eq!(gate.in_flight(), 0);
        gate.pause();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.pass().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        gate.resume();
        assert_eq!(waiting.await.unwrap(), Ok(()));
        gate.pause();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.pass().await.map(|_| ()) }
        });
        gate.stop();
        assert_eq!(waiting.await.unwrap(), Err(Stopped));
    }
}
