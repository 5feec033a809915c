//! OpenAI-compatible chat completions: `OpenAI`, `vLLM`, the `llama.cpp` server, `LM Studio`,
//! `Ollama` (its `/v1`), `OpenRouter`. Structured output via `response_format: json_schema`; a server that
//! refuses it is asked again without, and remembered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::{BoxFuture, ChatRequest, ChatResponse, LlmError, Provider};

#[derive(Debug)]
pub struct OpenAi {
    pub name: String,
    pub base_url: String,
    pub key: Option<String>,
    /// The environment variable the key came from, for error messages.
    pub key_var: String,
    pub http: reqwest::Client,
    pub timeout: Duration,
    /// Cleared after a server rejects `response_format`.
    structured: AtomicBool,
}

impl OpenAi {
    pub fn new(
        name: &str,
        base_url: &str,
        key: Option<String>,
        key_var: &str,
        http: reqwest::Client,
        timeout: Duration,
    ) -> Self {
        Self {
            name: name.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_var: key_var.to_owned(),
            http,
            timeout,
            structured: AtomicBool::new(true),
        }
    }

    fn body(req: &ChatRequest, structured: bool) -> Value {
        let mut body = json!({
            "model": req.model,
            "messages": req.messages,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
        });
        if let Some(seed) = req.seed {
            body["seed"] = json!(seed);
        }
        if structured && let Some(schema) = &req.schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": true, "schema": schema},
            });
        }
        body
    }

    async fn send(&self, body: &Value) -> Result<ChatResponse, LlmError> {
        let mut request = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .json(body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        parse(&super::send(request, self.timeout, &self.key_var).await?)
    }
}

/// `choices[0].message.content` and `usage`.
fn parse(text: &str) -> Result<ChatResponse, LlmError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| LlmError::BadResponse(format!("not JSON ({e})")))?;
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| LlmError::BadResponse("no choices[0].message.content".into()))?;
    let tokens = |k: &str| {
        v.pointer(&format!("/usage/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatResponse {
        text: content.to_owned(),
        input_tokens: tokens("prompt_tokens"),
        output_tokens: tokens("completion_tokens"),
    })
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let structured = req.schema.is_some() && self.structured.load(Ordering::Relaxed);
            match self.send(&Self::body(req, structured)).await {
                // A server without structured output says so with a 400 naming the field.
                Err(LlmError::Request {
                    status: 400,
                    message,
                }) if structured && message.to_ascii_lowercase().contains("response_format") => {
                    self.structured.store(false, Ordering::Relaxed);
                    self.send(&Self::body(req, false)).await
                }
                other => other,
            }
        })
    }
}
