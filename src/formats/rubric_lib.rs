//! rubric (The LLM Data Company): a list of `{weight, requirement}` (negative weights are
//! penalties), `{sections: [{criteria: […]}]}`, or `{rubric: …}`, in JSON or YAML. Binary
//! criteria only, no `CANNOT_ASSESS`; scoring is `points`, normalised as the grader is set.

use serde_json::{Value, json};

use super::export::{Holds, criteria_layout, losses};
use super::fields::{Ctx, Fields};
use super::native::{Dialect, read_rubric};
use super::node::{Node, NodeValue};
use super::source::SourceMap;
use crate::core::diag::{Diagnostic, Diagnostics};
use crate::model::{Rubric, Scoring};

/// Fields rubric's pydantic models ignore that name or describe a rubric or a criterion
/// (`scripts/rubrics.jsonl` gives ids): read, never refused.
const DESCRIPTIVE: &[&str] = &["id", "name", "description"];

const SHAPES: &str =
    "a list of {weight, requirement}, `{sections: [{criteria: […]}]}` or `{rubric: …}`";

/// Reads a `rubric_lib` file; its shape is checked strictly first, so a file that is not
/// one says what `rubric_lib` expects instead of failing on a native field.
pub fn read(file: &str, root: &Node, stem: &str) -> Result<(Rubric, SourceMap), Diagnostics> {
    let mut ctx = Ctx::new(file);
    check_root(&mut ctx, root, true);
    if !ctx.diags.is_empty() {
        return Err(Diagnostics(ctx.diags).sorted());
    }
    let (mut rubric, map) = read_rubric(file, root, stem, Dialect::RUBRIC_LIB)?;
    // rubric's graders total with Python's `sum()`.
    rubric.scoring.summation = super::python::summation()
        .map_err(|m| Diagnostics::one(Diagnostic::whole(file, m.to_string())))?;
    rubric.metadata.insert("format".into(), json!("rubric_lib"));
    Ok((rubric, map))
}

fn check_root(ctx: &mut Ctx<'_>, node: &Node, top: bool) {
    match &node.value {
        NodeValue::Seq(items) => {
            if items.is_empty() {
                check_criteria(ctx, node, items);
            }
            check_entries(ctx, items);
        }
        NodeValue::Map(entries) => {
            let wrapper = if top && entries.iter().any(|(k, _)| k.text == "rubric") {
                "rubric"
            } else {
                "sections"
            };
            if entries.is_empty() {
                ctx.err(
                    node.pos,
                    format!("an empty mapping is not a rubric_lib rubric; give {SHAPES}"),
                );
                return;
            }
            // rubric ignores what else sits there; names and descriptions are kept, anything
            // else (a typo, a field of another format) is refused so nothing is lost quietly.
            for (k, _) in entries
                .iter()
                .filter(|(k, _)| k.text != wrapper && !DESCRIPTIVE.contains(&k.text.as_str()))
            {
                ctx.err(
                    k.pos,
                    format!("a rubric_lib file is {SHAPES} alone; remove `{}`", k.text),
                );
            }
            match node.get(wrapper) {
                None => ctx.err(node.pos, format!("a rubric_lib rubric is {SHAPES}")),
                Some(inner) if wrapper == "rubric" => check_root(ctx, inner, false),
                Some(sections) => check_sections(ctx, sections),
            }
        }
        _ => ctx.wrong_type(node, "a rubric_lib rubric", SHAPES),
    }
}

fn check_sections(ctx: &mut Ctx<'_>, node: &Node) {
    let Some(sections) = node.as_seq() else {
        ctx.wrong_type(node, "`sections`", "a list of {criteria: […]}");
        return;
    };
    if sections.is_empty() {
        ctx.err(
            node.pos,
            "`sections` is empty; a rubric_lib rubric needs at least one criterion",
        );
    }
    check_entries(ctx, sections);
}

/// rubric's loader: an item holding `criteria` is a section (`id`, `title`, `name` as
/// `scripts/rubrics.jsonl` writes them), any other a criterion — in any list, mixed.
fn check_entries(ctx: &mut Ctx<'_>, items: &[Node]) {
    for s in items {
        if s.get("criteria").is_none() {
            check_criterion(ctx, s);
            continue;
        }
        let Some(mut f) = Fields::of(ctx, s, "a rubric_lib section") else {
            continue;
        };
        for k in ["name", "title", "id", "description"] {
            f.take(k);
        }
        if let Some(list) = f.take("criteria") {
            match list.as_seq() {
                Some(items) => check_criteria(ctx, list, items),
                None => ctx.wrong_type(list, "`criteria`", "a list of {weight, requirement}"),
            }
        }
        f.finish(ctx, &["name", "title", "id", "description", "criteria"]);
    }
}

fn check_criteria(ctx: &mut Ctx<'_>, list: &Node, items: &[Node]) {
    if items.is_empty() {
        ctx.err(list.pos, "the list of criteria is empty; a rubric_lib rubric needs at least one {weight, requirement}");
    }
    for item in items {
        check_criterion(ctx, item);
    }
}

fn check_criterion(ctx: &mut Ctx<'_>, item: &Node) {
    let Some(mut f) = Fields::of(ctx, item, "a rubric_lib criterion") else {
        return;
    };
    if f.number(ctx, "weight").is_none() && !f.has("weight") {
        ctx.err(
            item.pos,
            "a rubric_lib criterion needs a `weight` (negative for a penalty)",
        );
    }
    match f.take("requirement") {
        None => ctx.err(item.pos, "a rubric_lib criterion needs a `requirement`"),
        // rubric's model takes text only; a number here is a slip, not a requirement.
        Some(r) if !matches!(r.value, NodeValue::Str(_)) => {
            ctx.wrong_type(
                r,
                "a rubric_lib `requirement`",
                "text (what the answer must do)",
            );
        }
        Some(_) => {}
    }
    for k in DESCRIPTIVE {
        f.take(k);
    }
    f.finish(ctx, &["weight", "requirement", "id", "name", "description"]);
}

/// The rubric as `rubric_lib` data, and what `rubric_lib` cannot hold.
pub fn write(rubric: &Rubric) -> (Value, Vec<String>) {
    let holds = Holds {
        format: "rubric_lib",
        ids: true,
        threshold: false,
        guidelines: false,
        sections: true,
        gates: false,
        levels: false,
        options: false,
        scale: false,
        checks: false,
        schema: false,
        templates: false,
        scoring: Scoring::default(),
    };
    let mut lost = losses(rubric, &holds);
    for (i, c) in rubric.criteria.iter().enumerate() {
        if c.id != format!("c{}", i + 1) || c.name != c.id {
            lost.push(format!(
                "criterion '{}': its id and name (rubric_lib criteria are known by position)",
                c.id
            ));
        }
    }
    let criterion =
        |c: &crate::model::Criterion| json!({"weight": c.weight, "requirement": c.requirement});
    let written = rubric.criteria.iter().map(criterion).collect();
    let value = match criteria_layout(rubric, written, None) {
        ("criteria", flat) => flat,
        (key, sections) => json!({ key: sections }),
    };
    (value, lost)
}
