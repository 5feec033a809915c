//! Node tree → [`Rubric`], collecting every problem with its location.

use crate::core::diag::Diagnostics;
use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::formats::source::{SourceMap, read_validated};

use super::criterion::{read_kind, read_method};
use super::knobs::{read_graders, read_judge, read_scoring};
use crate::model::{Combine, Criterion, Rubric, Scope, slugify};

/// Defaults that differ between the native format and the formats it grew from.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// Weight of a criterion that gives none (native 1, autorubric 10).
    pub default_weight: f64,
    /// autorubric's grader settings are read: a `length_penalty` beside the criteria, a
    /// criterion's `aggregation`.
    pub root_length_penalty: bool,
    /// Criteria that share an id are numbered apart (`a`, `a-2`): the format scores by
    /// position and never reads ids, so real files repeat them.
    pub renumber_ids: bool,
}

impl Dialect {
    /// rubricate's own format.
    pub const NATIVE: Dialect = Dialect {
        default_weight: 1.0,
        root_length_penalty: false,
        renumber_ids: false,
    };
    /// autorubric's: weight 10 by default, the length penalty at the root, ids renumbered.
    pub const AUTORUBRIC: Dialect = Dialect {
        default_weight: 10.0,
        root_length_penalty: true,
        renumber_ids: true,
    };
    /// rubric-lib's: ids renumbered.
    pub const RUBRIC_LIB: Dialect = Dialect {
        default_weight: 1.0,
        root_length_penalty: false,
        renumber_ids: true,
    };
}

/// Gives criteria that share an id a number (`a`, `a-2`, `a-3`), never an id another has.
fn renumber(criteria: &mut [Criterion]) {
    let mut taken: std::collections::HashSet<String> =
        criteria.iter().map(|c| c.id.clone()).collect();
    let mut seen = std::collections::HashSet::new();
    for c in criteria.iter_mut() {
        if seen.insert(c.id.clone()) {
            continue;
        }
        let mut n = 2;
        while taken.contains(&format!("{}-{n}", c.id)) {
            n += 1;
        }
        c.id = format!("{}-{n}", c.id);
        taken.insert(c.id.clone());
        seen.insert(c.id.clone());
    }
}

const RUBRIC_FIELDS: &[&str] = &[
    "$schema",
    "id",
    "name",
    "description",
    "version",
    "target_type",
    "guidelines",
    "pass_threshold",
    "scoring",
    "judge",
    "criteria",
    "sections",
    "examples",
    "graders",
    "gates",
    "rubric",
    "metadata",
    "mode",
    "systems",
];
const CRITERION_FIELDS: &[&str] = &[
    "id",
    "examples",
    "name",
    "requirement",
    "expected_outcome",
    "outcome",
    "description",
    "weight",
    "required",
    "min_score",
    "kind",
    "levels",
    "options",
    "scale_type",
    "scale",
    "method",
    "tags",
    "scope",
    "combine",
];

/// Reads a rubric from a parsed document. `fallback_id` names a rubric with neither `id`
/// nor `name` (the file stem). The result has passed every structural rule.
pub fn read_rubric(
    file: &str,
    root: &Node,
    fallback_id: &str,
    dialect: Dialect,
) -> Result<(Rubric, SourceMap), Diagnostics> {
    read_validated(file, root, |ctx, paths| {
        read_root(ctx, root, fallback_id, dialect, paths)
    })
}

/// Reads a rubric from text without the structural rules (for the meta-rubric, which
/// scores rubrics that may break them).
pub fn read_rubric_lenient(text: &str) -> Result<Rubric, Diagnostics> {
    let root = crate::formats::parse_document("rubric", text)?;
    let mut ctx = Ctx::new("rubric");
    let rubric = read_root(&mut ctx, &root, "rubric", Dialect::NATIVE, &mut Vec::new());
    match rubric {
        Some(r) if ctx.diags.is_empty() => Ok(r),
        _ => Err(Diagnostics(ctx.diags)),
    }
}

fn read_root(
    ctx: &mut Ctx<'_>,
    root: &Node,
    fallback_id: &str,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Option<Rubric> {
    // A bare list of criteria (and sections) is a rubric with defaults (rubric_lib and
    // autorubric write them).
    if let NodeValue::Seq(items) = &root.value {
        let mut criteria = read_entries(ctx, items, "", dialect, paths);
        if dialect.renumber_ids {
            renumber(&mut criteria);
        }
        return Some(Rubric::new(fallback_id, criteria));
    }
    if root.value == NodeValue::Null {
        ctx.err(
            root.pos,
            "the file is empty; a rubric needs at least `criteria`",
        );
        return None;
    }
    let mut f = Fields::of(ctx, root, "the rubric")?;
    // `{rubric: …}` wraps a rubric (or a list of criteria) one level down.
    if f.has("rubric") && !f.has("criteria") && !f.has("sections") {
        let Some(inner) = f.take("rubric") else {
            let pos = f.node.key_pos("rubric").unwrap_or(f.node.pos);
            ctx.err(
                pos,
                "`rubric` is empty; give a rubric or a list of criteria",
            );
            return None;
        };
        let guidelines = f.string(ctx, "guidelines");
        // A name or description beside the wrapped rubric names it.
        let name = f.string(ctx, "name");
        let id = f.string(ctx, "id");
        let description = f.string(ctx, "description");
        f.finish(ctx, &["rubric", "guidelines", "name", "id", "description"]);
        let mut sub = Vec::new();
        let mut r = read_root(ctx, inner, fallback_id, dialect, &mut sub)?;
        if let Some(id) = id.or_else(|| name.as_deref().map(slugify)) {
            r.id = id;
        }
        if let Some(n) = name {
            r.name = n;
        }
        if let Some(d) = description {
            r.description = d;
        }
        paths.extend(
            sub.into_iter()
                .map(|p| format!("rubric{}{p}", if p.starts_with('[') { "" } else { "." })),
        );
        if guidelines.is_some() {
            r.guidelines = guidelines;
        }
        return Some(r);
    }
    f.take("$schema");
    let name = f.string(ctx, "name");
    let id = f
        .string(ctx, "id")
        .or_else(|| name.as_deref().map(slugify))
        .unwrap_or_else(|| slugify(fallback_id));
    let mut rubric = Rubric::new(id.clone(), Vec::new());
    rubric.name = name.unwrap_or(id);
    rubric.description = f.string(ctx, "description").unwrap_or_default();
    if let Some(v) = f.string(ctx, "version") {
        rubric.version = v;
    }
    rubric.target_type = f.string(ctx, "target_type").unwrap_or_default();
    rubric.guidelines = f.string(ctx, "guidelines");
    if let Some(t) = f.number(ctx, "pass_threshold") {
        rubric.pass_threshold = t;
    }
    if let Some(node) = f.take("scoring") {
        rubric.scoring = read_scoring(ctx, node);
    }
    if dialect.root_length_penalty
        && let Some(node) = f.take("length_penalty")
    {
        rubric.scoring.length_penalty = super::knobs::read_length_penalty(ctx, node);
    }
    if let Some(node) = f.take("judge") {
        rubric.judge = read_judge(ctx, node);
    }
    if let Some(node) = f.take("mode") {
        match node.as_str() {
            Some("pairwise") => rubric.mode = crate::model::Mode::Pairwise,
            Some("single") => rubric.mode = crate::model::Mode::Single,
            _ => ctx.err(
                node.pos,
                "`mode` is `single` (one answer per item, the default) or `pairwise` (answers compared)",
            ),
        }
    }
    if let Some(node) = f.take("systems") {
        match serde_json::from_value::<Vec<String>>(node.to_json()) {
            Ok(s) => rubric.systems = s,
            Err(_) => ctx.wrong_type(node, "`systems`", "a list of candidate ids"),
        }
    }
    if let Some(node) = f.take("metadata") {
        match node.to_json() {
            serde_json::Value::Object(m) => rubric.metadata = m,
            _ => ctx.wrong_type(node, "`metadata`", "a mapping"),
        }
    }
    let gates_node = f.take("gates");
    if let Some(node) = f.take("graders") {
        rubric.graders = read_graders(ctx, node);
    }
    let examples_node = f.take("examples");
    let criteria_node = f.take("criteria");
    let sections_node = f.take("sections");
    match (criteria_node, sections_node) {
        (Some(c), Some(_)) => {
            ctx.err(c.pos, "give either `criteria` or `sections`, not both");
        }
        (Some(c), None) => match c.as_seq() {
            Some(items) => {
                rubric.criteria = read_entries(ctx, items, "criteria", dialect, paths);
            }
            None => ctx.wrong_type(c, "`criteria`", "a list"),
        },
        (None, Some(s)) => match s.as_seq() {
            Some(items) => rubric.criteria = read_entries(ctx, items, "sections", dialect, paths),
            None => ctx.wrong_type(s, "`sections`", "a list"),
        },
        (None, None) => ctx.err(
            f.node.pos,
            "the rubric has no `criteria`; add a list of criteria",
        ),
    }
    f.finish(ctx, RUBRIC_FIELDS);
    if dialect.renumber_ids {
        renumber(&mut rubric.criteria);
    }
    if let Some(node) = examples_node {
        rubric.examples = super::examples::read_rubric_examples(ctx, node, &rubric.criteria);
    }
    // After the criteria: a gate must name one of them, or a tag one carries.
    if let Some(node) = gates_node {
        rubric.gates = crate::formats::fields::gates_of(ctx, node, Some(&rubric));
    }
    Some(rubric)
}

/// A list whose items are criteria or sections (`{name|title|id, description, criteria}`),
/// in any mix, as autorubric and `rubric_lib` read `criteria:`, `sections:` and bare lists:
/// an item holding `criteria` is a section. Sections hold criteria only (one level).
fn read_entries(
    ctx: &mut Ctx<'_>,
    items: &[Node],
    base: &str,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Vec<Criterion> {
    let mut out = Vec::new();
    let mut sections = 0;
    for (i, item) in items.iter().enumerate() {
        if item.get("criteria").is_none() {
            out.extend(read_at(
                ctx,
                item,
                format!("{base}[{i}]"),
                None,
                dialect,
                paths,
            ));
            continue;
        }
        sections += 1;
        let Some(mut f) = Fields::of(ctx, item, "a section") else {
            continue;
        };
        // rubric's `scripts/rubrics.jsonl` names sections by `id` and `title`.
        let name = f.string(ctx, "name");
        let title = f.string(ctx, "title");
        let id = f.string(ctx, "id");
        let name = name
            .or(title)
            .or(id)
            .unwrap_or_else(|| format!("Section {sections}"));
        f.take("description");
        if let Some(c) = f.take("criteria") {
            match c.as_seq() {
                Some(list) => out.extend(read_criteria(
                    ctx,
                    list,
                    &format!("{base}[{i}].criteria"),
                    Some(&name),
                    dialect,
                    paths,
                )),
                None => ctx.wrong_type(c, "`criteria`", "a list"),
            }
        }
        f.finish(ctx, &["name", "title", "id", "description", "criteria"]);
    }
    out
}

fn read_criteria(
    ctx: &mut Ctx<'_>,
    items: &[Node],
    base: &str,
    section: Option<&str>,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Vec<Criterion> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, node)| read_at(ctx, node, format!("{base}[{i}]"), section, dialect, paths))
        .collect()
}

/// One criterion at `path` (kept, so later problems point at it).
fn read_at(
    ctx: &mut Ctx<'_>,
    node: &Node,
    path: String,
    section: Option<&str>,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Option<Criterion> {
    let mut c = read_criterion(ctx, node, paths.len() + 1, dialect)?;
    c.section = section.map(str::to_owned);
    paths.push(path);
    Some(c)
}

fn read_criterion(
    ctx: &mut Ctx<'_>,
    node: &Node,
    index: usize,
    dialect: Dialect,
) -> Option<Criterion> {
    // A plain string is a requirement with defaults.
    if let NodeValue::Str(s) = &node.value {
        let mut c = Criterion::binary(format!("c{index}"), s.clone(), dialect.default_weight);
        c.name = c.id.clone();
        return Some(c);
    }
    let mut f = Fields::of(ctx, node, "a criterion")?;
    let name = f.string(ctx, "name");
    let id = f
        .string(ctx, "id")
        .or_else(|| name.as_deref().map(slugify).filter(|s| !s.is_empty()))
        .unwrap_or_else(|| format!("c{index}"));
    let requirement = if let Some((key, n)) =
        f.take_alias(&["requirement", "expected_outcome", "outcome", "description"])
    {
        string_of(ctx, n, &format!("`{key}`")).unwrap_or_default()
    } else {
        ctx.err(
            node.pos,
            format!("criterion '{id}' has no `requirement`; say what is checked"),
        );
        String::new()
    };
    let mut c = Criterion::binary(id.clone(), requirement, dialect.default_weight);
    c.name = name.unwrap_or(id);
    if let Some(w) = f.number(ctx, "weight") {
        c.weight = w;
    }
    c.required = f.boolean(ctx, "required").unwrap_or(false);
    c.min_score = f.number(ctx, "min_score");
    let kind_name = f
        .take("kind")
        .and_then(|n| string_of(ctx, n, "`kind`").map(|s| (s, n.pos)));
    c.kind = read_kind(ctx, &mut f, kind_name.as_ref());
    if let Some(m) = f.take("method")
        && let Some(method) = read_method(ctx, m)
    {
        c.method = method;
    }
    if let Some(t) = f.take("tags") {
        c.tags = super::knobs::string_list(ctx, t, "a criterion's `tags`");
    }
    if let Some(e) = f.take("examples") {
        c.examples = super::examples::read_criterion_examples(ctx, e, &c);
    }
    c.scope = read_scope(ctx, &mut f, c.weight);
    // autorubric's per-criterion ensemble rule: rubricate's ensembles combine with the
    // run's rule (`--combine`), so it is read and not used (`inspect` says so).
    if dialect.root_length_penalty {
        f.take("aggregation");
    }
    f.finish(ctx, CRITERION_FIELDS);
    Some(c)
}

/// `scope: conversation | turn` and, for `turn`, `combine: all | any | mean | min`
/// (default: the worst turn decides — `all`, or `any` for a penalty).
fn read_scope(ctx: &mut Ctx<'_>, f: &mut Fields<'_>, weight: f64) -> Scope {
    let scope = f
        .take("scope")
        .and_then(|n| string_of(ctx, n, "`scope`").map(|s| (s, n.pos)));
    let combine = f
        .take("combine")
        .and_then(|n| string_of(ctx, n, "`combine`").map(|s| (s, n.pos)));
    let rule = combine.as_ref().and_then(|(s, pos)| {
        let rule = Combine::parse(s);
        if rule.is_none() {
            ctx.err(
                *pos,
                format!("`combine` is '{s}'; give all, any, mean or min"),
            );
        }
        rule
    });
    let rule = rule.unwrap_or_else(|| Combine::default_for(weight));
    match scope.as_ref().map(|(s, pos)| (s.trim(), *pos)) {
        None | Some(("conversation", _)) => {
            if let Some((_, pos)) = combine {
                ctx.err(pos, "`combine` applies only to `scope: turn`; add `scope: turn` or remove `combine`");
            }
            Scope::Conversation
        }
        Some(("turn", _)) => Scope::Turn(rule),
        Some((other, pos)) => {
            ctx.err(
                pos,
                format!("`scope` is '{other}'; give conversation (the default) or turn"),
            );
            Scope::Conversation
        }
    }
}
