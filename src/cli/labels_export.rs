//! Labels read back out: the list of journals, a dataset's labels as CSV, and one
//! annotator's labels as autorubric's dataset with `ground_truth`.

use std::path::Path;

use serde_json::Value;

use super::{CliError, exit};
use crate::core::text::cell;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::model::Rubric;
use crate::store::labels::{self, annotators, dataset_key, fold};

/// Every dataset and annotator with a journal, and how many labels each holds.
pub(super) fn list(dir: &Path) -> Result<u8, CliError> {
    let mut datasets: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    datasets.sort();
    if datasets.is_empty() {
        outln!("no labels yet; `rubricate labels set` or the Label pane adds some");
    }
    for d in datasets {
        for a in annotators(dir, &d) {
            let (events, _) = labels::read(&labels::journal_path(dir, &d, &a))?;
            let current = fold(&events);
            let items: std::collections::BTreeSet<&String> =
                current.keys().map(|(i, _)| i).collect();
            outln!(
                "{:<28} {:<16} {:>6} labels on {:>5} items ({} events)",
                cell(&d),
                cell(&a),
                current.len(),
                items.len(),
                events.len()
            );
        }
    }
    Ok(exit::OK)
}

/// Every annotator's current labels of `dataset` (or `only` one's) as CSV.
pub(super) fn export_csv(
    dir: &Path,
    dataset: &Path,
    only: Option<&str>,
) -> Result<String, CliError> {
    let key = dataset_key(dataset);
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| CliError::input(format!("cannot write CSV: {e}"));
    w.write_record(["item", "criterion", "verdict", "annotator", "note", "time"])
        .map_err(err)?;
    for a in annotators(dir, &key)
        .into_iter()
        .filter(|a| only.is_none_or(|o| o == a))
    {
        let (events, _) = labels::read(&labels::journal_path(dir, &key, &a))?;
        for ((item, criterion), label) in fold(&events) {
            let verdict = label
                .verdict
                .as_str()
                .map_or_else(|| label.verdict.to_string(), str::to_owned);
            w.write_record([
                item.as_str(),
                criterion.as_str(),
                verdict.as_str(),
                a.as_str(),
                label.note.as_str(),
                label.time.as_str(),
            ])
            .map_err(err)?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::input(format!("cannot write CSV: {e}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The dataset's items with one annotator's labels as `ground_truth` lists in criterion
/// order (`null` where unlabelled), in autorubric's dataset shape.
pub(super) fn export_autorubric(
    dir: &Path,
    dataset: &Path,
    annotator: &str,
    rubric: &Rubric,
) -> Result<String, CliError> {
    let (events, _) = labels::read(&labels::journal_path(dir, &dataset_key(dataset), annotator))?;
    let current = fold(&events);
    let mut items = Vec::new();
    for item in open_dataset(dataset, ReadOptions::default())?.items {
        let item = item.map_err(|d| CliError::input(d.to_string()))?;
        let truth: Vec<Value> = rubric
            .criteria
            .iter()
            .map(|c| {
                current
                    .get(&(item.id.clone(), c.id.clone()))
                    .map_or(Value::Null, |l| l.verdict.clone())
            })
            .collect();
        let mut out = serde_json::Map::new();
        out.insert("id".into(), Value::String(item.id.clone()));
        out.insert("submission".into(), Value::String(item.submission.clone()));
        if let Some(p) = &item.prompt {
            out.insert("prompt".into(), Value::String(p.clone()));
        }
        out.insert("ground_truth".into(), Value::Array(truth));
        items.push(Value::Object(out));
    }
    let doc = serde_json::json!({
        "name": dataset_key(dataset),
        "rubric": crate::formats::native::rubric_to_json(rubric),
        "items": items,
    });
    serde_json::to_string_pretty(&doc)
        .map(|t| t + "\n")
        .map_err(|e| CliError::input(format!("cannot write JSON: {e}")))
}
