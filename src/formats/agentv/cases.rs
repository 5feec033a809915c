//! Walking an agentv document: file-level rubrics, eval cases of each generation, and
//! grader-score expectation lists.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::asserts::{asserts, criteria_of, with_graders};
use super::one_case::{case_item, collect_case, evaluators};
use super::walk::{GraderSpec, KEY_SHARED, Walk};
use super::{AgentvFile, Expectation, THRESHOLD, scoring};
use super::{expand, external};
use crate::core::diag::Diagnostics;
use crate::formats::fields::{Ctx, number_of};
use crate::formats::node::{Key, Node, NodeValue};
use crate::formats::source::SourceMap;
use crate::model::{Criterion, Rubric, slugify, validate_rubric};

/// Top-level keys that mean something to agentv but nothing to grading.
const RUN_KEYS: &[&str] = &[
    "providers",
    "prompts",
    "tags",
    "evaluate_options",
    "target",
    "targets",
    "dataset",
    "$schema",
    "version",
];

/// Reads an agentv file: `stem` names the file-level rubric when the file has no `name`.
pub fn read(file: &str, root: &Node, stem: &str) -> Result<AgentvFile, Diagnostics> {
    read_nested(file, root, stem, 0)
}

/// How deep case files may name further case files.
const MAX_NESTING: usize = 4;

fn read_nested(
    file: &str,
    root: &Node,
    stem: &str,
    depth: usize,
) -> Result<AgentvFile, Diagnostics> {
    let mut w = Walk {
        ctx: Ctx::new(file),
        notes: Vec::new(),
        noted: BTreeSet::new(),
    };
    // A scenario file read on its own: an eval of those scenarios.
    if let NodeValue::Seq(list) = &root.value
        && !list.is_empty()
        && list
            .iter()
            .all(|i| i.get("config").is_some() && i.get("tests").is_some())
    {
        let wrapped = Node::new(
            NodeValue::Map(vec![(
                Key {
                    text: "scenarios".into(),
                    pos: root.pos,
                },
                root.clone(),
            )]),
            root.pos,
        );
        return read_nested(file, &wrapped, stem, depth);
    }
    if let NodeValue::Seq(list) = &root.value
        && !list.iter().any(|i| i.get("test_id").is_some())
    {
        // A case file read on its own: a list of cases is an eval of those cases.
        let wrapped = Node::new(
            NodeValue::Map(vec![(
                Key {
                    text: "tests".into(),
                    pos: root.pos,
                },
                root.clone(),
            )]),
            root.pos,
        );
        return read_nested(file, &wrapped, stem, depth);
    }
    // An agent-skills evals file (`{skill_name, evals: [{id, prompt, expected_output,
    // assertions: [text]}]}`, which agentv reads): its evals are cases, each assertion a
    // rubric sentence.
    if let (Some(evals), Some(_)) = (
        root.get("evals").and_then(Node::as_seq),
        root.get("skill_name"),
    ) {
        let cases = evals.iter().map(skill_eval_case).collect();
        let mut entries = vec![(
            Key {
                text: "tests".into(),
                pos: root.pos,
            },
            Node::new(NodeValue::Seq(cases), root.pos),
        )];
        if let Some(name) = root.get("skill_name") {
            entries.push((
                Key {
                    text: "name".into(),
                    pos: name.pos,
                },
                name.clone(),
            ));
        }
        let wrapped = Node::new(NodeValue::Map(entries), root.pos);
        return read_nested(file, &wrapped, stem, depth);
    }
    // One case alone (`cases/<name>/case.yaml`): an eval of that case, named by its folder.
    if root.get("assert").is_some()
        && ["tests", "evalcases", "eval_cases", "testcases", "scenarios"]
            .iter()
            .all(|k| root.get(k).is_none())
    {
        let mut case = root.clone();
        if case.get("id").is_none()
            && let NodeValue::Map(entries) = &mut case.value
        {
            let id = std::path::Path::new(file)
                .parent()
                .and_then(|p| p.file_name())
                .map_or_else(|| stem.to_owned(), |n| n.to_string_lossy().into_owned());
            entries.insert(
                0,
                (
                    Key {
                        text: "id".into(),
                        pos: root.pos,
                    },
                    Node::new(NodeValue::Str(id), root.pos),
                ),
            );
        }
        let wrapped = Node::new(
            NodeValue::Map(vec![(
                Key {
                    text: "tests".into(),
                    pos: root.pos,
                },
                Node::new(NodeValue::Seq(vec![case]), root.pos),
            )]),
            root.pos,
        );
        return read_nested(file, &wrapped, stem, depth);
    }
    if let NodeValue::Seq(list) = &root.value {
        let expectations = read_expectations(&mut w.ctx, list);
        return if w.ctx.diags.is_empty() {
            Ok(AgentvFile {
                expectations,
                ..AgentvFile::default()
            })
        } else {
            Err(Diagnostics(w.ctx.diags).sorted())
        };
    }
    let Some(map) = root.as_map() else {
        w.ctx.wrong_type(
            root,
            "an agentv eval file",
            "a mapping with `tests` or `evalcases`",
        );
        return Err(Diagnostics(w.ctx.diags));
    };
    let known = [
        "name",
        "description",
        "execution",
        "evalcases",
        "eval_cases",
        "tests",
        "testcases",
        "scenarios",
        "prompts",
        "assert",
        "default_test",
    ];
    for (k, v) in map {
        if !known.contains(&k.text.as_str()) {
            let why = if RUN_KEYS.contains(&k.text.as_str()) {
                "it configures how agentv runs the model, not how outputs are graded"
            } else {
                "rubricate does not know it"
            };
            w.note(
                v,
                &format!("top:{}", k.text),
                format!("`{}` ignored: {why}", k.text),
            );
        }
    }
    let name = root.get("name").and_then(Node::as_str).map(str::to_owned);
    let description = root
        .get("description")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut shared = Vec::new();
    if let Some(exec) = root.get("execution") {
        evaluators(&mut w, exec, "execution", &mut shared);
    }
    let present: Vec<&str> = ["evalcases", "eval_cases", "tests", "testcases"]
        .into_iter()
        .filter(|k| root.get(k).is_some())
        .collect();
    // Two lists of cases: one would be dropped without a word. Refused where the second is.
    if let [first, second, ..] = present.as_slice()
        && let Some(at) = root.get(second)
    {
        w.ctx.err(
            at.pos,
            format!(
                "both `{first}` and `{second}` hold eval cases; keep one list (agentv reads only one)"
            ),
        );
    }
    let cases_key = present.first().copied();
    // Cases kept in other files (`tests: ./cases.yaml`, `file://…` entries): loaded, and
    // each file read on its own first, so its problems name it.
    let list = cases_key.and_then(|k| root.get(k));
    let references: Vec<&Node> = match list.map(|l| &l.value) {
        Some(NodeValue::Str(_)) => list.into_iter().collect(),
        Some(NodeValue::Seq(items)) => items.iter().filter(|n| n.as_str().is_some()).collect(),
        _ => Vec::new(),
    };
    let mut groups: Vec<Vec<external::Loaded>> = Vec::new();
    for r in &references {
        if depth >= MAX_NESTING {
            w.ctx.err(
                r.pos,
                "case files name case files too deeply (a file that names itself?); give the cases inline",
            );
            continue;
        }
        match external::load(file, r.as_str().unwrap_or_default(), r.pos) {
            Ok(loaded) => {
                for l in &loaded {
                    let wrapped = Node::new(
                        NodeValue::Map(vec![(
                            Key {
                                text: "tests".into(),
                                pos: r.pos,
                            },
                            Node::new(NodeValue::Seq(l.cases.clone()), r.pos),
                        )]),
                        r.pos,
                    );
                    if let Err(d) = read_nested(&l.file, &wrapped, stem, depth + 1) {
                        w.ctx.diags.extend(d.0);
                    }
                }
                groups.push(loaded);
            }
            Err(d) => w.ctx.diags.extend(d.0),
        }
    }
    if !w.ctx.diags.is_empty() {
        return Err(Diagnostics(w.ctx.diags).sorted());
    }
    let mut groups = groups.iter();
    let mut cases: Vec<expand::Case> = Vec::new();
    let mut take = |node: &Node, path: String| {
        cases.push(expand::Case {
            node: node.clone(),
            path,
        });
    };
    if let (Some(key), Some(list)) = (cases_key, list) {
        match &list.value {
            NodeValue::Seq(items) => {
                for (i, case) in items.iter().enumerate() {
                    let here = format!("{key}[{i}]");
                    if case.as_str().is_some() {
                        for c in groups.next().into_iter().flatten().flat_map(|l| &l.cases) {
                            take(c, here.clone());
                        }
                    } else {
                        take(case, here);
                    }
                }
            }
            NodeValue::Str(_) => {
                for c in groups.next().into_iter().flatten().flat_map(|l| &l.cases) {
                    take(c, key.to_owned());
                }
            }
            _ => w.ctx.wrong_type(
                list,
                &format!("`{key}`"),
                "a list of eval cases, or the file that holds them",
            ),
        }
    }
    let cases = expand::expand(&mut w.ctx, &mut w.notes, root, cases);
    // The suite's own graders (`default_test.assert`, then `assert`) follow every case's
    // own, unless the case says `execution.skip_defaults: true` (agentv's parseGraders).
    let suite_asserts = suite_asserts(root);
    let mut suite_found = Vec::new();
    if let Some(list) = &suite_asserts {
        asserts(&mut w, list, "assert", None, None, &mut suite_found);
    }
    let mut case_entries = Vec::new();
    for case in &cases {
        let mut found = collect_case(&mut w, &case.node, &case.path);
        let skip = case
            .node
            .get("execution")
            .and_then(|e| e.get("skip_defaults"))
            .is_some_and(|n| matches!(n.value, NodeValue::Bool(true)));
        if !skip {
            found.extend(suite_found.iter().cloned());
        }
        case_entries.push((&case.node, found));
    }

    let doc = Arc::new(root.clone());
    let base_id = slugify(name.as_deref().unwrap_or(stem));
    let shared_criteria = criteria_of(&mut w.ctx, &shared, 0, None);
    let make = |id: &str, found: Vec<(Criterion, GraderSpec)>, paths: Vec<String>| {
        let (criteria, graders) = with_graders(found);
        let mut r = Rubric::new(id, criteria);
        r.graders = graders;
        r.name = name
            .clone()
            .filter(|_| id == base_id)
            .unwrap_or_else(|| id.to_owned());
        r.description.clone_from(&description);
        r.pass_threshold = THRESHOLD;
        r.scoring = scoring();
        r.metadata.insert("format".into(), json!("agentv"));
        (r, SourceMap::new(Arc::clone(&doc), paths))
    };
    let mut out = AgentvFile::default();
    let shared_rubric = (!shared_criteria.is_empty()).then(|| {
        let paths = shared.iter().map(|f| f.path.clone()).collect();
        make(&base_id, shared_criteria.clone(), paths)
    });
    let shared_arc = shared_rubric.as_ref().map(|(r, _)| Arc::new(r.clone()));
    if let Some(r) = shared_rubric {
        out.rubrics.push(r);
    }
    for (i, (case, found)) in case_entries.iter().enumerate() {
        let id = case
            .get("id")
            .and_then(|n| {
                n.as_str()
                    .map(str::to_owned)
                    .or_else(|| n.as_f64().map(|x| x.to_string()))
            })
            .unwrap_or_else(|| format!("case-{}", i + 1));
        // `criteria` as text is a case's expected outcome too (agentv's JSONL cases and
        // labelled exports write it so).
        let outcome = case
            .get("expected_outcome")
            .or_else(|| case.get("outcome"))
            .and_then(Node::as_str)
            .or_else(|| case.get("criteria").and_then(Node::as_str))
            .map(str::to_owned);
        let mut own = criteria_of(&mut w.ctx, found, shared_criteria.len(), outcome.as_deref());
        if let Some((_, file_grader)) = shared_criteria.first() {
            for (_, g) in &mut own {
                if g.key == KEY_SHARED {
                    g.clone_from(file_grader);
                }
            }
        }
        let rubric = if own.is_empty() {
            match (&shared_arc, &outcome) {
                (Some(s), _) => Some(Arc::clone(s)),
                (None, Some(o)) => {
                    w.note(case, "default-judge", format!(
                        "case '{id}' has no rubrics; like agentv's default judge, it is graded on its expected_outcome as one required criterion"
                    ));
                    let mut c = Criterion::binary("expected-outcome", o.trim_end(), 1.0);
                    c.required = true;
                    let grader = GraderSpec::plain("default".into(), "llm-grader", 1.0);
                    let (r, map) = make(
                        &id,
                        vec![(c, grader)],
                        vec![format!("{}", path_of_case(cases_key, i))],
                    );
                    let arc = Arc::new(r.clone());
                    out.rubrics.push((r, map));
                    Some(arc)
                }
                (None, None) => None,
            }
        } else {
            let mut criteria = shared_criteria.clone();
            criteria.extend(own);
            let paths = shared.iter().chain(found).map(|f| f.path.clone()).collect();
            let (r, map) = make(&slugify(&id), criteria, paths);
            let arc = Arc::new(r.clone());
            out.rubrics.push((r, map));
            Some(arc)
        };
        out.items.push(case_item(&mut w, case, id, outcome, rubric));
    }
    let mut diags = w.ctx.diags;
    let mut seen = BTreeSet::new();
    for (r, map) in &out.rubrics {
        for p in validate_rubric(r) {
            let d = map.diagnostic(file, p.criterion, &p.field, &p.message);
            if seen.insert(d.to_string()) {
                diags.push(d);
            }
        }
    }
    if !diags.is_empty() {
        return Err(Diagnostics(diags).sorted());
    }
    out.notes = w.notes;
    Ok(out)
}

/// `default_test.assert` and the suite's `assert`, as one list (agentv's
/// combineInheritedAssertions); `None` when there are none.
fn suite_asserts(root: &Node) -> Option<Node> {
    let parts = expand::joined(&[
        root.get("default_test").and_then(|d| d.get("assert")),
        root.get("assert"),
    ]);
    (!parts.is_empty()).then(|| Node::new(NodeValue::Seq(parts), root.pos))
}

fn path_of_case(key: Option<&str>, i: usize) -> String {
    format!("{}[{i}]", key.unwrap_or("tests"))
}

/// `[{test_id, grader, range: {min, max}}]`.
fn read_expectations(ctx: &mut Ctx<'_>, list: &[Node]) -> Vec<Expectation> {
    let mut out = Vec::new();
    for e in list {
        let Some(mut f) =
            crate::formats::fields::Fields::of(ctx, e, "an agentv grader-score expectation")
        else {
            continue;
        };
        let item = f.string(ctx, "test_id");
        let grader = f.string(ctx, "grader").unwrap_or_else(|| "rubrics".into());
        let range = f.take("range");
        f.finish(ctx, &["test_id", "grader", "range"]);
        let Some(item) = item else {
            ctx.err(e.pos, "a grader-score expectation needs `test_id`");
            continue;
        };
        let (mut min, mut max) = (None, None);
        if let Some(r) = range {
            if let Some(mut rf) = crate::formats::fields::Fields::of(ctx, r, "`range`") {
                min = rf.take("min").and_then(|n| number_of(ctx, n, "`min`"));
                max = rf.take("max").and_then(|n| number_of(ctx, n, "`max`"));
                rf.finish(ctx, &["min", "max"]);
            }
            for x in [min, max].into_iter().flatten() {
                if !(0.0..=1.0).contains(&x) {
                    ctx.err(
                        r.pos,
                        format!("grader score bounds are between 0 and 1; found {x}"),
                    );
                }
            }
            if let (Some(a), Some(b)) = (min, max)
                && a > b
            {
                ctx.err(r.pos, format!("range min {a} is above max {b}"));
            }
        }
        out.push(Expectation {
            item,
            grader,
            min,
            max,
        });
    }
    out
}

/// One agent-skills eval as an agentv case: `prompt` the input, `assertions` (sentences)
/// its rubric, `files` kept as metadata.
fn skill_eval_case(eval: &Node) -> Node {
    let NodeValue::Map(entries) = &eval.value else {
        return eval.clone();
    };
    let renamed = entries
        .iter()
        .map(|(k, v)| {
            let text = match k.text.as_str() {
                "prompt" => "input",
                "assertions" => "assert",
                "files" => "metadata",
                other => other,
            };
            let v = if k.text == "files" {
                Node::new(
                    NodeValue::Map(vec![(
                        Key {
                            text: "files".into(),
                            pos: k.pos,
                        },
                        v.clone(),
                    )]),
                    v.pos,
                )
            } else {
                v.clone()
            };
            (
                Key {
                    text: text.to_owned(),
                    pos: k.pos,
                },
                v,
            )
        })
        .collect();
    Node::new(NodeValue::Map(renamed), eval.pos)
}
