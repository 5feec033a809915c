//! Mapping one JSON object (a JSONL line, a JSON item, a CSV row) to an [`Item`].

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::core::diag::Diagnostics;
use crate::formats::native::{Dialect, read_rubric};
use crate::formats::node::Node;
use crate::model::{Conversation, GroundTruth, GroundTruthError, Item, Message, Role, Rubric};

/// Keys that carry the submission, in order of preference.
pub const SUBMISSION_KEYS: &[&str] = &["submission", "output", "response", "completion", "answer"];
pub const PROMPT_KEYS: &[&str] = &["prompt", "input", "query", "question"];
pub const REFERENCE_KEYS: &[&str] = &[
    "reference",
    "reference_submission",
    "expected",
    "expected_output",
];

/// The golden response of rubric's `scripts/rubrics.jsonl`: the mark of its layout.
const GOLDEN_KEYS: &[&str] = &["goldenResponse", "golden_response"];

/// Whether an item is in rubric's `scripts/rubrics.jsonl` layout (it carries a golden
/// response), so that its own rubric is one of rubric's.
pub fn in_rubric_lib_layout(obj: &Map<String, Value>) -> bool {
    GOLDEN_KEYS.iter().any(|k| obj.contains_key(*k))
}

/// An item's own rubric (`node`). In rubric's `rubrics.jsonl` layout it is read as rubric's
/// files are (`rubric_lib`: its `sum()`, as `RUBRICATE_PYTHON` says, and its format named);
/// any other as autorubric datasets carry them.
pub fn read_item_rubric(
    file: &str,
    node: &Node,
    stem: &str,
    rubric_lib: bool,
) -> Result<Rubric, Diagnostics> {
    if rubric_lib {
        crate::formats::rubric_lib::read(file, node, stem).map(|(r, _)| r)
    } else {
        read_rubric(file, node, stem, Dialect::AUTORUBRIC).map(|(r, _)| r)
    }
}

/// The dataset's prompt and reference apply where the item has none of its own.
pub fn inherit(item: &mut Item, prompt: Option<&String>, reference: Option<&String>) {
    if item.prompt.is_none() {
        item.prompt = prompt.cloned();
    }
    if item.reference.is_none() {
        item.reference = reference.cloned();
    }
}

/// Builds an item from an object. `default_id` is used when the object has no `id`.
/// Keys that mean nothing to rubricate are kept in `metadata`.
pub fn item_from_object(
    mut obj: Map<String, Value>,
    default_id: String,
    origin: String,
) -> Result<Item, String> {
    let id = match obj.remove("id") {
        Some(Value::String(s)) => s,
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => default_id,
        Some(other) => {
            return Err(format!(
                "`id` must be text or a number, found {}",
                kind(&other)
            ));
        }
    };
    // rubric's `scripts/rubrics.jsonl` carries a golden response and no other: it is what
    // its evaluation reports grade, so it is the submission, and the reference too.
    let golden = GOLDEN_KEYS
        .iter()
        .find_map(|k| obj.remove(*k))
        .filter(|v| !v.is_null());
    let candidates = super::pairs::take_candidates(&mut obj, &id)?;
    let given = take_first(&mut obj, SUBMISSION_KEYS).or_else(|| golden.clone());
    let messages = obj.remove("messages").filter(|v| !v.is_null());
    let (submission, conversation) = match (given, messages) {
        (given, Some(messages)) => {
            let conversation = conversation_with_answer(&id, &messages, given)?;
            (conversation.transcript(), Some(Arc::new(conversation)))
        }
        (Some(list), None) if Conversation::looks_like(&list) => {
            let conversation = Conversation::from_value(&list)
                .map_err(|e| format!("item '{id}': `submission` {e}"))?;
            (conversation.transcript(), Some(Arc::new(conversation)))
        }
        (Some(Value::String(s)), None) => (s, None),
        (None, None) if candidates.is_some() => (
            super::pairs::shown(candidates.as_deref().unwrap_or(&[])),
            None,
        ),
        (Some(Value::Null) | None, None) => {
            if let Some(what) = crate::formats::detect::not_an_item(&obj) {
                return Err(format!("this is {what}"));
            }
            return Err(format!(
                "item '{id}' has no submission; give it a `submission` (or `output`) field, or its conversation as `messages`"
            ));
        }
        // Structured submissions (JSON answers) are graded as their JSON text.
        (Some(other), None) => (other.to_string(), None),
    };
    let prompt = optional_text(&mut obj, PROMPT_KEYS, &id)?;
    let mut reference = optional_text(&mut obj, REFERENCE_KEYS, &id)?;
    if reference.is_none()
        && let Some(Value::String(g)) = golden
    {
        reference = Some(g);
    }
    let description = optional_text(&mut obj, &["description"], &id)?;
    let ground_truth = match obj.remove("ground_truth") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_ground_truth(v).map_err(|e| format!("item '{id}': {e}"))?),
    };
    let mut metadata = match obj.remove("metadata") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(other) => {
            return Err(format!(
                "item '{id}': `metadata` must be an object, found {}",
                kind(&other)
            ));
        }
    };
    obj.remove("rubric");
    for (k, v) in obj {
        metadata.entry(k).or_insert(v);
    }
    Ok(Item {
        id,
        submission,
        candidates: candidates.unwrap_or_default(),
        conversation,
        prompt,
        reference,
        description,
        ground_truth,
        rubric: None,
        metadata,
        origin,
    })
}

/// An item's `messages` as its conversation; a text submission given beside them is the
/// conversation's last assistant turn (the answer to the messages).
fn conversation_with_answer(
    id: &str,
    messages: &Value,
    answer: Option<Value>,
) -> Result<Conversation, String> {
    let mut conversation =
        Conversation::from_value(messages).map_err(|e| format!("item '{id}': `messages` {e}"))?;
    match answer {
        None | Some(Value::Null) => {}
        Some(Value::String(content)) => conversation.messages.push(Message {
            role: Role::Assistant,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }),
        Some(other) => {
            return Err(format!(
                "item '{id}': beside `messages`, the submission must be text (the last assistant turn), found {}",
                kind(&other)
            ));
        }
    }
    Ok(conversation)
}

/// A list (one entry per criterion, in order) or a map from criterion id to verdict.
pub fn parse_ground_truth(v: Value) -> Result<GroundTruth, GroundTruthError> {
    match v {
        Value::Array(values) => Ok(GroundTruth::ByPosition(values)),
        Value::Object(m) => Ok(GroundTruth::ById(m.into_iter().collect())),
        Value::String(s) if s.trim_start().starts_with(['[', '{']) => {
            let parsed: Value = serde_json::from_str(&s).map_err(GroundTruthError::NotJson)?;
            parse_ground_truth(parsed)
        }
        // A single binary verdict is a one-criterion list; separated words are a list.
        Value::String(s) => Ok(GroundTruth::ByPosition(
            s.split(['|', ';'])
                .map(|p| Value::String(p.trim().to_owned()))
                .collect(),
        )),
        other => Err(GroundTruthError::WrongShape(kind(&other))),
    }
}

fn take_first(obj: &mut Map<String, Value>, keys: &[&str]) -> Option<Value> {
    keys.iter()
        .find_map(|k| obj.remove(*k).filter(|v| !v.is_null()))
}

fn optional_text(
    obj: &mut Map<String, Value>,
    keys: &[&str],
    id: &str,
) -> Result<Option<String>, String> {
    match take_first(obj, keys) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        // Chat-style prompts (lists of messages) are kept as their JSON text.
        Some(v @ (Value::Array(_) | Value::Object(_))) => Ok(Some(v.to_string())),
        Some(other) => Err(format!(
            "item '{id}': `{}` must be text, found {}",
            keys[0],
            kind(&other)
        )),
    }
}

/// The JSON type of `v` for messages (`null`, `a string`, …).
pub use crate::model::json_kind as kind;
