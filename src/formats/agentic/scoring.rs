//! `agentic_v2_eval` scoring rubrics: `criteria: [{name, weight, description, min_value,
//! max_value, levels: {int: text}}]`, `thresholds: {pass, excellent, warning}`,
//! `hard_gates: [{criterion, minimum}]`, `metadata`.
//!
//! Each criterion becomes a scale criterion (its value clamped to `[min_value, max_value]`
//! and normalised; the levels are the scale's anchors), as its `Scorer` reads it: a
//! criterion without `max_value` is on 0..1 — the Scorer's default, and what its
//! evaluators return — so levels numbered 0–5 are placed on 0..1 and a result above 1
//! counts as full marks (its documentation reads levels as the scale; the code wins, and
//! a note says so). Aggregation is Σ w·v / Σ w over all criteria, a missing criterion
//! counting 0 (`abstain: zero`). Hard gates become `required` with the gate's minimum
//! normalised onto [0, 1].

use serde_json::{Value, json};

use crate::core::diag::{Diagnostic, Diagnostics};
use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::native::criterion::read_anchor_map;
use crate::formats::node::Node;
use crate::formats::source::{SourceMap, read_validated};
use crate::model::{
    AbstainPolicy, AggregateMode, Criterion, Kind, Rubric, Scale, Scoring, is_semver, slugify,
};

const CRITERION_FIELDS: &[&str] = &[
    "name",
    "weight",
    "description",
    "min_value",
    "max_value",
    "levels",
    "hard_gate",
    "minimum",
];

/// Reads an agentic scoring rubric; `stem` (the file name) becomes its id.
pub fn read_scoring_rubric(
    file: &str,
    root: &Node,
    stem: &str,
) -> Result<(Rubric, SourceMap, Vec<Diagnostic>), Diagnostics> {
    let mut notes = Vec::new();
    let (rubric, map) = read_validated(file, root, |ctx, paths| {
        read(ctx, root, stem, paths, &mut notes)
    })?;
    Ok((rubric, map, notes))
}

fn read(
    ctx: &mut Ctx<'_>,
    root: &Node,
    stem: &str,
    paths: &mut Vec<String>,
    notes: &mut Vec<Diagnostic>,
) -> Option<Rubric> {
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
    // Per criterion, the level numbers placed on its scale (a gate's minimum is a level).
    let mut level_spans = Vec::new();
    for (i, node) in items.iter().enumerate() {
        if let Some((c, span)) = read_criterion(ctx, node, i + 1) {
            paths.push(format!("criteria[{i}]"));
            criteria.push(c);
            level_spans.push(span);
        }
    }
    // One note for every criterion whose levels were placed on the Scorer's range.
    let placed: Vec<(String, LevelSpan)> = criteria
        .iter()
        .zip(&level_spans)
        .filter_map(|(c, s)| s.map(|s| (c.name.clone(), s)))
        .collect();
    if let Some((_, (lo, hi, at))) = placed.first() {
        let names: Vec<String> = placed.iter().map(|(n, _)| format!("'{n}'")).collect();
        notes.push(Diagnostic::at(
            ctx.file,
            *at,
            format!(
                "{} with levels {lo}–{hi} and no max_value: agentic_v2_eval's Scorer reads {} on 0..1 (its default max_value; its evaluators return 0..1), so the levels are placed on 0..1 and a result above 1 counts as full marks — its documentation reads the levels as the scale; add `max_value: {hi}` for that",
                if names.len() == 1 { format!("criterion {}", names[0]) } else { format!("criteria {}", names.join(", ")) },
                if names.len() == 1 { "it" } else { "them" },
            ),
        ));
    }
    // The Scorer divides by Σ w (its own rubrics sum to 1, which `lint` asks for), and
    // scores every result 0 when that sum is not positive: such a rubric measures nothing.
    let sum: f64 = criteria.iter().map(|c| c.weight).sum();
    if !criteria.is_empty() && sum <= 0.0 {
        ctx.err(
            list.pos,
            format!(
                "the weights sum to {}: agentic_v2_eval's Scorer scores every result 0 unless they sum to more than 0; give the criteria positive weights",
                (sum * 10_000.0).round() / 10_000.0
            ),
        );
    }
    let mut rubric = Rubric::new(slugify(stem), criteria);
    // The Scorer's `name` (its default "Unnamed Rubric"; rubricate names it by its file).
    f.string(ctx, "name")
        .unwrap_or_else(|| stem.to_owned())
        .clone_into(&mut rubric.name);
    if let Some(v) = f.take("version") {
        read_version(ctx, v, &mut rubric, notes);
    }
    // The Scorer's `weighted_sum / total_weight`: Σ w·v in a loop, Σ w by Python's
    // `sum()`, nothing clamped (penalties included).
    rubric.scoring = Scoring {
        aggregate: AggregateMode::WeightedMean,
        abstain: AbstainPolicy::Zero,
        ..Scoring::default()
    };
    match crate::formats::python::summation() {
        Ok(s) => rubric.scoring.summation = s,
        Err(m) => ctx.err(root.pos, m.to_string()),
    }
    if let Some(t) = f.take("thresholds") {
        read_thresholds(ctx, t, &mut rubric);
    }
    if let Some(g) = f.take("hard_gates") {
        read_gates(ctx, g, &mut rubric, &level_spans);
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
    f.finish(ctx, TOP_FIELDS);
    Some(rubric)
}

const TOP_FIELDS: &[&str] = &[
    "name",
    "version",
    "criteria",
    "thresholds",
    "hard_gates",
    "metadata",
];

/// The Scorer's `version` is free text (its default "1.0"); rubricate's is semantic, so
/// `1` and `1.0` become `1.0.0`, and any other text is kept in `metadata.version`.
fn read_version(ctx: &mut Ctx<'_>, node: &Node, rubric: &mut Rubric, notes: &mut Vec<Diagnostic>) {
    let Some(text) = string_of(ctx, node, "`version`") else {
        return;
    };
    let parts: Vec<&str> = text.split('.').collect();
    let numeric = parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    if is_semver(&text) {
        rubric.version = text;
    } else if numeric && parts.len() < 3 {
        rubric.version = format!("{text}{}", ".0".repeat(3 - parts.len()));
    } else {
        notes.push(Diagnostic::at(
            ctx.file,
            node.pos,
            format!(
                "version '{text}' is not a semantic version like 1.0.0: kept as `metadata.version`, the rubric's version is {}",
                rubric.version
            ),
        ));
        rubric.metadata.insert("version".into(), json!(text));
    }
}

/// The level numbers of a criterion placed on the Scorer's 0..1, and where they are written.
type LevelSpan = (f64, f64, crate::core::diag::Pos);

fn read_criterion(
    ctx: &mut Ctx<'_>,
    node: &Node,
    index: usize,
) -> Option<(Criterion, Option<LevelSpan>)> {
    let mut f = Fields::of(ctx, node, "a criterion")?;
    // The Scorer keys results by `name` and skips a criterion without one; rubricate
    // refuses it rather than drop it unseen.
    let Some(name) = f.string(ctx, "name") else {
        ctx.err(
            node.pos,
            format!("criterion {index} has no `name`: agentic_v2_eval's Scorer keys results by name (and skips a criterion without one); give it a name"),
        );
        f.finish(ctx, CRITERION_FIELDS);
        return None;
    };
    let id = Some(slugify(&name))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("c{index}"));
    // The Scorer's defaults: description "" (the judge is then shown the name; `lint`
    // notes it), weight 1.0.
    let description = f
        .string(ctx, "description")
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| name.clone());
    let weight = f.number(ctx, "weight").unwrap_or(1.0);
    let levels_at = node.key_pos("levels");
    let mut anchors = f
        .take("levels")
        .map(|l| read_anchor_map(ctx, l, "`levels`"))
        .unwrap_or_default();
    let min_at = node.get("min_value").map_or(node.pos, |n| n.pos);
    let min = f.number(ctx, "min_value").unwrap_or(0.0);
    let explicit_max = f.number(ctx, "max_value");
    let max = explicit_max.unwrap_or(1.0);
    // A gate written on the criterion (`pattern.yaml`): `hard_gate: true`, `minimum: N`.
    let hard_gate = f.boolean(ctx, "hard_gate").unwrap_or(false);
    let minimum_at = node.get("minimum").map_or(node.pos, |n| n.pos);
    let minimum = f.number(ctx, "minimum");
    f.finish(ctx, CRITERION_FIELDS);
    let mut span = None;
    if explicit_max.is_none()
        && let (Some(lo), Some(hi)) = (
            anchors.first().map(|a| a.value),
            anchors.last().map(|a| a.value),
        )
        && hi > lo
        && (hi > max || lo < min)
        && max > min
    {
        for a in &mut anchors {
            a.value = min + (a.value - lo) / (hi - lo) * (max - min);
        }
        span = Some((lo, hi, levels_at.unwrap_or(node.pos)));
    }
    if min >= max {
        ctx.err(
            min_at,
            format!("criterion '{name}': min_value {min} must be below max_value {max}"),
        );
    }
    let mut c = Criterion::binary(id, description, weight);
    c.name.clone_from(&name);
    let shown = name;
    let scale = Scale { min, max, anchors };
    match (hard_gate, minimum) {
        (true, Some(m)) => {
            c.required = true;
            // A minimum is a level number, placed on the scale with the levels.
            c.min_score = Some(match span {
                Some((lo, hi, _)) => ((m - lo) / (hi - lo)).clamp(0.0, 1.0),
                None => scale.normalize(m),
            });
        }
        (true, None) => ctx.err(
            node.pos,
            format!("criterion '{shown}' is a hard gate without a `minimum`; give the level it must reach"),
        ),
        (false, Some(_)) => ctx.err(
            minimum_at,
            format!("criterion '{shown}': `minimum` gates only with `hard_gate: true`"),
        ),
        (false, None) => {}
    }
    c.kind = Kind::Scale(scale);
    Some((c, span))
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

fn read_gates(
    ctx: &mut Ctx<'_>,
    node: &Node,
    rubric: &mut Rubric,
    level_spans: &[Option<LevelSpan>],
) {
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
        let Some((c, span)) = rubric
            .criteria
            .iter_mut()
            .zip(level_spans)
            .find(|(c, _)| c.id == wanted || c.name.eq_ignore_ascii_case(&name))
        else {
            ctx.err(
                gate.pos,
                format!("hard gate names criterion '{name}', which the rubric does not have"),
            );
            continue;
        };
        c.required = true;
        // A minimum is a level number: where the levels were placed on the Scorer's
        // range, it goes with them.
        c.min_score = Some(match (&c.kind, span) {
            (_, Some((lo, hi, _))) => ((minimum - lo) / (hi - lo)).clamp(0.0, 1.0),
            (Kind::Scale(s), None) => s.normalize(minimum),
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
        assert_eq!(
            crate::formats::detect::detect(&root),
            crate::formats::Format::Agentic
        );
        let (r, _, notes) = read_scoring_rubric("code.yaml", &root, "code").unwrap();
        assert_eq!(r.id, "code");
        assert_eq!(r.version, "2.0.0");
        assert_eq!(r.pass_threshold, 0.75);
        assert_eq!(r.scoring.abstain, AbstainPolicy::Zero);
        let c = &r.criteria[0];
        assert!(c.required);
        assert_eq!(c.min_score, Some(0.6));
        // No max_value: the Scorer's 0..1, the levels 0–5 placed on it (5 → 1), the gate's
        // minimum 3 with them (0.6); a note says so, once per criterion.
        assert!(
            matches!(&c.kind, Kind::Scale(s) if s.max == 1.0 && s.anchors.len() == 2 && s.anchors[1].value == 1.0)
        );
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].message.contains("add `max_value: 5`"),
            "{}",
            notes[0]
        );
        assert_eq!(r.metadata["thresholds"]["excellent"], 0.9);
    }

    #[test]
    fn a_gate_written_on_the_criterion_is_a_required_minimum_level() {
        let text = "criteria:\n  - name: Ordering\n    weight: 0.5\n    description: In order\n    hard_gate: true\n    minimum: 4\n    levels: {0: none, 5: strict}\n  - name: Style\n    weight: 0.5\n    description: Readable\n    levels: {0: bad, 5: good}\n";
        let root = yaml::parse("pattern.yaml", text).unwrap();
        let (r, _, _) = read_scoring_rubric("pattern.yaml", &root, "pattern").unwrap();
        assert!(r.criteria[0].required);
        assert_eq!(r.criteria[0].min_score, Some(0.8));
        assert!(!r.criteria[1].required);
        let bad = "criteria:\n  - name: A\n    weight: 1\n    description: x\n    minimum: 3\n";
        let root = yaml::parse("bad.yaml", bad).unwrap();
        let err = read_scoring_rubric("bad.yaml", &root, "bad")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "bad.yaml:5:14: criterion 'A': `minimum` gates only with `hard_gate: true`"
            ),
            "{err}"
        );
    }

    #[test]
    fn the_scorers_own_schema_loads_with_its_defaults() {
        // scorer.py's documented schema: `name`, `version`, weights relative (default 1),
        // no descriptions.
        let text = "name: My Rubric\nversion: \"1.0\"\ncriteria:\n  - name: Accuracy\n    weight: 2.0\n    min_value: 0.0\n    max_value: 1.0\n  - name: Completeness\n";
        let root = yaml::parse("doc.yaml", text).unwrap();
        assert_eq!(
            crate::formats::detect::detect(&root),
            crate::formats::Format::Agentic
        );
        let (r, _, notes) = read_scoring_rubric("doc.yaml", &root, "doc").unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!((r.id.as_str(), r.name.as_str()), ("doc", "My Rubric"));
        assert_eq!(r.version, "1.0.0");
        let weights: Vec<f64> = r.criteria.iter().map(|c| c.weight).collect();
        assert_eq!(weights, [2.0, 1.0]);
        // No description: the judge is shown the name.
        assert_eq!(r.criteria[1].requirement, "Completeness");
        // A version that is not a number is kept where it was.
        let text = "version: draft-2\ncriteria:\n  - {name: A, max_value: 5}\n";
        let root = yaml::parse("v.yaml", text).unwrap();
        let (r, _, notes) = read_scoring_rubric("v.yaml", &root, "v").unwrap();
        assert_eq!(r.version, "1.0.0");
        assert_eq!(r.metadata["version"], "draft-2");
        assert!(
            notes[0].message.contains("kept as `metadata.version`"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn nameless_criteria_and_weights_without_a_positive_sum_are_refused() {
        let text = "criteria:\n  - {name: A, weight: 0.5, description: ''}\n  - {weight: 0.2, description: x}\n  - {name: C, weight: -0.7}\nthresholds: {pass: 0.7}\n";
        let root = yaml::parse("bad.yaml", text).unwrap();
        let err = read_scoring_rubric("bad.yaml", &root, "bad")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.yaml:3:5: criterion 2 has no `name`"),
            "{err}"
        );
        assert!(
            err.contains("bad.yaml:2:3: the weights sum to -0.2"),
            "{err}"
        );
    }
}
