//! Node tree → [`Rubric`], collecting every problem with its location.

use serde_json::Map;

use crate::formats::diag::{Diagnostics, Pos};
use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::formats::source::SourceMap;
use crate::model::{
    AbstainPolicy, AggregateMode, Anchor, CheckSpec, Criterion, ErrorPolicy, JudgeMethod,
    JudgeSettings, Kind, Level, Method, OptionChoice, OptionScale, Rubric, Scale, SchemaSource,
    Scoring, slugify, validate_rubric,
};

/// Defaults that differ between the native format and the formats it grew from.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// Weight of a criterion that gives none (native 1, autorubric 10).
    pub default_weight: f64,
}

impl Dialect {
    pub const NATIVE: Dialect = Dialect {
        default_weight: 1.0,
    };
    pub const AUTORUBRIC: Dialect = Dialect {
        default_weight: 10.0,
    };
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
    "rubric",
    "metadata",
];
const CRITERION_FIELDS: &[&str] = &[
    "id",
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
];

/// Reads a rubric from a parsed document. `fallback_id` names a rubric with neither `id`
/// nor `name` (the file stem). The result has passed every structural rule.
pub fn read_rubric(
    file: &str,
    root: &Node,
    fallback_id: &str,
    dialect: Dialect,
) -> Result<(Rubric, SourceMap), Diagnostics> {
    let mut ctx = Ctx::new(file);
    let mut paths = Vec::new();
    let rubric = read_root(&mut ctx, root, fallback_id, dialect, &mut paths);
    let map = SourceMap::new(root.clone(), paths);
    let Some(rubric) = rubric.filter(|_| ctx.diags.is_empty()) else {
        return Err(Diagnostics(ctx.diags).sorted());
    };
    let problems = validate_rubric(&rubric);
    if problems.is_empty() {
        Ok((rubric, map))
    } else {
        Err(Diagnostics(
            problems
                .iter()
                .map(|p| map.diagnostic(file, p.criterion, &p.field, &p.message))
                .collect(),
        ))
    }
}

/// Reads a rubric from text without the structural rules (for the meta-rubric, which
/// scores rubrics that may break them). Errors are one line of text.
pub fn read_rubric_lenient(text: &str) -> Result<Rubric, String> {
    let root = crate::formats::parse_document("rubric", text).map_err(|d| d.to_string())?;
    let mut ctx = Ctx::new("rubric");
    let rubric = read_root(&mut ctx, &root, "rubric", Dialect::NATIVE, &mut Vec::new());
    match rubric {
        Some(r) if ctx.diags.is_empty() => Ok(r),
        _ => Err(format!(
            "the submission is not a rubric: {}",
            Diagnostics(ctx.diags)
        )),
    }
}

fn read_root(
    ctx: &mut Ctx<'_>,
    root: &Node,
    fallback_id: &str,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Option<Rubric> {
    // A bare list of criteria is a rubric with defaults (rubric_lib and autorubric write them).
    if let NodeValue::Seq(items) = &root.value {
        let criteria = read_criteria(ctx, items, "", None, dialect, paths);
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
        f.finish(ctx, &["rubric", "guidelines"]);
        let mut sub = Vec::new();
        let mut r = read_root(ctx, inner, fallback_id, dialect, &mut sub)?;
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
    if let Some(node) = f.take("judge") {
        rubric.judge = read_judge(ctx, node);
    }
    if let Some(node) = f.take("metadata") {
        match node.to_json() {
            serde_json::Value::Object(m) => rubric.metadata = m,
            _ => ctx.wrong_type(node, "`metadata`", "a mapping"),
        }
    }
    let criteria_node = f.take("criteria");
    let sections_node = f.take("sections");
    match (criteria_node, sections_node) {
        (Some(c), Some(_)) => {
            ctx.err(c.pos, "give either `criteria` or `sections`, not both");
        }
        (Some(c), None) => match c.as_seq() {
            Some(items) => {
                rubric.criteria = read_criteria(ctx, items, "criteria", None, dialect, paths);
            }
            None => ctx.wrong_type(c, "`criteria`", "a list"),
        },
        (None, Some(s)) => rubric.criteria = read_sections(ctx, s, dialect, paths),
        (None, None) => ctx.err(
            f.node.pos,
            "the rubric has no `criteria`; add a list of criteria",
        ),
    }
    f.finish(ctx, RUBRIC_FIELDS);
    Some(rubric)
}

fn read_sections(
    ctx: &mut Ctx<'_>,
    node: &Node,
    dialect: Dialect,
    paths: &mut Vec<String>,
) -> Vec<Criterion> {
    let Some(sections) = node.as_seq() else {
        ctx.wrong_type(node, "`sections`", "a list");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        let Some(mut f) = Fields::of(ctx, s, "a section") else {
            continue;
        };
        let name = f
            .string(ctx, "name")
            .unwrap_or_else(|| format!("Section {}", i + 1));
        f.take("description");
        match f.take("criteria") {
            Some(c) => match c.as_seq() {
                Some(items) => {
                    let base = format!("sections[{i}].criteria");
                    out.extend(read_criteria(
                        ctx,
                        items,
                        &base,
                        Some(&name),
                        dialect,
                        paths,
                    ));
                }
                None => ctx.wrong_type(c, "`criteria`", "a list"),
            },
            None => ctx.err(s.pos, format!("section '{name}' has no `criteria`")),
        }
        f.finish(ctx, &["name", "description", "criteria"]);
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
    let mut out = Vec::new();
    for (i, node) in items.iter().enumerate() {
        let index = paths.len() + 1;
        if let Some(mut c) = read_criterion(ctx, node, index, dialect) {
            c.section = section.map(str::to_owned);
            paths.push(format!("{base}[{i}]"));
            out.push(c);
        }
    }
    out
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
    f.finish(ctx, CRITERION_FIELDS);
    Some(c)
}

fn read_kind(ctx: &mut Ctx<'_>, f: &mut Fields<'_>, declared: Option<&(String, Pos)>) -> Kind {
    let levels = f.take("levels");
    let options = f.take("options");
    let scale_type = f.take("scale_type");
    let scale = f.take("scale");
    let inferred = if levels.is_some() {
        "levels"
    } else if options.is_some() {
        "options"
    } else if scale.is_some() {
        "scale"
    } else {
        "binary"
    };
    let kind = match declared {
        Some((k, pos)) => {
            if !["binary", "levels", "options", "scale"].contains(&k.as_str()) {
                ctx.err(
                    *pos,
                    format!("unknown kind '{k}'; use binary, levels, options or scale"),
                );
                return Kind::Binary;
            }
            if k != inferred && !(k == "binary" && inferred == "binary") {
                let needs = match k.as_str() {
                    "levels" => "a `levels` list",
                    "options" => "an `options` list",
                    "scale" => "a `scale` with min and max",
                    _ => "no levels, options or scale",
                };
                ctx.err(*pos, format!("kind '{k}' needs {needs}"));
                return Kind::Binary;
            }
            k.as_str()
        }
        None => inferred,
    };
    match kind {
        "levels" => levels.map_or(Kind::Binary, |n| Kind::Levels(read_levels(ctx, n))),
        "options" => {
            let scale = match scale_type
                .and_then(|n| string_of(ctx, n, "`scale_type`").map(|s| (s, n.pos)))
            {
                None => OptionScale::Ordinal,
                Some((s, _)) if s == "ordinal" => OptionScale::Ordinal,
                Some((s, _)) if s == "nominal" => OptionScale::Nominal,
                Some((s, pos)) => {
                    ctx.err(
                        pos,
                        format!("unknown scale_type '{s}'; use ordinal or nominal"),
                    );
                    OptionScale::Ordinal
                }
            };
            options.map_or(Kind::Binary, |n| Kind::Options {
                options: read_options(ctx, n),
                scale,
            })
        }
        "scale" => scale.map_or(Kind::Binary, |n| Kind::Scale(read_scale(ctx, n))),
        _ => {
            if let Some(st) = scale_type {
                ctx.err(st.pos, "`scale_type` belongs to options criteria");
            }
            Kind::Binary
        }
    }
}

fn read_levels(ctx: &mut Ctx<'_>, node: &Node) -> Vec<Level> {
    match &node.value {
        NodeValue::Seq(items) => items
            .iter()
            .filter_map(|item| {
                let mut f = Fields::of(ctx, item, "a level")?;
                let id = f.string(ctx, "id");
                let label = f.string(ctx, "label");
                let Some(id) = id.or_else(|| label.as_deref().map(slugify)) else {
                    ctx.err(item.pos, "a level needs an `id`");
                    f.finish(ctx, &["id", "label", "description", "score", "indicators"]);
                    return None;
                };
                let description = f.string(ctx, "description").unwrap_or_default();
                let score = f.number(ctx, "score");
                if score.is_none() && !f.has("score") {
                    ctx.err(
                        item.pos,
                        format!("level '{id}' needs a `score` between 0 and 1"),
                    );
                }
                let indicators = f
                    .take("indicators")
                    .map(|n| string_list(ctx, n, "`indicators`"))
                    .unwrap_or_default();
                f.finish(ctx, &["id", "label", "description", "score", "indicators"]);
                Some(Level {
                    label: label.unwrap_or_else(|| id.clone()),
                    id,
                    description,
                    score: score.unwrap_or(0.0),
                    indicators,
                })
            })
            .collect(),
        // `{0: text, 1: text, …}`: integer levels scored k / max.
        NodeValue::Map(entries) => {
            let mut keyed = Vec::new();
            for (k, v) in entries {
                match k.text.trim().parse::<i64>() {
                    Ok(n) if n >= 0 => keyed.push((
                        n,
                        string_of(ctx, v, "a level description").unwrap_or_default(),
                    )),
                    _ => ctx.err(
                        k.pos,
                        format!(
                            "level key '{}' must be a whole number ≥ 0 in a level map",
                            k.text
                        ),
                    ),
                }
            }
            keyed.sort_by_key(|(n, _)| *n);
            let max = keyed.last().map_or(1, |(n, _)| (*n).max(1)) as f64;
            keyed
                .into_iter()
                .map(|(n, text)| Level {
                    id: n.to_string(),
                    label: n.to_string(),
                    description: text,
                    score: n as f64 / max,
                    indicators: Vec::new(),
                })
                .collect()
        }
        _ => {
            ctx.wrong_type(
                node,
                "`levels`",
                "a list of levels or a map of whole numbers to descriptions",
            );
            Vec::new()
        }
    }
}

fn read_options(ctx: &mut Ctx<'_>, node: &Node) -> Vec<OptionChoice> {
    let Some(items) = node.as_seq() else {
        ctx.wrong_type(node, "`options`", "a list");
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let mut f = Fields::of(ctx, item, "an option")?;
            let label = f.string(ctx, "label");
            let na = f.boolean(ctx, "na").unwrap_or(false);
            let value = f.number(ctx, "value");
            f.finish(ctx, &["label", "value", "na"]);
            let Some(label) = label else {
                ctx.err(item.pos, "an option needs a `label`");
                return None;
            };
            if value.is_none() && !na {
                ctx.err(
                    item.pos,
                    format!("option '{label}' needs a `value` between 0 and 1 (or `na: true`)"),
                );
            }
            Some(OptionChoice {
                label,
                value: value.unwrap_or(0.0),
                na,
            })
        })
        .collect()
}

fn read_scale(ctx: &mut Ctx<'_>, node: &Node) -> Scale {
    let mut scale = Scale {
        min: 0.0,
        max: 10.0,
        anchors: Vec::new(),
    };
    let Some(mut f) = Fields::of(ctx, node, "`scale`") else {
        return scale;
    };
    match (f.number(ctx, "min"), f.number(ctx, "max")) {
        (Some(lo), Some(hi)) => {
            scale.min = lo;
            scale.max = hi;
        }
        _ => ctx.err(node.pos, "`scale` needs numeric `min` and `max`"),
    }
    if let Some(a) = f.take("anchors") {
        match &a.value {
            NodeValue::Map(entries) => {
                for (k, v) in entries {
                    match k.text.trim().parse::<f64>() {
                        Ok(value) => scale.anchors.push(Anchor {
                            value,
                            text: string_of(ctx, v, "an anchor").unwrap_or_default(),
                        }),
                        Err(_) => ctx.err(
                            k.pos,
                            format!("anchor key '{}' must be a number on the scale", k.text),
                        ),
                    }
                }
                scale.anchors.sort_by(|a, b| a.value.total_cmp(&b.value));
            }
            _ => ctx.wrong_type(a, "`anchors`", "a map of numbers to descriptions"),
        }
    }
    f.finish(ctx, &["min", "max", "anchors"]);
    scale
}

fn read_method(ctx: &mut Ctx<'_>, node: &Node) -> Option<Method> {
    match &node.value {
        NodeValue::Str(s) if s == "judge" => Some(Method::Judge(JudgeMethod::default())),
        NodeValue::Str(s) if s == "check" => {
            ctx.err(
                node.pos,
                "method `check` needs a name: `method: { check: contains, args: { … } }`",
            );
            None
        }
        NodeValue::Str(s) if s == "schema" => {
            ctx.err(
                node.pos,
                "method `schema` needs the schema: `method: { schema: { … } }` or a file path",
            );
            None
        }
        NodeValue::Str(s) => {
            ctx.err(
                node.pos,
                format!("unknown method '{s}'; use judge, check or schema"),
            );
            None
        }
        NodeValue::Map(_) => {
            let mut f = Fields::of(ctx, node, "`method`")?;
            let judge = f.take("judge");
            let check = f.take("check");
            let schema = f.take("schema");
            let args = f.take("args");
            let present = usize::from(judge.is_some() || f.has("judge"))
                + usize::from(check.is_some())
                + usize::from(schema.is_some());
            f.finish(ctx, &["judge", "check", "args", "schema"]);
            if present != 1 {
                ctx.err(
                    node.pos,
                    "`method` needs exactly one of `judge`, `check` or `schema`",
                );
                return None;
            }
            if args.is_some() && check.is_none() {
                ctx.err(node.pos, "`args` belongs to a `check` method");
            }
            if let Some(name) = check {
                let name = string_of(ctx, name, "the check name")?;
                let args = match args.map(Node::to_json) {
                    None => Map::new(),
                    Some(serde_json::Value::Object(m)) => m,
                    Some(_) => {
                        if let Some(a) = args {
                            ctx.wrong_type(a, "`args`", "a mapping");
                        }
                        Map::new()
                    }
                };
                return Some(Method::Check(CheckSpec { name, args }));
            }
            if let Some(s) = schema {
                return match &s.value {
                    NodeValue::Str(path) => Some(Method::Schema(SchemaSource::File(path.clone()))),
                    NodeValue::Map(_) | NodeValue::Bool(_) => {
                        Some(Method::Schema(SchemaSource::Inline(s.to_json())))
                    }
                    _ => {
                        ctx.wrong_type(s, "`schema`", "a JSON Schema mapping or a file path");
                        None
                    }
                };
            }
            let mut jm = JudgeMethod::default();
            if let Some(j) = judge {
                let mut jf = Fields::of(ctx, j, "`judge`")?;
                jm.template = jf.string(ctx, "template");
                jm.model = jf.string(ctx, "model");
                jf.finish(ctx, &["template", "model"]);
            }
            Some(Method::Judge(jm))
        }
        _ => {
            ctx.wrong_type(
                node,
                "`method`",
                "judge, or a mapping with `check` or `schema`",
            );
            None
        }
    }
}

fn read_scoring(ctx: &mut Ctx<'_>, node: &Node) -> Scoring {
    let mut s = Scoring::default();
    let Some(mut f) = Fields::of(ctx, node, "`scoring`") else {
        return s;
    };
    if let Some(v) = choice(ctx, &mut f, "aggregate", AggregateMode::NAMES) {
        s.aggregate = match v {
            "mean" => AggregateMode::Mean,
            "min" => AggregateMode::Min,
            _ => AggregateMode::Points,
        };
    }
    if let Some(v) = choice(ctx, &mut f, "abstain", AbstainPolicy::NAMES) {
        s.abstain = match v {
            "zero" => AbstainPolicy::Zero,
            "partial" => AbstainPolicy::Partial,
            "worst" => AbstainPolicy::Worst,
            _ => AbstainPolicy::Skip,
        };
    }
    if let Some(v) = choice(ctx, &mut f, "errors", ErrorPolicy::NAMES) {
        s.errors = match v {
            "zero" => ErrorPolicy::Zero,
            "worst" => ErrorPolicy::Worst,
            _ => ErrorPolicy::Abstain,
        };
    }
    if let Some(p) = f.number(ctx, "partial_credit") {
        s.partial_credit = p;
    }
    if let Some(n) = f.boolean(ctx, "normalize") {
        s.normalize = n;
    }
    f.finish(
        ctx,
        &[
            "aggregate",
            "abstain",
            "partial_credit",
            "errors",
            "normalize",
        ],
    );
    s
}

fn choice(
    ctx: &mut Ctx<'_>,
    f: &mut Fields<'_>,
    key: &str,
    names: &'static [&'static str],
) -> Option<&'static str> {
    let node = f.take(key)?;
    let text = string_of(ctx, node, &format!("`{key}`"))?;
    let found = names.iter().find(|n| **n == text).copied();
    if found.is_none() {
        ctx.err(
            node.pos,
            format!("unknown {key} '{text}'; use {}", names.join(", ")),
        );
    }
    found
}

fn read_judge(ctx: &mut Ctx<'_>, node: &Node) -> Option<JudgeSettings> {
    let mut f = Fields::of(ctx, node, "`judge`")?;
    let mut j = JudgeSettings {
        model: f.string(ctx, "model"),
        strategy: f.string(ctx, "strategy"),
        temperature: f.number(ctx, "temperature"),
        system_prompt: f.string(ctx, "system_prompt"),
        ..JudgeSettings::default()
    };
    if let Some(n) = f.take("max_tokens") {
        j.max_tokens = whole(ctx, n, "`max_tokens`").and_then(|v| u32::try_from(v).ok());
    }
    if let Some(n) = f.take("seed") {
        j.seed = whole(ctx, n, "`seed`");
    }
    f.finish(
        ctx,
        &[
            "model",
            "strategy",
            "temperature",
            "max_tokens",
            "seed",
            "system_prompt",
        ],
    );
    Some(j)
}

fn whole(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<u64> {
    match node.value {
        NodeValue::Int(i) if i >= 0 => u64::try_from(i).ok(),
        _ => {
            ctx.wrong_type(node, what, "a whole number ≥ 0");
            None
        }
    }
}

fn string_list(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Vec<String> {
    if let Some(items) = node.as_seq() {
        items
            .iter()
            .filter_map(|n| string_of(ctx, n, what))
            .collect()
    } else {
        ctx.wrong_type(node, what, "a list of text");
        Vec::new()
    }
}
