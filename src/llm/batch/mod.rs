//! The providers' batch engines, on the wire: `OpenAI`'s files and `/v1/batches` (JSONL in
//! and out, one `custom_id` per request) and Anthropic's `/v1/messages/batches`. A batch's
//! requests are written to a file first (one line each, in the provider's format) and sent
//! from it as a stream; results are read as a stream, line by line, each line bounded.
//! What a run does with them (which requests, when, what is on disk) is `run::batch`'s.

mod anthropic;
mod openai;

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::wire::{Endpoint, http_client};
use super::{ChatRequest, ChatResponse, LlmError, ProviderKind, ProviderSpec};

/// A request's answer from a batch: the reply, or why there is none.
pub type Answer = Result<ChatResponse, LlmError>;

/// How long one transfer (an upload or a download of up to hundreds of MB) may take.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How long a status, create or list call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The most bytes a status, create or list reply may take.
const CALL_REPLY_BYTES: usize = 16 * 1024 * 1024;
/// The longest result line read: a reply is bounded by `judge.max_reply_bytes` (at most
/// 1 GiB) plus the line's own fields.
const MAX_RESULT_LINE: usize = 1024 * 1024 * 1024 + 64 * 1024;

/// What a provider allows in one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most requests in one batch.
    pub requests: usize,
    /// The most bytes of one batch's requests file.
    pub bytes: u64,
}

/// A batch as the provider last described it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    /// The provider's word (`validating`, `in_progress`, `completed`, `expired`, `ended`, …).
    pub state: String,
    /// No request in it will be answered any more: its results can be read.
    pub ended: bool,
    /// Requests answered so far.
    pub answered: u64,
    /// Requests that failed, expired or were cancelled.
    pub failed: u64,
    /// Requests in the batch.
    pub total: u64,
    /// `OpenAI`: the files holding answers and errors.
    pub output_file: Option<String>,
    /// `OpenAI`: the file holding the requests that failed.
    pub error_file: Option<String>,
    /// Why the batch as a whole failed (`OpenAI` `failed`: it was not valid); every request
    /// in it is answered with this.
    pub failure: Option<String>,
}

/// A batch the provider holds, as its list of batches describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The provider's batch id.
    pub id: String,
    /// When the provider made it (`None`: it did not say).
    pub created_at: Option<jiff::Timestamp>,
}

/// One provider's batch API.
#[derive(Debug, Clone)]
pub struct BatchApi {
    kind: ProviderKind,
    endpoint: Endpoint,
    /// The most bytes one reply may take (`judge.max_reply_bytes`).
    max_reply_bytes: usize,
}

impl BatchApi {
    /// The batch API of a resolved model's provider (its first base URL: replicas are
    /// for live calls).
    pub fn new(spec: &ProviderSpec, max_reply_bytes: usize) -> Result<Self, LlmError> {
        Ok(Self {
            kind: spec.kind,
            endpoint: Endpoint::new(
                &spec.base_url,
                spec.key.clone(),
                &spec.key_var,
                http_client(Duration::from_secs(10))?,
                spec.kind.authorize(),
            ),
            max_reply_bytes,
        })
    }

    /// Whether its batches carry the run's label (`OpenAI`'s metadata), so that one is
    /// told from another batch of the same size for certain.
    pub fn labels_batches(&self) -> bool {
        self.kind == ProviderKind::OpenAi
    }

    /// Where its calls go.
    pub fn base_url(&self) -> &str {
        self.endpoint.base_url()
    }

    /// The provider's own limits per batch.
    pub fn limits(&self) -> Limits {
        match self.kind {
            ProviderKind::OpenAi => openai::LIMITS,
            ProviderKind::Anthropic => anthropic::LIMITS,
        }
    }

    /// One request as a line of the batch's requests file (no newline).
    pub fn line(&self, custom_id: &str, req: &ChatRequest) -> String {
        match self.kind {
            ProviderKind::OpenAi => openai::line(custom_id, req),
            ProviderKind::Anthropic => anthropic::line(custom_id, req),
        }
    }

    /// Asks for the provider's latest batch: a server without a batch API says so here
    /// (404) rather than by cutting an upload short.
    pub async fn check(&self) -> Result<(), LlmError> {
        let path = match self.kind {
            ProviderKind::OpenAi => "/batches?limit=1",
            ProviderKind::Anthropic => "/v1/messages/batches?limit=1",
        };
        self.call(self.endpoint.get(path), CALL_TIMEOUT)
            .await
            .map(|_| ())
    }

    /// Uploads the requests file where the provider takes one (`OpenAI`: the file's id).
    pub async fn upload(&self, requests: &Path) -> Result<Option<String>, LlmError> {
        match self.kind {
            ProviderKind::OpenAi => openai::upload(self, requests).await.map(Some),
            ProviderKind::Anthropic => Ok(None),
        }
    }

    /// Creates the batch (from the uploaded file, or the requests file itself); its id.
    pub async fn create(
        &self,
        requests: &Path,
        file_id: Option<&str>,
        label: &str,
    ) -> Result<String, LlmError> {
        match (self.kind, file_id) {
            (ProviderKind::OpenAi, Some(file)) => openai::create(self, file, label).await,
            (ProviderKind::OpenAi, None) => Err(LlmError::Config(
                "an OpenAI batch needs its requests file uploaded first".into(),
            )),
            (ProviderKind::Anthropic, _) => anthropic::create(self, requests).await,
        }
    }

    /// The batches the provider holds for one of a run's batches, oldest first, less those
    /// `claimed` (known already): `OpenAI`'s are those labelled `label` (the run and batch,
    /// in the batch's metadata) or made from `file_id`; Anthropic's (whose batches carry
    /// no label), those created since `since` with `requests` requests. Among the most
    /// recent thousand.
    pub async fn candidates(
        &self,
        label: &str,
        file_id: Option<&str>,
        since: &str,
        requests: usize,
        claimed: &HashSet<String>,
    ) -> Result<Vec<Found>, LlmError> {
        let mut found = match self.kind {
            ProviderKind::OpenAi => openai::candidates(self, label, file_id).await?,
            ProviderKind::Anthropic => anthropic::candidates(self, since, requests).await?,
        };
        found.retain(|f| plain_id(&f.id) && !claimed.contains(&f.id));
        found.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        found.dedup_by(|a, b| a.id == b.id);
        Ok(found)
    }

    /// Asks the provider to cancel a batch (requests it has not run are not charged).
    pub async fn cancel(&self, batch_id: &str) -> Result<(), LlmError> {
        check_id(batch_id)?;
        let path = match self.kind {
            ProviderKind::OpenAi => format!("/batches/{batch_id}/cancel"),
            ProviderKind::Anthropic => format!("/v1/messages/batches/{batch_id}/cancel"),
        };
        self.call(self.endpoint.post(&path), CALL_TIMEOUT)
            .await
            .map(|_| ())
    }

    /// The batch as the provider describes it now (progress, and whether it has ended).
    pub async fn status(&self, batch_id: &str) -> Result<Status, LlmError> {
        check_id(batch_id)?;
        match self.kind {
            ProviderKind::OpenAi => openai::status(self, batch_id).await,
            ProviderKind::Anthropic => anthropic::status(self, batch_id).await,
        }
    }

    /// Reads an ended batch's results, handing each request's answer to `each` by its
    /// `custom_id` (in the order the provider wrote them). Requests without a line are
    /// the caller's to notice.
    pub async fn results(
        &self,
        batch_id: &str,
        status: &Status,
        each: &mut (dyn FnMut(&str, Answer) -> std::io::Result<()> + Send),
    ) -> Result<(), LlmError> {
        check_id(batch_id)?;
        for file in [&status.output_file, &status.error_file]
            .into_iter()
            .flatten()
        {
            check_id(file)?;
        }
        match self.kind {
            ProviderKind::OpenAi => openai::results(self, status, each).await,
            ProviderKind::Anthropic => anthropic::results(self, batch_id, each).await,
        }
    }

    /// Sends a call and reads its JSON reply.
    async fn call(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Value, LlmError> {
        self.endpoint
            .send_json(request, timeout, CALL_REPLY_BYTES)
            .await
    }

    /// Hands each of the provider's most recent thousand batches (newest first, as its
    /// list pages them) to `each`.
    async fn listed(&self, each: &mut dyn FnMut(&Value)) -> Result<(), LlmError> {
        let (path, cursor) = match self.kind {
            ProviderKind::OpenAi => ("/batches", "after"),
            ProviderKind::Anthropic => ("/v1/messages/batches", "after_id"),
        };
        let mut after: Option<String> = None;
        for _ in 0..10 {
            let mut page = format!("{path}?limit=100");
            if let Some(a) = after.as_deref().filter(|a| plain_id(a)) {
                page = format!("{page}&{cursor}={a}");
            }
            let v = self.call(self.endpoint.get(&page), CALL_TIMEOUT).await?;
            let data = v.get("data").and_then(Value::as_array);
            for b in data.into_iter().flatten() {
                each(b);
            }
            if v.get("has_more") != Some(&Value::Bool(true)) {
                break;
            }
            // Anthropic names the page's last batch; `OpenAI`'s is the last one listed.
            after = text(&v, "/last_id")
                .or_else(|| data.and_then(|d| d.last()).and_then(|b| text(b, "/id")));
            if after.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// Reads a results file at `path`, handing each line's answer (read by `answer`) to
    /// `each` by its `custom_id`; lines without one are passed over.
    async fn answers(
        &self,
        path: &str,
        answer: &(dyn Fn(&Value) -> Answer + Sync),
        each: &mut (dyn FnMut(&str, Answer) -> std::io::Result<()> + Send),
    ) -> Result<(), LlmError> {
        let request = self.endpoint.get(path);
        let line_cap = self
            .max_reply_bytes
            .saturating_add(64 * 1024)
            .min(MAX_RESULT_LINE);
        let mut each_line = |line: &[u8]| {
            let v = line_json(line)?;
            let Some(id) = v.get("custom_id").and_then(Value::as_str) else {
                return Ok(());
            };
            each(id, answer(&v))
                .map_err(|e| LlmError::Config(format!("cannot keep the batch's results: {e}")))
        };
        self.endpoint
            .lines(
                request,
                TRANSFER_TIMEOUT,
                CALL_REPLY_BYTES,
                line_cap,
                &mut each_line,
            )
            .await
    }

    /// A reply read from a batch, within the reply size a live call may take.
    fn capped(&self, reply: Result<ChatResponse, LlmError>) -> Answer {
        let reply = reply?;
        if reply.text.len() > self.max_reply_bytes {
            return Err(LlmError::TooLarge {
                limit: self.max_reply_bytes,
            });
        }
        Ok(reply)
    }

    /// The answer for a result line's HTTP status and body (not 200: the error a live call
    /// with that answer would give).
    fn answer_of_status(&self, status: u16, body: &Value) -> Option<LlmError> {
        (!(200..300).contains(&status))
            .then(|| self.endpoint.status_error(status, &body.to_string()))
    }
}

/// A file as a body stream: `head`, its bytes (each newline passed through `newline`,
/// the last one through `last`), then `tail`.
fn file_body(
    file: tokio::fs::File,
    len: u64,
    head: &'static [u8],
    newline: u8,
    last: u8,
    tail: &'static [u8],
) -> reqwest::Body {
    use tokio::io::AsyncReadExt as _;
    struct State {
        file: tokio::fs::File,
        read: u64,
        stage: u8,
    }
    let stream = futures_util::stream::unfold(
        State {
            file,
            read: 0,
            stage: 0,
        },
        move |mut s| async move {
            match s.stage {
                0 => {
                    s.stage = 1;
                    Some((Ok(head.to_vec()), s))
                }
                1 => {
                    let mut buf = vec![0u8; 256 * 1024];
                    match s.file.read(&mut buf).await {
                        Ok(0) => {
                            s.stage = 2;
                            Some((Ok(tail.to_vec()), s))
                        }
                        Ok(n) => {
                            buf.truncate(n);
                            for (i, b) in buf.iter_mut().enumerate() {
                                if *b == b'\n' {
                                    *b = if s.read + i as u64 + 1 == len {
                                        last
                                    } else {
                                        newline
                                    };
                                }
                            }
                            s.read += n as u64;
                            Some((Ok(buf), s))
                        }
                        Err(e) => {
                            s.stage = 3;
                            Some((Err(e), s))
                        }
                    }
                }
                _ => None,
            }
        },
    );
    reqwest::Body::wrap_stream(stream)
}

/// Opens a requests file to send.
async fn open_requests(path: &Path) -> Result<(tokio::fs::File, u64), LlmError> {
    let file = tokio::fs::File::open(path).await.map_err(|e| {
        LlmError::Config(format!(
            "{}: cannot read the batch's requests: {e}",
            path.display()
        ))
    })?;
    let len = file
        .metadata()
        .await
        .map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))?
        .len();
    Ok((file, len))
}

/// An id safe to put in a URL as it is (providers' ids are letters, digits, `_` and `-`).
fn plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An id the provider gave, before it goes into a URL path.
fn check_id(id: &str) -> Result<(), LlmError> {
    if plain_id(id) {
        Ok(())
    } else {
        Err(LlmError::BadResponse(format!(
            "the provider named a batch or file '{}', which is not an id",
            id.escape_debug()
        )))
    }
}

/// A JSON string field.
fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A result line as JSON.
fn line_json(line: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(line)
        .map_err(|e| LlmError::BadResponse(format!("a batch result line is not JSON ({e})")))
}
