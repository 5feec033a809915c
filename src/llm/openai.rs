//! OpenAI-compatible chat completions: `OpenAI`, `vLLM`, the `llama.cpp` server, `LM Studio`,
//! `Ollama` (its `/v1`), `OpenRouter`. Structured output via `response_format: json_schema`; a server that
//! refuses it is asked again without, and remembered.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::{
    BoxFuture, ChatRequest, ChatResponse, Flow, LlmError, OnPiece, Piece, Provider, Timeouts,
    event_json,
};

#[derive(Debug)]
pub struct OpenAi {
    pub name: String,
    pub base_url: String,
    pub key: Option<String>,
    /// The environment variable the key came from, for error messages.
    pub key_var: String,
    pub http: reqwest::Client,
    pub timeouts: Timeouts,
    /// The most bytes a reply may take.
    pub max_reply_bytes: usize,
    /// Cleared after a server rejects `response_format`.
    structured: AtomicBool,
    /// Cleared after a server rejects `logprobs`.
    logprobs: AtomicBool,
}

impl OpenAi {
    pub fn new(
        name: &str,
        base_url: &str,
        key: Option<String>,
        key_var: &str,
        http: reqwest::Client,
        timeouts: Timeouts,
        max_reply_bytes: usize,
    ) -> Self {
        Self {
            name: name.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_var: key_var.to_owned(),
            http,
            timeouts,
            max_reply_bytes,
            structured: AtomicBool::new(true),
            logprobs: AtomicBool::new(true),
        }
    }

    /// The request body (`body` of a batch request).
    pub(super) fn body(req: &ChatRequest, structured: bool, logprobs: bool, stream: bool) -> Value {
        let mut body = json!({
            "model": req.model,
            "messages": req.messages,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
        });
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        if logprobs {
            body["logprobs"] = json!(true);
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        if structured && let Some(schema) = &req.schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": true, "schema": schema},
            });
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
            .post(format!("{}/chat/completions", self.base_url))
            .json(body);
        match &self.key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    async fn send(
        &self,
        req: &ChatRequest,
        structured: bool,
        logprobs: bool,
        on_piece: Option<OnPiece<'_>>,
    ) -> Result<ChatResponse, LlmError> {
        let body = Self::body(req, structured, logprobs, on_piece.is_some());
        let cap = self.max_reply_bytes;
        let Some(on_piece) = on_piece else {
            return parse(
                &super::send(self.request(&body), self.timeouts.whole, cap, &self.key()).await?,
            );
        };
        let reply = Mutex::new((ChatResponse::default(), false));
        let streamed = super::send_stream(
            self.request(&body),
            self.timeouts,
            cap,
            &self.key(),
            |event| {
                if event.data.trim() == "[DONE]" {
                    return Ok(Flow::Done);
                }
                let v = event_json(&event)?;
                if let Some(e) = v.get("error") {
                    return Err(LlmError::Server {
                        status: 500,
                        message: format!(
                            "error inside the stream: {}",
                            super::error_message(&e.to_string())
                        ),
                    });
                }
                let mut guard = reply
                    .lock()
                    .map_err(|_| LlmError::BadResponse("stream state lost".into()))?;
                let (response, finished) = &mut *guard;
                if let Some(text) = v
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    && !text.is_empty()
                {
                    super::push_text(&mut response.text, text, cap)?;
                    on_piece(Piece::Text(text));
                }
                if let Some(content) = v.pointer("/choices/0/logprobs/content") {
                    super::push_logprobs(content, &mut response.logprobs);
                }
                if v.pointer("/choices/0/finish_reason")
                    .is_some_and(|f| !f.is_null())
                {
                    *finished = true;
                }
                if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
                    read_usage(usage, response);
                }
                Ok(Flow::More)
            },
        )
        .await;
        let (response, finished) = reply
            .into_inner()
            .map_err(|_| LlmError::BadResponse("stream state lost".into()))?;
        match streamed {
            Ok(()) => Ok(response),
            // Some servers close the stream after the last choice without `[DONE]`.
            Err(LlmError::Truncated(_)) if finished => Ok(response),
            Err(e) => Err(e),
        }
    }
}

fn read_usage(usage: &Value, into: &mut ChatResponse) {
    let tokens = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    into.input_tokens = tokens("prompt_tokens");
    into.output_tokens = tokens("completion_tokens");
}

/// `choices[0].message.content` and `usage`.
fn parse(text: &str) -> Result<ChatResponse, LlmError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| LlmError::BadResponse(format!("not JSON ({e})")))?;
    parse_completion(&v)
}

/// A chat completion (`choices[0].message.content`, `usage`), as a plain call or a batch
/// result holds it.
pub(super) fn parse_completion(v: &Value) -> Result<ChatResponse, LlmError> {
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| LlmError::BadResponse("no choices[0].message.content".into()))?;
    let mut response = ChatResponse {
        text: content.to_owned(),
        ..ChatResponse::default()
    };
    if let Some(usage) = v.get("usage") {
        read_usage(usage, &mut response);
    }
    if let Some(content) = v.pointer("/choices/0/logprobs/content") {
        super::push_logprobs(content, &mut response.logprobs);
    }
    Ok(response)
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
        on_piece: Option<OnPiece<'a>>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let mut structured = req.schema.is_some() && self.structured.load(Ordering::Relaxed);
            let mut logprobs = req.logprobs && self.logprobs.load(Ordering::Relaxed);
            // A server without structured output or log-probabilities says so with a 400
            // naming the field: asked again without it (once each), and remembered.
            for _ in 0..2 {
                match self.send(req, structured, logprobs, on_piece).await {
                    Err(LlmError::Request {
                        status: 400,
                        message,
                    }) => {
                        let lower = message.to_ascii_lowercase();
                        if structured && lower.contains("response_format") {
                            self.structured.store(false, Ordering::Relaxed);
                            structured = false;
                        } else if logprobs && lower.contains("logprobs") {
                            self.logprobs.store(false, Ordering::Relaxed);
                            logprobs = false;
                        } else {
                            return Err(LlmError::Request {
                                status: 400,
                                message,
                            });
                        }
                    }
                    other => return other,
                }
            }
            self.send(req, structured, logprobs, on_piece).await
        })
    }
}
