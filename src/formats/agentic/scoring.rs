//! `agentic_v2_eval` scoring rubrics: `criteria: [{name, weight, description, min_value,
//! max_value, levels: {int: text}}]`, `thresholds: {pass, excellent, warning}`,
//! `hard_gates: [{criterion, minimum}]`, `metadata`.
//!
//! Each criterion becomes a scale criterion (its value clamped to `[min_value, max_value]`
//! and normalised; the levels are the scale's anchors). Aggregation is Σ w·v / Σ w over
//! all criteria, a missing criterion counting 0 (`abstain: zero`). Hard gates become
//! `required` with the gate's minimum normalised onto [0, 1].

use serde_json::{Value, json};

use crate::formats::diag::Diagnostics;
use crate::formats::fields::{Ctx, Fields};
use crate::formats::native::criterion::read_anchor_map;
use crate::formats::node::{Node, NodeValue};
use crate::formats::source::{SourceMap, read_validated};
use crate::model::{AbstainPolicy, Criterion, Kind, Rubric, Scale, Scoring, slugify};

const CRITERION_FIELDS: &[&str] = &[
    "name",
    "weight",
    "description",
    "min_value",
    "max_value",
    "levels",
];

/// True when a parsed document has the shape only agentic scoring rubrics use.
pub fn looks_like(root: &Node) -> bool {
    if root.get("thresholds").is_some() || root.get("hard_gates").is_some() {
        return root.get("criteria").is_some();
    }
    root.get("criteria")
        .and_then(Node::as_seq)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("min_value").is_some()
                    || c.get("max_value").is_some()
                    || c.get("levels")
                        .is_some_and(|l| matches!(l.value, NodeValue::Map(_)))
            })
        })
}

/// Reads an agentic scoring rubric; `stem` (the file name) becomes its id.
pub fn read_scoring_rubric(
    file: &str,
    root: &Node,
    stem: &str,
) -> Result<(Rubric, SourceMap), Diagnostics> {
    read_validated(file, root, |ctx, paths| read(ctx, root, stem, paths))
}

fn read(ctx: &mut Ctx<'_>, root: &Node, stem: &str, paths: &mut Vec<String>) -> Option<Rubric> {
    let mut f = Fields::of(ctx, root, "an agentic scoring rubric")?;
    let Some(list) = f.take("criteria") else {
        ctx.err(root.pos, "an agentic scoring rubric needs `criteria`");
        return None;
    };
    let Some(items) = list.as_seq() else {
        ctx.wrong_type(list, "`criteria`", "a list");
        return None;
    };
    let mut criteria = Vec::new();
    for (i, node) in items.iter().enumerate() {
        if let Some(c) = read_criterion(ctx, node, i + 1) {
            paths.push(format!("criteria[{i}]"));
            criteria.push(c);
        }
    }
    let sum: f64 = criteria.iter().map(|c| c.weight).sum();
    if !criteria.is_empty() && (sum - 1.0).abs() > 0.01 + 1e-12 {
        ctx.err(
            list.pos,
            format!(
                "agentic rubric weights must sum to 1 (±0.01); these sum to {}",
                (sum * 10_000.0).round() / 10_000.0
            ),
        );
    }
    let mut rubric = Rubric::new(slugify(stem), criteria);
    stem.clone_into(&mut rubric.name);
    rubric.scoring = Scoring {
        abstain: AbstainPolicy::Zero,
        ..Scoring::default()
    };
    if let Some(t) = f.take("thresholds") {
        read_thresholds(ctx, t, &mut rubric);
    }
    if let Some(g) = f.take("hard_gates") {
        read_gates(ctx, g, &mut rubric);
    }
    if let Some(m) = f.take("metadata") {
        match m.to_json() {
            Value::Object(meta) => {
                if let Some(Value::String(d)) = meta.get("description") {
                    rubric.description.clone_from(d);
                }
                if let Some(Value::String(v)) = meta.get("version") {
                    rubric.version.clone_from(v);
                }
                // Kept beside what thresholds already put there.
                for (k, v) in meta {
                    rubric.metadata.entry(k).or_insert(v);
                }
            }
            _ => ctx.wrong_type(m, "`metadata`", "a mapping"),
        }
    }
    rubric
        .metadata
        .insert("format".into(), json!("agentic_v2_eval"));
    f.finish(ctx, &["criteria", "thresholds", "hard_gates", "metadata"]);
    Some(rubric)
}

fn read_criterion(ctx: &mut Ctx<'_>, node: &Node, index: usize) -> Option<Criterion> {
    let mut f = Fields::of(ctx, node, "a criterion")?;
    let name = f.string(ctx, "name");
    let description = f.string(ctx, "description").unwrap_or_default();
    let id = name
        .as_deref()
        .map(slugify)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("c{index}"));
    // Messages name the criterion as the file writes it.
    let shown = name.clone().unwrap_or_else(|| id.clone());
    if description.trim().is_empty() {
        ctx.err(
            node.pos,
            format!(
                "criterion '{shown}' needs a non-empty `description` (agentic rubrics require one)"
            ),
        );
    }
    let Some(weight) = f.number(ctx, "weight") else {
        ctx.err(
            node.pos,
            format!("criterion '{shown}' needs a `weight` between 0 and 1"),
        );
        f.finish(ctx, CRITERION_FIELDS);
        return None;
    };
    let anchors = f
        .take("levels")
        .map(|l| read_anchor_map(ctx, l, "`levels`"))
        .unwrap_or_default();
    let min_at = node.get("min_value").map_or(node.pos, |n| n.pos);
    let min = f.number(ctx, "min_value").unwrap_or(0.0);
    let max = f
        .number(ctx, "max_value")
        .unwrap_or_else(|| anchors.last().map_or(1.0, |a| a.value));
    f.finish(ctx, CRITERION_FIELDS);
    if min >= max {
        ctx.err(
            min_at,
            format!("criterion '{shown}': min_value {min} must be below max_value {max}"),
        );
    }
    let mut c = Criterion::binary(id, description, weight);
    c.name = name.unwrap_or_else(|| c.id.clone());
    c.kind = Kind::Scale(Scale { min, max, anchors });
    Some(c)
}

fn read_thresholds(ctx: &mut Ctx<'_>, node: &Node, rubric: &mut Rubric) {
    let Some(mut f) = Fields::of(ctx, node, "`thresholds`") else {
        return;
    };
    if let Some(p) = f.number(ctx, "pass") {
        rubric.pass_threshold = p;
    }
    let mut kept = serde_json::Map::new();
    for key in ["excellent", "warning"] {
        if let Some(x) = f.number(ctx, key) {
            kept.insert(key.into(), json!(x));
        }
    }
    if !kept.is_empty() {
        rubric
            .metadata
            .insert("thresholds".into(), Value::Object(kept));
    }
    f.finish(ctx, &["pass", "excellent", "warning"]);
}

fn read_gates(ctx: &mut Ctx<'_>, node: &Node, rubric: &mut Rubric) {
    let Some(gates) = node.as_seq() else {
        ctx.wrong_type(node, "`hard_gates`", "a list of {criterion, minimum}");
        return;
    };
    for gate in gates {
        let Some(mut f) = Fields::of(ctx, gate, "a hard gate") else {
            continue;
        };
        let name = f.string(ctx, "criterion");
        let minimum = f.number(ctx, "minimum");
        f.finish(ctx, &["criterion", "minimum"]);
        let (Some(name), Some(minimum)) = (name, minimum) else {
            ctx.err(
                gate.pos,
                "a hard gate needs `criterion` and a numeric `minimum`",
            );
            continue;
        };
        let wanted = slugify(&name);
        let Some(c) = rubric
            .criteria
            .iter_mut()
            .find(|c| c.id == wanted || c.name.eq_ignore_ascii_case(&name))
        else {
            ctx.err(
                gate.pos,
                format!("hard gate names criterion '{name}', which the rubric does not have"),
            );
            continue;
        };
        c.required = true;
        c.min_score = Some(match &c.kind {
            Kind::Scale(s) => s.normalize(minimum),
            _ => minimum,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml;

    const CODE: &str = "criteria:\n  - name: Correctness\n    weight: 0.6\n    description: Works\n    levels:\n      5: all\n      0: none\n  - name: Style\n    weight: 0.4\n    description: Readable\n    levels: {0: bad, 5: good}\nthresholds:\n  pass: 0.75\n  excellent: 0.9\nhard_gates:\n  - {criterion: Correctness, minimum: 3}\nmetadata:\n  version: \"2.0.0\"\n";

    #[test]
    fn scoring_rubric_becomes_scale_criteria_with_gates() {
        let root = yaml::parse("code.yaml", CODE).unwrap();
        assert!(looks_like(&root));
        let (r, _) = read_scoring_rubric("code.yaml", &root, "code").unwrap();
        assert_eq!(r.id, "code");
        assert_eq!(r.version, "2.0.0");
        assert_eq!(r.pass_threshold, 0.75);
        assert_eq!(r.scoring.abstain, AbstainPolicy::Zero);
        let c = &r.criteria[0];
        assert!(c.required);
        assert_eq!(c.min_score, Some(0.6));
        assert!(matches!(&c.kind, Kind::Scale(s) if s.max == 5.0 && s.anchors.len() == 2));
        assert_eq!(r.metadata["thresholds"]["excellent"], 0.9);
    }

    #[test]
    fn weights_must_sum_to_one_and_descriptions_are_required() {
        let text = "criteria:\n  - {name: A, weight: 0.5, description: ''}\n  - {name: B, weight: 0.2, description: x}\nthresholds: {pass: 0.7}\n";
        let root = yaml::parse("bad.yaml", text).unwrap();
        let err = read_scoring_rubric("bad.yaml", &root, "bad")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.yaml:2:5: criterion 'A' needs a non-empty `description`"),
            "{err}"
        );
        assert!(
            err.contains(
                "bad.yaml:2:3: agentic rubric weights must sum to 1 (±0.01); these sum to 0.7"
            ),
            "{err}"
        );
    }
}
