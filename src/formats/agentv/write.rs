//! A rubric (and optionally items) → an agentv eval file in the documented seed-era layout:
//! file-level `execution.evaluators: [{name, type: rubric, rubrics}]` plus `evalcases`.

use serde_json::{Map, Value, json};

use super::THRESHOLD;
use super::entry::TOP;
use crate::formats::export::{Holds, losses};
use crate::model::{Criterion, Item, Kind, Rubric};

/// An agentv eval file holding `rubric` and `items` as its tests, and what it could not
/// hold.
pub fn write(rubric: &Rubric, items: &[Item]) -> (Value, Vec<String>) {
    let holds = Holds {
        format: "agentv",
        ids: true,
        threshold: false,
        guidelines: false,
        sections: false,
        gates: true,
        levels: false,
        options: false,
        scale: true,
        checks: false,
        schema: false,
        templates: false,
        scoring: super::scoring(),
    };
    let mut lost = losses(rubric, &holds);
    if (rubric.pass_threshold - THRESHOLD).abs() > 1e-12 {
        lost.push(format!(
            "pass_threshold {} (agentv always passes at {THRESHOLD})",
            rubric.pass_threshold
        ));
    }
    let entries: Vec<Value> = rubric
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| entry(c, i + 1, &mut lost))
        .collect();
    let mut m = Map::new();
    let about = if rubric.description.is_empty() {
        &rubric.name
    } else {
        &rubric.description
    };
    m.insert("description".into(), json!(about));
    if !entries.is_empty() {
        m.insert(
            "execution".into(),
            json!({"evaluators": [{"name": rubric.id, "type": "rubric", "rubrics": entries}]}),
        );
    }
    if !items.is_empty() {
        let cases: Vec<Value> = items.iter().map(|i| case(i, rubric, &mut lost)).collect();
        m.insert("evalcases".into(), Value::Array(cases));
    }
    (Value::Object(m), lost)
}

fn entry(c: &Criterion, number: usize, lost: &mut Vec<String>) -> Value {
    let plain = matches!(c.kind, Kind::Binary)
        && c.required
        && (c.weight - 1.0).abs() < 1e-12
        && c.id == format!("rubric-{number}");
    if plain {
        return json!(c.requirement);
    }
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("expected_outcome".into(), json!(c.requirement));
    m.insert("weight".into(), json!(c.weight));
    // agentv makes an entry without score ranges required unless it says otherwise.
    if matches!(c.kind, Kind::Binary) || c.required {
        m.insert("required".into(), json!(c.required));
    }
    match &c.kind {
        Kind::Scale(s) if s.min == 0.0 && s.max == TOP => {
            let whole = s.anchors.iter().all(|a| a.value.fract() == 0.0);
            if whole && s.anchors.first().is_some_and(|a| a.value == 0.0) {
                let ranges: Map<String, Value> = s
                    .anchors
                    .iter()
                    .map(|a| (format!("{}", a.value as i64), json!(a.text)))
                    .collect();
                m.insert("score_ranges".into(), Value::Object(ranges));
            } else {
                lost.push(format!(
                    "criterion '{}': anchors that do not start at 0 in whole numbers (agentv score_ranges must cover 0..10)",
                    c.id
                ));
            }
            // agentv gates a ranged entry at its min_score whether required or not, and a
            // required one without it at 10/10; rubricate's "above 0" is 1/10 there.
            if c.required {
                let ms = match c.gate() {
                    crate::model::Gate::AtLeast(m) => m,
                    crate::model::Gate::AboveZero => 1.0 / TOP,
                };
                m.insert("min_score".into(), json!(ms));
            }
        }
        Kind::Scale(s) => {
            lost.push(format!(
                "criterion '{}': its {}..{} scale (agentv score ranges are 0..10; written as binary)",
                c.id, s.min, s.max
            ));
        }
        // A met/unmet criterion's only passing value is MET: a min_score adds nothing.
        _ => {}
    }
    Value::Object(m)
}

/// One eval case; criteria of the item's rubric beyond the file-level ones become the
/// case's own `rubrics`.
fn case(item: &Item, shared: &Rubric, lost: &mut Vec<String>) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(item.id));
    if let Some(r) = &item.rubric
        && **r != *shared
    {
        let n = shared.criteria.len();
        let extends = r.criteria.len() >= n && r.criteria[..n] == shared.criteria[..];
        if !extends {
            lost.push(format!("item '{}': a rubric that does not extend the file-level one (its own criteria are written after it)", item.id));
        }
        let skip = if extends { n } else { 0 };
        let own: Vec<Value> = r
            .criteria
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, c)| entry(c, i + 1, lost))
            .collect();
        if !own.is_empty() {
            m.insert("rubrics".into(), Value::Array(own));
        }
    }
    if let Some(o) = item.description.as_ref().or(item.reference.as_ref()) {
        m.insert("expected_outcome".into(), json!(o));
    }
    if let Some(p) = &item.prompt {
        m.insert(
            "input_messages".into(),
            json!([{"role": "user", "content": p}]),
        );
    }
    if let Some(Value::String(e)) = item.metadata.get("expected_output") {
        m.insert(
            "expected_messages".into(),
            json!([{"role": "assistant", "content": e}]),
        );
    }
    if !item.submission.is_empty() {
        m.insert("output".into(), json!(item.submission));
    }
    Value::Object(m)
}
