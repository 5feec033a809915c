//! How a client reaches its endpoint, as configured: concurrency and pacing per replica,
//! retries and backoff, timeouts, and the cap on a reply's size.

use std::time::Duration;

use super::limits::Limits;

/// The most bytes a reply may take unless configured (`judge.max_reply_bytes`): far more
/// than any verdict, far less than would strain memory.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;

/// How a client reaches its endpoint: concurrency, pacing, retries, timeouts, reply cap.
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
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// The longest silence inside a streamed reply.
    pub idle_timeout: Duration,
    /// The first backoff; it doubles each retry (with jitter), up to `max_backoff`.
    pub backoff: Duration,
    /// The longest backoff between tries.
    pub max_backoff: Duration,
    /// The most bytes one reply may take (body or stream, error bodies included); a longer
    /// one fails the call with [`LlmError::TooLarge`] and is not tried again.
    pub max_reply_bytes: usize,
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
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
        }
    }
}

/// The limits of an endpoint of `servers` replicas: each replica keeps the configured
/// concurrency and rates (enforced per replica), so the endpoint as a whole takes them all.
pub fn endpoint_limits(opts: &ClientOptions, servers: usize) -> Limits {
    let n = servers.max(1);
    let times = |x: Option<u32>| x.map(|x| x.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX)));
    Limits::new(
        opts.concurrency.saturating_mul(n),
        times(opts.rpm),
        times(opts.tpm),
    )
}
