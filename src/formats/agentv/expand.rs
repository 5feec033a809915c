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

/// `scenarios: [{description, config: [rows], tests: [tests]} | "file://glob"]`: each
/// config row crossed with each test (its vars, metadata, options and run merged, the
/// row's first; `assert` lists joined), ids as agentv gives them.
fn scenarios(ctx: &mut Ctx<'_>, list: &Node) -> Vec<Case> {
    let Some(items) = list.as_seq() else {
        ctx.wrong_type(list, "`scenarios`", "a list of scenarios");
        return Vec::new();
    };
    let mut all: Vec<Node> = Vec::new();
    for item in items {
        match item.as_str() {
            Some(reference) => all.extend(scenario_files(ctx, reference, item.pos)),
            None => all.push(item.clone()),
        }
    }
    let mut out = Vec::new();
    for (si, scenario) in all.iter().enumerate() {
        let here = format!("scenarios[{si}]");
        if scenario.as_map().is_none() {
            ctx.wrong_type(scenario, &format!("`{here}`"), "a scenario {config, tests}");
            continue;
        }
        let (Some(config), Some(tests)) = (
            scenario.get("config").and_then(Node::as_seq),
            scenario.get("tests").and_then(Node::as_seq),
        ) else {
            ctx.err(
                scenario.pos,
                format!("`{here}` needs `config` (a list of rows) and `tests` (a list of tests)"),
            );
            continue;
        };
        for (ci, row) in config.iter().enumerate() {
            for (ti, test) in tests.iter().enumerate() {
                if row.as_map().is_none() || test.as_map().is_none() {
                    ctx.wrong_type(
                        if row.as_map().is_none() { row } else { test },
                        &format!("a row or test of `{here}`"),
                        "a mapping",
                    );
                    continue;
                }
                out.push(Case {
                    node: scenario_case(row, test, (si, ci, ti), tests.len()),
                    path: format!("{here}.tests[{ti}]"),
                });
            }
        }
    }
    out
}

/// One config row × one test, as agentv's `mergeScenarioTestRows`.
fn scenario_case(row: &Node, test: &Node, (si, ci, ti): (usize, usize, usize), n: usize) -> Node {
    let mut merged = row.clone();
    for (k, v) in test.as_map().unwrap_or_default() {
        set(&mut merged, &k.text, v.clone());
    }
    for key in ["vars", "metadata", "options", "run"] {
        let both: Vec<&(Key, Node)> = [row.get(key), test.get(key)]
            .into_iter()
            .flatten()
            .filter_map(Node::as_map)
            .flatten()
            .collect();
        if !both.is_empty() {
            let mut map: Vec<(Key, Node)> = Vec::new();
            for (k, v) in both {
                match map.iter_mut().find(|(x, _)| x.text == k.text) {
                    Some(slot) => slot.1 = v.clone(),
                    None => map.push((k.clone(), v.clone())),
                }
            }
            set(&mut merged, key, Node::new(NodeValue::Map(map), row.pos));
        }
    }
    let asserts = joined(&[row.get("assert"), test.get("assert")]);
    if !asserts.is_empty() {
        set(
            &mut merged,
            "assert",
            Node::new(NodeValue::Seq(asserts), test.pos),
        );
    }
    let named = |n: Option<&Node>| {
        n.and_then(Node::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let id = named(test.get("id")).unwrap_or_else(|| match named(row.get("id")) {
        Some(r) if n > 1 => format!("{r}__scenario_test_{}", ti + 1),
        Some(r) => r,
        None => format!("scenario-{}-{}-{}", si + 1, ci + 1, ti + 1),
    });
    set(&mut merged, "id", Node::new(NodeValue::Str(id), test.pos));
    merged
}

/// A `file://` scenario reference (a path or a glob in its last part, relative to the
/// eval file, confined as case files are): the scenarios of each file matched, in name
/// order. A file holds a list of scenarios or `{scenarios: [...]}`.
fn scenario_files(ctx: &mut Ctx<'_>, reference: &str, at: Pos) -> Vec<Node> {
    let eval_dir = std::path::Path::new(ctx.file)
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    let rel = reference.trim().trim_start_matches("file://");
    let (dir_part, pattern) = match rel.rsplit_once('/') {
        Some((d, p)) => (d, p),
        None => ("", rel),
    };
    let dir = match crate::formats::nearby(
        &eval_dir,
        if dir_part.is_empty() { "." } else { dir_part },
    ) {
        Ok(d) => d,
        Err(why) => {
            ctx.err(at, format!("the scenarios in '{rel}' {why}: scenario files are read from the eval file's folder and the one above it"));
            return Vec::new();
        }
    };
    let files: Vec<std::path::PathBuf> = if pattern.contains(['*', '?']) {
        let mut found: Vec<_> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.is_file()
                            && p.file_name()
                                .is_some_and(|n| wildcard(pattern, &n.to_string_lossy()))
                    })
                    .take(10_000)
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    } else {
        vec![dir.join(pattern)]
    };
    let mut out = Vec::new();
    for path in files {
        let file = path.display().to_string();
        let text =
            match crate::formats::read_text(&path, crate::formats::MAX_RUBRIC_BYTES, "scenario") {
                Ok(t) => t,
                Err(d) => {
                    ctx.diags.push(Diagnostic::at(
                        ctx.file,
                        at,
                        format!(
                            "the scenarios in '{rel}' cannot be read ({}): {}",
                            path.display(),
                            d.0.first().map(|x| x.message.clone()).unwrap_or_default()
                        ),
                    ));
                    continue;
                }
            };
        match crate::formats::parse_document(&file, &text) {
            Ok(root) => match (&root.value, root.get("scenarios")) {
                (NodeValue::Seq(items), _) => out.extend(items.iter().cloned()),
                (
                    _,
                    Some(Node {
                        value: NodeValue::Seq(items),
                        ..
                    }),
                ) => {
                    out.extend(items.iter().cloned());
                }
                _ => ctx.diags.push(Diagnostic::at(
                    &file,
                    root.pos,
                    "a scenario file holds a list of scenarios or `{scenarios: [...]}`",
                )),
            },
            Err(d) => ctx.diags.extend(d.0),
        }
    }
    out
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

/// `*` (any run) and `?` (one character) in a file name.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
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

/// A suite's prompt: its id (agentv's) and its input before rendering.
struct Prompt {
    id: String,
    input: Node,
}

/// Each case once per prompt: its `input` moved into `vars.input`, its new input the
/// prompt rendered with its vars; with several prompts the id gains `__prompt_<id>`.
fn cross_prompts(
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
fn stable_id(value: &Value) -> String {
    crate::core::hash::hex(&crate::core::hash::sha256(value.to_string())[..6])
}

/// agentv's `safePromptId`: runs of other characters become `-`, at most 48 characters.
fn safe_prompt_id(id: &str) -> String {
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
