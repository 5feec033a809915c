//! Inspect eval logs (JSON: `{eval, samples: [...]}`) as datasets: each sample is an item
//! holding its conversation (`messages`), the sample's `target` as the reference and its
//! `input` as the prompt.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::fields::kind;
use super::{Dataset, DatasetFormat, DatasetHeader};
use crate::core::diag::{Diagnostic, LineIndex};
use crate::model::{Conversation, Item};

/// The log's samples as a dataset (each sample located at its place in `text`).
pub fn dataset(file: &str, text: &str, lines: &LineIndex<'_>, samples: &[&RawValue]) -> Dataset {
    let items: Vec<Result<Item, Diagnostic>> = samples
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            let at = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            let pos = lines.pos(at);
            let origin = format!("{file}:{}:{}", pos.line, pos.col);
            sample_item(raw.get(), i + 1, origin)
                .map_err(|m| Diagnostic::at(file, pos, format!("sample {}: {m}", i + 1)))
        })
        .collect();
    Dataset {
        file: file.to_owned(),
        format: DatasetFormat::Json,
        header: DatasetHeader::default(),
        items: Box::new(items.into_iter()),
    }
}

fn sample_item(raw: &str, number: usize, origin: String) -> Result<Item, String> {
    let value: Value = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    let Value::Object(mut sample) = value else {
        return Err(format!(
            "a sample must be an object, found {}",
            kind(&value)
        ));
    };
    let mut id = match sample.remove("id") {
        Some(Value::String(s)) => s,
        Some(Value::Number(n)) => n.to_string(),
        _ => number.to_string(),
    };
    // Several epochs of one sample are several items.
    if let Some(epoch) = sample
        .get("epoch")
        .and_then(Value::as_u64)
        .filter(|&e| e > 1)
    {
        id = format!("{id}@{epoch}");
    }
    let messages = sample
        .remove("messages")
        .filter(|m| !m.is_null())
        .ok_or("the sample has no `messages` to grade")?;
    let conversation =
        Conversation::from_value(&messages).map_err(|e| format!("`messages` {e}"))?;
    let prompt = match sample.remove("input") {
        Some(Value::String(s)) => Some(s),
        Some(list @ Value::Array(_)) => Some(
            Conversation::from_value(&list)
                .map_err(|e| format!("`input` {e}"))?
                .transcript(),
        ),
        _ => None,
    };
    let reference = match sample.remove("target") {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        Some(Value::Array(list)) if !list.is_empty() => Some(
            list.iter()
                .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    };
    let mut metadata = match sample.remove("metadata") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(epoch) = sample.remove("epoch") {
        metadata.entry("epoch").or_insert(epoch);
    }
    Ok(Item {
        id,
        submission: conversation.transcript(),
        conversation: Some(Arc::new(conversation)),
        prompt,
        reference,
        metadata,
        origin,
        ..Item::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_an_item_with_its_conversation() {
        let raw = r#"{"id": 7, "epoch": 2, "input": "List files", "target": ["x.txt"],
            "messages": [{"role": "user", "content": "List files"},
              {"role": "assistant", "content": "", "tool_calls": [{"id": "t", "function": "bash", "arguments": {"cmd": "ls"}}]},
              {"role": "tool", "tool_call_id": "t", "function": "bash", "content": "x.txt"},
              {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "easy"}, {"type": "text", "text": "x.txt"}]}],
            "metadata": {"level": 1}}"#;
        let item = sample_item(raw, 1, "log.json:3:5".into()).unwrap();
        assert_eq!(item.id, "7@2");
        assert_eq!(item.reference.as_deref(), Some("x.txt"));
        assert_eq!(item.prompt.as_deref(), Some("List files"));
        let c = item.conversation.as_deref().unwrap();
        assert_eq!(c.turns(), 2);
        assert_eq!(c.last_assistant(), "x.txt");
        assert_eq!(item.metadata["epoch"], 2);
        let err =
            sample_item(r#"{"id": 1, "messages": [{"role": 4}]}"#, 1, String::new()).unwrap_err();
        assert_eq!(
            err,
            "`messages` message 1: `role` must be text, found a number"
        );
    }
}
