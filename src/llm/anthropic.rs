//! Anthropic Messages: the system prompt apart, `x-api-key` and `anthropic-version` headers,
//! the reply in `content[].text`.

use serde_json::{Value, json};

use super::wire::{Endpoint, Flow, count, event_json, push_piece, stream_error};
use super::{BoxFuture, ChatRequest, ChatResponse, LlmError, OnPiece, Provider, Role, Timeouts};

pub const API_VERSION: &str = "2023-06-01";

/// Where the Messages API takes a request (after the base URL).
const MESSAGES: &str = "/v1/messages";

/// Anthropic's authentication: the API version on every request, the key as `x-api-key`.
pub(super) fn authorize(
    request: reqwest::RequestBuilder,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    let request = request.header("anthropic-version", API_VERSION);
    match key {
        Some(key) => request.header("x-api-key", key),
        None => request,
    }
}

/// One Anthropic server, spoken to in the Messages format.
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Endpoint,
    timeouts: Timeouts,
    /// The most bytes a reply may take.
    max_reply_bytes: usize,
}

impl Anthropic {
    pub(super) fn new(endpoint: Endpoint, timeouts: Timeouts, max_reply_bytes: usize) -> Self {
        Self {
            endpoint,
            timeouts,
            max_reply_bytes,
        }
    }

    /// The request body (`params` of a batch request).
    pub(super) fn body(req: &ChatRequest, stream: bool) -> Value {
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let messages: Vec<Value> = req
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let mut body = json!({
            "model": req.model,
            "max_tokens": req.max_tokens,
            "messages": messages,
        });
        match req.thinking_budget {
            // Extended thinking takes no temperature (the API refuses one but 1).
            Some(budget) => {
                body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            }
            None => body["temperature"] = json!(req.temperature),
        }
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if stream {
            body["stream"] = json!(true);
        }
        super::wire::add_extra(&mut body, &req.extra);
        body
    }

    /// `message_start` (input tokens), `content_block_delta` (text), `message_delta`
    /// (output tokens), `message_stop` (the end); an `error` event fails the call.
    async fn stream(
        &self,
        req: &ChatRequest,
        on_piece: OnPiece<'_>,
    ) -> Result<ChatResponse, LlmError> {
        let mut reply = ChatResponse::default();
        let cap = self.max_reply_bytes;
        let request = self.endpoint.post(MESSAGES).json(&Self::body(req, true));
        self.endpoint
            .stream(request, self.timeouts, cap, |event| {
                if event.name == "ping" {
                    return Ok(Flow::More);
                }
                let v = event_json(&event)?;
                // The event's name, else the `type` inside its data (the two always agree).
                let kind = if event.name.is_empty() {
                    v.get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                } else {
                    event.name
                };
                match kind.as_str() {
                    "message_start" => {
                        reply.input_tokens = count(&v, "/message/usage/input_tokens");
                        reply.output_tokens = count(&v, "/message/usage/output_tokens");
                    }
                    "content_block_delta" => {
                        if let Some(text) = v.pointer("/delta/text").and_then(Value::as_str) {
                            push_piece(&mut reply.text, text, cap, on_piece)?;
                        }
                    }
                    "message_delta" => {
                        if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                            reply.output_tokens = n;
                        }
                    }
                    "message_stop" => return Ok(Flow::Done),
                    "error" => {
                        let message = v
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .unwrap_or("an error event without a message");
                        let overloaded = v.pointer("/error/type").and_then(Value::as_str)
                            == Some("overloaded_error");
                        return Err(stream_error(if overloaded { 529 } else { 500 }, message));
                    }
                    _ => {}
                }
                Ok(Flow::More)
            })
            .await?;
        Ok(reply)
    }
}

/// A Messages reply (`content[].text`, `usage`), as a plain call or a batch result holds it.
pub(super) fn parse_message(v: &Value) -> Result<ChatResponse, LlmError> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::BadResponse("no `content` list".into()))?;
    let text: String = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    // Only `text` blocks are the verdict: `thinking` (and `redacted_thinking`) blocks are
    // the judge's deliberation, billed as output but never read as its answer.
    Ok(ChatResponse {
        text,
        input_tokens: count(v, "/usage/input_tokens"),
        output_tokens: count(v, "/usage/output_tokens"),
        // Anthropic counts thinking inside `output_tokens` and does not say how much.
        reasoning_tokens: 0,
        // Anthropic's API gives no log-probabilities.
        logprobs: Vec::new(),
    })
}

impl Provider for Anthropic {
    #[allow(clippy::unnecessary_literal_bound)] // other providers return a configured name
    fn name(&self) -> &str {
        "anthropic"
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
        on_piece: Option<OnPiece<'a>>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            if let Some(on_piece) = on_piece {
                return self.stream(req, on_piece).await;
            }
            let request = self.endpoint.post(MESSAGES).json(&Self::body(req, false));
            let reply = self
                .endpoint
                .send_json(request, self.timeouts.whole, self.max_reply_bytes)
                .await?;
            parse_message(&reply)
        })
    }
}
