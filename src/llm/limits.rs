//! What keeps a run inside a provider's limits: a concurrency gate that halves when the
//! provider keeps answering 429 and creeps back up as calls succeed (AIMD), and a pacer
//! for requests and tokens per minute. One `Limits` per endpoint, shared by every judge
//! that calls it.
//!
//! Kept by hand: rate-limiting crates pace a fixed quota, while a judge run must also
//! shrink its concurrency when the provider says 429 and grow it back, per endpoint.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// A second 429 within this long of the first counts as "repeatedly".
const REPEAT_WINDOW: Duration = Duration::from_secs(5);
/// At most one cut per this long (a burst of 429s from one moment is one signal).
const CUT_COOLDOWN: Duration = Duration::from_secs(1);

/// An endpoint's limits: calls in flight (halved on repeated 429s, restored by successes)
/// and the pace in requests and tokens per minute.
#[derive(Debug)]
pub struct Limits {
    gate: Gate,
    pacer: Pacer,
}

impl Limits {
    /// `concurrency` calls at once, at most `rpm` requests and `tpm` tokens a minute.
    pub fn new(concurrency: usize, rpm: Option<u32>, tpm: Option<u32>) -> Self {
        Self {
            gate: Gate::new(concurrency),
            pacer: Pacer::new(rpm, tpm),
        }
    }

    /// Waits for the pace (requests and `tokens` per minute), then for a slot.
    pub async fn enter(&self, tokens: u64) -> Option<Slot<'_>> {
        self.pacer.wait(tokens).await;
        self.gate.acquire().await
    }

    /// A slot, without pacing (for a call that was paced already).
    pub(crate) async fn acquire(&self) -> Option<Slot<'_>> {
        self.gate.acquire().await
    }

    /// Tokens reserved for a call and what it really used: the difference goes back.
    pub fn settle(&self, reserved: u64, used: u64) {
        self.pacer.settle(reserved, used);
    }

    /// A 429 came back: repeated ones cut the concurrency.
    pub fn rate_limited(&self) {
        self.gate.rate_limited(Instant::now());
    }

    /// A call succeeded: the concurrency grows back towards its limit.
    pub fn succeeded(&self) {
        self.gate.succeeded();
    }

    /// Calls allowed in flight now (lower than configured after repeated 429s).
    pub fn concurrency(&self) -> usize {
        self.gate.limit()
    }
}

/// A place in flight; given back when dropped.
#[derive(Debug)]
pub struct Slot<'a>(&'a Gate);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.give_back();
    }
}

#[derive(Debug)]
struct Gate {
    permits: Semaphore,
    state: Mutex<GateState>,
}

#[derive(Debug)]
struct GateState {
    limit: usize,
    max: usize,
    /// Permits to swallow as they come back (a cut larger than the free permits).
    debt: usize,
    /// Successes since the last change.
    streak: usize,
    last_429: Option<Instant>,
    last_cut: Option<Instant>,
}

impl Gate {
    fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            permits: Semaphore::new(max),
            state: Mutex::new(GateState {
                limit: max,
                max,
                debt: 0,
                streak: 0,
                last_429: None,
                last_cut: None,
            }),
        }
    }

    async fn acquire(&self) -> Option<Slot<'_>> {
        // Permits are forgotten and given back by hand, so a cut can swallow them.
        self.permits.acquire().await.ok()?.forget();
        Some(Slot(self))
    }

    fn give_back(&self) {
        let Ok(mut s) = self.state.lock() else {
            self.permits.add_permits(1);
            return;
        };
        if s.debt > 0 {
            s.debt -= 1;
        } else {
            self.permits.add_permits(1);
        }
    }

    fn limit(&self) -> usize {
        self.state.lock().map_or(1, |s| s.limit)
    }

    /// Halves the limit when a 429 follows another within [`REPEAT_WINDOW`].
    fn rate_limited(&self, now: Instant) {
        let Ok(mut s) = self.state.lock() else { return };
        s.streak = 0;
        let repeated = s
            .last_429
            .is_some_and(|t| now.duration_since(t) <= REPEAT_WINDOW);
        s.last_429 = Some(now);
        let cooled = s
            .last_cut
            .is_none_or(|t| now.duration_since(t) >= CUT_COOLDOWN);
        if !repeated || !cooled || s.limit == 1 {
            return;
        }
        let new = (s.limit / 2).max(1);
        let cut = s.limit - new;
        s.limit = new;
        s.last_cut = Some(now);
        let forgotten = self.permits.forget_permits(cut);
        s.debt += cut - forgotten;
    }

    /// One more permit after `limit` successes in a row, up to the configured maximum.
    fn succeeded(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        if s.limit >= s.max {
            return;
        }
        s.streak += 1;
        if s.streak >= s.limit {
            s.streak = 0;
            s.limit += 1;
            if s.debt > 0 {
                s.debt -= 1;
            } else {
                self.permits.add_permits(1);
            }
        }
    }
}

/// Requests per minute (evenly spaced) and tokens per minute (a bucket that may go into
/// debt, so calls queue fairly behind a large one).
#[derive(Debug)]
struct Pacer {
    interval: Option<Duration>,
    tokens_per_sec: Option<f64>,
    capacity: f64,
    state: Mutex<PaceState>,
}

#[derive(Debug)]
struct PaceState {
    next_slot: Instant,
    tokens: f64,
    refilled: Instant,
}

impl Pacer {
    fn new(rpm: Option<u32>, tpm: Option<u32>) -> Self {
        let now = Instant::now();
        let capacity = tpm.map_or(0.0, f64::from);
        Self {
            interval: rpm
                .filter(|r| *r > 0)
                .map(|r| Duration::from_secs_f64(60.0 / f64::from(r))),
            tokens_per_sec: tpm.filter(|t| *t > 0).map(|t| f64::from(t) / 60.0),
            capacity,
            state: Mutex::new(PaceState {
                next_slot: now,
                tokens: capacity,
                refilled: now,
            }),
        }
    }

    fn delay(&self, tokens: u64, now: Instant) -> Duration {
        let Ok(mut s) = self.state.lock() else {
            return Duration::ZERO;
        };
        let mut wait = Duration::ZERO;
        if let Some(interval) = self.interval {
            let slot = s.next_slot.max(now);
            s.next_slot = slot + interval;
            wait = slot - now;
        }
        if let Some(rate) = self.tokens_per_sec {
            let elapsed = now.duration_since(s.refilled).as_secs_f64();
            s.tokens = (s.tokens + elapsed * rate).min(self.capacity);
            s.refilled = now;
            #[allow(clippy::cast_precision_loss)] // token counts are far below 2^52
            let reserved = (tokens as f64).min(self.capacity);
            s.tokens -= reserved;
            if s.tokens < 0.0 {
                wait = wait.max(Duration::from_secs_f64(-s.tokens / rate));
            }
        }
        wait
    }

    async fn wait(&self, tokens: u64) {
        let wait = self.delay(tokens, Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    fn settle(&self, reserved: u64, used: u64) {
        if self.tokens_per_sec.is_none() || used >= reserved {
            return;
        }
        if let Ok(mut s) = self.state.lock() {
            #[allow(clippy::cast_precision_loss)] // token counts are far below 2^52
            let back = (reserved - used) as f64;
            s.tokens = (s.tokens + back).min(self.capacity);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_429s_halve_the_gate_and_successes_bring_it_back() {
        let gate = Gate::new(8);
        let t0 = Instant::now();
        gate.rate_limited(t0);
        assert_eq!(gate.limit(), 8, "one 429 is not a pattern");
        gate.rate_limited(t0 + Duration::from_millis(100));
        assert_eq!(gate.limit(), 4);
        gate.rate_limited(t0 + Duration::from_millis(200));
        assert_eq!(gate.limit(), 4, "cooling down");
        gate.rate_limited(t0 + Duration::from_millis(1300));
        assert_eq!(gate.limit(), 2);
        assert_eq!(gate.permits.available_permits(), 2);
        for _ in 0..2 {
            gate.succeeded();
        }
        assert_eq!(gate.limit(), 3);
        for _ in 0..(3 + 4 + 5 + 6 + 7) {
            gate.succeeded();
        }
        assert_eq!(gate.limit(), 8);
        assert_eq!(gate.permits.available_permits(), 8);
    }

    #[tokio::test]
    async fn a_cut_swallows_permits_in_use_as_they_come_back() {
        let gate = Gate::new(4);
        let slots: Vec<_> = [(); 4].iter().map(|()| gate.acquire()).collect();
        let mut held = Vec::new();
        for s in slots {
            held.push(s.await.unwrap());
        }
        let t0 = Instant::now();
        gate.rate_limited(t0);
        gate.rate_limited(t0 + Duration::from_millis(10));
        assert_eq!(gate.limit(), 2);
        drop(held);
        assert_eq!(gate.permits.available_permits(), 2);
    }

    #[test]
    fn the_pacer_spaces_requests_and_queues_behind_tokens() {
        let p = Pacer::new(Some(60), None);
        let now = Instant::now();
        assert_eq!(p.delay(0, now), Duration::ZERO);
        assert_eq!(p.delay(0, now), Duration::from_secs(1));
        assert_eq!(p.delay(0, now), Duration::from_secs(2));

        let p = Pacer::new(None, Some(600)); // 10 tokens a second, 600 in the bucket
        assert_eq!(p.delay(500, now), Duration::ZERO);
        assert_eq!(p.delay(200, now), Duration::from_secs(10));
        p.settle(200, 100); // 100 came back
        assert_eq!(p.delay(0, now), Duration::ZERO);
        assert_eq!(p.delay(100, now), Duration::from_secs(10));
    }
}
