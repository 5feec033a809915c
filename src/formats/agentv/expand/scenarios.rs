//! agentv's `scenarios` matrix: each config row crossed with each of the scenario's tests,
//! given inline or in `file://` files and globs next to the suite.

use super::{Case, joined, set};
use crate::core::diag::{Diagnostic, Pos};
use crate::formats::fields::Ctx;
use crate::formats::node::{Key, Node, NodeValue};

/// `scenarios: [{description, config: [rows], tests: [tests]} | "file://glob"]`: each
/// config row crossed with each test (its vars, metadata, options and run merged, the
/// row's first; `assert` lists joined), ids as agentv gives them.
pub(super) fn scenarios(ctx: &mut Ctx<'_>, list: &Node) -> Vec<Case> {
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

/// `*` (any run) and `?` (one character) in a file name.
pub(super) fn wildcard(pattern: &str, name: &str) -> bool {
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
