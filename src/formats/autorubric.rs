//! autorubric rubrics: a list of criteria or `{criteria|sections|rubric, guidelines}`; a
//! criterion is `{name?, weight (10), requirement, options?, scale_type?}` and an option
//! `{label, value, na}`. Scoring is `points` with abstentions (`CANNOT_ASSESS`, NA) skipped.
//! Datasets in its JSON shape are read by `dataset::json_file`.

use serde_json::{Map, Value, json};

use super::export::{Holds, criteria_layout, losses};
use super::fields::{Ctx, Fields};
use super::native::{Dialect, read_rubric};
use super::node::{Node, NodeValue};
use super::source::SourceMap;
use crate::core::diag::Diagnostics;
use crate::model::{Criterion, Kind, OptionScale, Rubric, Scoring};

const ROOT_FIELDS: &[&str] = &[
    "name",
    "criteria",
    "sections",
    "rubric",
    "guidelines",
    "length_penalty",
];
const CRITERION_FIELDS: &[&str] = &[
    "name",
    "weight",
    "requirement",
    "options",
    "scale_type",
    "aggregation",
];

/// Reads an autorubric rubric, checking its fields against autorubric's own vocabulary.
pub fn read(file: &str, root: &Node, stem: &str) -> Result<(Rubric, SourceMap), Diagnostics> {
    let mut ctx = Ctx::new(file);
    check(&mut ctx, root);
    if !ctx.diags.is_empty() {
        return Err(Diagnostics(ctx.diags).sorted());
    }
    let (mut rubric, map) = read_rubric(file, root, stem, Dialect::AUTORUBRIC)?;
    rubric.metadata.insert("format".into(), json!("autorubric"));
    Ok((rubric, map))
}

fn check(ctx: &mut Ctx<'_>, node: &Node) {
    match &node.value {
        NodeValue::Seq(items) => check_criteria(ctx, items),
        NodeValue::Map(_) => {
            let Some(mut f) = Fields::of(ctx, node, "an autorubric rubric") else {
                return;
            };
            if let Some(inner) = f.take("rubric") {
                check(ctx, inner);
            }
            for key in ["criteria", "sections"] {
                if let Some(list) = f.take(key).and_then(Node::as_seq) {
                    check_criteria(ctx, list);
                }
            }
            f.take("name");
            f.take("guidelines");
            f.take("length_penalty");
            f.finish(ctx, ROOT_FIELDS);
        }
        _ => ctx.wrong_type(
            node,
            "an autorubric rubric",
            "a list of criteria or a mapping with `criteria`",
        ),
    }
}

/// autorubric's loader: in any list, an item holding `criteria` is a section (its
/// criteria flattened), any other a criterion.
fn check_criteria(ctx: &mut Ctx<'_>, items: &[Node]) {
    for item in items {
        if item.get("criteria").is_some() {
            let Some(mut sf) = Fields::of(ctx, item, "an autorubric section") else {
                continue;
            };
            for k in ["name", "title", "id", "description"] {
                sf.take(k);
            }
            if let Some(list) = sf.take("criteria").and_then(Node::as_seq) {
                check_criteria_only(ctx, list);
            }
            sf.finish(ctx, &["name", "title", "id", "description", "criteria"]);
            continue;
        }
        check_criteria_only(ctx, std::slice::from_ref(item));
    }
}

fn check_criteria_only(ctx: &mut Ctx<'_>, items: &[Node]) {
    for item in items {
        let Some(mut f) = Fields::of(ctx, item, "an autorubric criterion") else {
            continue;
        };
        for k in CRITERION_FIELDS {
            f.take(k);
        }
        f.finish(ctx, CRITERION_FIELDS);
    }
}

/// The autorubric criteria of a rubric, and what autorubric cannot hold.
pub fn write(rubric: &Rubric) -> (Value, Vec<String>) {
    let holds = Holds {
        format: "autorubric",
        ids: true,
        threshold: false,
        guidelines: true,
        sections: true,
        gates: false,
        levels: true,
        options: true,
        scale: false,
        checks: false,
        schema: false,
        templates: false,
        // autorubric's grader takes a length penalty.
        scoring: Scoring {
            length_penalty: rubric.scoring.length_penalty,
            ..Scoring::default()
        },
    };
    let mut lost = losses(rubric, &holds);
    for c in &rubric.criteria {
        if crate::model::slugify(&c.name) != c.id {
            lost.push(format!(
                "criterion '{}': its id (autorubric names criteria; '{}' reads back as '{}')",
                c.id,
                c.name,
                crate::model::slugify(&c.name)
            ));
        }
    }
    let criteria: Vec<Value> = rubric
        .criteria
        .iter()
        .map(|c| criterion(c, &mut lost))
        .collect();
    let mut m = Map::new();
    let (key, value) = criteria_layout(rubric, criteria, Some("General"));
    m.insert(key.into(), value);
    if let Some(g) = &rubric.guidelines {
        m.insert("guidelines".into(), json!(g));
    }
    if let Some(p) = &rubric.scoring.length_penalty {
        let penalty_type = match p.count {
            crate::model::PenaltyCount::All => "ALL",
            crate::model::PenaltyCount::Output => "OUTPUT_ONLY",
            crate::model::PenaltyCount::Thinking => "THINKING_ONLY",
        };
        m.insert(
            "length_penalty".into(),
            json!({"free_budget": p.free_budget, "max_cap": p.max_cap,
                   "penalty_at_cap": p.penalty_at_cap, "exponent": p.exponent,
                   "penalty_type": penalty_type}),
        );
    }
    (Value::Object(m), lost)
}

/// One criterion; levels become ordinal options (label = level label, value = score).
pub(crate) fn criterion(c: &Criterion, lost: &mut Vec<String>) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(c.name));
    m.insert("weight".into(), json!(c.weight));
    m.insert("requirement".into(), json!(c.requirement));
    match &c.kind {
        Kind::Binary | Kind::Scale(_) => {}
        Kind::Levels(levels) => {
            lost.push(format!(
                "criterion '{}': level ids, descriptions and indicators (written as options)",
                c.id
            ));
            let opts: Vec<Value> = levels
                .iter()
                .map(|l| json!({"label": l.label, "value": l.score}))
                .collect();
            m.insert("options".into(), Value::Array(opts));
        }
        Kind::Options { options, scale } => {
            let opts: Vec<Value> = options
                .iter()
                .map(|o| {
                    if o.na {
                        json!({"label": o.label, "value": o.value, "na": true})
                    } else {
                        json!({"label": o.label, "value": o.value})
                    }
                })
                .collect();
            m.insert("options".into(), Value::Array(opts));
            if *scale == OptionScale::Nominal {
                m.insert("scale_type".into(), json!("nominal"));
            }
        }
    }
    Value::Object(m)
}
