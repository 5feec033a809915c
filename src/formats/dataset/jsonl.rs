//! JSONL datasets, streamed line by line with a per-line size cap.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::fields::{in_rubric_lib_layout, item_from_object, kind, read_item_rubric};
use super::{Dataset, DatasetFormat, DatasetHeader, ReadOptions};
use crate::core::diag::{Diagnostic, Diagnostics, LineIndex, Pos};
use crate::formats::{json, text::utf8};
use crate::model::Item;

/// Opens a JSONL dataset at `path` (named `file` in messages), reading items as the stream
/// is pulled.
pub fn open(path: &Path, file: &str, opts: ReadOptions) -> Result<Dataset, Diagnostics> {
    let f = File::open(path).map_err(|e| {
        Diagnostics::one(Diagnostic::whole(file, format!("cannot read dataset: {e}")))
    })?;
    let reader = JsonlItems {
        file: file.to_owned(),
        input: BufReader::with_capacity(256 * 1024, f),
        line_no: 0,
        max: opts.max_item_bytes,
        done: false,
        buf: Vec::new(),
    };
    Ok(Dataset {
        file: file.to_owned(),
        format: DatasetFormat::Jsonl,
        header: DatasetHeader::default(),
        items: Box::new(reader),
    })
}

struct JsonlItems {
    file: String,
    input: BufReader<File>,
    line_no: usize,
    max: usize,
    done: bool,
    buf: Vec<u8>,
}

enum Line {
    Eof,
    /// A line, and whether it ended with a newline.
    Text(bool),
    TooLong,
}

impl JsonlItems {
    /// Reads one line into `buf`, refusing lines longer than `max` without buffering them.
    fn read_line(&mut self) -> std::io::Result<Line> {
        self.buf.clear();
        loop {
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(if self.buf.is_empty() {
                    Line::Eof
                } else {
                    Line::Text(false)
                });
            }
            let (take, newline) = match memchr_newline(chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if self.buf.len() + take > self.max + 1 {
                self.input.consume(take);
                self.skip_rest_of_line()?;
                return Ok(Line::TooLong);
            }
            self.buf.extend_from_slice(&chunk[..take]);
            self.input.consume(take);
            if newline {
                self.buf.pop();
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                return Ok(Line::Text(true));
            }
        }
    }

    fn skip_rest_of_line(&mut self) -> std::io::Result<()> {
        loop {
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                return Ok(());
            }
            if let Some(i) = memchr_newline(chunk) {
                self.input.consume(i + 1);
                return Ok(());
            }
            let n = chunk.len();
            self.input.consume(n);
        }
    }

    fn item(&self, text: &str, complete_line: bool) -> Result<Item, Diagnostic> {
        LineParser {
            file: &self.file,
            line_no: self.line_no,
        }
        .item(text, complete_line)
    }

    fn err(&self, col: usize, message: String) -> Diagnostic {
        Diagnostic::at(&self.file, Pos::new(self.line_no, col), message)
    }
}

/// Reads one JSONL line (line `line_no` of `file`) into an item; shared by the streaming
/// reader and windows read through an index.
pub struct LineParser<'a> {
    /// The dataset's name in messages.
    pub file: &'a str,
    /// The 1-based line being read.
    pub line_no: usize,
}

impl LineParser<'_> {
    fn err(&self, col: usize, message: String) -> Diagnostic {
        Diagnostic::at(self.file, Pos::new(self.line_no, col), message)
    }

    /// The item on this line (`complete_line`: the line ended with a newline, so a JSON error
    /// is not a cut-off last line).
    pub fn item(&self, text: &str, complete_line: bool) -> Result<Item, Diagnostic> {
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) if !complete_line && e.is_eof() => {
                return Err(self.err(
                    text.chars().count() + 1,
                    "the last line is cut short (no newline at the end and the JSON is incomplete); \
                     the file was truncated or is still being written"
                        .into(),
                ));
            }
            Err(e) => {
                let col = LineIndex::new(text)
                    .pos_of_byte_col(1, e.column().max(1))
                    .col;
                return Err(self.err(col, format!("not valid JSON: {}", strip_position(&e))));
            }
        };
        let Value::Object(mut obj) = value else {
            return Err(self.err(
                1,
                format!("each line must be a JSON object, found {}", kind(&value)),
            ));
        };
        let rubric_lib = in_rubric_lib_layout(&obj);
        let rubric = match obj.remove("rubric") {
            None | Some(Value::Null) => None,
            Some(_) => Some(self.line_rubric(text, rubric_lib)?),
        };
        let origin = format!("{}:{}", self.file, self.line_no);
        let mut item = item_from_object(std::mem::take(&mut obj), self.line_no.to_string(), origin)
            .map_err(|m| self.err(1, m))?;
        item.rubric = rubric;
        Ok(item)
    }

    /// A per-line rubric, read with positions on this line.
    fn line_rubric(
        &self,
        text: &str,
        rubric_lib: bool,
    ) -> Result<Arc<crate::model::Rubric>, Diagnostic> {
        let shift = |d: Diagnostics| {
            let mut first =
                d.0.into_iter().next().unwrap_or_else(|| {
                    Diagnostic::whole(self.file, "the line's rubric is not valid")
                });
            if let Some(p) = first.pos.as_mut() {
                p.line = self.line_no;
            }
            self.file.clone_into(&mut first.file);
            first
        };
        let lines = LineIndex::new(text);
        let root = json::parse_span(self.file, text, &lines, 0..text.len()).map_err(shift)?;
        let node = root.get("rubric").cloned().unwrap_or(root);
        let rubric =
            read_item_rubric(self.file, &node, "item-rubric", rubric_lib).map_err(shift)?;
        Ok(Arc::new(rubric))
    }
}

impl Iterator for JsonlItems {
    type Item = Result<Item, Diagnostic>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.line_no += 1;
            let line = match self.read_line() {
                Ok(l) => l,
                Err(e) => {
                    self.done = true;
                    return Some(Err(self.err(1, format!("cannot read dataset: {e}"))));
                }
            };
            let complete = match line {
                Line::Eof => {
                    self.done = true;
                    return None;
                }
                Line::TooLong => {
                    return Some(Err(self.err(
                        1,
                        format!(
                            "line is longer than {} MiB, the most one item may take; split the item or raise --max-item-mb",
                            self.max / (1024 * 1024)
                        ),
                    )));
                }
                Line::Text(complete) => complete,
            };
            let bytes = std::mem::take(&mut self.buf);
            let text = match utf8(&self.file, bytes) {
                Ok(t) => t,
                Err(d) => {
                    let mut d =
                        d.0.into_iter()
                            .next()
                            .unwrap_or_else(|| self.err(1, "the line is not valid UTF-8".into()));
                    if let Some(p) = d.pos.as_mut() {
                        p.line = self.line_no;
                    }
                    return Some(Err(d));
                }
            };
            let text = if self.line_no == 1 {
                text.trim_start_matches('\u{feff}')
            } else {
                &text
            };
            if text.trim().is_empty() {
                continue;
            }
            return Some(self.item(text, complete));
        }
        None
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// `serde_json` appends " at line L column C"; we give our own position.
pub fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
