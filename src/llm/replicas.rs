//! Several servers of one model (vLLM, llama.cpp, Ollama or TGI replicas) behind no load
//! balancer: each call goes to the replica with the fewest calls in flight, each replica
//! keeps its own concurrency and rate limits, and one that keeps failing is set aside for a
//! while (doubling, up to a minute) and then tried again by the next call that needs it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{BoxFuture, ChatRequest, ChatResponse, LlmError, OnPiece, Provider};
use crate::llm::Limits;

/// Failures in a row that set a replica aside.
const FAILURES_TO_SET_ASIDE: u32 = 3;
/// How long a failure makes a replica the last choice (a blip must not idle it for good).
const RECENT: Duration = Duration::from_secs(2);
/// How long the first setting-aside lasts; each one after doubles it, up to the most.
const FIRST_ASIDE: Duration = Duration::from_secs(5);
const MOST_ASIDE: Duration = Duration::from_secs(60);

/// One replica: its server, its limits and how it has been doing.
#[derive(Debug)]
struct Member {
    provider: Box<dyn Provider>,
    limits: Limits,
    in_flight: AtomicUsize,
    health: Mutex<Health>,
}

#[derive(Debug, Default)]
struct Health {
    failures: u32,
    last_failure: Option<Instant>,
    aside_until: Option<Instant>,
    aside_for: Duration,
}

impl Member {
    /// When the replica may be called again (`None`: now).
    fn aside_until(&self, now: Instant) -> Option<Instant> {
        self.health
            .lock()
            .ok()?
            .aside_until
            .filter(|until| *until > now)
    }

    /// Whether it failed within [`RECENT`] (then others are tried first).
    fn failed_lately(&self, now: Instant) -> bool {
        self.health.lock().is_ok_and(|h| {
            h.last_failure
                .is_some_and(|t| now.saturating_duration_since(t) < RECENT)
        })
    }

    fn record(&self, ok: bool, now: Instant) {
        let Ok(mut h) = self.health.lock() else {
            return;
        };
        if ok {
            *h = Health::default();
            return;
        }
        h.failures += 1;
        h.last_failure = Some(now);
        if h.failures >= FAILURES_TO_SET_ASIDE {
            h.aside_for = if h.aside_for.is_zero() {
                FIRST_ASIDE
            } else {
                (h.aside_for * 2).min(MOST_ASIDE)
            };
            h.aside_until = Some(now + h.aside_for);
            tracing::warn!(
                "replica {} set aside for {:?} after {} failures in a row",
                self.provider.name(),
                h.aside_for,
                h.failures
            );
        }
    }
}

/// Replicas of one model, as one provider.
#[derive(Debug)]
pub struct Replicas {
    name: String,
    members: Vec<Member>,
}

impl Replicas {
    /// `providers` (one per base URL), each with its own concurrency and rates.
    pub fn new(
        name: &str,
        providers: Vec<Box<dyn Provider>>,
        concurrency: usize,
        rpm: Option<u32>,
        tpm: Option<u32>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            members: providers
                .into_iter()
                .map(|provider| Member {
                    provider,
                    limits: Limits::new(concurrency, rpm, tpm),
                    in_flight: AtomicUsize::new(0),
                    health: Mutex::new(Health::default()),
                })
                .collect(),
        }
    }

    /// The replica for the next call: among those not set aside, the one that has not
    /// failed in the last moments and has the fewest calls in flight; when all are set
    /// aside, the one back soonest (the call probes it).
    fn choose(&self) -> Option<&Member> {
        self.choose_at(Instant::now())
    }

    fn choose_at(&self, now: Instant) -> Option<&Member> {
        let ready = self
            .members
            .iter()
            .filter(|m| m.aside_until(now).is_none())
            .min_by_key(|m| (m.failed_lately(now), m.in_flight.load(Ordering::SeqCst)));
        ready.or_else(|| {
            self.members
                .iter()
                .min_by_key(|m| m.aside_until(now).unwrap_or(now))
        })
    }
}

/// Counts a call in flight on a replica until dropped.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Provider for Replicas {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
        on_piece: Option<OnPiece<'a>>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let member = self.choose().ok_or_else(|| {
                LlmError::Config(format!("provider {} has no replicas", self.name))
            })?;
            member.in_flight.fetch_add(1, Ordering::SeqCst);
            let _counted = InFlight(&member.in_flight);
            let reserve = super::estimate_tokens(req);
            let Some(_slot) = member.limits.enter(reserve).await else {
                return Err(LlmError::Cancelled);
            };
            let result = member.provider.complete(req, on_piece).await;
            match &result {
                Ok(r) => {
                    member.limits.succeeded();
                    member
                        .limits
                        .settle(reserve, r.input_tokens + r.output_tokens);
                    member.record(true, Instant::now());
                }
                Err(LlmError::RateLimited { .. }) => {
                    member.limits.settle(reserve, 0);
                    member.limits.rate_limited();
                }
                Err(e) => {
                    member.limits.settle(reserve, 0);
                    // A refused request is the request's fault, not the replica's.
                    if e.retryable() {
                        member.record(false, Instant::now());
                    }
                }
            }
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that is never called (choosing is what is tested).
    #[derive(Debug)]
    struct Named(&'static str);

    impl Provider for Named {
        fn name(&self) -> &str {
            self.0
        }

        fn complete<'a>(
            &'a self,
            _: &'a ChatRequest,
            _: Option<OnPiece<'a>>,
        ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
            Box::pin(async { Err(LlmError::Cancelled) })
        }
    }

    fn two() -> Replicas {
        Replicas::new(
            "local",
            vec![Box::new(Named("a")), Box::new(Named("b"))],
            4,
            None,
            None,
        )
    }

    fn chosen(r: &Replicas, at: Instant) -> &str {
        r.choose_at(at).map_or("", |m| m.provider.name())
    }

    #[test]
    fn a_blip_makes_a_replica_last_only_for_a_moment_and_three_set_it_aside() {
        let r = two();
        let t0 = Instant::now();
        r.members[1].in_flight.store(3, Ordering::SeqCst);
        assert_eq!(chosen(&r, t0), "a", "fewest in flight");
        r.members[0].record(false, t0);
        assert_eq!(chosen(&r, t0), "b", "a failed a moment ago");
        assert_eq!(
            chosen(&r, t0 + Duration::from_secs(3)),
            "a",
            "a blip does not idle it for good"
        );
        r.members[0].record(false, t0);
        r.members[0].record(false, t0);
        assert!(r.members[0].aside_until(t0).is_some(), "three in a row");
        assert_eq!(chosen(&r, t0 + Duration::from_secs(3)), "b");
        // Back after its time, and a success forgets the failures.
        assert_eq!(chosen(&r, t0 + Duration::from_secs(8)), "a");
        r.members[0].record(true, t0);
        assert!(r.members[0].aside_until(t0).is_none());
        // Both set aside: the one back soonest is probed.
        for _ in 0..3 {
            r.members[0].record(false, t0);
            r.members[1].record(false, t0 + Duration::from_secs(1));
        }
        assert_eq!(chosen(&r, t0 + Duration::from_secs(2)), "a");
    }
}
