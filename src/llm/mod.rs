//! LLM providers behind one trait, and the client around them that every judge call goes
//! through: a concurrency cap, timeouts, a cap on a reply's size, a pause gate, and retries
//! with backoff that honour `Retry-After`.
//! API keys are read here (environment or config) and never leave: not in results, errors
//! or logs.

mod anthropic;
pub mod batch;
mod cache;
mod client;
mod gate;
mod limits;
mod meter;
mod model_id;
mod openai;
mod options;
mod replicas;
mod sse;
mod wire;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use cache::{Cache, CacheStats};
pub use client::{Client, Completion, IfUnreadable, Read, ReadError, Reading};
pub use gate::Gate;
pub use limits::Limits;
pub use meter::{Meter, Price, Usage as RunUsage};
pub use model_id::{NamedProvider, ProviderKind, ProviderSpec, resolve};
pub use options::{ClientOptions, DEFAULT_MAX_REPLY_BYTES, endpoint_limits};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: String,
}

/// Who says a message (serialized lowercase, as both wire formats write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The instructions (Anthropic sends them apart from the messages).
    System,
    /// The question.
    User,
    /// The model's earlier answer (a repair request quotes it).
    Assistant,
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: text.into(),
        }
    }
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: text.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: text.into(),
        }
    }
}

/// What a judge asks for.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChatRequest {
    /// The provider's own model name (`gpt-4o-mini`, not `openai/gpt-4o-mini`).
    pub model: String,
    /// The conversation, in order.
    pub messages: Vec<Message>,
    /// Sampling temperature (0 for grading).
    pub temperature: f64,
    /// The most tokens the reply may take.
    pub max_tokens: u32,
    /// A sampling seed, where the server honours one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// A JSON Schema the reply must follow (structured output), where the server supports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    /// Which of several samples of the same question this is (never sent; it keeps the
    /// samples apart in the cache).
    #[serde(skip_serializing_if = "is_zero")]
    pub sample: u32,
    /// Ask for each reply token's log-probability, where the server gives them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub logprobs: bool,
    /// How hard an OpenAI-compatible reasoning model thinks (`reasoning_effort`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<crate::model::ReasoningEffort>,
    /// Anthropic's extended thinking budget in tokens (`thinking.budget_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Fields added to the request body as written (never one the client writes).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Tokens a request may use: its text at about four characters a token, plus the most it
/// may write. Used for tokens-per-minute pacing and dry-run estimates.
pub fn estimate_tokens(req: &ChatRequest) -> u64 {
    estimate_input_tokens(req) + u64::from(req.max_tokens)
}

/// Tokens a request's messages take, at about four characters a token.
pub fn estimate_input_tokens(req: &ChatRequest) -> u64 {
    let chars: usize = req.messages.iter().map(|m| m.content.chars().count()).sum();
    (chars as u64).div_ceil(4) + 4 * req.messages.len() as u64
}

/// The provider's answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatResponse {
    /// The reply's text.
    pub text: String,
    /// Prompt tokens, as the provider counted them (0 when it did not say).
    pub input_tokens: u64,
    /// Reply tokens, as the provider counted them (0 when it did not say); reasoning
    /// tokens included, since providers bill them as output.
    pub output_tokens: u64,
    /// Of the reply tokens, those a reasoning model spent thinking, where the provider
    /// says (`OpenAI`'s `completion_tokens_details.reasoning_tokens`).
    pub reasoning_tokens: u64,
    /// The reply's tokens and their natural-log probabilities, in order, when asked for
    /// and given (empty otherwise).
    pub logprobs: Vec<(String, f64)>,
}

impl ChatResponse {
    /// The reply as the cache and downloaded batches keep it: `{text, input_tokens,
    /// output_tokens, reasoning_tokens?, logprobs?}`.
    pub fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "text": self.text,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        });
        if self.reasoning_tokens > 0 {
            v["reasoning_tokens"] = serde_json::json!(self.reasoning_tokens);
        }
        if !self.logprobs.is_empty() {
            v["logprobs"] = serde_json::json!(self.logprobs);
        }
        v
    }

    /// A reply kept by [`ChatResponse::stored`]; `None` without its text. Counts missing
    /// from older entries are 0.
    pub fn from_stored(v: &serde_json::Value) -> Option<Self> {
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        Some(Self {
            text: v.get("text")?.as_str()?.to_owned(),
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            reasoning_tokens: n("reasoning_tokens"),
            logprobs: v
                .get("logprobs")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .take(MAX_LOGPROBS)
                .filter_map(|t| Some((t.get(0)?.as_str()?.to_owned(), t.get(1)?.as_f64()?)))
                .collect(),
        })
    }
}

/// The most token log-probabilities kept from one reply (a reply is bounded anyway; this
/// bounds what a server's extra fields can make us hold).
pub const MAX_LOGPROBS: usize = 8192;

/// Reads an OpenAI-style `logprobs.content` array (`[{token, logprob}, …]`) onto `into`.
pub fn push_logprobs(content: &serde_json::Value, into: &mut Vec<(String, f64)>) {
    for t in content.as_array().into_iter().flatten() {
        if into.len() >= MAX_LOGPROBS {
            return;
        }
        if let (Some(token), Some(lp)) = (
            t.get("token").and_then(serde_json::Value::as_str),
            t.get("logprob").and_then(serde_json::Value::as_f64),
        ) && lp.is_finite()
            && lp <= 0.0
        {
            into.push((token.to_owned(), lp));
        }
    }
}

/// Why a call failed. Messages never hold a key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("rate limited by the provider (HTTP 429)")]
    /// The server answered 429.
    RateLimited {
        /// How long it asked us to wait (`Retry-After`), when it said.
        retry_after: Option<Duration>,
    },
    #[error("the provider answered HTTP {status}: {message}")]
    /// The server failed (5xx, or an error inside a stream).
    Server {
        /// The HTTP status (or the status an in-stream error stands for).
        status: u16,
        /// What the server said, in one short line.
        message: String,
    },
    #[error("the provider refused the key (HTTP {status}); check {key_var}")]
    /// The key was refused (401 or 403).
    Auth {
        /// The HTTP status.
        status: u16,
        /// Where the key came from, to check.
        key_var: String,
    },
    #[error("the request was refused (HTTP {status}): {message}")]
    /// The request itself was refused (another 4xx): sending it again would not help.
    Request {
        /// The HTTP status.
        status: u16,
        /// What the server said, in one short line.
        message: String,
    },
    /// The connection failed or broke (the request may not have arrived).
    #[error("could not reach the provider: {0}")]
    Transport(String),
    /// No complete answer within the whole request's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// A stream sent nothing for this long.
    #[error("the stream went quiet for {0:?}")]
    Idle(Duration),
    /// A stream ended before its end-of-reply event.
    #[error("the stream ended before the reply was complete ({0})")]
    Truncated(String),
    /// The run's cost budget is spent.
    #[error("not sent: {0}")]
    Budget(String),
    /// The reply is not what the provider's format promises.
    #[error("the provider's reply could not be read: {0}")]
    BadResponse(String),
    #[error(
        "the reply exceeded {} (judge.max_reply_bytes); no verdict needs that much, so the call was stopped (raise judge.max_reply_bytes in rubricate.yaml if this judge's replies really are that long)",
        human_bytes(*limit)
    )]
    /// The reply passed the cap on a reply's size.
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// The run was stopped before this call was sent: not a failure of the call.
    #[error("cancelled: the run was stopped before this call was sent")]
    Cancelled,
    /// The call is in a provider batch (sent, or to be sent, by a batch run) and has no
    /// answer yet: not a failure of the call.
    #[error("waiting in a provider batch")]
    Batched,
    /// The provider's batch ended without answering this request (expired, cancelled, or
    /// left out): worth sending again.
    #[error("the provider's batch did not answer it: {0}")]
    Unanswered(String),
    /// The judge cannot be set up as configured (model id, key, base URL, HTTP client).
    #[error("{0}")]
    Config(String),
}

/// `4 MiB`, `512 KiB`, `1000 bytes`.
fn human_bytes(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

impl LlmError {
    /// The same error with every occurrence of `key` replaced: a server or proxy may echo
    /// request headers in an error page.
    #[must_use]
    pub fn redacted(self, key: Option<&str>) -> Self {
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            return self;
        };
        let clean = |m: String| m.replace(key, "<redacted>");
        match self {
            LlmError::Server { status, message } => LlmError::Server {
                status,
                message: clean(message),
            },
            LlmError::Request { status, message } => LlmError::Request {
                status,
                message: clean(message),
            },
            LlmError::Transport(m) => LlmError::Transport(clean(m)),
            LlmError::BadResponse(m) => LlmError::BadResponse(clean(m)),
            LlmError::Truncated(m) => LlmError::Truncated(clean(m)),
            other => other,
        }
    }

    /// Worth another try: rate limits, server errors, lost connections, timeouts, and
    /// replies that arrived malformed (cut short, or not the provider's JSON). A reply over
    /// the size cap is not: the next one would be as long.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            LlmError::RateLimited { .. }
                | LlmError::Server { .. }
                | LlmError::Transport(_)
                | LlmError::Timeout(_)
                | LlmError::Idle(_)
                | LlmError::Truncated(_)
                | LlmError::BadResponse(_)
                | LlmError::Unanswered(_)
        )
    }
}

/// A boxed future, as [`Provider::complete`] returns (the trait stays object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a streaming call reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// More of the reply's text.
    Text(&'a str),
    /// The call is being tried again: the text so far is void.
    Retry,
}

/// Receives a streaming reply's pieces.
pub type OnPiece<'a> = &'a (dyn Fn(Piece<'_>) + Send + Sync);

/// How long a request may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole request, first byte to last.
    pub whole: Duration,
    /// The longest silence inside a stream.
    pub idle: Duration,
}

/// One wire format.
pub trait Provider: Send + Sync + std::fmt::Debug {
    /// `openai`, `anthropic`, `ollama` or a configured service name.
    fn name(&self) -> &str;
    /// One request. With `on_piece`, the reply is streamed and its text reported as it
    /// arrives; the result is the same either way.
    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
        on_piece: Option<OnPiece<'a>>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;
}

impl ProviderKind {
    /// How this wire format sends its key.
    fn authorize(self) -> wire::Authorize {
        match self {
            ProviderKind::OpenAi => openai::authorize,
            ProviderKind::Anthropic => anthropic::authorize,
        }
    }
}
