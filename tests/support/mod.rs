//! A loopback LLM server for tests: speaks `OpenAI` chat completions (`/v1/chat/completions`)
//! and Anthropic Messages (`/v1/messages`), plain or streamed as server-sent events when a
//! request asks for `stream`, answers by a rule (or a script of faults first), with
//! latency, and records every request and the most calls it saw in flight at once. Faults
//! include replies that never end (a body or a stream that goes on for ever, or an error
//! page that does) and replies held until the test releases them.
//! It runs on a thread of its own, so tests of the real binary can use it too.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

pub mod batch;
pub mod batch_run;
pub mod checked;
pub mod journal;
pub mod pairs;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A normal answer with this text as the model's reply.
    Text(String),
    /// An HTTP error, with `Retry-After` seconds when given.
    Status(u16, Option<u32>, String),
    /// Never answers (until the client gives up).
    Hang,
    /// A 200 whose body is not the provider's JSON.
    Garbage(String),
    /// A streamed reply cut off after this many characters of the text: the connection
    /// closes with no end-of-stream event (a plain request gets the same as `Text`).
    Truncated(String, usize),
    /// A streamed reply that sends this many characters and then goes silent.
    Stall(String, usize),
    /// A 200 that never ends: a plain body whose reply text goes on for ever, or a stream
    /// of text events that never stops.
    Endless,
    /// This HTTP error status with a body that never ends.
    EndlessError(u16),
    /// This text, once the test calls [`LlmServer::release`].
    Held(String),
    /// This text with token log-probabilities (`logprobs.content` as `OpenAI` sends it, when the request
    /// asks for them): the verdict value's first character has probability `p`, every other
    /// token 1.
    Confident(String, f64),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    /// The whole prompt, every message's text joined.
    pub fn prompt(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.body.get("system").and_then(Value::as_str) {
            parts.push(s.to_owned());
        }
        for m in self.body["messages"].as_array().into_iter().flatten() {
            parts.push(m["content"].as_str().unwrap_or_default().to_owned());
        }
        parts.join("\n")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Rule = dyn Fn(&Seen) -> Reply + Send + Sync;

struct Inner {
    script: Mutex<VecDeque<Reply>>,
    rule: Box<Rule>,
    seen: Mutex<Vec<Seen>>,
    latency: Duration,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    released: AtomicBool,
    release: tokio::sync::Notify,
}

pub struct LlmServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    inner: Arc<Inner>,
}

impl LlmServer {
    /// Starts a server answering every request by `rule`, after `latency`.
    pub fn start(
        latency: Duration,
        rule: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> LlmServer {
        let inner = Arc::new(Inner {
            script: Mutex::new(VecDeque::new()),
            rule: Box::new(rule),
            seen: Mutex::new(Vec::new()),
            latency,
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            released: AtomicBool::new(false),
            release: tokio::sync::Notify::new(),
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let state = Arc::clone(&inner);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = Router::new()
                    .route("/v1/chat/completions", post(answer))
                    .route("/v1/messages", post(answer))
                    .with_state(state);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        let addr = rx.recv().unwrap();
        LlmServer {
            url: format!("http://{addr}"),
            inner,
        }
    }

    /// Replies used, in order, before the rule takes over.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().unwrap().extend(replies);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }

    pub fn max_in_flight(&self) -> usize {
        self.inner.max_in_flight.load(Ordering::SeqCst)
    }

    /// Answers every [`Reply::Held`] request, those waiting and those to come.
    pub fn release(&self) {
        self.inner.released.store(true, Ordering::SeqCst);
        self.inner.release.notify_waiters();
    }
}

/// Waits until the test releases held replies.
async fn released(inner: &Inner) {
    loop {
        let mut notified = std::pin::pin!(inner.release.notified());
        notified.as_mut().enable();
        if inner.released.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// What a thinking Anthropic judge thinks (in a `thinking` block, never the verdict).
pub const THINKING: &str = r#"{"reason": "thinking aloud", "verdict": "UNMET"}"#;
/// Reasoning tokens an OpenAI-compatible server reports when asked for `reasoning_effort`
/// (out of 320 completion tokens).
pub const REASONING_TOKENS: u64 = 300;

/// A model reply in JSON, as our judge asks for it.
pub fn verdict(reason: &str, verdict: Value) -> Reply {
    Reply::Text(json!({"reason": reason, "verdict": verdict}).to_string())
}

async fn answer(
    State(inner): State<Arc<Inner>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let seen = Seen {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body: serde_json::from_str(&body).unwrap_or(Value::Null),
    };
    let now = inner.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    inner.max_in_flight.fetch_max(now, Ordering::SeqCst);
    inner.seen.lock().unwrap().push(seen.clone());
    let scripted = inner.script.lock().unwrap().pop_front();
    let mut reply = scripted.unwrap_or_else(|| (inner.rule)(&seen));
    if !inner.latency.is_zero() {
        tokio::time::sleep(inner.latency).await;
    }
    if let Reply::Held(text) = reply {
        released(&inner).await;
        reply = Reply::Text(text);
    }
    let wants_logprobs = seen.body.get("logprobs") == Some(&Value::Bool(true));
    let logprobs = match &reply {
        Reply::Confident(text, p) if wants_logprobs => Some(verdict_tokens(text, *p)),
        _ => None,
    };
    if let Reply::Confident(text, _) = reply {
        reply = Reply::Text(text);
    }
    let anthropic = seen.path == "/v1/messages";
    let stream = seen.body.get("stream") == Some(&Value::Bool(true));
    let response = match reply {
        Reply::Text(text) if stream => sse(&seen, &text, text.chars().count(), End::Complete),
        Reply::Truncated(text, cut) if stream => sse(&seen, &text, cut, End::Close),
        Reply::Stall(text, cut) if stream => sse(&seen, &text, cut, End::Stall),
        Reply::Text(text) | Reply::Truncated(text, _) | Reply::Stall(text, _) => {
            // A reasoning judge: Anthropic puts its thinking in a block of its own before
            // the answer (a verdict-looking one, so a client that read it would be caught),
            // billed as output; OpenAI counts reasoning tokens inside completion tokens.
            let thinking = seen.body.get("thinking").is_some();
            let reasoning = seen.body.get("reasoning_effort").is_some();
            let body = if anthropic {
                let mut content = vec![json!({"type": "text", "text": text})];
                if thinking {
                    content.insert(
                        0,
                        json!({"type": "thinking", "thinking": THINKING, "signature": "sig"}),
                    );
                }
                json!({"type": "message", "role": "assistant", "content": content,
                       "usage": {"input_tokens": 100, "output_tokens": if thinking { 320 } else { 20 }}})
            } else {
                let usage = if reasoning {
                    json!({"prompt_tokens": 100, "completion_tokens": 320, "total_tokens": 420,
                           "completion_tokens_details": {"reasoning_tokens": REASONING_TOKENS}})
                } else {
                    json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
                };
                json!({"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                       "logprobs": logprobs.map(|content| json!({"content": content}))}],
                       "usage": usage})
            };
            (StatusCode::OK, axum::Json(body)).into_response()
        }
        Reply::Status(code, retry_after, message) => {
            let mut r = (
                StatusCode::from_u16(code).unwrap(),
                axum::Json(json!({"error": {"message": message}})),
            )
                .into_response();
            if let Some(s) = retry_after {
                r.headers_mut()
                    .insert("retry-after", s.to_string().parse().unwrap());
            }
            r
        }
        Reply::Hang => {
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
        Reply::Garbage(text) => (StatusCode::OK, text).into_response(),
        Reply::Endless => endless(StatusCode::OK, anthropic, stream),
        Reply::EndlessError(code) => endless(StatusCode::from_u16(code).unwrap(), false, false),
        Reply::Held(_) | Reply::Confident(..) => unreachable!("answered as text above"),
    };
    inner.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

/// The `logprobs.content` (as `OpenAI` sends it) for `text`: three tokens, the verdict value's first
/// character alone with probability `p`.
fn verdict_tokens(text: &str, p: f64) -> Value {
    let key = text
        .find("\"verdict\"")
        .map_or(0, |k| k + "\"verdict\"".len());
    let value = text[key..]
        .find(|c: char| !matches!(c, ':' | ' ' | '"'))
        .map_or(text.len(), |v| key + v);
    let next = text[value..]
        .chars()
        .next()
        .map_or(text.len(), |c| value + c.len_utf8());
    json!([
        {"token": &text[..value], "logprob": 0.0},
        {"token": &text[value..next], "logprob": p.ln()},
        {"token": &text[next..], "logprob": 0.0},
    ])
}

/// A body that never ends: text events when `stream`, else a JSON reply (or, for an error
/// status, an error message) whose string never closes.
fn endless(status: StatusCode, anthropic: bool, stream: bool) -> Response {
    let text = "la ".repeat(1000);
    let (head, piece) = if !stream {
        let head = if !status.is_success() {
            "{\"error\": {\"message\": \""
        } else if anthropic {
            "{\"type\": \"message\", \"content\": [{\"type\": \"text\", \"text\": \""
        } else {
            "{\"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \""
        };
        (head.to_owned(), text)
    } else if anthropic {
        let start = format!(
            "event: message_start\ndata: {}\n\n",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1}}})
        );
        let delta = format!(
            "event: content_block_delta\ndata: {}\n\n",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
        );
        (start, delta)
    } else {
        let delta = format!(
            "data: {}\n\n",
            json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
        );
        (String::new(), delta)
    };
    let piece = axum::body::Bytes::from(piece);
    let body = futures_util::StreamExt::chain(
        futures_util::stream::once(async move { axum::body::Bytes::from(head) }),
        futures_util::stream::repeat(piece),
    );
    let body = futures_util::StreamExt::map(body, Ok::<_, std::convert::Infallible>);
    Response::builder()
        .status(status)
        .header(
            "content-type",
            if stream {
                "text/event-stream"
            } else {
                "application/json"
            },
        )
        .body(axum::body::Body::from_stream(body))
        .unwrap()
}

#[derive(Clone, Copy, PartialEq)]
enum End {
    Complete,
    Close,
    Stall,
}

/// A streamed reply in the provider's event format: the first `cut` characters of `text` in
/// small pieces, then the end events, a closed connection, or silence.
/// A thinking Anthropic judge streams its thinking first, as a block of its own (index 0).
fn sse(seen: &Seen, text: &str, cut: usize, end: End) -> Response {
    let anthropic = seen.path == "/v1/messages";
    let thinking = seen.body.get("thinking").is_some();
    let sent: Vec<char> = text.chars().take(cut).collect();
    let pieces: Vec<String> = sent.chunks(7).map(|c| c.iter().collect()).collect();
    let mut events: Vec<String> = Vec::new();
    if anthropic {
        events.push(format!(
            "event: message_start\ndata: {}\n\n",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1}}})
        ));
        events.push("event: ping\ndata: {\"type\": \"ping\"}\n\n".into());
        let index = usize::from(thinking);
        if thinking {
            let thought: Vec<char> = THINKING.chars().collect();
            events.push(format!(
                "event: content_block_start\ndata: {}\n\n",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})
            ));
            for piece in thought.chunks(7) {
                let piece: String = piece.iter().collect();
                events.push(format!(
                    "event: content_block_delta\ndata: {}\n\n",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": piece}})
                ));
            }
            events.push(format!(
                "event: content_block_delta\ndata: {}\n\n",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}})
            ));
            events.push(format!(
                "event: content_block_stop\ndata: {}\n\n",
                json!({"type": "content_block_stop", "index": 0})
            ));
            events.push(format!(
                "event: content_block_start\ndata: {}\n\n",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
            ));
        }
        for p in &pieces {
            events.push(format!(
                "event: content_block_delta\ndata: {}\n\n",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})
            ));
        }
        if end == End::Complete {
            events.push(format!(
                "event: message_delta\ndata: {}\n\n",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": if thinking { 320 } else { 20 }}})
            ));
            events.push("event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n".into());
        }
    } else {
        for p in &pieces {
            events.push(format!(
                "data: {}\n\n",
                json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]})
            ));
        }
        if end == End::Complete {
            events.push(format!(
                "data: {}\n\n",
                json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            ));
            events.push(format!(
                "data: {}\n\n",
                json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
            ));
            events.push("data: [DONE]\n\n".into());
        }
    }
    let body = futures_util::stream::iter(
        events
            .into_iter()
            .map(|e| Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(e))),
    );
    let body: std::pin::Pin<
        Box<
            dyn futures_util::Stream<Item = Result<axum::body::Bytes, std::convert::Infallible>>
                + Send,
        >,
    > = if end == End::Stall {
        Box::pin(futures_util::StreamExt::chain(
            body,
            futures_util::stream::pending(),
        ))
    } else {
        Box::pin(body)
    };
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from_stream(body))
        .unwrap()
}
