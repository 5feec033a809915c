//! What agentv does to a suite's cases before it grades them (its `yaml-parser`): the
//! `scenarios` matrix lowered into tests (each config row crossed with the scenario's
//! tests, from the file or `file://` files and globs), `default_test.vars` under each
//! case's own, array vars expanded into one case per combination, the `prompts` matrix
//! (each case once per prompt, its input that prompt rendered with the case's vars), and
//! `{{ vars }}` rendered into the fields agentv renders.

use serde_json::{Map, Value};

use crate::core::diag::{Diagnostic, Pos};
use crate::formats::fields::Ctx;
use crate::formats::node::{Key, Node, NodeValue};

mod prompts;
mod scenarios;

use prompts::cross_prompts;
use scenarios::scenarios;

/// The fields of a case agentv renders with its vars.
const RENDERED: &[&str] = &[
    "id",
    "description",
    "criteria",
    "expected_outcome",
    "input",
    "input_files",
    "expected_output",
    "assert",
];

/// The most cases one suite may expand into (a matrix of matrices stops here).
const MAX_CASES: usize = 100_000;

/// One case to grade and where it came from (`tests[3]`, `scenarios[0]`).
pub struct Case {
    pub node: Node,
    pub path: String,
}

/// Applies agentv's expansion to `cases` (the suite's tests, already read) given the suite
/// `root`: scenarios appended, default vars merged, prompts crossed, arrays expanded, vars
/// rendered. Problems are reported in `ctx` where they are.
pub fn expand(
    ctx: &mut Ctx<'_>,
    notes: &mut Vec<Diagnostic>,
    root: &Node,
    mut cases: Vec<Case>,
) -> Vec<Case> {
    if let Some(list) = root.get("scenarios") {
        cases.extend(scenarios(ctx, list));
    }
    if let Some(defaults) = root
        .get("default_test")
        .and_then(|d| d.get("vars"))
        .filter(|v| v.as_map().is_some_and(|m| !m.is_empty()))
    {
        for case in &mut cases {
            merge_default_vars(&mut case.node, defaults);
        }
    }
    // Array vars expand before the prompts are crossed, so each combination's prompt is
    // rendered with its own values (agentv renders the prompt first, the list joined).
    let mut expanded = Vec::with_capacity(cases.len());
    for case in cases {
        for node in expand_arrays(&case.node) {
            if expanded.len() >= MAX_CASES {
                ctx.err(
                    root.pos,
                    format!("the suite expands into more than {MAX_CASES} cases; split it"),
                );
                break;
            }
            expanded.push(Case {
                node,
                path: case.path.clone(),
            });
        }
    }
    if let Some(prompts) = root.get("prompts") {
        expanded = cross_prompts(ctx, notes, prompts, expanded);
    }
    expanded
        .into_iter()
        .map(|case| Case {
            node: render_case(ctx, case.node),
            path: case.path,
        })
        .collect()
}

/// Lists (or single values) one after the other, as agentv joins `assert` lists
/// (`concatJsonArrayFields`, `combineInheritedAssertions`).
pub(super) fn joined(parts: &[Option<&Node>]) -> Vec<Node> {
    parts
        .iter()
        .flatten()
        .flat_map(|a| match &a.value {
            NodeValue::Seq(items) => items.clone(),
            _ => vec![(*a).clone()],
        })
        .collect()
}

/// `default_test.vars` under the case's own (a case whose `vars` is not a mapping keeps
/// them as they are, as agentv does).
fn merge_default_vars(case: &mut Node, defaults: &Node) {
    if case.as_map().is_none() {
        return;
    }
    let own = case.get("vars").cloned();
    if own.as_ref().is_some_and(|v| v.as_map().is_none()) {
        return;
    }
    let mut merged = defaults.clone();
    for (k, v) in own.as_ref().and_then(Node::as_map).unwrap_or_default() {
        set(&mut merged, &k.text, v.clone());
    }
    set(case, "vars", merged);
}

/// One case per combination of its array vars (a var holding a list of text, or an empty
/// list), as agentv's `expandArrayVarCases`; ids after the first of a case gain `-2`, `-3`
/// … (agentv repeats the id; rubricate's items need their own).
fn expand_arrays(case: &Node) -> Vec<Node> {
    let Some(vars) = case.get("vars").and_then(Node::as_map) else {
        return vec![case.clone()];
    };
    let expands = |v: &Node| {
        v.as_seq()
            .is_some_and(|s| s.is_empty() || s[0].as_str().is_some())
    };
    if !vars.iter().any(|(_, v)| expands(v)) {
        return vec![case.clone()];
    }
    let mut combos: Vec<Vec<(Key, Node)>> = vec![Vec::new()];
    for (k, v) in vars {
        let values: Vec<Node> = if expands(v) {
            v.as_seq().unwrap_or_default().to_vec()
        } else {
            vec![v.clone()]
        };
        let mut next = Vec::with_capacity(combos.len() * values.len().max(1));
        for combo in &combos {
            for value in &values {
                if next.len() >= MAX_CASES {
                    break;
                }
                let mut c = combo.clone();
                c.push((k.clone(), value.clone()));
                next.push(c);
            }
        }
        combos = next;
    }
    let id = case.get("id").and_then(Node::as_str).map(str::to_owned);
    combos
        .into_iter()
        .enumerate()
        .map(|(i, vars)| {
            let mut node = case.clone();
            let pos = node.get("vars").map_or(node.pos, |v| v.pos);
            set(&mut node, "vars", Node::new(NodeValue::Map(vars), pos));
            if let (Some(id), true) = (&id, i > 0) {
                set(
                    &mut node,
                    "id",
                    Node::new(NodeValue::Str(format!("{id}-{}", i + 1)), pos),
                );
            }
            node
        })
        .collect()
}

/// Renders the fields agentv renders with the case's vars (when it has a mapping of them).
fn render_case(ctx: &mut Ctx<'_>, mut case: Node) -> Node {
    let Some(vars) = vars_of(&case) else {
        return case;
    };
    if let NodeValue::Map(entries) = &mut case.value {
        for (k, v) in entries.iter_mut() {
            if RENDERED.contains(&k.text.as_str()) {
                *v = render_node(ctx, v, Some(&vars));
            } else if k.text == "turns"
                && let NodeValue::Seq(turns) = &mut v.value
            {
                for turn in turns.iter_mut() {
                    if let NodeValue::Map(fields) = &mut turn.value {
                        for (tk, tv) in fields.iter_mut() {
                            if ["input", "expected_output", "assert"].contains(&tk.text.as_str()) {
                                *tv = render_node(ctx, tv, Some(&vars));
                            }
                        }
                    }
                }
            }
        }
    }
    case
}

fn vars_of(case: &Node) -> Option<Map<String, Value>> {
    match case.get("vars").map(Node::to_json) {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// Every string in `node` rendered with `vars`; a string that is exactly one variable
/// (`{{ a.b }}`) becomes that variable's value, whatever its type, as agentv does.
fn render_node(ctx: &mut Ctx<'_>, node: &Node, vars: Option<&Map<String, Value>>) -> Node {
    let Some(vars) = vars else {
        return node.clone();
    };
    match &node.value {
        NodeValue::Str(s) if s.contains("{{") || s.contains("{%") => {
            if let Some(value) = whole_var(s).and_then(|path| lookup(vars, path)) {
                return node_of(&value, node.pos);
            }
            match crate::core::template::render_vars(s, vars) {
                Ok(text) => Node::new(NodeValue::Str(text), node.pos),
                Err(e) => {
                    ctx.err(
                        node.pos,
                        format!("cannot render this with the case's vars: {e}"),
                    );
                    node.clone()
                }
            }
        }
        NodeValue::Seq(items) => Node::new(
            NodeValue::Seq(
                items
                    .iter()
                    .map(|n| render_node(ctx, n, Some(vars)))
                    .collect(),
            ),
            node.pos,
        ),
        NodeValue::Map(entries) => Node::new(
            NodeValue::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), render_node(ctx, v, Some(vars))))
                    .collect(),
            ),
            node.pos,
        ),
        _ => node.clone(),
    }
}

/// `{{ name }}` or `{{ a.b.c }}` alone (spaces around allowed): the dotted name.
fn whole_var(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let ok = !inner.is_empty()
        && inner.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    ok.then_some(inner)
}

/// A dotted name in the vars (`vars.` reaches the same vars).
fn lookup(vars: &Map<String, Value>, path: &str) -> Option<Value> {
    let mut parts = path.split('.');
    let first = parts.next()?;
    let mut current = if first == "vars" {
        Value::Object(vars.clone())
    } else {
        vars.get(first)?.clone()
    };
    for part in parts {
        current = current.as_object()?.get(part)?.clone();
    }
    Some(current)
}

/// A JSON value as a node placed at `pos`.
fn node_of(value: &Value, pos: Pos) -> Node {
    let v = match value {
        Value::Null => NodeValue::Null,
        Value::Bool(b) => NodeValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => NodeValue::Int(i),
            None => NodeValue::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => NodeValue::Str(s.clone()),
        Value::Array(items) => NodeValue::Seq(items.iter().map(|x| node_of(x, pos)).collect()),
        Value::Object(m) => NodeValue::Map(
            m.iter()
                .map(|(k, v)| {
                    (
                        Key {
                            text: k.clone(),
                            pos,
                        },
                        node_of(v, pos),
                    )
                })
                .collect(),
        ),
    };
    Node::new(v, pos)
}

/// Sets `key` in a mapping node (replacing it where it is, or adding it at the end).
fn set(node: &mut Node, key: &str, value: Node) {
    if let NodeValue::Map(entries) = &mut node.value {
        match entries.iter_mut().find(|(k, _)| k.text == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((
                Key {
                    text: key.to_owned(),
                    pos: value.pos,
                },
                value,
            )),
        }
    }
}

fn remove(node: &mut Node, key: &str) {
    if let NodeValue::Map(entries) = &mut node.value {
        entries.retain(|(k, _)| k.text != key);
    }
}

#[cfg(test)]
mod tests;
