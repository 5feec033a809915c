//! Items → a dataset file: JSON in the autorubric shape (with the dataset's rubric) or JSONL.
//! Ground truth, per-item rubrics, references and metadata are kept.

use serde_json::{Map, Value, json};

use super::DatasetHeader;
use crate::formats::native::rubric_to_json;
use crate::model::{GroundTruth, Item, Rubric};

/// How rubrics inside the dataset are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RubricStyle {
    /// rubricate's own rubric fields.
    Native,
    /// autorubric's rubric fields.
    Autorubric,
}

impl RubricStyle {
    fn write(self, r: &Rubric) -> Value {
        match self {
            RubricStyle::Native => rubric_to_json(r),
            // What autorubric cannot hold is reported by `convert` for the dataset rubric.
            RubricStyle::Autorubric => crate::formats::autorubric::write(r).0,
        }
    }
}

/// One item as a JSON object. The rubric is written only when it differs from `shared`.
pub fn item_json(item: &Item, shared: Option<&Rubric>, style: RubricStyle) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(item.id));
    m.insert("submission".into(), json!(item.submission));
    if let Some(d) = &item.description {
        m.insert("description".into(), json!(d));
    }
    if let Some(p) = &item.prompt {
        m.insert("prompt".into(), json!(p));
    }
    if let Some(r) = &item.reference {
        m.insert("reference_submission".into(), json!(r));
    }
    if let Some(gt) = &item.ground_truth {
        m.insert("ground_truth".into(), ground_truth_json(gt));
    }
    if let Some(r) = &item.rubric
        && shared != Some(&**r)
    {
        m.insert("rubric".into(), style.write(r));
    }
    if !item.metadata.is_empty() {
        m.insert("metadata".into(), Value::Object(item.metadata.clone()));
    }
    Value::Object(m)
}

fn ground_truth_json(gt: &GroundTruth) -> Value {
    match gt {
        GroundTruth::ByPosition(v) => Value::Array(v.clone()),
        GroundTruth::ById(pairs) => Value::Object(pairs.iter().cloned().collect()),
    }
}

/// A whole dataset in the autorubric JSON shape.
pub fn dataset_json(header: &DatasetHeader, items: &[Item], style: RubricStyle) -> Value {
    let shared = header.rubric.as_ref().map(|r| &*r.rubric);
    let mut m = Map::new();
    if let Some(n) = &header.name {
        m.insert("name".into(), json!(n));
    }
    if let Some(p) = &header.prompt {
        m.insert("prompt".into(), json!(p));
    }
    m.insert(
        "rubric".into(),
        shared.map_or(Value::Null, |r| style.write(r)),
    );
    if let Some(r) = &header.reference {
        m.insert("reference_submission".into(), json!(r));
    }
    let items: Vec<Value> = items
        .iter()
        .map(|i| {
            let mut v = item_json(i, shared, style);
            // The dataset's own prompt and reference are not repeated on every item.
            if let Value::Object(o) = &mut v {
                if header.prompt.is_some() && i.prompt == header.prompt {
                    o.remove("prompt");
                }
                if header.reference.is_some() && i.reference == header.reference {
                    o.remove("reference_submission");
                }
            }
            v
        })
        .collect();
    m.insert("items".into(), Value::Array(items));
    Value::Object(m)
}

/// Items as JSONL text, one object per line.
pub fn jsonl(items: &[Item], shared: Option<&Rubric>) -> String {
    let mut out = String::new();
    for i in items {
        out.push_str(&item_json(i, shared, RubricStyle::Native).to_string());
        out.push('\n');
    }
    out
}
