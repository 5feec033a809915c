//! A loopback server for the providers' batch engines: `OpenAI` (`/v1/files`, `/v1/batches`,
//! `/v1/files/ID/content`) and Anthropic (`/v1/messages/batches`, `…/ID/results`). A batch
//! is answered when it is created (each request by the test's rule) and ends after a set
//! number of status calls; requests can fail, expire or be left out. It counts how many
//! times each request id was submitted in a batch, and can hold a stage (upload, create,
//! status, download) until the test releases it, so a test can kill the client there.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// What the server does with one request of a batch.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Answered with this reply text.
    Text(String),
    /// An HTTP error for this request.
    Error(u16, String),
    /// Expired before it was answered.
    Expired,
    /// No line at all in the results.
    Missing,
}

/// One request of a batch, as the rule sees it.
pub struct Request {
    pub custom_id: String,
    /// Every message's text joined (the system prompt first).
    pub prompt: String,
    /// How many times a request with this id was submitted before this one.
    pub earlier: usize,
}

/// A stage the test can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// After the uploaded file is stored, before answering.
    Upload,
    /// After the batch is created, before answering.
    Create,
    /// Before answering a status call.
    Status,
    /// After half the results lines are sent.
    Download,
    /// A create's request is read, the batch not made yet (it is not listed): the client
    /// can be gone by the time it is.
    Making,
}

type Rule = dyn Fn(&Request) -> Outcome + Send + Sync;

#[derive(Default)]
struct Batch {
    id: String,
    file_id: Option<String>,
    /// `OpenAI`'s metadata label.
    label: Option<String>,
    /// Unix seconds, as `OpenAI` lists it.
    created_unix: i64,
    cancelled: bool,
    created_at: String,
    polls: usize,
    /// (custom id, outcome) in the order submitted.
    results: Vec<(String, Outcome)>,
}

struct Inner {
    rule: Box<Rule>,
    /// Status calls a batch takes to end.
    polls_to_end: usize,
    files: Mutex<HashMap<String, Vec<u8>>>,
    batches: Mutex<Vec<Batch>>,
    submitted: Mutex<HashMap<String, usize>>,
    /// Submissions by request (an id less its attempt).
    bases: Mutex<HashMap<String, usize>>,
    calls: Mutex<Vec<String>>,
    held: Mutex<HashMap<Stage, usize>>,
    hold: Mutex<Option<Stage>>,
    release: tokio::sync::Notify,
    next: AtomicUsize,
    /// How long making a batch takes after its create is read (done whether or not the
    /// client still waits).
    create_delay: Mutex<std::time::Duration>,
    /// Status calls answered "no such batch" before the truth (a provider's lag).
    not_found: AtomicUsize,
    /// Status counts are doubled (a provider that counts a request twice).
    overcount: std::sync::atomic::AtomicBool,
}

pub struct BatchServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    inner: Arc<Inner>,
}

impl BatchServer {
    pub fn start(
        polls_to_end: usize,
        rule: impl Fn(&Request) -> Outcome + Send + Sync + 'static,
    ) -> Self {
        let inner = Arc::new(Inner {
            rule: Box::new(rule),
            polls_to_end,
            files: Mutex::default(),
            batches: Mutex::default(),
            submitted: Mutex::default(),
            bases: Mutex::default(),
            calls: Mutex::default(),
            held: Mutex::default(),
            hold: Mutex::default(),
            release: tokio::sync::Notify::new(),
            next: AtomicUsize::new(1),
            create_delay: Mutex::default(),
            not_found: AtomicUsize::new(0),
            overcount: std::sync::atomic::AtomicBool::new(false),
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
                    .route("/v1/files", post(upload))
                    .route("/v1/files/{id}/content", get(content))
                    .route("/v1/batches", post(create_openai).get(list_openai))
                    .route("/v1/batches/{id}", get(status_openai))
                    .route("/v1/batches/{id}/cancel", post(cancel))
                    .route(
                        "/v1/messages/batches",
                        post(create_anthropic).get(list_anthropic),
                    )
                    .route("/v1/messages/batches/{id}", get(status_anthropic))
                    .route("/v1/messages/batches/{id}/results", get(results_anthropic))
                    .route("/v1/messages/batches/{id}/cancel", post(cancel))
                    .layer(axum::extract::DefaultBodyLimit::max(512 * 1024 * 1024))
                    .with_state(state);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        let addr = rx.recv().unwrap();
        BatchServer {
            url: format!("http://{addr}"),
            inner,
        }
    }

    /// How many times each request id was submitted in a batch.
    pub fn submitted(&self) -> HashMap<String, usize> {
        self.inner.submitted.lock().unwrap().clone()
    }

    /// How many times each request id is in a batch that was not cancelled: what was
    /// paid for.
    pub fn paid(&self) -> HashMap<String, usize> {
        let mut out: HashMap<String, usize> = HashMap::new();
        for b in self.inner.batches.lock().unwrap().iter() {
            if !b.cancelled {
                for (id, _) in &b.results {
                    *out.entry(id.clone()).or_default() += 1;
                }
            }
        }
        out
    }

    /// Batches cancelled.
    pub fn cancelled(&self) -> Vec<String> {
        self.inner
            .batches
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.cancelled)
            .map(|b| b.id.clone())
            .collect()
    }

    /// Answers the next `n` status calls "no such batch".
    pub fn not_found(&self, n: usize) {
        self.inner.not_found.store(n, Ordering::SeqCst);
    }

    /// Counts every request twice in status replies.
    pub fn overcount(&self) {
        self.inner.overcount.store(true, Ordering::SeqCst);
    }

    /// Makes every batch this long after its create is read.
    pub fn create_delay(&self, delay: std::time::Duration) {
        *self.inner.create_delay.lock().unwrap() = delay;
    }

    /// Batches created.
    pub fn batches(&self) -> Vec<String> {
        self.inner
            .batches
            .lock()
            .unwrap()
            .iter()
            .map(|b| b.id.clone())
            .collect()
    }

    /// Every call, as `METHOD path`.
    pub fn calls(&self) -> Vec<String> {
        self.inner.calls.lock().unwrap().clone()
    }

    /// Holds every call at `stage` (until [`release`](Self::release)).
    pub fn hold(&self, stage: Stage) {
        *self.inner.hold.lock().unwrap() = Some(stage);
    }

    /// Calls waiting at a held stage, ever.
    pub fn held(&self, stage: Stage) -> usize {
        self.inner
            .held
            .lock()
            .unwrap()
            .get(&stage)
            .copied()
            .unwrap_or(0)
    }

    pub fn release(&self) {
        *self.inner.hold.lock().unwrap() = None;
        self.inner.release.notify_waiters();
    }
}

impl Inner {
    fn call(&self, what: String) {
        self.calls.lock().unwrap().push(what);
    }

    fn id(&self, prefix: &str) -> String {
        format!("{prefix}_{:04}", self.next.fetch_add(1, Ordering::SeqCst))
    }

    async fn maybe_hold(&self, stage: Stage) {
        loop {
            let notified = self.release.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if *self.hold.lock().unwrap() != Some(stage) {
                return;
            }
            *self.held.lock().unwrap().entry(stage).or_default() += 1;
            notified.await;
        }
    }

    /// Answers a new batch's requests (custom id, prompt) by the rule, counting them.
    fn open(&self, id: String, file_id: Option<String>, requests: Vec<(String, String)>) -> Batch {
        let mut submitted = self.submitted.lock().unwrap();
        let results = requests
            .into_iter()
            .map(|(custom_id, prompt)| {
                let base = custom_id
                    .rsplit_once('-')
                    .map_or(custom_id.as_str(), |(b, _)| b)
                    .to_owned();
                let mut bases = self.bases.lock().unwrap();
                let earlier = bases.get(&base).copied().unwrap_or(0);
                *bases.entry(base).or_default() += 1;
                *submitted.entry(custom_id.clone()).or_default() += 1;
                let outcome = (self.rule)(&Request {
                    custom_id: custom_id.clone(),
                    prompt,
                    earlier,
                });
                (custom_id, outcome)
            })
            .collect();
        let now = jiff::Timestamp::now();
        Batch {
            id,
            file_id,
            created_at: now.to_string(),
            created_unix: now.as_second(),
            results,
            ..Batch::default()
        }
    }

    /// Makes a batch after the create delay, whether or not its client still waits (a
    /// task of its own: a handler is dropped when its client goes).
    async fn make(
        self: &Arc<Self>,
        prefix: &'static str,
        file_id: Option<String>,
        label: Option<String>,
        requests: Vec<(String, String)>,
    ) -> (String, usize) {
        let inner = Arc::clone(self);
        let task = tokio::spawn(async move {
            let delay = *inner.create_delay.lock().unwrap();
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            inner.maybe_hold(Stage::Making).await;
            let id = inner.id(prefix);
            let mut batch = inner.open(id.clone(), file_id, requests);
            batch.label = label;
            let total = batch.results.len();
            inner.batches.lock().unwrap().push(batch);
            (id, total)
        });
        task.await.unwrap()
    }

    /// Counts a status call; whether the batch has ended.
    fn poll(&self, id: &str) -> Option<(bool, usize, usize, usize)> {
        let mut batches = self.batches.lock().unwrap();
        let b = batches.iter_mut().find(|b| b.id == id)?;
        if self
            .not_found
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return None;
        }
        b.polls += 1;
        let ended = b.polls >= self.polls_to_end || b.cancelled;
        let ok = b
            .results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Text(_)) && !b.cancelled)
            .count();
        let times = if self.overcount.load(Ordering::SeqCst) {
            2
        } else {
            1
        };
        Some((
            ended,
            b.results.len() * times,
            ok * times,
            (b.results.len() - ok) * times,
        ))
    }
}

fn prompt_of(messages: &Value, system: Option<&str>) -> String {
    let mut parts: Vec<String> = system.map(str::to_owned).into_iter().collect();
    for m in messages.as_array().into_iter().flatten() {
        parts.push(m["content"].as_str().unwrap_or_default().to_owned());
    }
    parts.join("\n")
}

async fn upload(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    inner.call("POST /v1/files".into());
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(boundary) = ct.split("boundary=").nth(1) else {
        return (StatusCode::BAD_REQUEST, "no boundary").into_response();
    };
    let marker = format!("--{boundary}");
    let text = body.to_vec();
    let as_str = String::from_utf8_lossy(&text).into_owned();
    let mut file = None;
    let mut purpose = None;
    for part in as_str.split(&marker) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let content = content.strip_suffix("\r\n").unwrap_or(content);
        if head.contains("name=\"file\"") {
            file = Some(content.as_bytes().to_vec());
        } else if head.contains("name=\"purpose\"") {
            purpose = Some(content.to_owned());
        }
    }
    if purpose.as_deref() != Some("batch") {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {"message": "purpose must be batch"}})),
        )
            .into_response();
    }
    let Some(file) = file else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {"message": "no file"}})),
        )
            .into_response();
    };
    let id = inner.id("file");
    inner.files.lock().unwrap().insert(id.clone(), file);
    inner.maybe_hold(Stage::Upload).await;
    axum::Json(json!({"id": id, "object": "file", "purpose": "batch"})).into_response()
}

async fn create_openai(
    State(inner): State<Arc<Inner>>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    inner.call("POST /v1/batches".into());
    let file_id = body["input_file_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let Some(file) = inner.files.lock().unwrap().get(&file_id).cloned() else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": {"message": "no such file"}})),
        )
            .into_response();
    };
    let requests: Vec<(String, String)> = String::from_utf8_lossy(&file)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["url"], "/v1/chat/completions");
            (
                v["custom_id"].as_str().unwrap().to_owned(),
                prompt_of(&v["body"]["messages"], None),
            )
        })
        .collect();
    let label = body["metadata"]["rubricate"].as_str().map(str::to_owned);
    let (id, _) = inner
        .make("batch", Some(file_id.clone()), label, requests)
        .await;
    inner.maybe_hold(Stage::Create).await;
    axum::Json(
        json!({"id": id, "object": "batch", "status": "validating", "input_file_id": file_id}),
    )
    .into_response()
}

async fn list_openai(State(inner): State<Arc<Inner>>) -> Response {
    inner.call("GET /v1/batches".into());
    let data: Vec<Value> = inner
        .batches
        .lock()
        .unwrap()
        .iter()
        .rev()
        .map(|b| json!({"id": b.id, "object": "batch", "input_file_id": b.file_id,
            "created_at": b.created_unix, "metadata": b.label.as_ref().map(|l| json!({"rubricate": l}))}))
        .collect();
    axum::Json(json!({"object": "list", "data": data, "has_more": false})).into_response()
}

async fn status_openai(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.call(format!("GET /v1/batches/{id}"));
    inner.maybe_hold(Stage::Status).await;
    let Some((ended, total, ok, failed)) = inner.poll(&id) else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": {"message": "no such batch"}})),
        )
            .into_response();
    };
    let mut v = json!({"id": id, "object": "batch", "status": if ended { "completed" } else { "in_progress" },
        "request_counts": {"total": total, "completed": if ended { ok } else { 0 }, "failed": if ended { failed } else { 0 }}});
    if ended {
        v["output_file_id"] = json!(format!("{id}-out"));
        v["error_file_id"] = json!(format!("{id}-err"));
    }
    axum::Json(v).into_response()
}

/// An output (`-out`) or error (`-err`) file of a batch.
async fn content(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.call(format!("GET /v1/files/{id}/content"));
    let (batch, errors) = match (id.strip_suffix("-out"), id.strip_suffix("-err")) {
        (Some(b), _) => (b.to_owned(), false),
        (_, Some(b)) => (b.to_owned(), true),
        _ => return (StatusCode::NOT_FOUND, "no such file").into_response(),
    };
    let results = {
        let batches = inner.batches.lock().unwrap();
        let Some(b) = batches.iter().find(|b| b.id == batch) else {
            return (StatusCode::NOT_FOUND, "no such batch").into_response();
        };
        // A cancelled batch answers nothing.
        if b.cancelled {
            Vec::new()
        } else {
            b.results.clone()
        }
    };
    let lines: Vec<String> = results
        .iter()
        .filter_map(|(custom_id, o)| {
            let line = match o {
                Outcome::Text(text) if !errors => json!({"id": "req", "custom_id": custom_id, "response": {"status_code": 200, "request_id": "r",
                    "body": {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}}, "error": null}),
                Outcome::Error(status, message) if errors => json!({"id": "req", "custom_id": custom_id, "response": {"status_code": status, "request_id": "r",
                    "body": {"error": {"message": message}}}, "error": null}),
                Outcome::Expired if errors => json!({"id": "req", "custom_id": custom_id, "response": null,
                    "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}),
                _ => return None,
            };
            Some(line.to_string())
        })
        .collect();
    stream_lines(inner, lines)
}

/// Lines as a body; a held download sends half of them and then waits.
fn stream_lines(inner: Arc<Inner>, lines: Vec<String>) -> Response {
    let held = *inner.hold.lock().unwrap() == Some(Stage::Download);
    let half = lines.len() / 2;
    let joined = |part: &[String]| part.iter().fold(String::new(), |all, l| all + l + "\n");
    let first = joined(&lines[..half]);
    let rest = joined(&lines[half..]);
    let inner2 = Arc::clone(&inner);
    let body = futures_util::StreamExt::chain(
        futures_util::stream::once(async move {
            Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(first))
        }),
        futures_util::stream::once(async move {
            if held {
                inner2.maybe_hold(Stage::Download).await;
            }
            Ok(axum::body::Bytes::from(rest))
        }),
    );
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/jsonl")
        .body(axum::body::Body::from_stream(body))
        .unwrap()
}

async fn create_anthropic(
    State(inner): State<Arc<Inner>>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    inner.call("POST /v1/messages/batches".into());
    let requests: Vec<(String, String)> = body["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["custom_id"].as_str().unwrap().to_owned(),
                prompt_of(&r["params"]["messages"], r["params"]["system"].as_str()),
            )
        })
        .collect();
    let (id, total) = inner.make("msgbatch", None, None, requests).await;
    inner.maybe_hold(Stage::Create).await;
    axum::Json(json!({"id": id, "type": "message_batch", "processing_status": "in_progress",
        "request_counts": {"processing": total, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}}))
    .into_response()
}

/// Cancels a batch (either provider): it ends at its next status call, answering nothing.
async fn cancel(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.call(format!("POST cancel {id}"));
    let mut batches = inner.batches.lock().unwrap();
    let Some(b) = batches.iter_mut().find(|b| b.id == id) else {
        return (StatusCode::NOT_FOUND, "no such batch").into_response();
    };
    b.cancelled = true;
    axum::Json(json!({"id": id, "status": "cancelling"})).into_response()
}

async fn list_anthropic(State(inner): State<Arc<Inner>>) -> Response {
    inner.call("GET /v1/messages/batches".into());
    let data: Vec<Value> = inner
        .batches
        .lock()
        .unwrap()
        .iter()
        .rev()
        .map(|b| json!({"id": b.id, "type": "message_batch", "created_at": b.created_at,
            "request_counts": {"processing": b.results.len(), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}}))
        .collect();
    axum::Json(json!({"data": data, "has_more": false})).into_response()
}

async fn status_anthropic(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.call(format!("GET /v1/messages/batches/{id}"));
    inner.maybe_hold(Stage::Status).await;
    let Some((ended, total, ok, failed)) = inner.poll(&id) else {
        return (StatusCode::NOT_FOUND, axum::Json(json!({"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}))).into_response();
    };
    let counts = if ended {
        json!({"processing": 0, "succeeded": ok, "errored": failed, "canceled": 0, "expired": 0})
    } else {
        json!({"processing": total, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0})
    };
    axum::Json(json!({"id": id, "type": "message_batch", "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": counts, "results_url": if ended { Value::String(format!("https://elsewhere.example/{id}/results")) } else { Value::Null }}))
    .into_response()
}

async fn results_anthropic(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.call(format!("GET /v1/messages/batches/{id}/results"));
    let results = {
        let batches = inner.batches.lock().unwrap();
        let Some(b) = batches.iter().find(|b| b.id == id) else {
            return (StatusCode::NOT_FOUND, "no such batch").into_response();
        };
        if b.cancelled {
            Vec::new()
        } else {
            b.results.clone()
        }
    };
    let lines: Vec<String> = results
        .iter()
        .filter_map(|(custom_id, o)| {
            let result = match o {
                Outcome::Text(text) => json!({"type": "succeeded", "message": {"type": "message", "role": "assistant",
                    "content": [{"type": "text", "text": text}], "usage": {"input_tokens": 100, "output_tokens": 20}}}),
                Outcome::Error(status, message) => json!({"type": "errored", "error": {"type": "error", "error": {
                    "type": if *status >= 500 { "api_error" } else { "invalid_request_error" }, "message": message}}}),
                Outcome::Expired => json!({"type": "expired"}),
                Outcome::Missing => return None,
            };
            Some(json!({"custom_id": custom_id, "result": result}).to_string())
        })
        .collect();
    stream_lines(inner, lines)
}
