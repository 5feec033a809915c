//! Anthropic Messages: the system prompt apart, `x-api-key` and `anthropic-version` headers,
//! the reply in `content[].text`.

use std::sync::Mutex;

use serde_json::{Value, json};

use super::{
    BoxFuture, ChatRequest, ChatResponse, Flow, LlmError, OnPiece, Piece, Provider, Role, Timeouts,
    event_json,
};

pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct Anthropic {
    pub base_url: String,
    pub key: Option<String>,
    /// Where the key came from, for error messages.
    pub key_var: String,
    pub http: reqwest::Client,
    pub timeouts: Timeouts,
    /// The most bytes a reply may take.
    pub max_reply_bytes: usize,
}

impl Anthropic {
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
            "temperature": req.temperature,
            "messages": messages,
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if stream {
            body["stream"] = json!(true);
        }
        body
    }

    fn key(&self) -> super::Key<'_> {
        super::Key {
            var: &self.key_var,
            value: self.key.as_deref(),
        }
    }

    fn request(&self, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(format!(
                "{}/v1/messages",
                self.base_url.trim_end_matches('/')
            ))
            .header("anthropic-version", API_VERSION)
            .json(body);
        match &self.key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    /// `message_start` (input tokens), `content_block_delta` (text), `message_delta`
    /// (output tokens), `message_stop` (the end); an `error` event fails the call.
    async fn stream(
        &self,
        req: &ChatRequest,
        on_piece: OnPiece<'_>,
    ) -> Result<ChatResponse, LlmError> {
        let reply = Mutex::new(ChatResponse::default());
        let cap = self.max_reply_bytes;
        super::send_stream(
            self.request(&Self::body(req, true)),
            self.timeouts,
            cap,
            &self.key(),
            |event| {
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
                    event.name.clone()
                };
                let mut r = reply
                    .lock()
                    .map_err(|_| LlmError::BadResponse("stream state lost".into()))?;
                match kind.as_str() {
                    "message_start" => {
                        let tokens = |k: &str| {
                            v.pointer(&format!("/message/usage/{k}"))
                                .and_then(Value::as_u64)
                                .unwrap_or(0)
                        };
                        r.input_tokens = tokens("input_tokens");
                        r.output_tokens = tokens("output_tokens");
                    }
                    "content_block_delta" => {
                        if let Some(text) = v.pointer("/delta/text").and_then(Value::as_str) {
                            super::push_text(&mut r.text, text, cap)?;
                            on_piece(Piece::Text(text));
                        }
                    }
                    "message_delta" => {
                        if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                            r.output_tokens = n;
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
                        return Err(LlmError::Server {
                            status: if overloaded { 529 } else { 500 },
                            message: format!("error inside the stream: {message}"),
                        });
                    }
                    _ => {}
                }
                Ok(Flow::More)
            },
        )
        .await?;
        reply
            .into_inner()
            .map_err(|_| LlmError::BadResponse("stream state lost".into()))
    }
}

fn parse(text: &str) -> Result<ChatResponse, LlmError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| LlmError::BadResponse(format!("not JSON ({e})")))?;
    parse_message(&v)
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
    let tokens = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatResponse {
        text,
        input_tokens: tokens("input_tokens"),
        output_tokens: tokens("output_tokens"),
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
            let request = self.request(&Self::body(req, false));
            parse(
                &super::send(
                    request,
                    self.timeouts.whole,
                    self.max_reply_bytes,
                    &self.key(),
                )
                .await?,
            )
        })
    }
}
