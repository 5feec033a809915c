//! The LLM client (`rubricate::llm::Client`) against the loopback server in `tests/support/`,
//! in both wire formats where the format matters: streamed replies (pieces, usage, the
//! request body), truncated and stalled streams (retried, or `Truncated` / `Idle` without
//! retries), concurrency that halves on repeated 429s and creeps back, single-flight through
//! the cache, the cost budget, and errors that never show the API key. Also: only replies
//! the caller read are cached, unreadable and malformed replies are sent again, the cap on
//! a reply's size, and the pause gate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use futures_util::future::join_all;
use rubricate::llm::{
    Cache, ChatRequest, ChatResponse, Client, ClientOptions, Gate, IfUnreadable, LlmError, Message,
    Meter, Piece, Price, ProviderKind, ProviderSpec, ReadError, Reading,
};
use serde_json::json;
use support::{LlmServer, Reply};

const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];
const MODEL: &str = "test-model";
const REPLY: &str = "The answer is forty-two, and here is why it is so.";
const KEY: &str = "sk-secret-test-91";

/// Where a client of `kind` reaches a server at `url` (no key).
fn spec(kind: ProviderKind, url: &str) -> ProviderSpec {
    let (name, base_url, key_var) = match kind {
        ProviderKind::OpenAi => ("openai", format!("{url}/v1"), "OPENAI_API_KEY"),
        ProviderKind::Anthropic => ("anthropic", url.to_owned(), "ANTHROPIC_API_KEY"),
    };
    ProviderSpec {
        name: name.into(),
        kind,
        model: MODEL.into(),
        base_url,
        replicas: Vec::new(),
        key: None,
        key_var: key_var.into(),
    }
}

fn client_for(spec: ProviderSpec, opts: ClientOptions) -> Client {
    let id = format!("{}/{MODEL}", spec.name);
    Client::new(&id, spec, opts).unwrap()
}

fn client(kind: ProviderKind, url: &str, opts: ClientOptions) -> Client {
    client_for(spec(kind, url), opts)
}

/// Retries with a backoff short enough for tests.
fn quick(max_retries: u32) -> ClientOptions {
    ClientOptions {
        max_retries,
        backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        ..ClientOptions::default()
    }
}

fn request(text: &str) -> ChatRequest {
    ChatRequest {
        model: MODEL.into(),
        messages: vec![Message::user(text)],
        temperature: 0.0,
        max_tokens: 64,
        seed: None,
        schema: None,
        sample: 0,
        logprobs: false,
        reasoning_effort: None,
        thinking_budget: None,
        extra: serde_json::Map::new(),
    }
}

fn replying(text: &str) -> LlmServer {
    let text = text.to_owned();
    LlmServer::start(Duration::ZERO, move |_| Reply::Text(text.clone()))
}

/// A piece a streaming call reported, kept.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    Text(String),
    Retry,
}

/// Collects the pieces of a streaming call, in order.
#[derive(Debug, Default)]
struct Pieces(Mutex<Vec<Got>>);

impl Pieces {
    fn push(&self, piece: Piece<'_>) {
        let got = match piece {
            Piece::Text(t) => Got::Text(t.to_owned()),
            Piece::Retry => Got::Retry,
        };
        self.0.lock().unwrap().push(got);
    }

    fn all(&self) -> Vec<Got> {
        self.0.lock().unwrap().clone()
    }

    /// The text of the pieces in `got`, joined.
    fn joined(got: &[Got]) -> String {
        got.iter()
            .map(|g| match g {
                Got::Text(t) => t.as_str(),
                Got::Retry => "",
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_reply_arrives_in_pieces_with_its_usage() {
    for kind in KINDS {
        let server = replying(REPLY);
        let client = client(kind, &server.url, quick(0));
        let pieces = Pieces::default();
        let on_piece = |p: Piece<'_>| pieces.push(p);

        let done = client
            .complete(&request("Why?"), Some(&on_piece))
            .await
            .unwrap();

        let got = pieces.all();
        assert!(
            got.len() > 1,
            "{kind:?}: streamed in several pieces: {got:?}"
        );
        assert!(!got.contains(&Got::Retry), "{kind:?}: {got:?}");
        assert_eq!(Pieces::joined(&got), done.response.text, "{kind:?}");
        assert_eq!(done.response.text, REPLY, "{kind:?}");
        assert_eq!(
            (done.response.input_tokens, done.response.output_tokens),
            (100, 20),
            "{kind:?}: usage comes from the stream"
        );
        assert_eq!((done.attempts, done.cache_hit), (1, false), "{kind:?}");

        let seen = server.seen();
        assert_eq!(seen.len(), 1, "{kind:?}");
        let body = &seen[0].body;
        assert_eq!(body["stream"], json!(true), "{kind:?}: {body}");
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(seen[0].path, "/v1/chat/completions");
                assert_eq!(
                    body["stream_options"],
                    json!({"include_usage": true}),
                    "{body}"
                );
            }
            ProviderKind::Anthropic => {
                assert_eq!(seen[0].path, "/v1/messages");
                assert_eq!(body.get("stream_options"), None, "{body}");
            }
        }
        let usage = client.meter().snapshot();
        assert_eq!((usage.input_tokens, usage.output_tokens), (100, 20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_call_is_not_streamed() {
    for kind in KINDS {
        let server = replying(REPLY);
        let client = client(kind, &server.url, quick(0));
        let done = client.complete(&request("Why?"), None).await.unwrap();
        assert_eq!(done.response.text, REPLY, "{kind:?}");
        assert_eq!(
            (done.response.input_tokens, done.response.output_tokens),
            (100, 20)
        );
        assert_eq!(server.seen()[0].body.get("stream"), None, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_stream_is_tried_again_and_the_partial_text_voided() {
    for kind in KINDS {
        let server = replying(REPLY);
        server.script([Reply::Truncated(REPLY.into(), 10)]);
        let client = client(kind, &server.url, quick(2));
        let pieces = Pieces::default();
        let on_piece = |p: Piece<'_>| pieces.push(p);

        let done = client
            .complete(&request("Why?"), Some(&on_piece))
            .await
            .unwrap();

        assert_eq!(done.attempts, 2, "{kind:?}");
        assert_eq!(done.response.text, REPLY, "{kind:?}");
        assert_eq!(
            (done.response.input_tokens, done.response.output_tokens),
            (100, 20)
        );
        let got = pieces.all();
        let retries: Vec<usize> = (0..got.len()).filter(|&i| got[i] == Got::Retry).collect();
        assert_eq!(retries.len(), 1, "{kind:?}: one retry: {got:?}");
        let (before, after) = got.split_at(retries[0]);
        let partial: String = REPLY.chars().take(10).collect();
        assert_eq!(Pieces::joined(before), partial, "{kind:?}: {got:?}");
        assert_eq!(Pieces::joined(&after[1..]), REPLY, "{kind:?}: {got:?}");
        assert_eq!(server.seen().len(), 2, "{kind:?}");
        let usage = client.meter().snapshot();
        assert_eq!((usage.requests, usage.failed_calls), (2, 0), "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_retries_a_truncated_stream_is_an_error() {
    for kind in KINDS {
        let server = replying(REPLY);
        server.script([Reply::Truncated(REPLY.into(), 10)]);
        let client = client(kind, &server.url, quick(0));
        let pieces = Pieces::default();
        let on_piece = |p: Piece<'_>| pieces.push(p);

        let (err, attempts) = client
            .complete(&request("Why?"), Some(&on_piece))
            .await
            .unwrap_err();

        assert!(matches!(err, LlmError::Truncated(_)), "{kind:?}: {err:?}");
        assert_eq!(attempts, 1, "{kind:?}");
        let partial: String = REPLY.chars().take(10).collect();
        assert_eq!(Pieces::joined(&pieces.all()), partial, "{kind:?}");
        assert_eq!(client.meter().snapshot().failed_calls, 1, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_goes_quiet_is_idle() {
    for kind in KINDS {
        let server = replying(REPLY);
        server.script([Reply::Stall(REPLY.into(), 5)]);
        let idle = Duration::from_millis(200);
        let opts = ClientOptions {
            idle_timeout: idle,
            ..quick(0)
        };
        let client = client(kind, &server.url, opts);
        let pieces = Pieces::default();
        let on_piece = |p: Piece<'_>| pieces.push(p);

        let (err, attempts) = client
            .complete(&request("Why?"), Some(&on_piece))
            .await
            .unwrap_err();

        assert_eq!(err, LlmError::Idle(idle), "{kind:?}");
        assert_eq!(attempts, 1, "{kind:?}");
        let partial: String = REPLY.chars().take(5).collect();
        assert_eq!(Pieces::joined(&pieces.all()), partial, "{kind:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_429s_halve_the_concurrency_and_successes_restore_it() {
    let server = replying(REPLY);
    server.script((0..8).map(|_| Reply::Status(429, Some(0), "slow down".into())));
    let client = client(
        ProviderKind::OpenAi,
        &server.url,
        ClientOptions {
            concurrency: 8,
            ..quick(0)
        },
    );
    let req = request("Why?");
    assert_eq!(client.limits().concurrency(), 8);

    let results = join_all((0..8).map(|_| client.complete(&req, None))).await;
    for result in &results {
        assert!(
            matches!(result, Err((LlmError::RateLimited { .. }, 1))),
            "{result:?}"
        );
    }
    // The second 429 within 5 s halves the limit; the rest fall in the 1 s cooldown.
    assert_eq!(client.limits().concurrency(), 4);

    for _ in 0..40 {
        client.complete(&req, None).await.unwrap();
    }
    assert_eq!(client.limits().concurrency(), 8);

    let usage = client.meter().snapshot();
    assert_eq!(usage.rate_limited, 8);
    assert_eq!(usage.failed_calls, 8);
    assert_eq!(usage.requests, 48);
}

/// A 429's `Retry-After` is the wait before the next try, over the client's own backoff,
/// for both wire formats, plain and streamed (the shared status mapping). The backoff here
/// is an hour: a call that ignored `Retry-After: 0` would still be waiting at the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured_over_the_backoff_for_every_wire_format() {
    for kind in KINDS {
        for streamed in [false, true] {
            let server = replying(REPLY);
            server.script([Reply::Status(429, Some(0), "slow down".into())]);
            let client = client(
                kind,
                &server.url,
                ClientOptions {
                    backoff: Duration::from_secs(3600),
                    max_backoff: Duration::from_secs(3600),
                    ..quick(1)
                },
            );
            let pieces = Pieces::default();
            let on_piece = |p: Piece<'_>| pieces.push(p);
            let req = request("Why?");
            let call = client.complete(&req, streamed.then_some(&on_piece as _));
            let done = tokio::time::timeout(Duration::from_secs(120), call)
                .await
                .unwrap_or_else(|_| panic!("{kind:?} streamed={streamed}: Retry-After ignored"))
                .unwrap();
            assert_eq!(done.response.text, REPLY, "{kind:?} streamed={streamed}");
            assert_eq!(done.attempts, 2, "{kind:?} streamed={streamed}");
            assert_eq!(
                client.meter().snapshot().rate_limited,
                1,
                "{kind:?} streamed={streamed}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_calls_in_flight_share_one_request_through_the_cache() {
    let server = LlmServer::start(Duration::from_millis(200), |_| Reply::Text(REPLY.into()));
    let dir = tempfile::tempdir().unwrap();
    let cached = client(ProviderKind::OpenAi, &server.url, quick(0))
        .with_cache(Some(Cache::new(dir.path())));
    let req = request("Why?");

    let results = join_all((0..6).map(|_| cached.complete(&req, None))).await;
    let done: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        server.seen().len(),
        1,
        "one request for six identical calls"
    );
    assert!(done.iter().all(|d| d.response.text == REPLY));
    let hits: Vec<_> = done.iter().filter(|d| d.cache_hit).collect();
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|d| d.attempts == 0));
    assert!(done.iter().any(|d| !d.cache_hit && d.attempts == 1));
    let usage = cached.meter().snapshot();
    assert_eq!((usage.requests, usage.cache_hits), (1, 5));

    // Another sample of the same question is a question of its own.
    let other = ChatRequest {
        sample: 1,
        ..req.clone()
    };
    let d = cached.complete(&other, None).await.unwrap();
    assert_eq!((d.cache_hit, d.attempts), (false, 1));
    assert_eq!(server.seen().len(), 2);
    // ... and the first is still answered from the cache on disk.
    let d = cached.complete(&req, None).await.unwrap();
    assert_eq!((d.cache_hit, d.attempts), (true, 0));
    assert_eq!(server.seen().len(), 2);

    // Without a cache, every call sends its own request.
    let uncached = client(ProviderKind::OpenAi, &server.url, quick(0)).with_cache(None);
    let results = join_all((0..6).map(|_| uncached.complete(&req, None))).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Ok(d) if !d.cache_hit && d.attempts == 1))
    );
    assert_eq!(server.seen().len(), 2 + 6);
    let usage = uncached.meter().snapshot();
    assert_eq!((usage.requests, usage.cache_hits), (6, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_call_is_sent_once_the_budget_is_spent() {
    for kind in KINDS {
        let server = replying(REPLY);
        // 100 input tokens at $5/M and 20 output tokens at $25/M: $0.001 a call.
        let client = client(kind, &server.url, quick(0)).with_meter(
            Arc::new(Meter::new(Some(0.0015))),
            Some(Price {
                input: 5.0,
                output: 25.0,
            }),
        );
        let req = request("Why?");

        client.complete(&req, None).await.unwrap();
        client.complete(&req, None).await.unwrap(); // $0.001 spent < $0.0015
        let (err, attempts) = client.complete(&req, None).await.unwrap_err();

        assert!(matches!(err, LlmError::Budget(_)), "{kind:?}: {err:?}");
        assert!(err.to_string().contains("cost limit ($0.0015)"), "{err}");
        assert_eq!(attempts, 0, "{kind:?}");
        assert_eq!(server.seen().len(), 2, "{kind:?}: the third never left");
        let usage = client.meter().snapshot();
        assert_eq!(usage.requests, 2);
        assert!((usage.cost - 0.002).abs() < 1e-12, "{}", usage.cost);
    }
}

/// A client of `kind` with [`KEY`] as its key.
fn keyed_client(kind: ProviderKind, url: &str) -> Client {
    let spec = ProviderSpec {
        key: Some(KEY.into()),
        ..spec(kind, url)
    };
    client_for(spec, quick(0))
}

/// The header that carried the key to the server, as the server saw it.
fn key_header(seen: &support::Seen) -> Option<&str> {
    seen.header("authorization")
        .or_else(|| seen.header("x-api-key"))
}

fn assert_no_key(kind: ProviderKind, err: &LlmError) {
    let shown = err.to_string();
    assert!(!shown.contains(KEY), "{kind:?}: the key in {shown}");
    assert!(
        !format!("{err:?}").contains(KEY),
        "{kind:?}: the key in {err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_names_its_variable_but_never_the_key() {
    for kind in KINDS {
        for streamed in [false, true] {
            let server = LlmServer::start(Duration::ZERO, |_| {
                Reply::Status(401, None, "invalid x-api-key".into())
            });
            let client = keyed_client(kind, &server.url);
            let on_piece = |_: Piece<'_>| {};
            let on_piece = streamed.then_some(&on_piece as &(dyn Fn(Piece<'_>) + Send + Sync));

            let (err, attempts) = client
                .complete(&request("Why?"), on_piece)
                .await
                .unwrap_err();

            let var = match kind {
                ProviderKind::OpenAi => "OPENAI_API_KEY",
                ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            };
            assert_eq!(
                err,
                LlmError::Auth {
                    status: 401,
                    key_var: var.into()
                },
                "{kind:?}"
            );
            assert_eq!(attempts, 1, "{kind:?}: a refused key is not tried again");
            assert!(err.to_string().contains(var), "{kind:?}: {err}");
            assert_no_key(kind, &err);
            // The key did go to the server, where it belongs.
            let seen = server.seen();
            assert!(
                key_header(&seen[0]).is_some_and(|h| h.contains(KEY)),
                "{kind:?}: {:?}",
                seen[0].headers
            );
        }
    }
}

/// A loopback server answering every request with HTTP 500 and an HTML page (the support
/// server always answers errors in JSON); with `echo`, the page repeats the request's key
/// headers, as some debugging proxies do.
async fn html_500_server(echo: bool) -> String {
    let page = move |headers: HeaderMap| async move {
        let mut shown = String::new();
        if echo {
            for name in ["authorization", "x-api-key"] {
                if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
                    let _ = write!(shown, "<li>{name}: {v}</li>");
                }
            }
        }
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("<html><body><h1>Internal Server Error</h1>\n<ul>{shown}</ul></body></html>"),
        )
    };
    let app = axum::Router::new().fallback(page);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_error_page_does_not_show_the_key() {
    let url = html_500_server(false).await;
    for kind in KINDS {
        let client = keyed_client(kind, &url);
        let (err, attempts) = client.complete(&request("Why?"), None).await.unwrap_err();
        let LlmError::Server { status, message } = &err else {
            panic!("{kind:?}: {err:?}");
        };
        assert_eq!(*status, 500);
        assert!(message.contains("Internal Server Error"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
        assert_eq!(attempts, 1);
        assert_no_key(kind, &err);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_error_page_that_echoes_the_key_does_not_show_it() {
    let url = html_500_server(true).await;
    for kind in KINDS {
        let client = keyed_client(kind, &url);
        let (err, _) = client.complete(&request("Why?"), None).await.unwrap_err();
        assert!(
            matches!(err, LlmError::Server { status: 500, .. }),
            "{err:?}"
        );
        assert_no_key(kind, &err);
    }
}

/// Reads only [`REPLY`]; anything else is rejected.
fn only_reply(text: &str) -> Reading<String> {
    if text == REPLY {
        Reading::Accepted(text.to_owned())
    } else {
        Reading::Rejected(format!("not the reply: {text}"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_cannot_be_read_is_sent_again_and_only_the_read_one_cached() {
    for kind in KINDS {
        let server = replying(REPLY);
        server.script([Reply::Text("I would rather not say.".into())]);
        let dir = tempfile::tempdir().unwrap();
        let client = client(kind, &server.url, quick(2)).with_cache(Some(Cache::new(dir.path())));
        let pieces = Pieces::default();
        let on_piece = |p: Piece<'_>| pieces.push(p);
        let req = request("Why?");

        let read = client
            .complete_read(&req, Some(&on_piece), IfUnreadable::Retry, only_reply)
            .await
            .unwrap();

        assert_eq!(read.value, REPLY, "{kind:?}");
        assert!(read.complete);
        assert_eq!(
            (read.completion.attempts, read.completion.cache_hit),
            (2, false),
            "{kind:?}: the unreadable reply counts as an attempt"
        );
        assert_eq!(server.seen().len(), 2, "{kind:?}");
        assert!(
            pieces.all().contains(&Got::Retry),
            "{kind:?}: the first text is void"
        );
        let usage = client.meter().snapshot();
        assert_eq!((usage.requests, usage.failed_calls), (2, 0), "{kind:?}");
        // The reply that was read is cached, and only it.
        let again = client
            .complete_read(&req, None, IfUnreadable::Retry, only_reply)
            .await
            .unwrap();
        assert_eq!(
            (again.completion.cache_hit, again.completion.attempts),
            (true, 0)
        );
        assert_eq!(server.seen().len(), 2, "{kind:?}");
        assert_eq!(Cache::new(dir.path()).stats().entries, 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_reply_is_never_cached_so_the_next_call_asks_again() {
    let server = replying("Nothing to see here.");
    let dir = tempfile::tempdir().unwrap();
    let client = client(ProviderKind::OpenAi, &server.url, quick(3))
        .with_cache(Some(Cache::new(dir.path())));
    let req = request("Why?");

    let err = client
        .complete_read(&req, None, IfUnreadable::Retry, only_reply)
        .await
        .unwrap_err();
    let ReadError::Unreadable {
        completion,
        problem,
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(completion.attempts, 4, "the first try and three retries");
    assert_eq!(completion.response.text, "Nothing to see here.");
    assert!(problem.contains("not the reply"), "{problem}");
    assert_eq!(server.seen().len(), 4);

    // A repair-style call returns at once.
    let err = client
        .complete_read(&req, None, IfUnreadable::Return, only_reply)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ReadError::Unreadable { completion, .. } if completion.attempts == 1 && !completion.cache_hit),
        "{err:?}"
    );
    assert_eq!(server.seen().len(), 5, "sent, not answered from the cache");
    assert_eq!(Cache::new(dir.path()).stats().entries, 0, "nothing cached");
    let usage = client.meter().snapshot();
    assert_eq!(
        (usage.cache_hits, usage.failed_calls),
        (0, 0),
        "an unreadable reply is the judge's to repair, not a failed call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_reply_that_cannot_be_read_is_a_miss_and_is_replaced() {
    let server = replying(REPLY);
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let client =
        client(ProviderKind::OpenAi, &server.url, quick(0)).with_cache(Some(cache.clone()));
    let req = request("Why?");
    // What an older version left behind: an unreadable reply, cached.
    let key = Cache::key(client.endpoint(), &req);
    cache.put(
        &key,
        &ChatResponse {
            text: "garbled".into(),
            input_tokens: 1,
            output_tokens: 1,
            reasoning_tokens: 0,
            logprobs: Vec::new(),
        },
    );

    let read = client
        .complete_read(&req, None, IfUnreadable::Retry, only_reply)
        .await
        .unwrap();
    assert_eq!(
        (read.completion.cache_hit, read.completion.attempts),
        (false, 1)
    );
    assert_eq!(server.seen().len(), 1);
    assert_eq!(cache.get(&key).unwrap().text, REPLY, "replaced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_waiting_on_an_unreadable_reply_share_it_but_a_later_call_sends_its_own() {
    let server = LlmServer::start(Duration::from_millis(200), |_| Reply::Text("junk".into()));
    let dir = tempfile::tempdir().unwrap();
    let client = client(ProviderKind::OpenAi, &server.url, quick(0))
        .with_cache(Some(Cache::new(dir.path())));
    let req = request("Why?");

    let results =
        join_all((0..4).map(|_| client.complete_read(&req, None, IfUnreadable::Retry, only_reply)))
            .await;
    assert_eq!(
        server.seen().len(),
        1,
        "one request for four identical calls"
    );
    let shared = results
        .iter()
        .filter(|r| matches!(r, Err(ReadError::Unreadable { completion, .. }) if completion.cache_hit && completion.attempts == 0))
        .count();
    assert_eq!(shared, 3, "{results:?}");
    assert_eq!(
        client.meter().snapshot().cache_hits,
        0,
        "a shared failure is no hit"
    );

    // Retrying the failed call asks the server again: no failure is replayed.
    let again = client
        .complete_read(&req, None, IfUnreadable::Retry, only_reply)
        .await;
    assert!(matches!(again, Err(ReadError::Unreadable { .. })));
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_body_is_tried_again() {
    for kind in KINDS {
        let server = replying(REPLY);
        server.script([Reply::Garbage("<html>Bad gateway</html>".into())]);
        let client = client(kind, &server.url, quick(2));
        let done = client.complete(&request("Why?"), None).await.unwrap();
        assert_eq!(done.response.text, REPLY, "{kind:?}");
        assert_eq!(done.attempts, 2, "{kind:?}");

        server.script((0..3).map(|_| Reply::Garbage("<html>Bad gateway</html>".into())));
        let (err, attempts) = client.complete(&request("Why?"), None).await.unwrap_err();
        assert!(matches!(err, LlmError::BadResponse(_)), "{kind:?}: {err:?}");
        assert_eq!(attempts, 3, "{kind:?}: bounded by max_retries");
    }
}

/// Options with a small cap on a reply's size.
fn capped(max_retries: u32) -> ClientOptions {
    ClientOptions {
        max_reply_bytes: 64 * 1024,
        ..quick(max_retries)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_never_ends_is_cut_at_the_cap_and_not_tried_again() {
    for kind in KINDS {
        for streamed in [false, true] {
            let server = LlmServer::start(Duration::ZERO, |_| Reply::Endless);
            let client = client(kind, &server.url, capped(3));
            let received = std::sync::atomic::AtomicUsize::new(0);
            let on_piece = |p: Piece<'_>| {
                if let Piece::Text(t) = p {
                    received.fetch_add(t.len(), std::sync::atomic::Ordering::SeqCst);
                }
            };
            let on_piece = streamed.then_some(&on_piece as &(dyn Fn(Piece<'_>) + Send + Sync));

            let (err, attempts) = client
                .complete(&request("Why?"), on_piece)
                .await
                .unwrap_err();

            assert_eq!(
                err,
                LlmError::TooLarge { limit: 64 * 1024 },
                "{kind:?} streamed {streamed}"
            );
            let message = err.to_string();
            assert!(
                message.starts_with("the reply exceeded 64 KiB (judge.max_reply_bytes)"),
                "{message}"
            );
            assert_eq!(attempts, 1, "{kind:?} streamed {streamed}: not tried again");
            assert_eq!(server.seen().len(), 1);
            assert!(received.into_inner() <= 64 * 1024);
            assert_eq!(client.meter().snapshot().failed_calls, 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_longer_than_the_cap_is_refused_and_the_default_cap_is_4_mib() {
    assert_eq!(ClientOptions::default().max_reply_bytes, 4 * 1024 * 1024);
    let long = "word ".repeat(20_000); // 100 KB
    for kind in KINDS {
        let server = replying(&long);
        let client = client(kind, &server.url, capped(0));
        let (err, _) = client.complete(&request("Why?"), None).await.unwrap_err();
        assert_eq!(err, LlmError::TooLarge { limit: 64 * 1024 }, "{kind:?}");
        // Under the default cap it is a reply like any other.
        let client = self::client(kind, &server.url, quick(0));
        let done = client.complete(&request("Why?"), None).await.unwrap();
        assert_eq!(done.response.text, long);
    }
    let message = LlmError::TooLarge {
        limit: 4 * 1024 * 1024,
    }
    .to_string();
    assert!(
        message.starts_with("the reply exceeded 4 MiB (judge.max_reply_bytes); "),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_page_that_never_ends_is_read_only_in_part() {
    for kind in KINDS {
        for streamed in [false, true] {
            let server = LlmServer::start(Duration::ZERO, |_| Reply::EndlessError(503));
            let client = client(kind, &server.url, capped(1));
            let on_piece = |_: Piece<'_>| {};
            let on_piece = streamed.then_some(&on_piece as &(dyn Fn(Piece<'_>) + Send + Sync));
            let (err, attempts) = client
                .complete(&request("Why?"), on_piece)
                .await
                .unwrap_err();
            let LlmError::Server { status, message } = &err else {
                panic!("{kind:?}: {err:?}");
            };
            assert_eq!(*status, 503);
            assert!(
                message.starts_with("{\"error\": {\"message\": \"la la"),
                "{message}"
            );
            assert!(message.chars().count() <= 301, "{}", message.len());
            assert_eq!(attempts, 2, "{kind:?}: a server error is retried as usual");
        }
    }
}

/// Polls `done` until it holds, failing after five seconds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_gate_holds_new_requests_until_it_is_resumed() {
    let server = replying(REPLY);
    let gate = Gate::new();
    let client = client(ProviderKind::OpenAi, &server.url, quick(0)).with_gate(gate.clone());
    client.complete(&request("before"), None).await.unwrap();
    assert_eq!(server.seen().len(), 1, "an open gate lets calls through");

    gate.pause();
    assert!(gate.is_paused());
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { client.complete(&request(&format!("q{i}")), None).await })
        })
        .collect();
    until("three calls held at the gate", || gate.waiting() == 3).await;
    assert_eq!(server.seen().len(), 1, "nothing new was sent while paused");
    assert_eq!(gate.in_flight(), 0);

    gate.resume();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().attempts, 1);
    }
    assert_eq!(server.seen().len(), 4);
    assert_eq!(gate.waiting(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_gate_cancels_waiting_calls_without_counting_a_failure() {
    let server = replying(REPLY);
    let gate = Gate::new();
    let client = client(ProviderKind::OpenAi, &server.url, quick(0)).with_gate(gate.clone());
    gate.pause();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { client.complete(&request(&format!("q{i}")), None).await })
        })
        .collect();
    until("three calls held at the gate", || gate.waiting() == 3).await;
    gate.stop();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap_err(), (LlmError::Cancelled, 0));
    }
    assert_eq!(server.seen().len(), 0);
    // A stop is for good: a new call does not start either.
    gate.resume();
    assert_eq!(
        client.complete(&request("later"), None).await.unwrap_err(),
        (LlmError::Cancelled, 0)
    );
    let usage = client.meter().snapshot();
    assert_eq!((usage.requests, usage.failed_calls), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_already_sent_finish_while_the_next_wait_even_for_a_slot() {
    let server = LlmServer::start(Duration::ZERO, |_| Reply::Held(REPLY.into()));
    let gate = Gate::new();
    let opts = ClientOptions {
        concurrency: 2,
        ..quick(0)
    };
    let client = client(ProviderKind::Anthropic, &server.url, opts).with_gate(gate.clone());
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { client.complete(&request(&format!("q{i}")), None).await })
        })
        .collect();
    // Two are sent (the concurrency cap); the third waits for a slot.
    until("two requests in flight", || {
        gate.in_flight() == 2 && server.seen().len() == 2
    })
    .await;
    gate.pause();
    server.release();
    // The two finish; the third gets a slot, finds the gate paused and waits there.
    // (The two finished calls leave the in-flight count as they return, which may be a
    // moment after the third took a slot: wait for both.)
    until("the third held at the gate, the two done", || {
        gate.waiting() == 1 && gate.in_flight() == 0
    })
    .await;
    assert_eq!(server.seen().len(), 2);
    gate.resume();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().response.text, REPLY);
    }
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_a_call_waiting_to_retry() {
    let server = LlmServer::start(Duration::ZERO, |_| Reply::Status(500, None, "down".into()));
    let gate = Gate::new();
    let opts = ClientOptions {
        max_retries: 5,
        backoff: Duration::from_secs(600),
        max_backoff: Duration::from_secs(600),
        ..ClientOptions::default()
    };
    let client = client(ProviderKind::OpenAi, &server.url, opts).with_gate(gate.clone());
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.complete(&request("Why?"), None).await }
    });
    until("the first attempt", || {
        server.seen().len() == 1 && gate.in_flight() == 0
    })
    .await;
    gate.stop();
    let outcome = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the stop ends the backoff")
        .unwrap();
    assert_eq!(outcome.unwrap_err(), (LlmError::Cancelled, 1));
    assert_eq!(server.seen().len(), 1);
    assert_eq!(client.meter().snapshot().failed_calls, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panel_given_a_gate_holds_every_judge_and_a_stop_is_no_judge_error() {
    use rubricate::engine::judge::{CANCELLED, Judge, JudgeOptions, Panel};
    use rubricate::model::{Criterion, Item};

    let server = replying(r#"{"reason": "ok", "verdict": "MET"}"#);
    let loaded = rubricate::formats::parse_rubric_text(
        "r.yaml",
        "id: r\ncriteria:\n  - {id: a, requirement: Names Paris}\n",
        "r",
        std::path::Path::new("."),
        None,
    )
    .unwrap();
    let rubric = &loaded.rubric;
    let c = Criterion::binary("a", "Names Paris", 1.0);
    let item = Item {
        id: "i".into(),
        submission: "Paris.".into(),
        candidates: Vec::new(),
        prompt: None,
        reference: None,
        description: None,
        ground_truth: None,
        rubric: None,
        metadata: serde_json::Map::new(),
        origin: "test".into(),
        conversation: None,
    };
    let judge = Judge::new(
        client(ProviderKind::OpenAi, &server.url, quick(0)),
        JudgeOptions::default(),
    );
    let gate = Gate::new();
    let panel = Panel::single(Arc::new(judge)).with_gate(&gate);
    let judged = [(0, &c)];

    let done = panel.judge_criteria(rubric, &judged, &item, None).await;
    assert!(done[0].1.failure.is_none(), "{:?}", done[0].1);

    gate.pause();
    let held = tokio::spawn({
        let panel = panel.clone();
        let (rubric, c, item) = (rubric.clone(), c.clone(), item.clone());
        async move { panel.judge_criteria(&rubric, &[(0, &c)], &item, None).await }
    });
    until("the judge call held at the gate", || gate.waiting() == 1).await;
    gate.stop();
    let cancelled = held.await.unwrap();
    let failure = cancelled[0].1.failure.as_ref().unwrap();
    assert_eq!(failure.category, CANCELLED, "{failure:?}");
    assert_eq!(server.seen().len(), 1);
    let judge = &panel.judges[0];
    assert_eq!(judge.client.meter().snapshot().failed_calls, 0);
}

/// A client of replicas of one OpenAI-compatible server at `urls`.
fn replicas_client(urls: &[&str], opts: ClientOptions) -> Client {
    let mut s = spec(ProviderKind::OpenAi, urls[0]);
    s.replicas = urls[1..].iter().map(|u| format!("{u}/v1")).collect();
    client_for(s, opts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_replica_is_set_aside_and_the_others_answer_every_call() {
    let good = replying(REPLY);
    let bad = LlmServer::start(Duration::ZERO, |_| {
        Reply::Status(503, None, "overloaded".into())
    });
    let client = replicas_client(
        &[&bad.url, &good.url],
        ClientOptions {
            concurrency: 4,
            ..quick(4)
        },
    );
    assert_eq!(client.limits().concurrency(), 8, "4 per replica");
    let requests: Vec<ChatRequest> = (0..40).map(|i| request(&format!("q{i}"))).collect();
    let results = join_all(requests.iter().map(|r| client.complete(r, None))).await;
    for r in &results {
        assert!(r.is_ok(), "{r:?}");
    }
    assert_eq!(
        good.seen().len(),
        40,
        "every call answered by the good replica"
    );
    // The bad one saw at most its first burst (4 in flight) before it was set aside.
    let tried = bad.seen().len();
    assert!(
        (1..=8).contains(&tried),
        "the failing replica was tried {tried} times"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_spread_over_replicas_each_within_its_own_concurrency() {
    let a = LlmServer::start(Duration::from_millis(20), |_| Reply::Text(REPLY.into()));
    let b = LlmServer::start(Duration::from_millis(20), |_| Reply::Text(REPLY.into()));
    let client = replicas_client(
        &[&a.url, &b.url],
        ClientOptions {
            concurrency: 3,
            ..quick(0)
        },
    );
    let requests: Vec<ChatRequest> = (0..30).map(|i| request(&format!("q{i}"))).collect();
    let results = join_all(requests.iter().map(|r| client.complete(r, None))).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(a.seen().len() + b.seen().len(), 30);
    for (name, s) in [("a", &a), ("b", &b)] {
        assert!(
            s.max_in_flight() <= 3,
            "{name}: {} in flight",
            s.max_in_flight()
        );
        assert!(s.seen().len() >= 10, "{name} took {} of 30", s.seen().len());
    }
}
