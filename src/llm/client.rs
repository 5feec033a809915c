//! The client every judge call goes through: the response cache (which holds only replies
//! the caller read), one request for identical calls in flight, the run's pause gate, the
//! endpoint's limits (concurrency that adapts to 429s, requests and tokens per minute), the
//! run's cost budget, and retries with exponential backoff and jitter that honour
//! `Retry-After`, for failed requests and for replies that could not be read alike.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use tokio::sync::OnceCell;

use super::anthropic::Anthropic;
use super::gate::Gate;
use super::limits::{Limits, Slot};
use super::meter::{Meter, Price};
use super::openai::OpenAi;
use super::options::{ClientOptions, endpoint_limits};
use super::wire::Endpoint;
use super::{
    Cache, ChatRequest, ChatResponse, LlmError, OnPiece, Piece, Provider, ProviderKind,
    ProviderSpec, Timeouts,
};

/// A successful call and what it took.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The reply.
    pub response: ChatResponse,
    /// Requests sent (0 for a cache hit).
    pub attempts: u32,
    /// From the call to its answer, waits and retries included.
    pub latency: Duration,
    /// Answered without a request of its own (from the cache, or by an identical call
    /// that was already in flight).
    pub cache_hit: bool,
}

/// What the caller made of a reply's text (see [`Client::complete_read`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Reading<T> {
    /// Read in full: returned, and stored in the cache.
    Accepted(T),
    /// Read in part (a one-shot reply that leaves criteria out): returned for the caller
    /// to repair the rest; neither cached nor tried again.
    Partial(T),
    /// Not read at all, and why: tried again like a failed request when the call allows
    /// it, then returned as [`ReadError::Unreadable`]. Never cached.
    Rejected(String),
}

/// Whether a reply that was [`Reading::Rejected`] is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfUnreadable {
    /// Sent again up to `max_retries` times, each counted as an attempt, with the same
    /// backoff as any other retry (and never answered from the cache or a shared flight).
    Retry,
    /// Returned at once (a repair request, whose reply is the last word).
    Return,
}

/// A reply that was read.
#[derive(Debug, Clone)]
pub struct Read<T> {
    /// What the caller read from the reply.
    pub value: T,
    /// The reply it was read from, and what the call took.
    pub completion: Completion,
    /// Read in full ([`Reading::Accepted`], and cached), not only in part.
    pub complete: bool,
}

/// Why a call gave nothing to read.
#[derive(Debug, Clone)]
pub enum ReadError {
    /// No reply: the last error and the requests sent.
    Call {
        /// The last error.
        error: LlmError,
        /// Requests sent.
        attempts: u32,
    },
    /// Replies came but none could be read: the last of them (its `attempts` count every
    /// request sent) and what is wrong with it.
    Unreadable {
        /// The last reply, its `attempts` counting every request sent.
        completion: Completion,
        /// Why it could not be read.
        problem: String,
    },
}

type Outcome = Result<Completion, (LlmError, u32)>;
/// What one request in flight gives every identical call waiting on it.
type Shared = Result<Completion, ReadError>;
type Flight = Arc<OnceCell<Shared>>;
type Flights = Arc<Mutex<HashMap<String, Flight>>>;
/// Reads a reply's text.
type Reader<'r, T> = &'r (dyn Fn(&str) -> Reading<T> + Send + Sync);

/// One judge model's client (see the module comment): cloned cheaply, its clones share
/// limits, meter, cache and gate.
#[derive(Debug, Clone)]
pub struct Client {
    /// `provider/model`, as the user wrote it.
    pub id: String,
    /// The provider's own model name.
    pub model: String,
    provider: Arc<dyn Provider>,
    /// Where requests go (provider and base URL): part of every cache key.
    endpoint: String,
    limits: Arc<Limits>,
    meter: Arc<Meter>,
    price: Option<Price>,
    opts: ClientOptions,
    cache: Option<Cache>,
    flights: Flights,
    gate: Gate,
}

impl Client {
    /// A client for a resolved model id.
    pub fn new(id: &str, spec: ProviderSpec, opts: ClientOptions) -> Result<Self, LlmError> {
        let endpoint = spec.endpoint();
        let http = super::wire::http_client(opts.connect_timeout)?;
        let timeouts = Timeouts {
            whole: opts.timeout,
            idle: opts.idle_timeout,
        };
        let ProviderSpec {
            name,
            kind,
            model,
            base_url,
            replicas,
            key,
            key_var,
        } = spec;
        let one = |url: &str| -> Box<dyn Provider> {
            let endpoint =
                Endpoint::new(url, key.clone(), &key_var, http.clone(), kind.authorize());
            match kind {
                ProviderKind::OpenAi => {
                    Box::new(OpenAi::new(&name, endpoint, timeouts, opts.max_reply_bytes))
                }
                ProviderKind::Anthropic => {
                    Box::new(Anthropic::new(endpoint, timeouts, opts.max_reply_bytes))
                }
            }
        };
        // Replicas: each server keeps the configured limits; the endpoint's own limits
        // are theirs together.
        let provider: Arc<dyn Provider> = if replicas.is_empty() {
            Arc::from(one(&base_url))
        } else {
            Arc::new(super::replicas::Replicas::new(
                &name,
                std::iter::once(&base_url)
                    .chain(&replicas)
                    .map(|u| one(u))
                    .collect(),
                opts.concurrency,
                opts.rpm,
                opts.tpm,
            ))
        };
        let limits = endpoint_limits(&opts, 1 + replicas.len());
        let mut client = Self::with_provider(id, &model, provider, opts);
        client.endpoint = endpoint;
        client.limits = Arc::new(limits);
        Ok(client)
    }

    fn with_provider(
        id: &str,
        model: &str,
        provider: Arc<dyn Provider>,
        opts: ClientOptions,
    ) -> Self {
        Self {
            id: id.to_owned(),
            model: model.to_owned(),
            provider,
            endpoint: id.to_owned(),
            limits: Arc::new(Limits::new(opts.concurrency, opts.rpm, opts.tpm)),
            meter: Arc::new(Meter::default()),
            price: None,
            opts,
            cache: None,
            flights: Arc::default(),
            gate: Gate::default(),
        }
    }

    /// Puts `wrap` around the client's provider (a batch run's pass answers calls from its
    /// batches, and sends live through the provider it was given).
    #[must_use]
    pub fn map_provider(
        mut self,
        wrap: impl FnOnce(Arc<dyn Provider>) -> Arc<dyn Provider>,
    ) -> Self {
        self.provider = wrap(self.provider);
        self
    }

    /// Answers repeated requests from `cache` (and stores accepted answers there).
    #[must_use]
    pub fn with_cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// Shares limits with the other clients of the same endpoint.
    #[must_use]
    pub fn with_limits(mut self, limits: Arc<Limits>) -> Self {
        self.limits = limits;
        self
    }

    /// Counts usage (and cost, at `price`) into the run's meter.
    #[must_use]
    pub fn with_meter(mut self, meter: Arc<Meter>, price: Option<Price>) -> Self {
        self.meter = meter;
        self.price = price;
        self
    }

    /// Makes every attempt wait at `gate` (the run's pause and stop) before it takes a
    /// concurrency slot and is sent. Without one, a client has an open gate of its own.
    #[must_use]
    pub fn with_gate(mut self, gate: Gate) -> Self {
        self.gate = gate;
        self
    }

    /// The gate its calls wait at.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Where its requests go (provider and base URL), part of every cache key.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Dollars per million tokens, when the model has a price.
    pub fn price(&self) -> Option<Price> {
        self.price
    }

    /// The run's usage counter its calls add to.
    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    /// The endpoint's limits, shared with its other clients.
    pub fn limits(&self) -> &Arc<Limits> {
        &self.limits
    }

    /// Whether the cache already holds the answer to `req` (a dry run counts these).
    pub fn is_cached(&self, req: &ChatRequest) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|c| c.get(&Cache::key(&self.endpoint, req)).is_some())
    }

    /// Sends one request (streamed when `on_piece` is given), retrying what is worth
    /// retrying, and accepts whatever reply arrives (it is cached). Judges use
    /// [`complete_read`](Self::complete_read), which caches only replies they could read.
    /// On failure, the last error and the number of attempts.
    pub async fn complete(&self, req: &ChatRequest, on_piece: Option<OnPiece<'_>>) -> Outcome {
        match self
            .complete_read(req, on_piece, IfUnreadable::Return, |_| {
                Reading::Accepted(())
            })
            .await
        {
            Ok(read) => Ok(read.completion),
            Err(ReadError::Call { error, attempts }) => Err((error, attempts)),
            // Every reply is accepted above; kept whole should that ever change.
            Err(ReadError::Unreadable { completion, .. }) => Ok(completion),
        }
    }

    /// Sends one request (streamed when `on_piece` is given) and reads its reply with
    /// `read`. Only a reply read in full is stored in the cache (and a cached entry counts
    /// only if `read` accepts it). A rejected reply is sent again like a failed request
    /// under [`IfUnreadable::Retry`]; when the tries run out, the last reply comes back as
    /// [`ReadError::Unreadable`] for the caller to repair. Identical calls in flight share
    /// one request: each reads the shared reply itself, and only calls that were already
    /// waiting share it (a later call sends its own).
    pub async fn complete_read<T: Send>(
        &self,
        req: &ChatRequest,
        on_piece: Option<OnPiece<'_>>,
        if_unreadable: IfUnreadable,
        read: impl Fn(&str) -> Reading<T> + Send + Sync,
    ) -> Result<Read<T>, ReadError> {
        let start = Instant::now();
        let read: Reader<'_, T> = &read;
        let Some(cache) = &self.cache else {
            return self.fetch(req, on_piece, start, if_unreadable, read).await;
        };
        let key = Cache::key(&self.endpoint, req);
        if let Some(response) = cache.get(&key) {
            // An entry the reader cannot accept (older versions cached every reply) is a
            // miss, replaced once a new reply is accepted.
            if let Reading::Accepted(value) = read(&response.text) {
                self.meter.cache_hit();
                return Ok(Read {
                    value,
                    completion: hit(response, start),
                    complete: true,
                });
            }
        }
        let Some(cell) = self.flight(&key) else {
            let outcome = self.fetch(req, on_piece, start, if_unreadable, read).await;
            if let Ok(r) = &outcome
                && r.complete
            {
                cache.put(&key, &r.completion.response);
            }
            return outcome;
        };
        // The first call sends the request; identical calls arriving meanwhile wait for it.
        let mut mine: Option<Result<Read<T>, ReadError>> = None;
        let shared = cell
            .get_or_init(|| async {
                let outcome = self.fetch(req, on_piece, start, if_unreadable, read).await;
                if let Ok(r) = &outcome
                    && r.complete
                {
                    cache.put(&key, &r.completion.response);
                }
                // Off the board before anyone hears the outcome: a call that comes later
                // finds the cache or sends its own request, and never gets a failure it
                // did not wait for.
                self.land(&key, &cell);
                let shared = match &outcome {
                    Ok(r) => Ok(r.completion.clone()),
                    Err(e) => Err(e.clone()),
                };
                mine = Some(outcome);
                shared
            })
            .await;
        if let Some(outcome) = mine {
            return outcome;
        }
        match shared.clone() {
            Ok(done) => {
                let completion = hit(done.response, start);
                match read(&completion.response.text) {
                    Reading::Accepted(value) => {
                        self.meter.cache_hit();
                        Ok(Read {
                            value,
                            completion,
                            complete: true,
                        })
                    }
                    Reading::Partial(value) => {
                        self.meter.cache_hit();
                        Ok(Read {
                            value,
                            completion,
                            complete: false,
                        })
                    }
                    Reading::Rejected(problem) => Err(ReadError::Unreadable {
                        completion,
                        problem,
                    }),
                }
            }
            Err(ReadError::Unreadable {
                completion,
                problem,
            }) => Err(ReadError::Unreadable {
                completion: hit(completion.response, start),
                problem,
            }),
            Err(e @ ReadError::Call { .. }) => Err(e),
        }
    }

    /// The flight for `key`: joined if one is under way, else started.
    fn flight(&self, key: &str) -> Option<Flight> {
        self.flights
            .lock()
            .ok()
            .map(|mut f| Arc::clone(f.entry(key.to_owned()).or_default()))
    }

    /// Takes a finished flight off the board.
    fn land(&self, key: &str, cell: &Flight) {
        if let Ok(mut f) = self.flights.lock()
            && f.get(key).is_some_and(|c| Arc::ptr_eq(c, cell))
        {
            f.remove(key);
        }
    }

    /// Sends `req` until a reply is read or the tries run out.
    async fn fetch<T>(
        &self,
        req: &ChatRequest,
        on_piece: Option<OnPiece<'_>>,
        start: Instant,
        if_unreadable: IfUnreadable,
        read: Reader<'_, T>,
    ) -> Result<Read<T>, ReadError> {
        let reserve = super::estimate_tokens(req);
        let mut attempts = 0;
        loop {
            let call = |error: LlmError, attempts: u32| ReadError::Call { error, attempts };
            let result = {
                let slot = self.slot(reserve).await;
                let _slot = slot.map_err(|e| call(e, attempts))?;
                if let Some(why) = self.meter.over_budget() {
                    return Err(call(LlmError::Budget(why), attempts));
                }
                attempts += 1;
                if attempts > 1
                    && let Some(on_piece) = on_piece
                {
                    on_piece(Piece::Retry);
                }
                let _sending = self.gate.sending();
                self.meter.sent();
                self.provider.complete(req, on_piece).await
            };
            let wait = match result {
                Ok(response) => {
                    self.limits.succeeded();
                    self.limits
                        .settle(reserve, response.input_tokens + response.output_tokens);
                    self.meter.answered(&response, self.price);
                    let completion = Completion {
                        response,
                        attempts,
                        latency: start.elapsed(),
                        cache_hit: false,
                    };
                    let problem = match read(&completion.response.text) {
                        Reading::Accepted(value) => {
                            return Ok(Read {
                                value,
                                completion,
                                complete: true,
                            });
                        }
                        Reading::Partial(value) => {
                            return Ok(Read {
                                value,
                                completion,
                                complete: false,
                            });
                        }
                        Reading::Rejected(problem) => problem,
                    };
                    if if_unreadable == IfUnreadable::Return || attempts > self.opts.max_retries {
                        return Err(ReadError::Unreadable {
                            completion,
                            problem,
                        });
                    }
                    self.delay(None, attempts)
                }
                Err(e) => {
                    if matches!(e, LlmError::RateLimited { .. }) {
                        self.limits.rate_limited();
                        self.meter.rate_limited();
                    }
                    if !e.retryable() || attempts > self.opts.max_retries {
                        self.meter.failed();
                        return Err(call(e, attempts));
                    }
                    let retry_after = match e {
                        LlmError::RateLimited { retry_after } => retry_after,
                        _ => None,
                    };
                    self.delay(retry_after, attempts)
                }
            };
            self.until_stopped(tokio::time::sleep(wait))
                .await
                .map_err(|e| call(e, attempts))?;
        }
    }

    /// A concurrency slot, taken only while the gate is open: a call paused while it
    /// waited for one gives it back and waits at the gate again. Fails once the gate is
    /// stopped.
    async fn slot(&self, reserve: u64) -> Result<Slot<'_>, LlmError> {
        let shut = || LlmError::Config("the client was shut down".into());
        self.gate.wait().await?;
        let mut slot = self
            .until_stopped(self.limits.enter(reserve))
            .await?
            .ok_or_else(shut)?;
        while !self.gate.is_open() {
            drop(slot);
            self.gate.wait().await?;
            slot = self
                .until_stopped(self.limits.acquire())
                .await?
                .ok_or_else(shut)?;
        }
        Ok(slot)
    }

    /// `work`, unless the gate is stopped first.
    async fn until_stopped<F: Future>(&self, work: F) -> Result<F::Output, LlmError> {
        tokio::select! {
            biased;
            out = work => Ok(out),
            () = self.gate.stopped() => Err(LlmError::Cancelled),
        }
    }

    /// `Retry-After` when the server gives one, else base · 2^(n−1) with ±25 % jitter.
    fn delay(&self, retry_after: Option<Duration>, attempt: u32) -> Duration {
        if let Some(d) = retry_after {
            return d;
        }
        let exp = self
            .opts
            .backoff
            .saturating_mul(1u32 << (attempt - 1).min(16));
        let capped = exp.min(self.opts.max_backoff);
        let jitter = rand::rng().random_range(0.75..1.25);
        capped.mul_f64(jitter)
    }
}

fn hit(response: ChatResponse, start: Instant) -> Completion {
    Completion {
        response,
        attempts: 0,
        latency: start.elapsed(),
        cache_hit: true,
    }
}
