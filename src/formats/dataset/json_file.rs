//! Whole-file JSON datasets in the autorubric shape (or a bare list of items).

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::fields::{in_rubric_lib_layout, item_from_object, kind, read_item_rubric};
use super::jsonl::strip_position;
use super::{Dataset, DatasetFormat, DatasetHeader, ReadOptions, inspect_log};
use crate::core::diag::{Diagnostic, Diagnostics, LineIndex, Pos};
use crate::formats::native::{Dialect, read_rubric};
use crate::formats::{LoadedRubric, json, read_text};
use crate::model::{Item, Rubric};

#[derive(Deserialize)]
struct JsonDataset<'a> {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default, borrow)]
    rubric: Option<&'a RawValue>,
    #[serde(default, alias = "reference")]
    reference_submission: Option<String>,
    #[serde(default, borrow)]
    items: Option<Vec<&'a RawValue>>,
    /// An Inspect eval log's samples (with `eval`, the log's task): read as items.
    #[serde(default, borrow)]
    samples: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    eval: Option<&'a RawValue>,
}

pub fn open(path: &Path, file: &str, opts: ReadOptions) -> Result<Dataset, Diagnostics> {
    let mut text = read_text(path, opts.max_json_bytes, "dataset")?;
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    let lines = LineIndex::new(&text);
    let serde_err = |e: serde_json::Error| {
        let pos = lines.pos_of_byte_col(e.line().max(1), e.column().max(1));
        let msg = strip_position(&e);
        let msg = if msg.starts_with("invalid type") && msg.ends_with("expected struct JsonDataset")
        {
            "a JSON dataset is an object with an `items` list (or a list of items)".to_owned()
        } else {
            msg
        };
        Diagnostics::one(Diagnostic::at(
            file,
            pos,
            format!("not a valid dataset: {msg}"),
        ))
    };
    let trimmed = text.trim_start();
    let (header_raw, raw_items): (Option<JsonDataset<'_>>, Vec<&RawValue>) =
        if trimmed.starts_with('[') {
            (None, serde_json::from_str(&text).map_err(serde_err)?)
        } else {
            let d: JsonDataset<'_> = serde_json::from_str(&text).map_err(serde_err)?;
            let items = match (&d.items, &d.samples, d.eval) {
                (Some(items), _, _) => items.clone(),
                (None, Some(samples), Some(_)) => {
                    return Ok(inspect_log::dataset(file, &text, &lines, samples));
                }
                (None, _, _) => {
                    return Err(Diagnostics::one(Diagnostic::at(
                        file,
                        Pos::new(1, 1),
                        "the dataset has no `items` list; give `items: [{\"submission\": …}, …]`",
                    )));
                }
            };
            (Some(d), items)
        };
    let offset = |raw: &RawValue| raw.get().as_ptr() as usize - text.as_ptr() as usize;
    let mut header = DatasetHeader::default();
    if let Some(d) = &header_raw {
        header.name.clone_from(&d.name);
        header.prompt.clone_from(&d.prompt);
        header.reference.clone_from(&d.reference_submission);
        if let Some(raw) = d.rubric {
            let at = offset(raw);
            let root = json::parse_span(file, &text, &lines, at..at + raw.get().len())?;
            let (rubric, source) = read_rubric(file, &root, "dataset-rubric", Dialect::AUTORUBRIC)?;
            header.rubric = Some(LoadedRubric {
                rubric: Arc::new(rubric),
                source,
                file: file.to_owned(),
                base_dir: path.parent().map_or_else(|| ".".into(), Path::to_path_buf),
            });
        }
    }
    let mut items: Vec<Result<Item, Diagnostic>> = Vec::with_capacity(raw_items.len());
    for (i, raw) in raw_items.iter().enumerate() {
        let at = offset(raw);
        let pos = lines.pos(at);
        items.push(read_item(
            file,
            &text,
            &lines,
            raw,
            at,
            pos,
            i + 1,
            header.prompt.as_ref(),
            header.reference.as_ref(),
        ));
    }
    Ok(Dataset {
        file: file.to_owned(),
        format: DatasetFormat::Json,
        header,
        items: Box::new(items.into_iter()),
    })
}

#[allow(clippy::too_many_arguments)] // one item's text, its place in the file and the dataset's field names
fn read_item(
    file: &str,
    text: &str,
    lines: &LineIndex<'_>,
    raw: &RawValue,
    at: usize,
    pos: Pos,
    number: usize,
    prompt: Option<&String>,
    reference: Option<&String>,
) -> Result<Item, Diagnostic> {
    let here = |m: String| {
        Diagnostic::at(
            file,
            pos,
            if m.starts_with("item ") {
                m
            } else {
                format!("item {number}: {m}")
            },
        )
    };
    let value: Value = serde_json::from_str(raw.get()).map_err(|e| here(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(here(format!(
            "an item must be an object, found {}",
            kind(&value)
        )));
    };
    let rubric = match obj.get("rubric") {
        None | Some(Value::Null) => None,
        Some(_) => {
            obj.remove("rubric");
            let root =
                json::parse_span(file, text, lines, at..at + raw.get().len()).map_err(first)?;
            let node = root.get("rubric").cloned().unwrap_or(root);
            let stem = format!("item-{number}-rubric");
            let r =
                read_item_rubric(file, &node, &stem, in_rubric_lib_layout(&obj)).map_err(first)?;
            Some(Arc::<Rubric>::new(r))
        }
    };
    let origin = format!("{file}:{}:{}", pos.line, pos.col);
    let mut item = item_from_object(obj, number.to_string(), origin).map_err(here)?;
    item.rubric = rubric;
    super::fields::inherit(&mut item, prompt, reference);
    Ok(item)
}

fn first(d: Diagnostics) -> Diagnostic {
    d.0.into_iter()
        .next()
        .unwrap_or_else(|| Diagnostic::whole("dataset", "the item's rubric is not valid"))
}
