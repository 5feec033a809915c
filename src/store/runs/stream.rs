//! Reading a run's journal back as a stream: items in dataset order, each with its winning
//! cells, in memory that does not grow with the run (see [`RunDir::stream_cells`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Cell, Manifest, RunDir, check_header, not_a_result, parse_cell};
use crate::store::StoreError;

impl RunDir {
    /// Streams the journal item by item, in item (dataset) order, each item with its
    /// winning cells — what [`RunDir::read_cells`] returns, grouped by item — in memory
    /// that does not grow with the run.
    ///
    /// A first pass checks the header, finds the valid part (a torn last line is ignored)
    /// and splits the journal into segments whose items never go down: one per pass of
    /// the run engine, which journals in input order (a fresh run; each resume, retry or
    /// copy of cells adds one). The stream then merges the segments, each read by a cursor
    /// of its own, so an item's lines from every pass come together and the later line
    /// for a cell wins. A journal of many segments (written out of order by hand or by an
    /// older version) has its smaller segments read into memory instead.
    ///
    /// Errors are those of `read_cells`, with the same messages; a line that is not a
    /// result at all is reported before the stream starts, any other damage when the
    /// stream reaches it.
    pub fn stream_cells(&self, m: &Manifest) -> Result<CellStream, StoreError> {
        self.stream_cells_with(m, MAX_CURSORS)
    }

    fn stream_cells_with(
        &self,
        m: &Manifest,
        max_cursors: usize,
    ) -> Result<CellStream, StoreError> {
        let path = self.results_path();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CellStream::empty(path));
            }
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let (segments, valid) = scan(file, &path, m)?;
        let mut by_size: Vec<usize> = (0..segments.len()).collect();
        // The longest segments get cursors; ties keep file order.
        by_size.sort_by_key(|&i| std::cmp::Reverse(segments[i].lines));
        let mut cursor_of = vec![false; segments.len()];
        for &i in by_size.iter().take(max_cursors.max(1)) {
            cursor_of[i] = true;
        }
        let mut stream = CellStream::empty(path);
        stream.valid = valid;
        // Small segments (of a journal written out of order) are read into memory, in one
        // forward sweep.
        let mut sweep: Option<(BufReader<File>, u64)> = None;
        for (index, segment) in segments.iter().enumerate() {
            if cursor_of[index] {
                let mut cursor = Cursor::open(&stream.path, index, *segment)?;
                cursor.advance(&stream.path)?;
                stream.cursors.push(cursor);
                continue;
            }
            if sweep.is_none() {
                let f = File::open(&stream.path).map_err(|e| StoreError::io(&stream.path, e))?;
                sweep = Some((BufReader::with_capacity(64 * 1024, f), 0));
            }
            let Some((reader, at)) = sweep.as_mut() else {
                continue;
            };
            let skip = i64::try_from(segment.offset - *at)
                .map_err(|_| StoreError::Corrupt("the results file is too large".into()))?;
            reader
                .seek_relative(skip)
                .map_err(|e| StoreError::io(&stream.path, e))?;
            *at = segment.offset;
            let mut buf = Vec::new();
            for number in segment.line..segment.line + segment.lines {
                let (cell, n) = read_cell(reader, &mut buf, &stream.path, number)?;
                *at += n as u64;
                stream
                    .loaded
                    .entry(cell.item)
                    .or_default()
                    .push((index, cell));
            }
        }
        Ok(stream)
    }
}

/// Cursors a [`CellStream`] keeps open at most (a journal has one segment per pass of the
/// run engine: the run, each resume, retry or copy of cells).
const MAX_CURSORS: usize = 16;

/// One item's cells as its journal ends up holding them.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemCells {
    /// The item's position in the dataset (0-based).
    pub item: usize,
    /// For each of its criteria, the last line written (a retry wins), by criterion id.
    pub cells: Vec<Cell>,
}

/// Lines of a journal whose items never go down.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Byte offset of its first line.
    offset: u64,
    /// Line number (1-based) of its first line.
    line: usize,
    lines: usize,
}

/// A journal read item by item in item order: see [`RunDir::stream_cells`].
#[derive(Debug)]
pub struct CellStream {
    path: PathBuf,
    /// One per segment read from disk, in file order.
    cursors: Vec<Cursor>,
    /// Segments held in memory: by item, (segment, cell) in file order.
    loaded: BTreeMap<usize, Vec<(usize, Cell)>>,
    valid: u64,
    ended: bool,
}

impl CellStream {
    fn empty(path: PathBuf) -> Self {
        Self {
            path,
            cursors: Vec::new(),
            loaded: BTreeMap::new(),
            valid: 0,
            ended: false,
        }
    }

    /// The byte length of the journal's valid part (where a resumed run appends).
    pub fn valid_len(&self) -> u64 {
        self.valid
    }
}

impl Iterator for CellStream {
    type Item = Result<ItemCells, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let item = self
            .cursors
            .iter()
            .filter_map(|c| c.next.as_ref().map(|cell| cell.item))
            .chain(self.loaded.keys().next().copied())
            .min();
        let Some(item) = item else {
            self.ended = true;
            return None;
        };
        let mut lines = self.loaded.remove(&item).unwrap_or_default();
        for cursor in &mut self.cursors {
            while let Some(cell) = cursor.next.take_if(|c| c.item == item) {
                lines.push((cursor.segment, cell));
                if let Err(e) = cursor.advance(&self.path) {
                    self.ended = true;
                    return Some(Err(e));
                }
            }
        }
        // File order: segments in order, each segment's lines in order (the sort is stable).
        lines.sort_by_key(|(segment, _)| *segment);
        let mut cells: Vec<Cell> = Vec::with_capacity(lines.len());
        for (_, cell) in lines {
            match cells
                .iter_mut()
                .find(|c| c.result.criterion_id == cell.result.criterion_id)
            {
                Some(earlier) => *earlier = cell,
                None => cells.push(cell),
            }
        }
        cells.sort_by(|a, b| a.result.criterion_id.cmp(&b.result.criterion_id));
        Some(Ok(ItemCells { item, cells }))
    }
}

/// Reads one segment's lines.
#[derive(Debug)]
struct Cursor {
    segment: usize,
    reader: BufReader<File>,
    /// Lines of the segment not read yet.
    left: usize,
    /// The number of the line read next.
    number: usize,
    /// The cell read last, not yet taken.
    next: Option<Cell>,
    buf: Vec<u8>,
}

impl Cursor {
    fn open(path: &Path, segment: usize, s: Segment) -> Result<Self, StoreError> {
        let mut file = File::open(path).map_err(|e| StoreError::io(path, e))?;
        file.seek(SeekFrom::Start(s.offset))
            .map_err(|e| StoreError::io(path, e))?;
        Ok(Self {
            segment,
            reader: BufReader::with_capacity(64 * 1024, file),
            left: s.lines,
            number: s.line,
            next: None,
            buf: Vec::new(),
        })
    }

    /// Reads the segment's next cell into `next` (`None` at its end).
    fn advance(&mut self, path: &Path) -> Result<(), StoreError> {
        self.next = None;
        if self.left == 0 {
            return Ok(());
        }
        let (cell, _) = read_cell(&mut self.reader, &mut self.buf, path, self.number)?;
        self.next = Some(cell);
        self.number += 1;
        self.left -= 1;
        Ok(())
    }
}

/// Reads line `number` of a journal, found complete by the first pass, as a cell; and its
/// length in bytes.
fn read_cell(
    reader: &mut BufReader<File>,
    buf: &mut Vec<u8>,
    path: &Path,
    number: usize,
) -> Result<(Cell, usize), StoreError> {
    buf.clear();
    let n = reader
        .read_until(b'\n', buf)
        .map_err(|e| StoreError::io(path, e))?;
    if n == 0 || buf.last() != Some(&b'\n') {
        return Err(StoreError::Corrupt(format!(
            "{}:{number}: the results file was cut while it was read",
            path.display()
        )));
    }
    Ok((parse_cell(buf, path, number)?, n))
}

/// The first pass over a journal: checks its header and every line's item, and returns
/// its segments and the byte length of its valid part (a torn last line is left out).
fn scan(file: File, path: &Path, m: &Manifest) -> Result<(Vec<Segment>, u64), StoreError> {
    /// All the first pass needs of a line (the rest is read by the stream).
    #[derive(Deserialize)]
    struct Probe {
        item: usize,
    }
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut segments: Vec<Segment> = Vec::new();
    let mut valid = 0u64;
    let mut line = Vec::new();
    let mut number = 0usize;
    let mut last = 0usize;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| StoreError::io(path, e))?;
        if n == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            break; // torn by a crash: never acknowledged
        }
        if number == 1 {
            check_header(&line, path, m)?;
        } else {
            let item = match serde_json::from_slice::<Probe>(&line) {
                Ok(p) => p.item,
                // Not a result line: the full parse says why, as `read_cells` does.
                Err(e) => {
                    parse_cell(&line, path, number)?;
                    return Err(not_a_result(path, number, &e));
                }
            };
            match segments.last_mut() {
                Some(s) if item >= last => s.lines += 1,
                _ => segments.push(Segment {
                    offset: valid,
                    line: number,
                    lines: 1,
                }),
            }
            last = item;
        }
        valid += n as u64;
    }
    Ok((segments, valid))
}

#[cfg(test)]
mod tests;
