//! Anthropic Messages: the system prompt apart, `x-api-key` and `anthropic-version` headers,
//! the reply in `content[].text`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{BoxFuture, ChatRequest, ChatResponse, LlmError, Provider, Role};

pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct Anthropic {
    pub base_url: String,
    pub key: Option<String>,
    pub http: reqwest::Client,
    pub timeout: Duration,
}

impl Anthropic {
    fn body(req: &ChatRequest) -> Value {
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
        body
    }
}

fn parse(text: &str) -> Result<ChatResponse, LlmError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| LlmError::BadResponse(format!("not JSON ({e})")))?;
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
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let mut request = self
                .http
                .post(format!(
                    "{}/v1/messages",
                    self.base_url.trim_end_matches('/')
                ))
                .header("anthropic-version", API_VERSION)
                .json(&Self::body(req));
            if let Some(key) = &self.key {
                request = request.header("x-api-key", key);
            }
            parse(&super::send(request, self.timeout, "ANTHROPIC_API_KEY").await?)
        })
    }
}
