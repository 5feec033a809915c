//! `OpenAI`'s Batch API: the requests file uploaded (`POST /files`, purpose `batch`), a
//! batch made from it (`POST /batches`, 24-hour window), its status (`GET /batches/ID`),
//! and its output and error files (`GET /files/ID/content`): one line per request with
//! its `custom_id` and the HTTP answer a live call would have had.

use serde_json::{Value, json};

use super::{Answer, BatchApi, CALL_TIMEOUT, Found, Limits, Status, TRANSFER_TIMEOUT, text};
use crate::llm::openai::{OpenAi, parse_completion};
use crate::llm::wire::count;
use crate::llm::{ChatRequest, LlmError};

/// 50,000 requests and 200 MB a batch: kept a little under the byte limit.
pub const LIMITS: Limits = Limits {
    requests: 50_000,
    bytes: 190 * 1000 * 1000,
};

const ENDPOINT: &str = "/v1/chat/completions";
const BOUNDARY: &str = "rubricate-batch-7c1f0e9a4b";

pub fn line(custom_id: &str, req: &ChatRequest) -> String {
    json!({
        "custom_id": custom_id,
        "method": "POST",
        "url": ENDPOINT,
        "body": OpenAi::body(req, true, req.logprobs, false),
    })
    .to_string()
}

pub async fn upload(api: &BatchApi, requests: &std::path::Path) -> Result<String, LlmError> {
    const HEAD: &str = concat!(
        "--rubricate-batch-7c1f0e9a4b\r\n",
        "Content-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n",
        "--rubricate-batch-7c1f0e9a4b\r\n",
        "Content-Disposition: form-data; name=\"file\"; filename=\"requests.jsonl\"\r\n",
        "Content-Type: application/jsonl\r\n\r\n"
    );
    const TAIL: &str = "\r\n--rubricate-batch-7c1f0e9a4b--\r\n";
    let (file, len) = super::open_requests(requests).await?;
    let body = super::file_body(file, len, HEAD.as_bytes(), b'\n', b'\n', TAIL.as_bytes());
    let request = api
        .endpoint
        .post("/files")
        .header(
            reqwest::header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header(
            reqwest::header::CONTENT_LENGTH,
            HEAD.len() as u64 + len + TAIL.len() as u64,
        )
        .body(body);
    let v = api.call(request, TRANSFER_TIMEOUT).await?;
    text(&v, "/id").ok_or_else(|| LlmError::BadResponse("the uploaded file has no id".into()))
}

pub async fn create(api: &BatchApi, file_id: &str, label: &str) -> Result<String, LlmError> {
    let request = api.endpoint.post("/batches").json(&json!({
        "input_file_id": file_id,
        "endpoint": ENDPOINT,
        "completion_window": "24h",
        "metadata": {"rubricate": label},
    }));
    let v = api.call(request, CALL_TIMEOUT).await?;
    text(&v, "/id").ok_or_else(|| LlmError::BadResponse("the new batch has no id".into()))
}

/// The batches labelled `label` or made from `file_id`.
pub async fn candidates(
    api: &BatchApi,
    label: &str,
    file_id: Option<&str>,
) -> Result<Vec<Found>, LlmError> {
    let mut found = Vec::new();
    api.listed(&mut |b| {
        let labelled = b.pointer("/metadata/rubricate").and_then(Value::as_str) == Some(label);
        let from_file =
            file_id.is_some() && b.get("input_file_id").and_then(Value::as_str) == file_id;
        if let Some(id) = text(b, "/id").filter(|_| labelled || from_file) {
            let created_at = b
                .get("created_at")
                .and_then(Value::as_i64)
                .and_then(|t| jiff::Timestamp::from_second(t).ok());
            found.push(Found { id, created_at });
        }
    })
    .await?;
    Ok(found)
}

pub async fn status(api: &BatchApi, batch_id: &str) -> Result<Status, LlmError> {
    let request = api.endpoint.get(&format!("/batches/{batch_id}"));
    let v = api.call(request, CALL_TIMEOUT).await?;
    let state = text(&v, "/status").unwrap_or_default();
    let ended = matches!(
        state.as_str(),
        "completed" | "failed" | "expired" | "cancelled"
    );
    let failure = (state == "failed").then(|| {
        let errors: Vec<String> = v
            .pointer("/errors/data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| text(e, "/message"))
            .take(3)
            .collect();
        if errors.is_empty() {
            "the provider refused the batch".to_owned()
        } else {
            errors.join("; ")
        }
    });
    Ok(Status {
        ended,
        answered: count(&v, "/request_counts/completed"),
        failed: count(&v, "/request_counts/failed"),
        total: count(&v, "/request_counts/total"),
        output_file: text(&v, "/output_file_id"),
        error_file: text(&v, "/error_file_id"),
        failure,
        state,
    })
}

pub async fn results(
    api: &BatchApi,
    status: &Status,
    each: &mut (dyn FnMut(&str, Answer) -> std::io::Result<()> + Send),
) -> Result<(), LlmError> {
    for file in [&status.output_file, &status.error_file]
        .into_iter()
        .flatten()
    {
        let path = format!("/files/{file}/content");
        api.answers(&path, &|v| answer(api, v), each).await?;
    }
    Ok(())
}

/// A result line's answer: the completion, or the error its HTTP answer or the batch gave.
fn answer(api: &BatchApi, v: &Value) -> Answer {
    if let Some(response) = v.get("response").filter(|r| r.is_object()) {
        let status = u16::try_from(count(response, "/status_code")).unwrap_or(0);
        let body = response.get("body").unwrap_or(&Value::Null);
        if let Some(e) = api.answer_of_status(status, body) {
            return Err(e);
        }
        return api.capped(parse_completion(body));
    }
    let code = text(v, "/error/code").unwrap_or_default();
    let message = text(v, "/error/message").unwrap_or_else(|| code.clone());
    Err(LlmError::Unanswered(if message.is_empty() {
        "no answer in the batch's results".to_owned()
    } else {
        message
    }))
}
