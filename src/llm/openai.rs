//! OpenAI-compatible chat completions: `OpenAI`, `vLLM`, the `llama.cpp` server, `LM Studio`,
//! `Ollama` (its `/v1`), `OpenRouter`. Structured output via `response_format: json_schema`; a server that
//! refuses it is asked again without, and remembered.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::wire::{Endpoint, Flow, count, error_message, event_json, push_piece, stream_error};
use super::{BoxFuture, ChatRequest, ChatResponse, LlmError, OnPiece, Provider, Timeouts};

/// Where a chat completion is asked for (after the base URL, which ends in `/v1`).
const COMPLETIONS: &str = "/chat/completions";

/// `OpenAI`'s authentication: the key as a bearer token (a local server may need none).
pub(super) fn authorize(
    request: reqwest::RequestBuilder,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

/// One OpenAI-compatible server, spoken to in the chat completions format.
#[derive(Debug)]
pub struct OpenAi {
    name: String,
    endpoint: Endpoint,
    timeouts: Timeouts,
    /// The most bytes a reply may take.
    max_reply_bytes: usize,
    /// Cleared after a server rejects `response_format`.
    structured: AtomicBool,
    /// Cleared after a server rejects `logprobs`.
    logprobs: AtomicBool,
}

impl OpenAi {
    pub(super) fn new(
        name: &str,
        endpoint: Endpoint,
        timeouts: Timeouts,
        max_reply_bytes: usize,
    ) -> Self {
        Self {
            name: name.to_owned(),
            endpoint,
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
        if let Some(effort) = req.reasoning_effort {
            body["reasoning_effort"] = json!(effort.as_str());
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
        super::wire::add_extra(&mut body, &req.extra);
        body
    }

    async fn send(
        &self,
        req: &ChatRequest,
        structured: bool,
        logprobs: bool,
        on_piece: Option<OnPiece<'_>>,
    ) -> Result<ChatResponse, LlmError> {
        let body = Self::body(req, structured, logprobs, on_piece.is_some());
        let request = self.endpoint.post(COMPLETIONS).json(&body);
        let cap = self.max_reply_bytes;
        let Some(on_piece) = on_piece else {
            let reply = self
                .endpoint
                .send_json(request, self.timeouts.whole, cap)
                .await?;
            return parse_completion(&reply);
        };
        let mut reply = ChatResponse::default();
        let mut finished = false;
        let streamed = self
            .endpoint
            .stream(request, self.timeouts, cap, |event| {
                if event.data.trim() == "[DONE]" {
                    return Ok(Flow::Done);
                }
                let v = event_json(&event)?;
                if let Some(e) = v.get("error") {
                    return Err(stream_error(500, &error_message(&e.to_string())));
                }
                if let Some(text) = v
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    && !text.is_empty()
                {
                    push_piece(&mut reply.text, text, cap, on_piece)?;
                }
                if let Some(content) = v.pointer("/choices/0/logprobs/content") {
                    super::push_logprobs(content, &mut reply.logprobs);
                }
                if v.pointer("/choices/0/finish_reason")
                    .is_some_and(|f| !f.is_null())
                {
                    finished = true;
                }
                if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
                    read_usage(usage, &mut reply);
                }
                Ok(Flow::More)
            })
            .await;
        match streamed {
            Ok(()) => Ok(reply),
            // Some servers close the stream after the last choice without `[DONE]`.
            Err(LlmError::Truncated(_)) if finished => Ok(reply),
            Err(e) => Err(e),
        }
    }
}

fn read_usage(usage: &Value, into: &mut ChatResponse) {
    into.input_tokens = count(usage, "/prompt_tokens");
    // Reasoning tokens are part of `completion_tokens` (and billed as output); the detail
    // says how many of them there were.
    into.output_tokens = count(usage, "/completion_tokens");
    into.reasoning_tokens = count(usage, "/completion_tokens_details/reasoning_tokens");
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
