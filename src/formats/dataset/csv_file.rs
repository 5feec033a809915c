//! CSV datasets with a header row, streamed record by record.

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use super::fields::item_from_object;
use super::{Dataset, DatasetFormat, DatasetHeader, ReadOptions};
use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::model::Item;

pub fn open(path: &Path, file: &str, opts: ReadOptions) -> Result<Dataset, Diagnostics> {
    let f = File::open(path).map_err(|e| {
        Diagnostics::one(Diagnostic::whole(file, format!("cannot read dataset: {e}")))
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(f);
    let headers = headers_of(
        reader
            .headers()
            .map_err(|e| Diagnostics::one(csv_error(file, &e)))?,
    );
    if headers.iter().all(String::is_empty) {
        return Err(Diagnostics::one(Diagnostic::at(
            file,
            Pos::new(1, 1),
            "the file is empty; a CSV dataset needs a header row naming a `submission` column",
        )));
    }
    if headers
        .iter()
        .all(|h| !super::fields::SUBMISSION_KEYS.contains(&h.as_str()))
    {
        return Err(Diagnostics::one(Diagnostic::at(
            file,
            Pos::new(1, 1),
            format!(
                "the header row has no submission column; name one `submission` (or `output`). Columns found: {}",
                headers.join(", ")
            ),
        )));
    }
    let items = CsvItems {
        file: file.to_owned(),
        reader,
        headers,
        max: opts.max_item_bytes,
        done: false,
    };
    Ok(Dataset {
        file: file.to_owned(),
        format: DatasetFormat::Csv,
        header: DatasetHeader::default(),
        items: Box::new(items),
    })
}

struct CsvItems {
    file: String,
    reader: csv::Reader<File>,
    headers: Vec<String>,
    max: usize,
    done: bool,
}

impl Iterator for CsvItems {
    type Item = Result<Item, Diagnostic>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut record = csv::StringRecord::new();
        match self.reader.read_record(&mut record) {
            Ok(false) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(csv_error(&self.file, &e)))
            }
            Ok(true) => {
                let line = record.position().map_or(0, csv::Position::line) as usize;
                Some(record_item(
                    &self.file,
                    &self.headers,
                    &record,
                    line,
                    self.max,
                ))
            }
        }
    }
}

/// The item a CSV record holds (`line` is where it starts in the file).
pub(super) fn record_item(
    file: &str,
    headers: &[String],
    record: &csv::StringRecord,
    line: usize,
    max: usize,
) -> Result<Item, Diagnostic> {
    let at = |m: String| Diagnostic::at(file, Pos::new(line, 1), m);
    if record.as_slice().len() > max {
        return Err(at(format!(
            "record is longer than {} MiB, the most one item may take",
            max / (1024 * 1024)
        )));
    }
    let mut obj = Map::new();
    for (h, v) in headers.iter().zip(record.iter()) {
        let value = match h.as_str() {
            "metadata" if v.trim_start().starts_with('{') => match serde_json::from_str(v) {
                Ok(m) => m,
                Err(e) => {
                    return Err(at(format!("`metadata` column is not a JSON object: {e}")));
                }
            },
            _ if v.is_empty() => Value::Null,
            _ => Value::String(v.to_owned()),
        };
        obj.insert(h.clone(), value);
    }
    item_from_object(obj, line.to_string(), format!("{file}:{line}")).map_err(at)
}

/// The header row, trimmed as the reader trims it.
pub(super) fn headers_of(record: &csv::StringRecord) -> Vec<String> {
    record
        .iter()
        .map(|h| h.trim().trim_start_matches('\u{feff}').to_owned())
        .collect()
}

fn csv_error(file: &str, e: &csv::Error) -> Diagnostic {
    let line = e.position().map_or(1, csv::Position::line) as usize;
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => format!(
            "the file is not valid UTF-8 in field {}; save it as UTF-8",
            err.field() + 1
        ),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "this row has {len} fields but the header has {expected_len}; a row may be cut short or have an unquoted comma"
        ),
        _ => format!("not valid CSV: {e}"),
    };
    Diagnostic::at(file, Pos::new(line.max(1), 1), message)
}
