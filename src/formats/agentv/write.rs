//! A rubric (and optionally items) → an agentv eval file in the documented seed-era layout:
//! file-level `execution.evaluators: [{name, type: rubric, rubrics}]` plus `evalcases`.

use serde_json::{Map, Value, json};

use super::THRESHOLD;
use super::entry::TOP;
use crate::formats::export::{Holds, losses};
use crate::model::{Criterion, Item, Kind, Rubric, Scoring};

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
        scoring: Scoring::default(),
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
        && c.min_score.is_none()
        && (c.weight - 1.0).abs() < 1e-12
        && c.id == format!("rubric-{number}");
    if plain {
        return json!(c.requirement);
    }
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("expected_outcome".into(), json!(c.requirement));
    m.insert("weight".into(), json!(c.weight));
    if c.required {
        m.insert("required".into(), json!(true));
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
            if let Some(ms) = c.min_score {
                let x = ms * TOP;
                if c.required && (x - x.round()).abs() < 1e-9 {
                    m.insert("required_min_score".into(), json!(x.round() as i64));
                } else {
                    m.insert("min_score".into(), json!(ms));
                }
            }
        }
        Kind::Scale(s) => {
            lost.push(format!(
                "criterion '{}': its {}..{} scale (agentv score ranges are 0..10; written as binary)",
                c.id, s.min, s.max
            ));
        }
        _ => {
            if let Some(ms) = c.min_score {
                m.insert("min_score".into(), json!(ms));
            }
        }
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
