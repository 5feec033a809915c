//! A rubric → an `agentic_v2_eval` file: a judge rubric when every criterion is a judged
//! 1–N scale with its own template, else a scoring rubric.

use serde_json::{Map, Value, json};

use crate::formats::export::{ExportError, Holds, losses};
use crate::model::{AbstainPolicy, AggregateMode, Criterion, Kind, Method, Rubric, Scoring};

/// Fails only for a rubric of penalties alone, which agentic weights (0..1) cannot hold.
pub fn write(rubric: &Rubric) -> Result<(Value, Vec<String>), ExportError> {
    let judge = !rubric.criteria.is_empty()
        && rubric.criteria.iter().all(|c| {
            matches!(&c.kind, Kind::Scale(s) if s.min == 1.0 && s.max.fract() == 0.0 && (2.0..=10.0).contains(&s.max))
                && matches!(&c.method, Method::Judge(j) if j.template.is_some())
        });
    if judge {
        Ok(judge_rubric(rubric))
    } else {
        scoring_rubric(rubric)
    }
}

fn judge_rubric(rubric: &Rubric) -> (Value, Vec<String>) {
    let holds = Holds {
        format: "agentic judge rubrics",
        ids: true,
        threshold: false,
        guidelines: false,
        sections: false,
        gates: false,
        levels: false,
        options: false,
        scale: true,
        checks: false,
        schema: false,
        templates: true,
        scoring: Scoring::default(),
    };
    let mut lost = losses(rubric, &holds);
    let prompts = rubric
        .metadata
        .get("system_prompts")
        .and_then(Value::as_object);
    let mut defs = Map::new();
    for c in &rubric.criteria {
        if (c.weight - 1.0).abs() > 1e-12 {
            lost.push(format!(
                "criterion '{}': weight {} (judge dimensions weigh the same)",
                c.id, c.weight
            ));
        }
        let mut d = Map::new();
        if let Some(s) = prompts.and_then(|p| p.get(&c.id)) {
            d.insert("system_prompt".into(), s.clone());
        }
        if let Method::Judge(j) = &c.method {
            d.insert("prompt_template".into(), json!(j.template));
            let defined = j.template.as_deref().and_then(super::judge::definition);
            if defined.as_deref() != Some(c.requirement.as_str()) {
                lost.push(format!(
                    "criterion '{}': its requirement text (a judge dimension is defined by its template's `# Definition`)",
                    c.id
                ));
            }
        }
        if let Kind::Scale(s) = &c.kind {
            d.insert(
                "choices_type".into(),
                json!(format!("standard_{}_point", s.max as i64)),
            );
        }
        defs.insert(c.name.clone(), Value::Object(d));
    }
    (json!({ "definitions": defs }), lost)
}

fn scoring_rubric(rubric: &Rubric) -> Result<(Value, Vec<String>), ExportError> {
    let holds = Holds {
        format: "agentic scoring rubrics",
        ids: true,
        threshold: true,
        guidelines: false,
        sections: false,
        gates: true,
        levels: true,
        options: false,
        scale: true,
        checks: false,
        schema: false,
        templates: false,
        scoring: Scoring {
            aggregate: AggregateMode::WeightedMean,
            abstain: AbstainPolicy::Zero,
            ..Scoring::default()
        },
    };
    let mut lost = losses(rubric, &holds);
    // Penalties have no place in weights of 0..1 that sum to 1: they are left out.
    let kept: Vec<&Criterion> = rubric.criteria.iter().filter(|c| c.weight >= 0.0).collect();
    for c in rubric.criteria.iter().filter(|c| c.weight < 0.0) {
        lost.push(format!(
            "criterion '{}': a penalty (weight {}; agentic weights are 0..1), left out",
            c.id, c.weight
        ));
    }
    let total: f64 = kept.iter().map(|c| c.weight).sum();
    if total <= 0.0 {
        return Err(ExportError::NoPositiveWeights { format: "agentic" });
    }
    let rescale = (total - 1.0).abs() > 0.01;
    if rescale {
        lost.push(format!("the weights' scale: they sum to {total} and are written divided by it (scores do not change)"));
    }
    let mut criteria = Vec::new();
    let mut gates = Vec::new();
    for c in kept {
        let weight = if rescale { c.weight / total } else { c.weight };
        let (min, max, levels) = range_and_levels(c, &mut lost);
        let mut m = Map::new();
        m.insert("name".into(), json!(c.name));
        m.insert("weight".into(), json!(round(weight)));
        m.insert("description".into(), json!(c.requirement));
        if (min, max) != (0.0, 1.0) || levels.is_some() {
            m.insert("min_value".into(), json!(min));
            m.insert("max_value".into(), json!(max));
        }
        if let Some(l) = levels {
            m.insert("levels".into(), Value::Object(l));
        }
        criteria.push(Value::Object(m));
        if c.required {
            match c.min_score {
                Some(ms) => gates
                    .push(json!({"criterion": c.name, "minimum": round(min + ms * (max - min))})),
                None => lost.push(format!(
                    "criterion '{}': a gate with no minimum (agentic hard gates need one)",
                    c.id
                )),
            }
        }
    }
    let mut root = Map::new();
    root.insert("criteria".into(), Value::Array(criteria));
    let mut thresholds = Map::new();
    thresholds.insert("pass".into(), json!(rubric.pass_threshold));
    if let Some(Value::Object(t)) = rubric.metadata.get("thresholds") {
        for (k, v) in t {
            thresholds.insert(k.clone(), v.clone());
        }
    }
    root.insert("thresholds".into(), Value::Object(thresholds));
    if !gates.is_empty() {
        root.insert("hard_gates".into(), Value::Array(gates));
    }
    let mut meta = rubric.metadata.clone();
    for k in ["format", "thresholds", "system_prompts"] {
        meta.remove(k);
    }
    meta.insert("version".into(), json!(rubric.version));
    if !rubric.description.is_empty() {
        meta.insert("description".into(), json!(rubric.description));
    }
    root.insert("metadata".into(), Value::Object(meta));
    Ok((Value::Object(root), lost))
}

/// The raw range of a criterion and, for levels and anchored scales, its integer level map.
fn range_and_levels(
    c: &Criterion,
    lost: &mut Vec<String>,
) -> (f64, f64, Option<Map<String, Value>>) {
    match &c.kind {
        Kind::Scale(s) => {
            let levels = (!s.anchors.is_empty()).then(|| {
                s.anchors
                    .iter()
                    .map(|a| (format!("{}", a.value), json!(a.text)))
                    .collect()
            });
            (s.min, s.max, levels)
        }
        Kind::Levels(levels) => {
            let top = (levels.len() - 1).max(1) as f64;
            let even = levels
                .iter()
                .enumerate()
                .all(|(i, l)| (l.score - i as f64 / top).abs() < 1e-9);
            if !even {
                lost.push(format!(
                    "criterion '{}': level scores that are not evenly spaced (written as 0..{top})",
                    c.id
                ));
            }
            let map = levels
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let text = if l.description.is_empty() {
                        l.label.clone()
                    } else {
                        format!("{}: {}", l.label, l.description)
                    };
                    (i.to_string(), json!(text))
                })
                .collect();
            (0.0, top, Some(map))
        }
        Kind::Options { .. } => {
            lost.push(format!(
                "criterion '{}': its options (written as a 0..1 value)",
                c.id
            ));
            (0.0, 1.0, None)
        }
        Kind::Binary => (0.0, 1.0, None),
    }
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}
