//! What one eval case yields: its graders (its own evaluators and assertions, found where
//! each generation of the format puts them) and the dataset item it becomes.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::asserts::asserts;
use super::walk::{Found, GraderSpec, KEY_SHARED, Walk, entries};
use crate::formats::node::{Node, NodeValue};
use crate::model::{Conversation, ConversationError, Item, Rubric};

/// `execution.evaluators`: rubric evaluators contribute entries (each evaluator a
/// grader), others are noted.
pub(super) fn evaluators<'n>(
    w: &mut Walk<'_>,
    exec: &'n Node,
    base: &str,
    out: &mut Vec<Found<'n>>,
) {
    let Some(list) = exec.get("evaluators") else {
        return;
    };
    let Some(items) = list.as_seq() else {
        w.ctx
            .wrong_type(list, "`execution.evaluators`", "a list of evaluators");
        return;
    };
    for (i, ev) in items.iter().enumerate() {
        let ty = ev.get("type").and_then(Node::as_str).unwrap_or("");
        let here = format!("{base}.evaluators[{i}]");
        if ty == "rubric" || ty == "rubrics" {
            let grader = GraderSpec::of(&mut w.ctx, ev, here.clone(), "rubrics");
            entries(
                w,
                ev.get("rubrics"),
                &format!("{here}.rubrics"),
                None,
                &grader,
                out,
            );
        } else if super::tools::is_trajectory(ty) {
            let grader = GraderSpec::of(&mut w.ctx, ev, here.clone(), ty);
            if let Some(c) = super::tools::trajectory(w, ev, out.len() + 1) {
                out.push(Found {
                    node: ev,
                    path: here,
                    section: None,
                    check: Some(c),
                    grader,
                });
            }
        } else {
            let name = ev.get("name").and_then(Node::as_str).unwrap_or("unnamed");
            w.note(ev, &format!("evaluator:{ty}"), format!(
                "agentv evaluator '{name}' (type {ty}) is not run by rubricate; the test's score is the mean of the graders rubricate runs"
            ));
        }
    }
}

/// Every rubric entry of one case, in file order.
pub(super) fn collect_case<'n>(w: &mut Walk<'_>, case: &'n Node, base: &str) -> Vec<Found<'n>> {
    let mut out = Vec::new();
    if case.as_map().is_none() {
        w.ctx
            .wrong_type(case, "an eval case", "a mapping with `id`");
        return out;
    }
    // The oldest generation's case `rubrics` extend the file-level rubric grader (seed 004
    // scores them as one); `KEY_SHARED` marks them until that grader is known.
    let rubrics = GraderSpec::plain(KEY_SHARED.into(), "rubrics", 1.0);
    entries(
        w,
        case.get("rubrics"),
        &format!("{base}.rubrics"),
        None,
        &rubrics,
        &mut out,
    );
    if let Some(exec) = case.get("execution") {
        evaluators(w, exec, &format!("{base}.execution"), &mut out);
    }
    if let Some(list) = case.get("assertions").and_then(Node::as_seq) {
        for (i, a) in list.iter().enumerate() {
            let ty = a.get("type").and_then(Node::as_str).unwrap_or("");
            if ty == "rubrics" || ty == "rubric" || ty == "llm-rubric" {
                let key = if a.get("criteria").is_some() {
                    "criteria"
                } else {
                    "value"
                };
                let here = format!("{base}.assertions[{i}]");
                let grader = GraderSpec::of(&mut w.ctx, a, here.clone(), ty);
                entries(
                    w,
                    a.get(key),
                    &format!("{here}.{key}"),
                    None,
                    &grader,
                    &mut out,
                );
            } else if super::tools::is_trajectory(ty) {
                let here = format!("{base}.assertions[{i}]");
                let grader = GraderSpec::of(&mut w.ctx, a, here.clone(), ty);
                if let Some(c) = super::tools::trajectory(w, a, out.len() + 1) {
                    out.push(Found {
                        node: a,
                        path: here,
                        section: None,
                        check: Some(c),
                        grader,
                    });
                }
            } else {
                w.note(
                    a,
                    &format!("assert:{ty}"),
                    format!("agentv assertion type '{ty}' is not graded by rubricate; the test's score is the mean of the graders rubricate runs"),
                );
            }
        }
    }
    if let Some(list) = case.get("assert") {
        asserts(w, list, &format!("{base}.assert"), None, None, &mut out);
    }
    out
}

/// The item an eval case becomes.
pub(super) fn case_item(
    w: &mut Walk<'_>,
    case: &Node,
    id: String,
    outcome: Option<String>,
    rubric: Option<Arc<Rubric>>,
) -> Item {
    let vars = case.get("vars");
    let pick = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| case.get(k))
            .or_else(|| keys.iter().find_map(|k| vars.and_then(|v| v.get(k))))
    };
    // `messages`: the oldest generation's `testcases`.
    let prompt =
        pick(&["input", "input_messages", "messages", "question", "query"]).map(messages_text);
    let expected = pick(&["expected_output", "expected_messages"]).map(messages_text);
    let output = pick(&["output", "answer", "response"]);
    let conversation = output
        .and_then(|o| case_conversation(w, pick(&["input", "input_messages", "messages"]), o));
    let submission = match &conversation {
        Some(c) => Some(c.transcript()),
        None => output.map(messages_text),
    };
    if submission.is_none() {
        w.note(case, "no-output", "agentv cases hold no model output; items have an empty submission until you grade real outputs (give them an `output` field)".into());
    }
    let mut metadata = Map::new();
    if let Some(e) = &expected {
        metadata.insert("expected_output".into(), json!(e));
    }
    if let Some(c) = case.get("conversation_id").and_then(Node::as_str) {
        metadata.insert("conversation_id".into(), json!(c));
    }
    Item {
        id,
        submission: submission.unwrap_or_default(),
        candidates: Vec::new(),
        conversation: conversation.map(Arc::new),
        prompt,
        reference: outcome.clone().or(expected),
        description: outcome,
        ground_truth: None,
        rubric,
        metadata,
        origin: format!("{}:{}", w.ctx.file, case.pos.line),
    }
}

/// A case's conversation when its output is a list of messages (an agent's run, with its
/// `toolCalls`): the input messages, when a list, then the output's. A message that is not
/// one is an error at its place in the file.
fn case_conversation(
    w: &mut Walk<'_>,
    input: Option<&Node>,
    output: &Node,
) -> Option<Conversation> {
    let out = output.to_json();
    if !Conversation::looks_like(&out) {
        return None;
    }
    let mut messages = match input.map(Node::to_json) {
        Some(Value::Array(list)) if Conversation::looks_like(&Value::Array(list.clone())) => list,
        _ => Vec::new(),
    };
    let from_input = messages.len();
    if let Value::Array(list) = out {
        messages.extend(list);
    }
    match Conversation::from_value(&Value::Array(messages)) {
        Ok(c) => Some(c),
        Err(e) => {
            let (place, e) = match &e {
                ConversationError::Field {
                    number,
                    field,
                    problem,
                } if *number > from_input => {
                    let at = output
                        .as_seq()
                        .and_then(|s| s.get(number - from_input - 1))
                        .map_or(output.pos, |n| n.pos);
                    (
                        at,
                        format!(
                            "output message {}: `{field}` {problem}",
                            number - from_input
                        ),
                    )
                }
                _ => (
                    input.map_or(output.pos, |n| n.pos),
                    format!("input messages: {e}"),
                ),
            };
            w.ctx.err(place, e);
            None
        }
    }
}

/// A string, or chat messages `[{role, content}]` as `role: content` paragraphs.
fn messages_text(node: &Node) -> String {
    match &node.value {
        NodeValue::Str(s) => s.clone(),
        NodeValue::Seq(msgs) => {
            let parts: Vec<String> = msgs
                .iter()
                .map(|m| {
                    let role = m.get("role").and_then(Node::as_str).unwrap_or("user");
                    let content = m
                        .get("content")
                        .map_or_else(String::new, |c| match c.as_str() {
                            Some(s) => s.to_owned(),
                            None => c.to_json().to_string(),
                        });
                    if msgs.len() == 1 {
                        content
                    } else {
                        format!("{role}: {content}")
                    }
                })
                .collect();
            parts.join("\n\n")
        }
        _ => node.to_json().to_string(),
    }
}
