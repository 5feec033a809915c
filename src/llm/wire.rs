//! What every provider does the same way on the wire, written once: the HTTP client, an
//! endpoint's requests with its authentication, sending with a timeout, reading a body
//! bounded as it arrives, turning a failed status into an [`LlmError`] (with `Retry-After`),
//! server-sent events, result files read line by line, and keys kept out of every error.
//! A provider's file says only its wire format: paths, headers, bodies and replies.
//! Retries and backoff are the client's (`client.rs`), for every provider alike.

use std::time::Duration;

use serde_json::Value;

use super::{LlmError, OnPiece, Piece, Timeouts, sse};

/// How a wire format proves who is calling: its headers, with the key when there is one.
pub(super) type Authorize = fn(reqwest::RequestBuilder, Option<&str>) -> reqwest::RequestBuilder;

/// The HTTP client calls go through (one per model client or batch API; its connections
/// are reused across calls).
pub(super) fn http_client(connect_timeout: Duration) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| LlmError::Config(format!("cannot start the HTTP client: {e}")))
}

/// One server of one provider: where it is, its key and how the key is sent.
#[derive(Clone)]
pub(super) struct Endpoint {
    base_url: String,
    key: Option<String>,
    /// Where the key came from (`OPENAI_API_KEY`), for error messages.
    key_var: String,
    http: reqwest::Client,
    authorize: Authorize,
}

impl std::fmt::Debug for Endpoint {
    // The key is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .field("key_var", &self.key_var)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    pub(super) fn new(
        base_url: &str,
        key: Option<String>,
        key_var: &str,
        http: reqwest::Client,
        authorize: Authorize,
    ) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_var: key_var.to_owned(),
            http,
            authorize,
        }
    }

    /// The base URL, without a trailing `/`.
    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// A `GET` of `path` (after the base URL), authenticated.
    pub(super) fn get(&self, path: &str) -> reqwest::RequestBuilder {
        (self.authorize)(
            self.http.get(format!("{}{path}", self.base_url)),
            self.key.as_deref(),
        )
    }

    /// A `POST` to `path` (after the base URL), authenticated.
    pub(super) fn post(&self, path: &str) -> reqwest::RequestBuilder {
        (self.authorize)(
            self.http.post(format!("{}{path}", self.base_url)),
            self.key.as_deref(),
        )
    }

    /// Sends a request and returns the body of a successful answer (at most `cap` bytes,
    /// else `TooLarge`); a failed status becomes the matching error.
    pub(super) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
        cap: usize,
    ) -> Result<String, LlmError> {
        let body = async {
            let mut response = self.open(request, timeout, cap).await?;
            if response.content_length().is_some_and(|n| n > cap as u64) {
                return Err(LlmError::TooLarge { limit: cap });
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| transport(&e, timeout))? {
                if body.len() + chunk.len() > cap {
                    return Err(LlmError::TooLarge { limit: cap });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(String::from_utf8_lossy(&body).into_owned())
        };
        self.redact(body.await)
    }

    /// [`send`](Self::send), and the body read as JSON.
    pub(super) async fn send_json(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
        cap: usize,
    ) -> Result<Value, LlmError> {
        json(&self.send(request, timeout, cap).await?)
    }

    /// Sends a streaming request and hands each server-sent event to `on_event` until it
    /// says `Done`. A stream that ends first is `Truncated`; one silent for `idle` is
    /// `Idle`; one longer than `cap` bytes is `TooLarge`.
    pub(super) async fn stream(
        &self,
        request: reqwest::RequestBuilder,
        timeouts: Timeouts,
        cap: usize,
        mut on_event: impl FnMut(sse::Event) -> Result<Flow, LlmError> + Send,
    ) -> Result<(), LlmError> {
        let events = async {
            let mut response = self.open(request, timeouts.whole, cap).await?;
            let mut reader = sse::Reader::default();
            let mut received = 0usize;
            loop {
                let chunk = tokio::time::timeout(timeouts.idle, response.chunk())
                    .await
                    .map_err(|_| LlmError::Idle(timeouts.idle))?
                    .map_err(|e| transport(&e, timeouts.whole))?;
                let Some(bytes) = chunk else {
                    return Err(LlmError::Truncated("no end-of-stream event".into()));
                };
                received += bytes.len();
                if received > cap {
                    return Err(LlmError::TooLarge { limit: cap });
                }
                for event in reader.push(&bytes) {
                    if let Flow::Done = on_event(event)? {
                        return Ok(());
                    }
                }
            }
        };
        self.redact(events.await)
    }

    /// Downloads a file of lines, handing each non-blank line to `each` (at most
    /// `line_cap` bytes a line, else `TooLarge`; an error body at most `error_cap`).
    pub(super) async fn lines(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
        error_cap: usize,
        line_cap: usize,
        each: &mut (dyn FnMut(&[u8]) -> Result<(), LlmError> + Send),
    ) -> Result<(), LlmError> {
        let lines = async {
            let mut response = self.open(request, timeout, error_cap).await?;
            let mut line: Vec<u8> = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| transport(&e, timeout))? {
                let mut rest = &chunk[..];
                while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                    if line.len() + nl > line_cap {
                        return Err(LlmError::TooLarge { limit: line_cap });
                    }
                    line.extend_from_slice(&rest[..nl]);
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        each(&line)?;
                    }
                    line.clear();
                    rest = &rest[nl + 1..];
                }
                if line.len() + rest.len() > line_cap {
                    return Err(LlmError::TooLarge { limit: line_cap });
                }
                line.extend_from_slice(rest);
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                each(&line)?;
            }
            Ok(())
        };
        self.redact(lines.await)
    }

    /// The error a live call answered with `status` and `body` would give (for a batch's
    /// result line, which holds the HTTP answer the call would have had).
    pub(super) fn status_error(&self, status: u16, body: &str) -> LlmError {
        status_error(
            status,
            &reqwest::header::HeaderMap::new(),
            body,
            &self.key_var,
        )
        .redacted(self.key.as_deref())
    }

    /// Sends a request; a successful answer comes back unread, a failed status as its
    /// error (reading at most [`MAX_ERROR_BODY`] and `cap` bytes of its body).
    async fn open(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
        cap: usize,
    ) -> Result<reqwest::Response, LlmError> {
        let response = request
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| transport(&e, timeout))?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(failed_status(response, timeout, cap, &self.key_var).await)
        }
    }

    /// A server or proxy may echo request headers in an error page: the key never leaves
    /// in an error.
    fn redact<T>(&self, result: Result<T, LlmError>) -> Result<T, LlmError> {
        result.map_err(|e| e.redacted(self.key.as_deref()))
    }
}

/// Whether a stream goes on after an event.
pub(super) enum Flow {
    More,
    Done,
}

/// Adds a streamed piece to the reply's text and reports it, unless that would pass `cap`
/// bytes.
pub(super) fn push_piece(
    text: &mut String,
    piece: &str,
    cap: usize,
    on_piece: OnPiece<'_>,
) -> Result<(), LlmError> {
    if text.len() + piece.len() > cap {
        return Err(LlmError::TooLarge { limit: cap });
    }
    text.push_str(piece);
    on_piece(Piece::Text(piece));
    Ok(())
}

/// An error event inside a stream that had begun well, as the status it stands for.
pub(super) fn stream_error(status: u16, message: &str) -> LlmError {
    LlmError::Server {
        status,
        message: format!("error inside the stream: {message}"),
    }
}

/// A reply's text as JSON.
pub(super) fn json(text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|e| LlmError::BadResponse(format!("not JSON ({e})")))
}

/// A stream event's data as JSON.
pub(super) fn event_json(event: &sse::Event) -> Result<Value, LlmError> {
    serde_json::from_str(&event.data)
        .map_err(|e| LlmError::BadResponse(format!("a stream event is not JSON ({e})")))
}

/// A JSON number field as a count (token usage, request counts): 0 when absent.
/// Adds a judge's `extra` fields to a request body. A field the body already has is left
/// as the client wrote it (the settings refuse such fields; this is the last guard).
pub(super) fn add_extra(body: &mut Value, extra: &serde_json::Map<String, Value>) {
    if let Value::Object(fields) = body {
        for (k, v) in extra {
            fields.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

pub(super) fn count(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Reads an HTTP error body into a short message (the provider's `error.message` when it
/// sends one), so errors say what the server said without dumping whole pages.
pub(super) fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
        })
        .and_then(|m| m.as_str().map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let one_line = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 300 {
        let cut: String = one_line.chars().take(300).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// The most of an error body read: enough for any message worth showing.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The error for a failed status, from at most [`MAX_ERROR_BODY`] (and `cap`) bytes of its
/// body: the rest is never read.
async fn failed_status(
    mut response: reqwest::Response,
    timeout: Duration,
    cap: usize,
    key_var: &str,
) -> LlmError {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let limit = cap.min(MAX_ERROR_BODY);
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() >= room {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => return transport(&e, timeout),
        }
    }
    status_error(status, &headers, &String::from_utf8_lossy(&body), key_var)
}

/// Maps a non-success status to an error.
fn status_error(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: &str,
    key_var: &str,
) -> LlmError {
    match status {
        429 => LlmError::RateLimited {
            retry_after: retry_after(headers),
        },
        401 | 403 => LlmError::Auth {
            status,
            key_var: key_var.to_owned(),
        },
        500..=599 => LlmError::Server {
            status,
            message: error_message(body),
        },
        _ => LlmError::Request {
            status,
            message: error_message(body),
        },
    }
}

/// `Retry-After` in seconds (an HTTP date is not worth parsing here: treated as absent).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    let secs: f64 = v.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(600.0)))
}

fn transport(e: &reqwest::Error, timeout: Duration) -> LlmError {
    if e.is_timeout() {
        return LlmError::Timeout(timeout);
    }
    // reqwest errors name the URL and their causes, never headers: no key can appear here.
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    LlmError::Transport(text)
}
