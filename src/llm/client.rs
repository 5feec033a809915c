//! The client every judge call goes through: the response cache, one request for identical
//! calls in flight, the endpoint's limits (concurrency that adapts to 429s, requests and
//! tokens per minute), the run's cost budget, and retries with exponential backoff and
//! jitter that honour `Retry-After`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::RngExt as _;
use tokio::sync::OnceCell;

use super::anthropic::Anthropic;
use super::limits::Limits;
use super::meter::{Meter, Price};
use super::openai::OpenAi;
use super::{
    Cache, ChatRequest, ChatResponse, LlmError, OnPiece, Piece, Provider, ProviderKind,
    ProviderSpec, Timeouts,
};

#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Calls in flight at once to this endpoint, across every item and criterion.
    pub concurrency: usize,
    /// Requests per minute to this endpoint.
    pub rpm: Option<u32>,
    /// Tokens per minute to this endpoint (input estimated from the prompt, plus max tokens).
    pub tpm: Option<u32>,
    /// Tries after the first.
    pub max_retries: u32,
    /// The whole request, first byte to last.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// The longest silence inside a streamed reply.
    pub idle_timeout: Duration,
    /// The first backoff; it doubles each retry (with jitter), up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            concurrency: 16,
            rpm: None,
            tpm: None,
            max_retries: 4,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// A successful call and what it took.
#[derive(Debug, Clone)]
pub struct Completion {
    pub response: ChatResponse,
    /// Requests sent (0 for a cache hit).
    pub attempts: u32,
    pub latency: Duration,
    /// Answered without a request of its own (from the cache, or by an identical call
    /// that was already in flight).
    pub cache_hit: bool,
}

type Outcome = Result<Completion, (LlmError, u32)>;
type Flights = Arc<Mutex<HashMap<String, Arc<OnceCell<Outcome>>>>>;

#[derive(Debug, Clone)]
pub struct Client {
    /// `provider/model`, as the user wrote it.
    pub id: String,
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
    gate: super::Gate,
}

impl Client {
    /// A client for a resolved model id.
    pub fn new(id: &str, spec: ProviderSpec, opts: ClientOptions) -> Result<Self, LlmError> {
        let endpoint = spec.endpoint();
        let http = reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("cannot start the HTTP client: {e}")))?;
        let timeouts = Timeouts {
            whole: opts.timeout,
            idle: opts.idle_timeout,
        };
        let provider: Arc<dyn Provider> = match spec.kind {
            ProviderKind::OpenAi => Arc::new(OpenAi::new(
                &spec.name,
                &spec.base_url,
                spec.key,
                &spec.key_var,
                http,
                timeouts,
            )),
            ProviderKind::Anthropic => Arc::new(Anthropic {
                base_url: spec.base_url,
                key: spec.key,
                key_var: spec.key_var,
                http,
                timeouts,
            }),
        };
        let mut client = Self::with_provider(id, &spec.model, provider, opts);
        client.endpoint = endpoint;
        Ok(client)
    }

    pub fn with_provider(
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
            gate: super::Gate::default(),
        }
    }

    /// Answers repeated requests from `cache` (and stores new answers there).
    #[must_use]
    pub fn with_cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// Waits at the run's gate before every request (pause, stop).
    #[must_use]
    pub fn with_gate(mut self, gate: super::Gate) -> Self {
        self.gate = gate;
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

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn price(&self) -> Option<Price> {
        self.price
    }

    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

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
    /// retrying. On failure, the last error and the number of attempts.
    pub async fn complete(&self, req: &ChatRequest, on_piece: Option<OnPiece<'_>>) -> Outcome {
        let start = Instant::now();
        let Some(cache) = &self.cache else {
            return self.fetch(req, on_piece, start).await;
        };
        let key = Cache::key(&self.endpoint, req);
        if let Some(response) = cache.get(&key) {
            self.meter.cache_hit();
            return Ok(hit(response, start));
        }
        // Identical calls in flight share one request: the first sends it, the others
        // wait for its answer.
        let cell = self
            .flights
            .lock()
            .ok()
            .map(|mut f| Arc::clone(f.entry(key.clone()).or_default()));
        let Some(cell) = cell else {
            return self.fetch(req, on_piece, start).await;
        };
        let mut leader = false;
        let outcome = cell
            .get_or_init(|| {
                leader = true;
                async {
                    let outcome = self.fetch(req, on_piece, start).await;
                    if let Ok(done) = &outcome {
                        cache.put(&key, &done.response);
                    }
                    outcome
                }
            })
            .await
            .clone();
        if leader {
            if let Ok(mut f) = self.flights.lock() {
                f.remove(&key);
            }
            return outcome;
        }
        match outcome {
            Ok(done) => {
                self.meter.cache_hit();
                Ok(hit(done.response, start))
            }
            Err(e) => Err(e),
        }
    }

    async fn fetch(
        &self,
        req: &ChatRequest,
        on_piece: Option<OnPiece<'_>>,
        start: Instant,
    ) -> Outcome {
        let reserve = estimate_tokens(req);
        let mut attempts = 0;
        loop {
            if let Some(why) = self.meter.over_budget() {
                return Err((LlmError::Budget(why), attempts));
            }
            attempts += 1;
            if attempts > 1
                && let Some(on_piece) = on_piece
            {
                on_piece(Piece::Retry);
            }
            let result = {
                let Some(_slot) = self.limits.enter(reserve).await else {
                    return Err((
                        LlmError::Config("the client was shut down".into()),
                        attempts,
                    ));
                };
                // Checked with the slot held, right before sending: once a run is paused,
                // at most the calls already past this point (the concurrency limit) go out;
                // a stopped run gives up here.
                let Ok(_passage) = self.gate.pass().await else {
                    return Err((LlmError::Cancelled, attempts));
                };
                self.meter.sent();
                self.provider.complete(req, on_piece).await
            };
            match result {
                Ok(response) => {
                    self.limits.succeeded();
                    self.limits
                        .settle(reserve, response.input_tokens + response.output_tokens);
                    self.meter
                        .answered(response.input_tokens, response.output_tokens, self.price);
                    return Ok(Completion {
                        response,
                        attempts,
                        latency: start.elapsed(),
                        cache_hit: false,
                    });
                }
                Err(e) => {
                    if matches!(e, LlmError::RateLimited { .. }) {
                        self.limits.rate_limited();
                        self.meter.rate_limited();
                    }
                    if e.retryable() && attempts <= self.opts.max_retries {
                        tokio::time::sleep(self.delay(&e, attempts)).await;
                        continue;
                    }
                    self.meter.failed();
                    return Err((e, attempts));
                }
            }
        }
    }

    /// `Retry-After` when the server gives one, else base · 2^(n−1) with ±25 % jitter.
    fn delay(&self, e: &LlmError, attempt: u32) -> Duration {
        if let LlmError::RateLimited {
            retry_after: Some(d),
        } = e
        {
            return *d;
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

/// Tokens a request may use: its text at about four characters a token, plus the most it
/// may write. Used for tokens-per-minute pacing and dry-run estimates.
pub fn estimate_tokens(req: &ChatRequest) -> u64 {
    estimate_input_tokens(req) + u64::from(req.max_tokens)
}

pub fn estimate_input_tokens(req: &ChatRequest) -> u64 {
    let chars: usize = req.messages.iter().map(|m| m.content.chars().count()).sum();
    (chars as u64).div_ceil(4) + 4 * req.messages.len() as u64
}
