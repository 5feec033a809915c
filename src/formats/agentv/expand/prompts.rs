//! agentv's `prompts` matrix: each case once per prompt (text, chat messages or a prompt
//! file), its input that prompt rendered with the case's vars, ids as agentv gives them.

use serde_json::Value;

use super::{Case, remove, render_node, set, vars_of};
use crate::core::diag::{Diagnostic, Pos};
use crate::formats::fields::Ctx;
use crate::formats::node::{Node, NodeValue};

/// A suite's prompt: its id (agentv's) and its input before rendering.
struct Prompt {
    id: String,
    input: Node,
}

/// Each case once per prompt: its `input` moved into `vars.input`, its new input the
/// prompt rendered with its vars; with several prompts the id gains `__prompt_<id>`.
pub(super) fn cross_prompts(
    ctx: &mut Ctx<'_>,
    notes: &mut Vec<Diagnostic>,
    prompts: &Node,
    cases: Vec<Case>,
) -> Vec<Case> {
    let entries: Vec<&Node> = match &prompts.value {
        NodeValue::Seq(items) if !is_chat(items) => items.iter().collect(),
        NodeValue::Null => return cases,
        _ => vec![prompts],
    };
    let mut list = Vec::new();
    for (i, p) in entries.into_iter().enumerate() {
        match prompt(ctx, notes, p, i) {
            Some(p) => list.push(p),
            // A prompt rubricate cannot build (a function, a command): the cases keep
            // their own input, as the note says.
            None => return cases,
        }
    }
    let many = list.len() > 1;
    let mut out = Vec::with_capacity(cases.len() * list.len());
    for case in cases {
        if case.node.as_map().is_none() {
            out.push(case);
            continue;
        }
        let mut base = case.node.clone();
        if let Some(input) = base.get("input").cloned() {
            remove(&mut base, "input");
            remove(&mut base, "input_files");
            let mut vars = base
                .get("vars")
                .filter(|v| v.as_map().is_some())
                .cloned()
                .unwrap_or_else(|| Node::new(NodeValue::Map(Vec::new()), base.pos));
            set(&mut vars, "input", input);
            set(&mut base, "vars", vars);
        }
        let vars = vars_of(&base);
        let source = base.get("id").and_then(Node::as_str).map(str::to_owned);
        for p in &list {
            let mut node = base.clone();
            if let (Some(id), true) = (&source, many) {
                let id = format!("{id}__prompt_{}", safe_prompt_id(&p.id));
                set(&mut node, "id", Node::new(NodeValue::Str(id), base.pos));
            }
            let input = render_node(ctx, &p.input, vars.as_ref());
            set(&mut node, "input", input);
            out.push(Case {
                node,
                path: case.path.clone(),
            });
        }
    }
    out
}

fn is_chat(items: &[Node]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|m| m.get("role").is_some() && m.get("content").is_some())
}

/// One `prompts` entry as agentv reads it: text, `file://` text, chat messages, or
/// `{id, label, prompt | messages | raw | file}`. A function or command prompt is noted
/// and `None`.
fn prompt(
    ctx: &mut Ctx<'_>,
    notes: &mut Vec<Diagnostic>,
    p: &Node,
    index: usize,
) -> Option<Prompt> {
    let hashed = |kind: &str, n: &Node| format!("{kind}-{}", stable_id(&n.to_json()));
    match &p.value {
        NodeValue::Str(s) if s.starts_with("file://") => prompt_file(ctx, s, p.pos, None),
        NodeValue::Str(_) => Some(Prompt {
            id: hashed("prompt", p),
            input: p.clone(),
        }),
        NodeValue::Seq(items) if is_chat(items) => Some(Prompt {
            id: hashed("chat", p),
            input: p.clone(),
        }),
        NodeValue::Map(_) => {
            let explicit = p
                .get("id")
                .and_then(Node::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            if ["function_file", "function", "command"]
                .iter()
                .any(|k| p.get(k).is_some())
            {
                notes.push(Diagnostic::at(ctx.file, p.pos, "an agentv prompt made by a function or command is not run by rubricate; the cases keep their own input"));
                return None;
            }
            if let Some(f) = p.get("file").and_then(Node::as_str) {
                return prompt_file(ctx, f, p.pos, explicit);
            }
            for (key, kind) in [
                ("messages", "chat"),
                ("prompt", "string"),
                ("raw", "string"),
            ] {
                if let Some(v) = p.get(key) {
                    let kind = if v.as_seq().is_some() { "chat" } else { kind };
                    return Some(Prompt {
                        id: explicit.unwrap_or_else(|| hashed(kind, v)),
                        input: v.clone(),
                    });
                }
            }
            if p.get("role").is_some() && p.get("content").is_some() {
                let chat = Node::new(NodeValue::Seq(vec![p.clone()]), p.pos);
                return Some(Prompt {
                    id: explicit.unwrap_or_else(|| hashed("chat", &chat)),
                    input: chat,
                });
            }
            ctx.err(
                p.pos,
                format!("prompts[{index}] is not a prompt: give text, chat messages, or {{prompt | messages | file}}"),
            );
            None
        }
        _ => {
            ctx.wrong_type(
                p,
                &format!("prompts[{index}]"),
                "text, chat messages or an object",
            );
            None
        }
    }
}

/// A prompt kept in a file (relative to the eval file, confined as case files are): its
/// text is the prompt.
fn prompt_file(ctx: &mut Ctx<'_>, reference: &str, at: Pos, id: Option<String>) -> Option<Prompt> {
    let rel = reference.trim().trim_start_matches("file://").to_owned();
    let dir = std::path::Path::new(ctx.file)
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    let path = match crate::formats::nearby(&dir, &rel) {
        Ok(p) => p,
        Err(why) => {
            ctx.err(at, format!("the prompt file '{rel}' {why}: prompt files are read from the eval file's folder and the one above it"));
            return None;
        }
    };
    if let Ok(text) = crate::formats::read_text(&path, crate::formats::MAX_RUBRIC_BYTES, "prompt") {
        Some(Prompt {
            id: id.unwrap_or_else(|| rel.clone()),
            input: Node::new(NodeValue::Str(text.replace("\r\n", "\n")), at),
        })
    } else {
        ctx.err(
            at,
            format!(
                "the prompt file '{rel}' is not there ({}); agentv reads it relative to the eval file",
                path.display()
            ),
        );
        None
    }
}

/// agentv's `stablePromptId`: the first 12 hex digits of SHA-256 of the value's JSON.
pub(super) fn stable_id(value: &Value) -> String {
    crate::core::hash::hex(&crate::core::hash::sha256(value.to_string())[..6])
}

/// agentv's `safePromptId`: runs of other characters become `-`, at most 48 characters.
pub(super) fn safe_prompt_id(id: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in id.trim().chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        stable_id(&Value::String(id.to_owned()))
    } else {
        out.chars().take(48).collect()
    }
}
