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
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write;

    use super::super::tests::{manifest, result};
    use super::*;
    use crate::model::CriterionResult;
    use crate::store::runs::RunWriter;

    fn tagged(id: &str, tag: usize) -> CriterionResult {
        let mut r = result(id);
        r.reason = format!("line {tag}");
        r
    }

    /// `read_cells`, grouped by item: what the stream must yield.
    fn grouped(run: &RunDir, m: &Manifest) -> (Vec<ItemCells>, u64) {
        let (cells, valid) = run.read_cells(m).unwrap();
        let mut out: Vec<ItemCells> = Vec::new();
        for ((item, _), cell) in cells {
            match out.last_mut() {
                Some(g) if g.item == item => g.cells.push(cell),
                _ => out.push(ItemCells {
                    item,
                    cells: vec![cell],
                }),
            }
        }
        (out, valid)
    }

    fn streamed(run: &RunDir, m: &Manifest, cursors: usize) -> (Vec<ItemCells>, u64) {
        let mut stream = run.stream_cells_with(m, cursors).unwrap();
        let items = stream.by_ref().map(Result::unwrap).collect();
        (items, stream.valid_len())
    }

    fn journal(dir: &Path) -> (RunDir, Manifest, RunWriter) {
        let run = RunDir::new(dir, "r1");
        let m = manifest("r1", "abc");
        run.write_manifest(&m).unwrap();
        let w = RunWriter::create(&run, &m).unwrap();
        (run, m, w)
    }

    /// (item, criterion, reason) of every streamed cell, in order.
    fn flat(items: &[ItemCells]) -> Vec<(usize, String, String)> {
        items
            .iter()
            .flat_map(|g| {
                g.cells.iter().map(move |c| {
                    assert_eq!(c.item, g.item);
                    (
                        c.item,
                        c.result.criterion_id.clone(),
                        c.result.reason.clone(),
                    )
                })
            })
            .collect()
    }

    fn cell(item: usize, c: &str, reason: &str) -> (usize, String, String) {
        (item, c.to_owned(), reason.to_owned())
    }

    #[test]
    fn an_in_order_journal_streams_as_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        for item in 0..50 {
            w.append(
                item,
                &format!("i{item}"),
                &[tagged("b", item), tagged("a", item)],
            )
            .unwrap();
        }
        w.finish().unwrap();
        let (got, valid) = streamed(&run, &m, MAX_CURSORS);
        assert_eq!((got.clone(), valid), grouped(&run, &m));
        assert_eq!(got.len(), 50);
        assert_eq!(
            flat(&got[3..4]),
            [cell(3, "a", "line 3"), cell(3, "b", "line 3")],
            "criteria in id order"
        );
        assert_eq!(got[3].cells[0].item_id, "i3");
    }

    #[test]
    fn a_resumed_journal_merges_late_lines_into_their_items() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        // Killed while items 2 and 3 were partly journalled; item 1 never was (an item
        // only among the late lines).
        w.append(0, "i0", &[tagged("a", 0), tagged("b", 0)])
            .unwrap();
        w.append(2, "i2", &[tagged("a", 1)]).unwrap();
        w.append(3, "i3", &[tagged("b", 2)]).unwrap();
        // The resume grades what is missing, in input order.
        w.append(1, "i1", &[tagged("a", 3), tagged("b", 3)])
            .unwrap();
        w.append(2, "i2", &[tagged("b", 4)]).unwrap();
        w.append(3, "i3", &[tagged("a", 5)]).unwrap();
        w.append(4, "i4", &[tagged("a", 6), tagged("b", 6)])
            .unwrap();
        w.finish().unwrap();
        for cursors in [1, 2, MAX_CURSORS] {
            let (got, valid) = streamed(&run, &m, cursors);
            assert_eq!((got.clone(), valid), grouped(&run, &m), "{cursors} cursors");
            assert_eq!(
                flat(&got),
                [
                    cell(0, "a", "line 0"),
                    cell(0, "b", "line 0"),
                    cell(1, "a", "line 3"),
                    cell(1, "b", "line 3"),
                    cell(2, "a", "line 1"),
                    cell(2, "b", "line 4"),
                    cell(3, "a", "line 5"),
                    cell(3, "b", "line 2"),
                    cell(4, "a", "line 6"),
                    cell(4, "b", "line 6"),
                ]
            );
        }
    }

    #[test]
    fn a_retried_cell_takes_the_later_line() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        for item in 0..5 {
            w.append(item, "x", &[tagged("a", 0), tagged("b", 0)])
                .unwrap();
        }
        // Retry of chosen cells, then a second retry of one of them.
        w.append(1, "x", &[tagged("b", 1)]).unwrap();
        w.append(3, "x", &[tagged("a", 1)]).unwrap();
        w.append(3, "x", &[tagged("a", 2)]).unwrap();
        w.append(3, "x", &[tagged("a", 3)]).unwrap();
        w.append(0, "x", &[tagged("a", 4)]).unwrap();
        w.finish().unwrap();
        for cursors in [1, MAX_CURSORS] {
            let (got, _) = streamed(&run, &m, cursors);
            assert_eq!(got, grouped(&run, &m).0);
            let reasons: Vec<_> = flat(&got).into_iter().map(|(_, _, r)| r).collect();
            assert_eq!(
                reasons,
                [
                    "line 4", "line 0", "line 0", "line 1", "line 0", "line 0", "line 3", "line 0",
                    "line 0", "line 0"
                ]
            );
        }
    }

    #[test]
    fn copied_cells_then_graded_ones_come_together() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        for item in 0..1000 {
            w.append(item, "x", &[tagged("keep", 0)]).unwrap();
        }
        for item in 0..1000 {
            w.append(item, "x", &[tagged("new", 1), tagged("a", 1)])
                .unwrap();
        }
        w.finish().unwrap();
        let mut stream = run.stream_cells(&m).unwrap();
        assert_eq!(stream.cursors.len(), 2, "one cursor per pass");
        assert!(stream.loaded.is_empty(), "nothing held in memory");
        let first = stream.next().unwrap().unwrap();
        assert_eq!(
            flat(std::slice::from_ref(&first)),
            [
                cell(0, "a", "line 1"),
                cell(0, "keep", "line 0"),
                cell(0, "new", "line 1")
            ]
        );
        assert_eq!(streamed(&run, &m, MAX_CURSORS), grouped(&run, &m));
    }

    #[test]
    fn a_torn_tail_is_left_out_of_the_stream() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        w.append(0, "a", &[tagged("c1", 0), tagged("c2", 0)])
            .unwrap();
        w.append(1, "b", &[tagged("c1", 0)]).unwrap();
        w.finish().unwrap();
        let whole = std::fs::metadata(run.results_path()).unwrap().len();
        let mut f = OpenOptions::new()
            .append(true)
            .open(run.results_path())
            .unwrap();
        f.write_all(b"{\"item\": 0, \"item_id\": \"a\", \"res")
            .unwrap();
        drop(f);
        let (got, valid) = streamed(&run, &m, MAX_CURSORS);
        assert_eq!(valid, whole);
        assert_eq!((got.clone(), valid), grouped(&run, &m));
        assert_eq!(flat(&got).len(), 3);
        // A header torn by a crash: an empty journal.
        std::fs::write(run.results_path(), b"{\"run\": \"r1\"").unwrap();
        assert_eq!(streamed(&run, &m, MAX_CURSORS), (Vec::new(), 0));
        // No journal yet.
        std::fs::remove_file(run.results_path()).unwrap();
        assert_eq!(streamed(&run, &m, MAX_CURSORS), (Vec::new(), 0));
    }

    #[test]
    fn the_stream_reports_damage_as_read_cells_does() {
        let dir = tempfile::tempdir().unwrap();
        let (run, m, mut w) = journal(dir.path());
        w.append(0, "a", &[result("c1")]).unwrap();
        w.append(1, "b", &[result("c1")]).unwrap();
        w.finish().unwrap();
        let message = |m: &Manifest| {
            let stream = run
                .stream_cells(m)
                .and_then(Iterator::collect::<Result<Vec<_>, _>>);
            let e = stream.unwrap_err().to_string();
            assert_eq!(e, run.read_cells(m).unwrap_err().to_string());
            e
        };
        let e = message(&manifest("r1", "def"));
        assert!(
            e.contains(":1: these results belong to run r1 with rubric hash abc…"),
            "{e}"
        );
        let good = std::fs::read(run.results_path()).unwrap();
        for (bad, expect) in [
            (&b"garbage\n"[..], ":4: not a result line"),
            (b"{}\n", ":4: not a result line"),
            // Right item, not a result: found when the stream reaches it.
            (b"{\"item\": 0}\n", ":4: not a result line"),
        ] {
            let mut text = good.clone();
            text.extend_from_slice(bad);
            text.extend_from_slice(&good[good.iter().position(|b| *b == b'\n').unwrap() + 1..]);
            std::fs::write(run.results_path(), &text).unwrap();
            let e = message(&m);
            assert!(e.contains(expect), "{e}");
        }
    }

    #[test]
    fn the_stream_equals_read_cells_on_random_journals() {
        use rand::rngs::ChaCha8Rng;
        use rand::{RngExt as _, SeedableRng as _};
        for seed in 0..150 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let dir = tempfile::tempdir().unwrap();
            let (run, m, mut w) = journal(dir.path());
            let items = rng.random_range(0..40);
            let mut tag = 0;
            // Passes of the run engine (in item order), now and then a line out of order.
            for _ in 0..rng.random_range(0..5) {
                for item in 0..items {
                    if rng.random_range(0..3) == 0 {
                        continue;
                    }
                    let n = rng.random_range(1..4);
                    let cells: Vec<_> = (0..n)
                        .map(|_| {
                            tag += 1;
                            tagged(&format!("c{}", rng.random_range(0..4)), tag)
                        })
                        .collect();
                    let at = if rng.random_range(0..15) == 0 {
                        rng.random_range(0..items)
                    } else {
                        item
                    };
                    w.append(at, &format!("i{at}"), &cells).unwrap();
                }
            }
            w.finish().unwrap();
            if rng.random_range(0..3) == 0 {
                let mut f = OpenOptions::new()
                    .append(true)
                    .open(run.results_path())
                    .unwrap();
                f.write_all(b"{\"item\": 3, \"ite").unwrap();
            }
            let expected = grouped(&run, &m);
            for cursors in [1, 2, 3, MAX_CURSORS] {
                let got = streamed(&run, &m, cursors);
                assert_eq!(got, expected, "seed {seed}, {cursors} cursors");
            }
            assert!(
                expected.0.windows(2).all(|w| w[0].item < w[1].item),
                "in item order"
            );
        }
    }
}
