//! Datasets: JSON (the autorubric shape), JSONL and CSV. JSONL and CSV are streamed one
//! item at a time; nothing here holds more than one item of them in memory.

mod csv_file;
mod fields;
pub mod index;
mod inspect_log;
mod json_file;
pub mod jsonl;
pub mod pairs;
pub mod split;
pub mod write;

use std::path::Path;

use super::LoadedRubric;
use crate::core::diag::{Diagnostic, Diagnostics};
use crate::model::Item;

pub use fields::{SUBMISSION_KEYS, inherit, item_from_object, kind as kind_of, parse_ground_truth};

/// What a dataset says about all its items.
#[derive(Debug, Clone, Default)]
pub struct DatasetHeader {
    /// The dataset's name, when it gives one.
    pub name: Option<String>,
    /// A prompt shared by every item that has none of its own.
    pub prompt: Option<String>,
    /// A reference answer shared by every item that has none of its own.
    pub reference: Option<String>,
    /// The dataset's own rubric (autorubric datasets carry one).
    pub rubric: Option<LoadedRubric>,
}

/// An open dataset: its header and a stream of items, each an item or a located problem.
pub struct Dataset {
    /// The dataset's name in messages.
    pub file: String,
    /// How it is written.
    pub format: DatasetFormat,
    /// What it says about all its items.
    pub header: DatasetHeader,
    /// Its items, read as they are pulled (a dataset may be larger than memory).
    pub items: Box<dyn Iterator<Item = Result<Item, Diagnostic>> + Send>,
}

/// How a dataset file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetFormat {
    /// One JSON document: a list of items, or an object holding them.
    Json,
    /// One JSON item per line.
    Jsonl,
    /// A header row, then one item per row.
    Csv,
    /// agentv eval YAML: each eval case is an item carrying its rubric.
    Agentv,
}

/// Options for reading datasets.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// The largest single item (a JSONL line or CSV record) accepted, in bytes.
    pub max_item_bytes: usize,
    /// The largest whole-file JSON dataset accepted, in bytes.
    pub max_json_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_item_bytes: 16 * 1024 * 1024,
            max_json_bytes: 4 * 1024 * 1024 * 1024,
        }
    }
}

/// Opens a dataset, choosing the reader by extension (`.json`, `.jsonl`/`.ndjson`, `.csv`)
/// or, for other names, by the file's first line.
pub fn open_dataset(path: &Path, opts: ReadOptions) -> Result<Dataset, Diagnostics> {
    let file = path.display().to_string();
    if let Some(what) = super::foreign_runs::sniff(path) {
        return Err(Diagnostics::one(Diagnostic::whole(
            &file,
            format!(
                "{what}, not a dataset: keep them as a run with `rubricate runs import {file} --dataset FILE`"
            ),
        )));
    }
    let format = detect(path).map_err(|e| Diagnostics::one(Diagnostic::whole(&file, e)))?;
    // A JSONL file of something else from the same projects (a transcript, a session log)
    // is named for what it is, once, not refused line by line.
    if format == DatasetFormat::Jsonl
        && let Some(first) = first_jsonl_object(path)
        && !SUBMISSION_KEYS.iter().any(|k| first.contains_key(*k))
        && let Some(what) = super::detect::not_an_item(&first)
    {
        return Err(Diagnostics::one(Diagnostic::whole(
            &file,
            format!("this is {what}"),
        )));
    }
    match format {
        DatasetFormat::Json => json_file::open(path, &file, opts),
        DatasetFormat::Jsonl => jsonl::open(path, &file, opts),
        DatasetFormat::Csv => csv_file::open(path, &file, opts),
        DatasetFormat::Agentv => open_agentv(path, &file),
    }
}

/// The first non-empty line of a `.jsonl` file as a JSON object (at most 1 MiB is read),
/// for telling what the file holds.
pub fn first_jsonl_object(path: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    use std::io::BufRead as _;
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
    {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let first = std::io::BufReader::new(std::io::Read::take(file, 1 << 20))
        .lines()
        .map_while(Result::ok)
        .find(|l| !l.trim().is_empty())?;
    match serde_json::from_str(&first).ok()? {
        serde_json::Value::Object(m) => Some(m),
        _ => None,
    }
}

/// An agentv eval file as a dataset: its cases, each with its rubric.
fn open_agentv(path: &Path, file: &str) -> Result<Dataset, Diagnostics> {
    let imported = super::import::import_file(path, Some(super::Format::Agentv))?;
    if imported.items.is_empty() {
        return Err(Diagnostics::one(Diagnostic::whole(
            file,
            "this agentv file has no eval cases (`tests` or `evalcases`) to grade",
        )));
    }
    let header = DatasetHeader {
        name: None,
        prompt: None,
        reference: None,
        rubric: None,
    };
    Ok(Dataset {
        file: file.to_owned(),
        format: DatasetFormat::Agentv,
        header,
        items: Box::new(imported.items.into_iter().map(Ok)),
    })
}

/// Whether a file is a dataset rather than a rubric: JSONL and CSV always; JSON when it
/// holds `items`, or is a list whose first keys name a submission before a requirement.
pub fn is_dataset_file(path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "jsonl" | "ndjson" | "csv" => true,
        "json" => json_is_dataset(path),
        _ => false,
    }
}

fn json_is_dataset(path: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        items: Option<serde::de::IgnoredAny>,
        samples: Option<serde::de::IgnoredAny>,
        eval: Option<serde::de::IgnoredAny>,
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if std::io::BufReader::new(f)
        .take(1 << 20)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if trimmed.starts_with('[') {
        // The first criterion or item decides: whichever key comes first.
        let first = |keys: &[&str]| {
            keys.iter()
                .filter_map(|k| trimmed.find(&format!("\"{k}\"")))
                .min()
                .unwrap_or(usize::MAX)
        };
        let submission = first(fields::SUBMISSION_KEYS)
            .min(first(&["candidates"]))
            .min(first(&["messages"]));
        return submission < first(&["requirement", "expected_outcome", "outcome", "description"]);
    }
    if !trimmed.starts_with('{') {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    serde_json::from_reader::<_, Probe>(std::io::BufReader::new(f))
        .is_ok_and(|p| p.items.is_some() || (p.samples.is_some() && p.eval.is_some()))
}

fn detect(path: &Path) -> Result<DatasetFormat, String> {
    if super::agentv::is_case_file(path) {
        return Ok(DatasetFormat::Agentv);
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "json" => return Ok(DatasetFormat::Json),
        "jsonl" | "ndjson" => return Ok(DatasetFormat::Jsonl),
        "csv" => return Ok(DatasetFormat::Csv),
        "yaml" | "yml" => return Ok(DatasetFormat::Agentv),
        _ => {}
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read dataset: {e}"))?;
    let mut first = Vec::new();
    std::io::BufReader::new(f)
        .take(1 << 20)
        .read_until(b'\n', &mut first)
        .map_err(|e| format!("cannot read dataset: {e}"))?;
    let line = String::from_utf8_lossy(&first);
    let trimmed = line.trim();
    if trimmed.starts_with('{') && serde_json::from_str::<serde_json::Value>(trimmed).is_ok() {
        Ok(DatasetFormat::Jsonl)
    } else if trimmed.starts_with(['{', '[']) {
        Ok(DatasetFormat::Json)
    } else if trimmed.contains(',') {
        Ok(DatasetFormat::Csv)
    } else {
        Err("cannot tell the dataset format; name the file .json, .jsonl or .csv".into())
    }
}

use std::io::{BufRead as _, Read as _};
