//! Anthropic's Message Batches: requests sent inline (`POST /v1/messages/batches`, the
//! requests file streamed as its `requests` list), status (`GET …/ID`), and results
//! (`GET …/ID/results`): one line per request with its `custom_id` and a `result` that
//! succeeded (the message), errored, was cancelled or expired.

use serde_json::{Value, json};

use super::{Answer, BatchApi, CALL_TIMEOUT, Found, Limits, Status, TRANSFER_TIMEOUT, text};
use crate::llm::anthropic::{Anthropic, parse_message};
use crate::llm::wire::count;
use crate::llm::{ChatRequest, LlmError};

/// 100,000 requests and 256 MB a batch: kept a little under the byte limit.
pub const LIMITS: Limits = Limits {
    requests: 100_000,
    bytes: 250 * 1000 * 1000,
};

const BATCHES: &str = "/v1/messages/batches";

pub fn line(custom_id: &str, req: &ChatRequest) -> String {
    json!({"custom_id": custom_id, "params": Anthropic::body(req, false)}).to_string()
}

/// Streams the requests file as `{"requests": [line, line, …]}`.
pub async fn create(api: &BatchApi, requests: &std::path::Path) -> Result<String, LlmError> {
    let (file, len) = super::open_requests(requests).await?;
    let body = super::file_body(file, len, b"{\"requests\":[", b',', b' ', b"]}");
    let request = api
        .endpoint
        .post(BATCHES)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    let v = api.call(request, TRANSFER_TIMEOUT).await?;
    text(&v, "/id").ok_or_else(|| LlmError::BadResponse("the new batch has no id".into()))
}

/// The batches created at or after `since` (less five minutes: clocks differ) with
/// `requests` requests.
pub async fn candidates(
    api: &BatchApi,
    since: &str,
    requests: usize,
) -> Result<Vec<Found>, LlmError> {
    let since: jiff::Timestamp = since.parse().map_err(|e| {
        LlmError::Config(format!(
            "a batch's creation time '{since}' is damaged ({e})"
        ))
    })?;
    let since = since - jiff::SignedDuration::from_secs(300);
    let mut found = Vec::new();
    api.listed(&mut |b| {
        let Some(id) = text(b, "/id") else { return };
        let Some(created) = text(b, "/created_at").and_then(|t| t.parse::<jiff::Timestamp>().ok())
        else {
            return;
        };
        let total: u64 = ["processing", "succeeded", "errored", "canceled", "expired"]
            .iter()
            .map(|k| count(b, &format!("/request_counts/{k}")))
            .sum();
        if created >= since && total == requests as u64 {
            found.push(Found {
                id,
                created_at: Some(created),
            });
        }
    })
    .await?;
    Ok(found)
}

pub async fn status(api: &BatchApi, batch_id: &str) -> Result<Status, LlmError> {
    let request = api.endpoint.get(&format!("{BATCHES}/{batch_id}"));
    let v = api.call(request, CALL_TIMEOUT).await?;
    let state = text(&v, "/processing_status").unwrap_or_default();
    let failed = ["errored", "canceled", "expired"]
        .iter()
        .map(|k| count(&v, &format!("/request_counts/{k}")))
        .sum();
    let answered = count(&v, "/request_counts/succeeded");
    Ok(Status {
        ended: state == "ended",
        answered,
        failed,
        total: answered + failed + count(&v, "/request_counts/processing"),
        output_file: None,
        error_file: None,
        failure: None,
        state,
    })
}

/// Reads the results from the batch's own results path (never a URL the reply names: the
/// key goes nowhere else).
pub async fn results(
    api: &BatchApi,
    batch_id: &str,
    each: &mut (dyn FnMut(&str, Answer) -> std::io::Result<()> + Send),
) -> Result<(), LlmError> {
    let path = format!("{BATCHES}/{batch_id}/results");
    api.answers(&path, &|v| answer(api, v), each).await
}

fn answer(api: &BatchApi, v: &Value) -> Answer {
    let result = v.get("result").unwrap_or(&Value::Null);
    match result.get("type").and_then(Value::as_str) {
        Some("succeeded") => {
            api.capped(parse_message(result.get("message").unwrap_or(&Value::Null)))
        }
        Some("errored") => {
            let kind = text(result, "/error/error/type")
                .or_else(|| text(result, "/error/type"))
                .unwrap_or_default();
            let message = text(result, "/error/error/message")
                .or_else(|| text(result, "/error/message"))
                .unwrap_or_else(|| kind.clone());
            Err(match kind.as_str() {
                "invalid_request_error" => LlmError::Request {
                    status: 400,
                    message,
                },
                "authentication_error" | "permission_error" => LlmError::Request {
                    status: 403,
                    message,
                },
                _ => LlmError::Server {
                    status: 500,
                    message,
                },
            })
        }
        Some("canceled") => Err(LlmError::Unanswered("the batch was cancelled".into())),
        Some("expired") => Err(LlmError::Unanswered(
            "the batch expired before answering it".into(),
        )),
        other => Err(LlmError::BadResponse(format!(
            "a batch result of unknown type {other:?}"
        ))),
    }
}
