//! Checks over a conversation's tool calls: a tool was called (how often), never called,
//! and its arguments match a JSON Schema or given values. The calls looked at are the
//! conversation's (`Conversation::calls_in_scope`: the judged turn's own under
//! `scope: turn`). The argument matching is agentv's (`argsMatch` in its
//! tool-trajectory grader), shared with `tool_trajectory`.

use serde_json::Value;

use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError, plural, quote};
use crate::engine::schema::CompiledSchema;
use crate::model::ToolCall;

/// The tool calls a tool check looks at, or why there are none to look at (the item is
/// no conversation).
pub(super) fn calls<'a>(input: &'a CheckInput<'_>) -> Result<Vec<&'a ToolCall>, CheckError> {
    input
        .item
        .conversation
        .as_deref()
        .map(crate::model::Conversation::calls_in_scope)
        .ok_or(CheckError::NoConversation)
}

/// `name(arguments)` of a call, shortened, for evidence.
pub(super) fn shown(call: &ToolCall) -> String {
    const MAX: usize = 80;
    let mut args: String = call.arguments_raw.chars().take(MAX).collect();
    if call.arguments_raw.chars().count() > MAX {
        args.push('…');
    }
    format!("{}({args})", call.name)
}

/// `name` read as a tool's name (required, not empty).
fn tool_name(args: &mut Args<'_>) -> Result<String, SpecError> {
    let name = args.required_string("name")?;
    if name.trim().is_empty() {
        return Err(SpecError::new(
            "args.name",
            "the tool's name must not be empty",
        ));
    }
    Ok(name)
}

/// A whole number of calls, at least 0.
fn calls_count(args: &mut Args<'_>, key: &'static str) -> Result<Option<usize>, SpecError> {
    match args.number(key)? {
        None => Ok(None),
        Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(Some(n as usize)),
        Some(_) => Err(SpecError::new(
            format!("args.{key}"),
            format!("`{key}` must be a whole number of calls, 0 or more"),
        )),
    }
}

#[derive(Debug)]
struct ToolCalled {
    name: String,
    min: usize,
    max: Option<usize>,
}

/// `tool_called`: `name`, and `count` (exactly) or `min`/`max` (default: at least once).
pub fn tool_called(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let name = tool_name(args)?;
    let count = calls_count(args, "count")?;
    let min = calls_count(args, "min")?;
    let max = calls_count(args, "max")?;
    let (min, max) = match (count, min, max) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(SpecError::new(
                "args",
                "give `count`, or `min`/`max`, not both",
            ));
        }
        (Some(n), None, None) => (n, Some(n)),
        // Without bounds, at least once; `max` alone allows none.
        (None, lo, hi) => (lo.unwrap_or(usize::from(hi.is_none())), hi),
    };
    if max.is_some_and(|hi| hi < min) {
        return Err(SpecError::new("args.max", "`max` is below `min`"));
    }
    Ok(Box::new(ToolCalled { name, min, max }))
}

impl ToolCalled {
    fn wanted(&self) -> String {
        match self.max {
            Some(hi) if hi == self.min => format!("exactly {}", plural(hi, "time")),
            Some(hi) => format!("{}..{hi} times", self.min),
            None => format!("at least {}", plural(self.min, "time")),
        }
    }
}

impl Check for ToolCalled {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let all = calls(input)?;
        let at: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name == self.name)
            .map(|(i, _)| format!("#{}", i + 1))
            .collect();
        let n = at.len();
        let met = n >= self.min && self.max.is_none_or(|hi| n <= hi);
        let calls = if at.is_empty() {
            String::new()
        } else {
            format!(" (call {})", at.join(", "))
        };
        Ok(CheckOutput::binary(
            met,
            Some(n as f64),
            format!(
                "{} called {}{calls}; wanted {}",
                self.name,
                plural(n, "time"),
                self.wanted()
            ),
        ))
    }
}

#[derive(Debug)]
struct ToolNotCalled {
    name: String,
}

/// `tool_not_called`: `name`.
pub fn tool_not_called(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    Ok(Box::new(ToolNotCalled {
        name: tool_name(args)?,
    }))
}

impl Check for ToolNotCalled {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let all = calls(input)?;
        let first = all.iter().position(|c| c.name == self.name);
        let n = all.iter().filter(|c| c.name == self.name).count();
        Ok(match first {
            None => CheckOutput::binary(
                true,
                Some(0.0),
                format!(
                    "{} was never called ({} in all)",
                    self.name,
                    plural(all.len(), "call")
                ),
            ),
            Some(i) => CheckOutput::binary(
                false,
                Some(n as f64),
                format!(
                    "{} was called {}, first as call #{}: {}",
                    self.name,
                    plural(n, "time"),
                    i + 1,
                    shown(all[i])
                ),
            ),
        })
    }
}

/// How given arguments are compared with a call's (agentv's `args_match`).
#[derive(Debug, Clone, PartialEq)]
pub enum ArgsMatch {
    /// The same arguments, no more and no fewer.
    Exact,
    /// The call has every given argument with the given value (more are fine).
    Superset,
    /// Every argument of the call is given, with that value (fewer are fine).
    Subset,
    /// Arguments are not compared.
    Ignore,
    /// Only these (dotted) paths are compared; a path the expectation lacks is skipped.
    Fields(Vec<String>),
}

impl ArgsMatch {
    /// Reads `exact`, `superset`, `subset`, `ignore` or a list of field paths.
    pub fn parse(value: &Value) -> Result<Self, String> {
        match value {
            Value::String(s) => match s.as_str() {
                "exact" => Ok(Self::Exact),
                "superset" => Ok(Self::Superset),
                "subset" => Ok(Self::Subset),
                "ignore" => Ok(Self::Ignore),
                other => Err(format!(
                    "'{other}' is not a way to match arguments; give exact, superset, subset, ignore or a list of fields"
                )),
            },
            Value::Array(list) => {
                let fields: Vec<String> = list
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect();
                if fields.is_empty() || fields.len() != list.len() {
                    Err("a list of fields to compare must hold field names (text)".into())
                } else {
                    Ok(Self::Fields(fields))
                }
            }
            _ => Err("must be exact, superset, subset, ignore or a list of fields".into()),
        }
    }

    /// Whether a call's arguments (`None`: absent or not JSON) match `expected`, as
    /// agentv's `argsMatch` decides.
    pub fn matches(&self, expected: &Value, actual: Option<&Value>) -> bool {
        if *self == Self::Ignore {
            return true;
        }
        let Some(actual) = actual else {
            return false;
        };
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        match self {
            Self::Ignore => true,
            Self::Exact => same(expected, actual),
            Self::Superset => keys(expected).iter().all(|k| {
                has(actual, k).is_some_and(|a| has(expected, k).is_some_and(|e| same(e, a)))
            }),
            Self::Subset => keys(actual).iter().all(|k| {
                has(expected, k).is_some_and(|e| has(actual, k).is_some_and(|a| same(a, e)))
            }),
            Self::Fields(fields) => fields.iter().all(|f| match nested(expected, f) {
                None => true,
                Some(e) => nested(actual, f).is_some_and(|a| same(e, a)),
            }),
        }
    }
}

/// The value under key `k` of an object.
fn has<'v>(v: &'v Value, k: &str) -> Option<&'v Value> {
    v.as_object().and_then(|o| o.get(k))
}

/// The value at a dotted path (`a.b.c`) through objects, as agentv's `getNestedValue`.
fn nested<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(value, |v, part| v.as_object().and_then(|o| o.get(part)))
}

/// Deep equality as JavaScript sees JSON: numbers by value (`1` equals `1.0`), objects
/// by their keys whatever the order.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// What a `tool_args` call must satisfy.
#[derive(Debug)]
enum Wanted {
    Schema(Box<CompiledSchema>),
    Values(Value, ArgsMatch),
}

#[derive(Debug)]
struct ToolArgs {
    name: String,
    wanted: Wanted,
    /// Every call of the tool must match (else: one is enough).
    every: bool,
}

/// `tool_args`: `name`, and `schema` (a JSON Schema the arguments match) or `equals`
/// (values, compared as `match` says: superset by default); `calls: all` (default) or
/// `any`.
pub fn tool_args(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let name = tool_name(args)?;
    let schema = args.get("schema");
    let equals = args.get("equals");
    let how = args.get("match");
    let wanted = match (schema, equals) {
        (Some(s), None) => {
            if how.is_some() {
                return Err(SpecError::new(
                    "args.match",
                    "`match` goes with `equals`, not with `schema`",
                ));
            }
            Wanted::Schema(Box::new(
                crate::engine::schema::compile(s)
                    .map_err(|e| SpecError::new("args.schema", e.to_string()))?,
            ))
        }
        (None, Some(v)) => {
            let how = match how {
                None => ArgsMatch::Superset,
                Some(h) => ArgsMatch::parse(h).map_err(|m| SpecError::new("args.match", m))?,
            };
            Wanted::Values(v.clone(), how)
        }
        _ => {
            return Err(SpecError::new(
                "args",
                "give one of `schema` (a JSON Schema) or `equals` (the argument values)",
            ));
        }
    };
    let every = match args.string("calls")?.as_deref() {
        None | Some("all") => true,
        Some("any") => false,
        Some(other) => {
            return Err(SpecError::new(
                "args.calls",
                format!("'{other}' is not all or any"),
            ));
        }
    };
    Ok(Box::new(ToolArgs {
        name,
        wanted,
        every,
    }))
}

impl ToolArgs {
    /// Why one call's arguments fail, or `None` when they pass.
    fn problem(&self, call: &ToolCall) -> Option<String> {
        match (&self.wanted, call.arguments.as_ref()) {
            (Wanted::Schema(_), None) if !call.arguments_raw.trim().is_empty() => Some(format!(
                "its arguments are not JSON: {}",
                quote(&call.arguments_raw)
            )),
            (Wanted::Schema(s), args) => {
                let empty = Value::Object(serde_json::Map::new());
                let errors = s.errors(args.unwrap_or(&empty));
                (!errors.is_empty()).then(|| errors.join("; "))
            }
            (Wanted::Values(want, how), args) => (!how.matches(want, args)).then(|| {
                format!(
                    "arguments {} do not match {want}",
                    quote(&call.arguments_raw)
                )
            }),
        }
    }
}

impl Check for ToolArgs {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let all = calls(input)?;
        let mut evidence = Vec::new();
        let (mut good, mut bad) = (0usize, 0usize);
        for (i, call) in all.iter().enumerate().filter(|(_, c)| c.name == self.name) {
            match self.problem(call) {
                None => {
                    good += 1;
                    evidence.push(format!("call #{}: {} matches", i + 1, shown(call)));
                }
                Some(why) => {
                    bad += 1;
                    evidence.push(format!("call #{}: {} — {why}", i + 1, shown(call)));
                }
            }
        }
        if good + bad == 0 {
            return Ok(CheckOutput::binary(
                false,
                Some(0.0),
                format!("{} was never called, so no arguments to check", self.name),
            ));
        }
        let met = if self.every { bad == 0 } else { good > 0 };
        // The failing calls first: the first line is the result's reason.
        evidence.sort_by_key(|e| e.contains(" matches"));
        let summary = format!("{} of {} {} calls match", good, good + bad, self.name);
        evidence.insert(0, summary);
        Ok(CheckOutput {
            verdict: if met {
                crate::model::Verdict::Met
            } else {
                crate::model::Verdict::Unmet
            },
            measure: Some(good as f64),
            evidence,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn args_match_as_agentv() {
        let want = json!({"q": "paris", "n": 1});
        let call = json!({"q": "paris", "n": 1.0, "lang": "en"});
        assert!(!ArgsMatch::Exact.matches(&want, Some(&call)));
        assert!(ArgsMatch::Superset.matches(&want, Some(&call)));
        assert!(!ArgsMatch::Subset.matches(&want, Some(&call)));
        assert!(ArgsMatch::Subset.matches(&call, Some(&want)));
        assert!(ArgsMatch::Fields(vec!["q".into(), "x.y".into()]).matches(&want, Some(&call)));
        assert!(!ArgsMatch::Fields(vec!["n".into()]).matches(&json!({"n": 2}), Some(&call)));
        assert!(ArgsMatch::Ignore.matches(&want, None));
        assert!(!ArgsMatch::Superset.matches(&want, None));
        assert!(ArgsMatch::parse(&json!("nearly")).is_err());
        assert!(ArgsMatch::parse(&json!([])).is_err());
    }
}
