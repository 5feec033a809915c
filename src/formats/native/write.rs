//! [`Rubric`] → native YAML or JSON, leaving out what equals the default so files stay short.

use serde_json::{Map, Value, json};

use crate::model::{Criterion, Kind, Method, OptionScale, Rubric, SchemaSource, Scoring};

/// The rubric as a JSON value in the native layout (criteria grouped by section when any).
pub fn rubric_to_json(rubric: &Rubric) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(rubric.id));
    m.insert("name".into(), json!(rubric.name));
    if !rubric.description.is_empty() {
        m.insert("description".into(), json!(rubric.description));
    }
    m.insert("version".into(), json!(rubric.version));
    if !rubric.target_type.is_empty() {
        m.insert("target_type".into(), json!(rubric.target_type));
    }
    if let Some(g) = &rubric.guidelines {
        m.insert("guidelines".into(), json!(g));
    }
    m.insert("pass_threshold".into(), json!(rubric.pass_threshold));
    if rubric.scoring != Scoring::default() {
        m.insert("scoring".into(), scoring_json(&rubric.scoring));
    }
    if let Some(j) = &rubric.judge {
        m.insert(
            "judge".into(),
            serde_json::to_value(j).unwrap_or(Value::Null),
        );
    }
    if rubric.mode.is_pairwise() {
        m.insert("mode".into(), json!(rubric.mode.as_str()));
    }
    if !rubric.systems.is_empty() {
        m.insert("systems".into(), json!(rubric.systems));
    }
    let written = rubric.criteria.iter().map(criterion_to_json).collect();
    let (key, value) = crate::formats::export::criteria_layout(rubric, written, Some("General"));
    m.insert(key.into(), value);
    if let Some(e) = &rubric.examples {
        m.insert(
            "examples".into(),
            examples_json(
                e,
                |x| {
                    let verdicts: Map<String, Value> = x
                        .verdicts
                        .iter()
                        .map(|(k, v)| (k.clone(), v.label_value()))
                        .collect();
                    let mut v = json!({"submission": x.submission, "verdicts": verdicts});
                    if let Some(item) = &x.item {
                        v["item"] = json!(item);
                    }
                    v
                },
                |x| x.reason.as_deref(),
            ),
        );
    }
    if !rubric.gates.is_empty() {
        let gates = rubric.gates.iter().map(|g| json!(g.to_string())).collect();
        m.insert("gates".into(), Value::Array(gates));
    }
    if !rubric.graders.is_empty() {
        m.insert(
            "graders".into(),
            serde_json::to_value(&rubric.graders).unwrap_or(Value::Null),
        );
    }
    if !rubric.metadata.is_empty() {
        m.insert("metadata".into(), Value::Object(rubric.metadata.clone()));
    }
    Value::Object(m)
}

/// The rubric as native YAML; an error (never an empty document) when it cannot be written.
pub fn rubric_to_yaml(rubric: &Rubric) -> Result<String, crate::formats::export::RenderError> {
    crate::formats::export::Syntax::Yaml.render(&rubric_to_json(rubric))
}

fn scoring_json(s: &Scoring) -> Value {
    let d = Scoring::default();
    let mut m = Map::new();
    let put = |m: &mut Map<String, Value>, k: &str, v: Value| {
        m.insert(k.to_owned(), v);
    };
    if s.aggregate != d.aggregate {
        put(
            &mut m,
            "aggregate",
            serde_json::to_value(s.aggregate).unwrap_or(Value::Null),
        );
    }
    if s.abstain != d.abstain {
        put(
            &mut m,
            "abstain",
            serde_json::to_value(s.abstain).unwrap_or(Value::Null),
        );
    }
    if s.partial_credit != d.partial_credit {
        put(&mut m, "partial_credit", json!(s.partial_credit));
    }
    if s.errors != d.errors {
        put(
            &mut m,
            "errors",
            serde_json::to_value(s.errors).unwrap_or(Value::Null),
        );
    }
    if s.normalize != d.normalize {
        put(&mut m, "normalize", json!(s.normalize));
    }
    if s.threshold != d.threshold {
        put(
            &mut m,
            "threshold",
            serde_json::to_value(s.threshold).unwrap_or(Value::Null),
        );
    }
    if s.gates != d.gates {
        put(
            &mut m,
            "gates",
            serde_json::to_value(s.gates).unwrap_or(Value::Null),
        );
    }
    if let Some(p) = &s.length_penalty {
        put(
            &mut m,
            "length_penalty",
            serde_json::to_value(p).unwrap_or(Value::Null),
        );
    }
    if s.feedback != d.feedback {
        put(
            &mut m,
            "feedback",
            serde_json::to_value(s.feedback).unwrap_or(Value::Null),
        );
    }
    if s.summation != d.summation {
        put(
            &mut m,
            "summation",
            serde_json::to_value(s.summation).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

/// One criterion in the native shape.
pub fn criterion_to_json(c: &Criterion) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    if c.name != c.id {
        m.insert("name".into(), json!(c.name));
    }
    m.insert("requirement".into(), json!(c.requirement));
    m.insert("weight".into(), json!(c.weight));
    if c.required {
        m.insert("required".into(), json!(true));
    }
    if let Some(ms) = c.min_score {
        m.insert("min_score".into(), json!(ms));
    }
    match &c.kind {
        Kind::Binary => {}
        Kind::Levels(levels) => {
            m.insert("kind".into(), json!("levels"));
            m.insert(
                "levels".into(),
                serde_json::to_value(levels).unwrap_or(Value::Null),
            );
        }
        Kind::Options { options, scale } => {
            m.insert("kind".into(), json!("options"));
            m.insert(
                "options".into(),
                serde_json::to_value(options).unwrap_or(Value::Null),
            );
            if *scale == OptionScale::Nominal {
                m.insert("scale_type".into(), json!("nominal"));
            }
        }
        Kind::Scale(s) => {
            m.insert("kind".into(), json!("scale"));
            let mut sm = Map::new();
            sm.insert("min".into(), json!(s.min));
            sm.insert("max".into(), json!(s.max));
            if !s.anchors.is_empty() {
                let anchors: Map<String, Value> = s
                    .anchors
                    .iter()
                    .map(|a| (format_number(a.value), json!(a.text)))
                    .collect();
                sm.insert("anchors".into(), Value::Object(anchors));
            }
            m.insert("scale".into(), Value::Object(sm));
        }
    }
    match &c.method {
        Method::Judge(j) if j.template.is_none() && j.model.is_none() && j.pair.is_none() => {}
        Method::Judge(j) => {
            m.insert("method".into(), json!({ "judge": j }));
        }
        Method::Check(spec) => {
            let mut mm = Map::new();
            mm.insert("check".into(), json!(spec.name));
            if !spec.args.is_empty() {
                mm.insert("args".into(), Value::Object(spec.args.clone()));
            }
            m.insert("method".into(), Value::Object(mm));
        }
        Method::Schema(SchemaSource::Inline(v)) => {
            m.insert("method".into(), json!({ "schema": v }));
        }
        Method::Schema(SchemaSource::File(p)) => {
            m.insert("method".into(), json!({ "schema": p }));
        }
    }
    if !c.tags.is_empty() {
        m.insert("tags".into(), json!(c.tags));
    }
    if let crate::model::Scope::Turn(rule) = c.scope {
        m.insert("scope".into(), json!("turn"));
        m.insert("combine".into(), json!(rule.name()));
    }
    if let Some(e) = &c.examples {
        m.insert(
            "examples".into(),
            examples_json(
                e,
                |x| {
                    let mut v =
                        json!({"submission": x.submission, "verdict": x.verdict.label_value()});
                    if let Some(item) = &x.item {
                        v["item"] = json!(item);
                    }
                    v
                },
                |x| x.reason.as_deref(),
            ),
        );
    }
    Value::Object(m)
}

/// `examples:` as the reader takes it: each written example (`reason` when it has one, and
/// the labelled `item` a drawn one came from), or the draw.
fn examples_json<E>(
    examples: &crate::model::Examples<E>,
    written: impl Fn(&E) -> Value,
    reason: impl Fn(&E) -> Option<&str>,
) -> Value {
    match examples {
        crate::model::Examples::Written(list) => list
            .iter()
            .map(|e| {
                let mut v = written(e);
                if let Some(r) = reason(e) {
                    v["reason"] = json!(r);
                }
                v
            })
            .collect(),
        crate::model::Examples::FromLabels(draw) => {
            serde_json::to_value(draw).unwrap_or(Value::Null)
        }
    }
}

/// `3` rather than `3.0` for whole numbers, for anchor keys.
fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}
