//! How many items a run holds between reading them and handing them on: the reader takes a
//! place before an item enters the run, the outbox gives it back once the item is journalled
//! and delivered. Every queue in between (the executor's input, its events, the reorder
//! buffer) then holds at most this many items, so a slow journal or front end slows the
//! reader instead of growing memory with the backlog.

use std::sync::{Condvar, Mutex};

/// A counting window the reader thread blocks on.
#[derive(Debug)]
pub struct InFlight {
    capacity: usize,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    held: usize,
    /// The most ever held at once (what a test checks against the capacity).
    peak: usize,
    /// The reader is waiting for a place.
    waiting: bool,
    closed: bool,
}

impl InFlight {
    /// A window of `capacity` items (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// Takes a place, waiting while the window is full. `false` once closed: the run is
    /// over and the reader stops.
    pub fn enter(&self) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        while s.held >= self.capacity && !s.closed {
            s.waiting = true;
            s = match self.changed.wait(s) {
                Ok(s) => s,
                Err(_) => return false,
            };
        }
        s.waiting = false;
        if s.closed {
            return false;
        }
        s.held += 1;
        s.peak = s.peak.max(s.held);
        true
    }

    /// Gives back one item's place (it left the run: delivered, or dropped by a stop).
    pub fn leave(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.held = s.held.saturating_sub(1);
            self.changed.notify_all();
        }
    }

    /// Ends the run: a waiting reader wakes and stops, and no place is given again.
    pub fn close(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.closed = true;
            self.changed.notify_all();
        }
    }

    /// The reader is blocked on a full window.
    #[cfg(test)]
    pub fn reader_waits(&self) -> bool {
        self.state.lock().is_ok_and(|s| s.waiting)
    }

    /// The most items held at once so far.
    #[cfg(test)]
    pub fn peak(&self) -> usize {
        self.state.lock().map_or(0, |s| s.peak)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;

    /// Polls `cond` until it holds, failing after a generous deadline (no fixed sleep).
    fn eventually(cond: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !cond() {
            assert!(Instant::now() < deadline, "condition never held");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_full_window_blocks_the_reader_until_an_item_leaves() {
        let w = Arc::new(InFlight::new(3));
        assert!(w.enter() && w.enter() && w.enter());
        let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (w, entered) = (Arc::clone(&w), Arc::clone(&entered));
            std::thread::spawn(move || {
                let ok = w.enter();
                entered.store(true, std::sync::atomic::Ordering::SeqCst);
                ok
            })
        };
        eventually(|| w.reader_waits());
        assert!(!entered.load(std::sync::atomic::Ordering::SeqCst));
        w.leave();
        assert!(reader.join().unwrap());
        assert_eq!(w.peak(), 3);
    }

    #[test]
    fn closing_wakes_a_waiting_reader_and_refuses_it() {
        let w = Arc::new(InFlight::new(1));
        assert!(w.enter());
        let reader = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || w.enter())
        };
        eventually(|| w.reader_waits());
        w.close();
        assert!(!reader.join().unwrap());
        assert!(!w.enter());
    }
}
