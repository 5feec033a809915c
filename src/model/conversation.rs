//! Conversations: a list of chat messages in the `OpenAI` chat shape (roles, text, assistant
//! tool calls, tool results), read from JSON values, and the one readable transcript of
//! them that judges, templates and everything that reads a submission see.
//!
//! Also read: Inspect's message shape (a tool call's `function` is the tool's name and its
//! `arguments` an object) and content given as a list of parts (text parts are joined).

use serde_json::{Map, Value};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions to the model (`system`, or `developer` as `OpenAI` names it).
    System,
    /// The person (or the harness) talking to the model.
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering an assistant's call.
    Tool,
}

impl Role {
    /// The role's name as written in chat messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "system" | "developer" => Some(Role::System),
            "user" | "human" => Some(Role::User),
            "assistant" | "ai" | "model" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// An assistant's call of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id (tool results name it); empty when the message gave none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as given (a JSON string, which may or may not parse).
    pub arguments_raw: String,
    /// The arguments parsed, when they are JSON.
    pub arguments: Option<Value>,
    /// How long the call took in milliseconds, when the trace says (agentv's
    /// `durationMs`), for a trajectory's `max_duration_ms`.
    pub duration_ms: Option<f64>,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text (list-of-parts content joined; empty for a bare tool call).
    pub content: String,
    /// The tools an assistant message calls.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool's name, when given.
    pub name: Option<String>,
}

/// A conversation: its messages, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// When this is a conversation cut at one assistant turn, for a `scope: turn`
    /// criterion: that turn's number (from 1) and how many the whole conversation has.
    /// The turn judged is then the last assistant message.
    pub judged_turn: Option<(usize, usize)>,
}

/// Why a value is not a conversation: it is no list, or a message (1-based) has a field
/// that is wrong, and what would be right.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversationError {
    /// The messages are not a list.
    #[error("must be a list of messages {{role, content}}, found {0}")]
    NotAList(&'static str),
    /// A message's field is wrong.
    #[error("message {number}: `{field}` {problem}")]
    Field {
        /// The message's position, 1-based.
        number: usize,
        /// The field, as a path inside the message (`tool_calls[0].function.name`).
        field: String,
        /// What is wrong, and what would be right.
        problem: String,
    },
}

impl Conversation {
    /// Whether `value` looks like a list of chat messages: a non-empty list whose entries
    /// are all objects with a `role`.
    pub fn looks_like(value: &Value) -> bool {
        matches!(value, Value::Array(list) if !list.is_empty()
            && list.iter().all(|m| m.get("role").is_some()))
    }

    /// Reads a list of messages. Errors name the message and field.
    pub fn from_value(value: &Value) -> Result<Self, ConversationError> {
        let Value::Array(list) = value else {
            return Err(ConversationError::NotAList(kind(value)));
        };
        let mut messages = Vec::with_capacity(list.len());
        for (i, m) in list.iter().enumerate() {
            let (message, results) = message(i + 1, m)?;
            messages.push(message);
            messages.extend(results);
        }
        Ok(Self {
            messages,
            judged_turn: None,
        })
    }

    /// The indices of the assistant messages: the turns a `scope: turn` criterion judges.
    pub fn assistant_turns(&self) -> Vec<usize> {
        (0..self.messages.len())
            .filter(|&i| self.messages[i].role == Role::Assistant)
            .collect()
    }

    /// How many assistant turns the conversation has.
    pub fn turns(&self) -> usize {
        self.assistant_turns().len()
    }

    /// The text of the last assistant message (empty when there is none).
    pub fn last_assistant(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map_or("", |m| m.content.as_str())
    }

    /// Every tool call, in the order they were made.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.messages.iter().flat_map(|m| m.tool_calls.iter())
    }

    /// The conversation up to and including message `last` (and the tool results that
    /// answer its calls): what an assistant turn is judged with.
    #[must_use]
    pub fn up_to(&self, last: usize) -> Conversation {
        let mut end = (last + 1).min(self.messages.len());
        while end < self.messages.len() && self.messages[end].role == Role::Tool {
            end += 1;
        }
        Conversation {
            messages: self.messages[..end].to_vec(),
            judged_turn: None,
        }
    }

    /// Assistant turn `k` (from 0) with the conversation before it as context, marked as
    /// the turn judged; `None` past the last turn.
    pub fn at_turn(&self, k: usize) -> Option<Conversation> {
        let turns = self.assistant_turns();
        let at = *turns.get(k)?;
        let mut cut = self.up_to(at);
        cut.judged_turn = Some((k + 1, turns.len()));
        Some(cut)
    }

    /// The tool calls a check looks at: the judged turn's own, for a conversation cut at a
    /// turn; else every call.
    pub fn calls_in_scope(&self) -> Vec<&ToolCall> {
        match self.judged_turn {
            Some(_) => self
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(|m| m.tool_calls.iter().collect())
                .unwrap_or_default(),
            None => self.tool_calls().collect(),
        }
    }

    /// The messages shown in their own right, in order: every message but a tool result
    /// that answers a call of the conversation (it is shown beneath its call).
    pub fn shown_messages(&self) -> impl Iterator<Item = &Message> {
        let answered: std::collections::HashSet<&str> = self
            .tool_calls()
            .map(|c| c.id.as_str())
            .filter(|id| !id.is_empty())
            .collect();
        self.messages.iter().filter(move |m| {
            !(m.role == Role::Tool
                && m.tool_call_id
                    .as_deref()
                    .is_some_and(|id| answered.contains(id)))
        })
    }

    /// The tool result answering `call`, when there is one.
    pub fn result_of(&self, call: &ToolCall) -> Option<&Message> {
        self.messages.iter().find(|m| {
            m.role == Role::Tool
                && !call.id.is_empty()
                && m.tool_call_id.as_deref() == Some(call.id.as_str())
        })
    }

    /// The readable transcript: each message under its role in brackets, a tool call as
    /// `→ name(arguments)` with its result (`← …`) beneath it. A tool result that answers no
    /// call in the conversation stands as a message of its own.
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for m in self.shown_messages() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push('[');
            out.push_str(m.role.name());
            if let Some(name) = m.name.as_deref().filter(|_| m.role == Role::Tool) {
                out.push(' ');
                out.push_str(name);
            }
            out.push(']');
            if !m.content.is_empty() {
                out.push('\n');
                out.push_str(&m.content);
            }
            for call in &m.tool_calls {
                out.push_str("\n→ ");
                out.push_str(&call.name);
                out.push('(');
                out.push_str(&call.arguments_raw);
                out.push(')');
                if let Some(result) = self.result_of(call) {
                    out.push_str("\n← ");
                    out.push_str(&result.content.replace('\n', "\n  "));
                }
            }
        }
        out
    }
}

/// One message, and the tool results it carries inside its calls (agentv keeps a call's
/// `output` on the call; here it becomes the tool message answering it).
fn message(number: usize, value: &Value) -> Result<(Message, Vec<Message>), ConversationError> {
    let fail = |field: &str, problem: String| ConversationError::Field {
        number,
        field: field.to_owned(),
        problem,
    };
    let Value::Object(m) = value else {
        return Err(fail(
            "message",
            format!("must be an object {{role, content}}, found {}", kind(value)),
        ));
    };
    let role = match m.get("role") {
        Some(Value::String(s)) => Role::parse(s).ok_or_else(|| {
            fail(
                "role",
                format!("is '{s}'; expected system, user, assistant or tool"),
            )
        })?,
        Some(other) => return Err(fail("role", format!("must be text, found {}", kind(other)))),
        None => {
            return Err(fail(
                "role",
                "is missing; give system, user, assistant or tool".into(),
            ));
        }
    };
    let content = content_text(m.get("content")).map_err(|(field, p)| fail(&field, p))?;
    let (calls_key, calls) = match m.get("tool_calls") {
        None | Some(Value::Null) => ("toolCalls", m.get("toolCalls")),
        given => ("tool_calls", given),
    };
    let mut tool_calls = Vec::new();
    let mut results = Vec::new();
    match calls {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, c) in calls.iter().enumerate() {
                let mut call = tool_call(calls_key, i, c).map_err(|(field, p)| fail(&field, p))?;
                if let Some(output) = c.get("output").filter(|o| !o.is_null()) {
                    if call.id.is_empty() {
                        call.id = format!("call-{number}-{}", i + 1);
                    }
                    results.push(Message {
                        role: Role::Tool,
                        content: output
                            .as_str()
                            .map_or_else(|| output.to_string(), str::to_owned),
                        tool_calls: Vec::new(),
                        tool_call_id: Some(call.id.clone()),
                        name: Some(call.name.clone()),
                    });
                }
                tool_calls.push(call);
            }
        }
        Some(other) => {
            return Err(fail(
                calls_key,
                format!("must be a list of calls, found {}", kind(other)),
            ));
        }
    }
    let text_field = |key: &str| match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(fail(key, format!("must be text, found {}", kind(other)))),
    };
    let tool_call_id = text_field("tool_call_id")?;
    // Inspect names the tool of a result `function`.
    let name = match text_field("name")? {
        Some(n) => Some(n),
        None if role == Role::Tool => text_field("function")?,
        None => None,
    };
    let message = Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        name,
    };
    Ok((message, results))
}

/// Text content: a string, a list of parts (text parts joined by newlines, other parts
/// named in brackets) or nothing.
fn content_text(value: Option<&Value>) -> Result<String, (String, String)> {
    match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                match p {
                    Value::String(s) => texts.push(s.clone()),
                    Value::Object(part) => match part.get("text") {
                        Some(Value::String(s)) => texts.push(s.clone()),
                        Some(other) => {
                            return Err((
                                format!("content[{i}].text"),
                                format!("must be text, found {}", kind(other)),
                            ));
                        }
                        // Reasoning is the model's own notes, not what it said.
                        None => match part.get("type").and_then(Value::as_str) {
                            Some("reasoning" | "thinking") => {}
                            Some(t) => texts.push(format!("[{t}]")),
                            None => {
                                return Err((
                                    format!("content[{i}]"),
                                    "is a part with neither `type` nor `text`".into(),
                                ));
                            }
                        },
                    },
                    other => {
                        return Err((
                            format!("content[{i}]"),
                            format!(
                                "must be text or a part {{type, text}}, found {}",
                                kind(other)
                            ),
                        ));
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        Some(other) => Err((
            "content".into(),
            format!("must be text or a list of parts, found {}", kind(other)),
        )),
    }
}

/// One call: `{id, type: function, function: {name, arguments}}` (`OpenAI`),
/// `{id, function: name, arguments: {…}}` (Inspect) or `{id, tool, input}` (agentv, under
/// `toolCalls`; its `input` may be any JSON).
fn tool_call(key: &str, index: usize, value: &Value) -> Result<ToolCall, (String, String)> {
    let at = |field: &str| format!("{key}[{index}]{field}");
    let Value::Object(call) = value else {
        return Err((
            at(""),
            format!(
                "must be a call {{id, type, function: {{name, arguments}}}}, found {}",
                kind(value)
            ),
        ));
    };
    let id = match call.get("id") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => return Err((at(".id"), format!("must be text, found {}", kind(other)))),
    };
    let (name, arguments, args_field) = match call.get("function") {
        Some(Value::Object(f)) => (f.get("name"), f.get("arguments"), at(".function.arguments")),
        Some(Value::String(_)) => (
            call.get("function"),
            call.get("arguments"),
            at(".arguments"),
        ),
        None if call.contains_key("tool") => (call.get("tool"), None, at(".input")),
        None => (call.get("name"), call.get("arguments"), at(".arguments")),
        Some(other) => {
            return Err((
                at(".function"),
                format!(
                    "must be an object {{name, arguments}}, found {}",
                    kind(other)
                ),
            ));
        }
    };
    let name = match name {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err((at(".function.name"), "is empty".into())),
        Some(other) => {
            return Err((
                at(".function.name"),
                format!("must be text, found {}", kind(other)),
            ));
        }
        None => return Err((at(".function.name"), "is missing".into())),
    };
    let (arguments_raw, arguments) = match arguments.or_else(|| call.get("input")) {
        None | Some(Value::Null) => (String::new(), None),
        Some(v) if call.contains_key("input") && !v.is_string() => (v.to_string(), Some(v.clone())),
        Some(Value::String(s)) => (s.clone(), serde_json::from_str(s).ok()),
        Some(v @ Value::Object(_)) => (v.to_string(), Some(v.clone())),
        Some(other) => {
            return Err((
                args_field,
                format!("must be a JSON string or an object, found {}", kind(other)),
            ));
        }
    };
    let duration_ms = call
        .get("durationMs")
        .or_else(|| call.get("duration_ms"))
        .and_then(Value::as_f64)
        .filter(|d| d.is_finite() && *d >= 0.0);
    Ok(ToolCall {
        id,
        name,
        arguments_raw,
        arguments,
        duration_ms,
    })
}

/// The JSON type of `v` for messages (`null`, `text`, `a list`, …).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// How many items of a dataset hold conversations, with their assistant turns and tool
/// calls: what `validate` and `inspect` say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConversationTally {
    /// Items holding a conversation.
    pub items: usize,
    /// Their assistant turns, all told.
    pub turns: usize,
    /// Their tool calls, all told.
    pub tool_calls: usize,
}

impl ConversationTally {
    /// Counts `conversation`, when there is one.
    pub fn add(&mut self, conversation: Option<&Conversation>) {
        if let Some(c) = conversation {
            self.items += 1;
            self.turns += c.turns();
            self.tool_calls += c.tool_calls().count();
        }
    }

    /// `3 conversations (8 assistant turns, 3 tool calls)`, or `None` when no item had one.
    pub fn summary(&self) -> Option<String> {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        (self.items > 0).then(|| {
            format!(
                "{} ({}, {})",
                plural(self.items, "conversation"),
                plural(self.turns, "assistant turn"),
                plural(self.tool_calls, "tool call")
            )
        })
    }
}

/// The fields a conversation gives templates: `transcript`, `last_assistant`, `turns` and
/// `tool_calls` (the tools' names, in call order). Empty values for an item without one.
pub fn template_fields(conversation: Option<&Conversation>) -> Map<String, Value> {
    let mut out = Map::new();
    let (transcript, last, turns, names) = match conversation {
        Some(c) => (
            c.transcript(),
            c.last_assistant().to_owned(),
            c.turns(),
            c.tool_calls()
                .map(|t| Value::from(t.name.clone()))
                .collect(),
        ),
        None => (String::new(), String::new(), 0, Vec::new()),
    };
    out.insert("transcript".into(), transcript.into());
    out.insert("last_assistant".into(), last.into());
    out.insert("turns".into(), turns.into());
    out.insert("tool_calls".into(), Value::Array(names));
    out
}

#[cfg(test)]
mod tests;
