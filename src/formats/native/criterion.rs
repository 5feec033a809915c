//! The parts of a criterion: its kind (levels, options, scale) and its method.

use serde_json::Map;

use crate::core::diag::Pos;
use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::model::{
    Anchor, CheckSpec, JudgeMethod, Kind, Level, Method, OptionChoice, OptionScale, Scale,
    SchemaSource, slugify,
};

use super::knobs::string_list;

pub(super) fn read_kind(
    ctx: &mut Ctx<'_>,
    f: &mut Fields<'_>,
    declared: Option<&(String, Pos)>,
) -> Kind {
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
        scale.anchors = read_anchor_map(ctx, a, "`anchors`");
    }
    f.finish(ctx, &["min", "max", "anchors"]);
    scale
}

/// `{number: text, …}` → anchors sorted by value (scale anchors; agentic level maps).
pub(crate) fn read_anchor_map(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Vec<Anchor> {
    let NodeValue::Map(entries) = &node.value else {
        ctx.wrong_type(node, what, "a map of numbers to descriptions");
        return Vec::new();
    };
    let mut anchors = Vec::new();
    for (k, v) in entries {
        match k.text.trim().parse::<f64>() {
            Ok(value) => anchors.push(Anchor {
                value,
                text: string_of(ctx, v, "a description").unwrap_or_default(),
            }),
            Err(_) => ctx.err(
                k.pos,
                format!("key '{}' of {what} must be a number", k.text),
            ),
        }
    }
    anchors.sort_by(|a, b| a.value.total_cmp(&b.value));
    anchors
}

pub(super) fn read_method(ctx: &mut Ctx<'_>, node: &Node) -> Option<Method> {
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
                // A pairwise run's snapshot: the cell's written criterion and order.
                if let Some(p) = jf.take("pair") {
                    match serde_json::from_value(p.to_json()) {
                        Ok(order) => jm.pair = Some(order),
                        Err(_) => ctx.wrong_type(p, "`pair`", "{criterion, first, second}"),
                    }
                }
                jf.finish(ctx, &["template", "model", "pair"]);
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
