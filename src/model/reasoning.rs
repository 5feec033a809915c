//! How hard a reasoning judge thinks, and the extra request fields a judge may carry: the
//! parts of a judge's settings that a rubric, `rubricate.yaml` and the command line share.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How much an OpenAI-compatible reasoning model thinks before it answers (its
/// `reasoning_effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// Think briefly.
    Low,
    /// The provider's default.
    Medium,
    /// Think at length.
    High,
}

impl ReasoningEffort {
    /// The names files and flags use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["low", "medium", "high"];

    /// The word sent as `reasoning_effort`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// `low`, `medium` or `high` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Self::Low),
            "medium" => Some(Self::Medium),
            "high" => Some(Self::High),
            _ => None,
        }
    }
}

/// The smallest thinking budget Anthropic accepts, in tokens.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// Request fields the client writes itself: an `extra:` block may not set them, since one
/// would silently replace the conversation, the model or a setting that has its own name.
pub const CLIENT_OWNED_FIELDS: &[&str] = &[
    "model",
    "messages",
    "system",
    "stream",
    "stream_options",
    "response_format",
    "logprobs",
    "temperature",
    "max_tokens",
    "seed",
    "reasoning_effort",
    "thinking",
];

/// The first key of `extra` the client owns, with the setting to use instead, if any.
pub fn owned_extra_field(extra: &Map<String, Value>) -> Option<String> {
    let key = extra
        .keys()
        .find(|k| CLIENT_OWNED_FIELDS.contains(&k.as_str()))?;
    let instead = match key.as_str() {
        "temperature" | "max_tokens" | "seed" | "reasoning_effort" => {
            format!("; use judge.{key}")
        }
        "thinking" => "; use judge.thinking_budget".to_owned(),
        _ => String::new(),
    };
    Some(format!(
        "`extra` may not set `{key}`: rubricate writes it itself{instead}"
    ))
}

/// A thinking budget Anthropic would refuse, said as a sentence.
pub fn thinking_budget_problem(budget: u32) -> Option<String> {
    (budget < MIN_THINKING_BUDGET).then(|| {
        format!("a thinking budget must be at least {MIN_THINKING_BUDGET} tokens (got {budget})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_fields_are_refused_with_the_setting_to_use() {
        let mut extra = Map::new();
        extra.insert("top_p".into(), Value::from(0.5));
        assert_eq!(owned_extra_field(&extra), None);
        extra.insert("messages".into(), Value::Null);
        let why = owned_extra_field(&extra).unwrap();
        assert!(why.contains("`messages`"), "{why}");
        let mut extra = Map::new();
        extra.insert("thinking".into(), Value::Null);
        assert!(
            owned_extra_field(&extra)
                .unwrap()
                .contains("judge.thinking_budget")
        );
    }

    #[test]
    fn efforts_parse_and_budgets_are_checked() {
        assert_eq!(ReasoningEffort::parse("HIGH"), Some(ReasoningEffort::High));
        assert_eq!(ReasoningEffort::parse("max"), None);
        assert!(thinking_budget_problem(1023).is_some());
        assert!(thinking_budget_problem(1024).is_none());
    }
}
