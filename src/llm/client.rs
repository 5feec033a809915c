//! The client every judge call goes through: one provider, a cap on calls in flight, and
//! retries with exponential backoff and jitter that honour `Retry-After`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::RngExt as _;
use tokio::sync::Semaphore;

use super::anthropic::Anthropic;
use super::openai::OpenAi;
use super::{Cache, ChatRequest, ChatResponse, LlmError, Provider, ProviderKind, ProviderSpec};

#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Calls in flight at once, across every item and criterion.
    pub concurrency: usize,
    /// Tries after the first.
    pub max_retries: u32,
    /// The whole request, first byte to last.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// The first backoff; it doubles each retry (with jitter), up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            concurrency: 16,
            max_retries: 4,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
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
    pub cache_hit: bool,
}

#[derive(Debug, Clone)]
pub struct Client {
    /// `provider/model`, as the user wrote it.
    pub id: String,
    pub model: String,
    provider: Arc<dyn Provider>,
    /// Where requests go (provider and base URL): part of every cache key.
    endpoint: String,
    permits: Arc<Semaphore>,
    opts: ClientOptions,
    cache: Option<Cache>,
}

impl Client {
    /// A client for a resolved model id.
    pub fn new(id: &str, spec: ProviderSpec, opts: ClientOptions) -> Result<Self, LlmError> {
        let endpoint = format!("{} {}", spec.name, spec.base_url);
        let http = reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("cannot start the HTTP client: {e}")))?;
        let provider: Arc<dyn Provider> = match spec.kind {
            ProviderKind::OpenAi => Arc::new(OpenAi::new(
                &spec.name,
                &spec.base_url,
                spec.key,
                &spec.key_var,
                http,
                opts.timeout,
            )),
            ProviderKind::Anthropic => Arc::new(Anthropic {
                base_url: spec.base_url,
                key: spec.key,
                http,
                timeout: opts.timeout,
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
            permits: Arc::new(Semaphore::new(opts.concurrency.max(1))),
            opts,
            cache: None,
        }
    }

    /// Answers repeated requests from `cache` (and stores new answers there).
    #[must_use]
    pub fn with_cache(mut self, cache: Option<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// Sends one request, retrying what is worth retrying. On failure, the last error and
    /// the number of attempts.
    pub async fn complete(&self, req: &ChatRequest) -> Result<Completion, (LlmError, u32)> {
        let start = Instant::now();
        let key = self.cache.as_ref().map(|_| Cache::key(&self.endpoint, req));
        if let (Some(cache), Some(key)) = (&self.cache, &key)
            && let Some(response) = cache.get(key)
        {
            return Ok(Completion {
                response,
                attempts: 0,
                latency: start.elapsed(),
                cache_hit: true,
            });
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            let result = {
                let Ok(_permit) = self.permits.acquire().await else {
                    return Err((
                        LlmError::Config("the client was shut down".into()),
                        attempts,
                    ));
                };
                self.provider.complete(req).await
            };
            match result {
                Ok(response) => {
                    if let (Some(cache), Some(key)) = (&self.cache, &key) {
                        cache.put(key, &response);
                    }
                    return Ok(Completion {
                        response,
                        attempts,
                        latency: start.elapsed(),
                        cache_hit: false,
                    });
                }
                Err(e) if e.retryable() && attempts <= self.opts.max_retries => {
                    tokio::time::sleep(self.delay(&e, attempts)).await;
                }
                Err(e) => return Err((e, attempts)),
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
