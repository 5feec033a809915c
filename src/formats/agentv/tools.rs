//! agentv's `tool-trajectory` grader as a `tool_trajectory` check: read as @agentv/core
//! 4.42.4 reads it (its `parseGraders`: what it skips, what it drops silently, `args_match`
//! over the grader and over each expected call) and scored as its `ToolTrajectoryGrader`
//! scores — a 0..1 scale criterion, the grader's one criterion.

use serde_json::{Map, Value, json};

use super::walk::Walk;
use crate::formats::node::Node;
use crate::model::{CheckSpec, Criterion, Kind, Method, Scale};

/// Whether `ty` names agentv's trajectory grader (agentv reads `_` as `-`).
pub(super) fn is_trajectory(ty: &str) -> bool {
    matches!(ty, "tool-trajectory" | "tool_trajectory")
}

/// The criterion agentv's tool-trajectory grader `a` becomes, or `None` (with a note)
/// where agentv skips the grader, as it does: a mode it does not know, `minimums` or
/// `expected` of the wrong shape, `any_order` without `minimums`, another mode without
/// `expected`.
pub(super) fn trajectory(w: &mut Walk<'_>, a: &Node, number: usize) -> Option<Criterion> {
    let raw = a.to_json();
    let skip = |w: &mut Walk<'_>, why: &str| {
        w.note(
            a,
            "tool-trajectory:skipped",
            format!("agentv tool-trajectory grader {why}: agentv skips it, and so does rubricate"),
        );
        None
    };
    let mode = raw.get("mode").and_then(Value::as_str).unwrap_or("");
    if !["any_order", "in_order", "exact", "subset", "superset"].contains(&mode) {
        return skip(
            w,
            &format!("with mode '{mode}' (not any_order, in_order, exact, subset or superset)"),
        );
    }
    let minimums = match raw.get("minimums") {
        None => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .filter(|(_, n)| n.as_f64().is_some_and(|n| n >= 0.0))
                .map(|(k, n)| (k.clone(), n.clone()))
                .collect::<Map<_, _>>(),
        ),
        Some(_) => return skip(w, "whose `minimums` is not a mapping"),
    };
    let expected = match raw.get("expected") {
        None => None,
        Some(Value::Array(list)) => Some(list.iter().filter_map(step).collect::<Vec<_>>()),
        Some(_) => return skip(w, "whose `expected` is not a list"),
    };
    let mut args = Map::new();
    match (mode, minimums, expected) {
        ("any_order", Some(m), _) => {
            args.insert("mode".into(), json!("any_order"));
            args.insert("minimums".into(), Value::Object(m));
        }
        ("any_order", None, _) => return skip(w, "in any_order mode without `minimums`"),
        (_, _, None) => return skip(w, &format!("in {mode} mode without `expected`")),
        (mode, _, Some(e)) => {
            args.insert("mode".into(), json!(mode));
            args.insert("expected".into(), Value::Array(e));
        }
    }
    if let Some(m) = args_match(raw.get("args_match").or_else(|| raw.get("argsMatch"))) {
        args.insert("args_match".into(), m);
    }
    if raw.get("negate") == Some(&Value::Bool(true)) {
        args.insert("negate".into(), json!(true));
    }
    let tools: Vec<&str> = args
        .get("expected")
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .filter_map(|s| s.get("tool").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let says = if tools.is_empty() {
        "Follows the expected tool trajectory".to_owned()
    } else {
        format!("Calls tools {mode}: {}", tools.join(", "))
    };
    let mut c = Criterion::binary(format!("tool-trajectory-{number}"), says, 1.0);
    c.kind = Kind::Scale(Scale {
        min: 0.0,
        max: 1.0,
        anchors: Vec::new(),
    });
    c.method = Method::Check(CheckSpec {
        name: "tool_trajectory".into(),
        args,
    });
    Some(c)
}

/// One expected call as agentv keeps it: an object with a text `tool` (others dropped);
/// `args` kept when an object or `any` (else matching anything); `max_duration_ms` when a
/// number ≥ 0; its own `args_match` when agentv accepts it.
fn step(item: &Value) -> Option<Value> {
    let tool = item.get("tool")?.as_str()?;
    let mut out = Map::new();
    out.insert("tool".into(), json!(tool));
    if let Some(a @ Value::Object(_)) = item.get("args") {
        out.insert("args".into(), a.clone());
    }
    let duration = item
        .get("max_duration_ms")
        .or_else(|| item.get("maxDurationMs"));
    if let Some(d) = duration.filter(|d| d.as_f64().is_some_and(|d| d >= 0.0)) {
        out.insert("max_duration_ms".into(), d.clone());
    }
    if let Some(m) = args_match(item.get("args_match").or_else(|| item.get("argsMatch"))) {
        out.insert("args_match".into(), m);
    }
    Some(Value::Object(out))
}

/// `args_match` as agentv accepts it: one of its four words, or a list of field names
/// (empty names dropped; an empty list is no setting); anything else is ignored.
fn args_match(value: Option<&Value>) -> Option<Value> {
    match value? {
        Value::String(s) if ["exact", "superset", "subset", "ignore"].contains(&s.as_str()) => {
            Some(json!(s))
        }
        Value::Array(list) => {
            let fields: Vec<&str> = list
                .iter()
                .filter_map(Value::as_str)
                .filter(|f| !f.is_empty())
                .collect();
            (!fields.is_empty()).then(|| json!(fields))
        }
        _ => None,
    }
}
