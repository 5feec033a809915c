//! Runs on disk: `runs/<id>/manifest.json` (what was graded, with what, and how it ended)
//! and `runs/<id>/results.jsonl`, a journal of cells appended by one writer as items finish.
//! A run cut at any byte (kill -9, power loss) is read back without its torn last line and
//! resumed by grading exactly the cells the journal lacks.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::AtomicFile;
use crate::model::CriterionResult;

pub const MANIFEST: &str = "manifest.json";
pub const RESULTS: &str = "results.jsonl";
const LOCK: &str = ".lock";

/// How often appended cells are synced to disk (a crash loses at most this much; those
/// cells are graded again on resume).
const SYNC_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub rubric_id: String,
    pub rubric_version: String,
    /// SHA-256 of the rubric snapshot's text.
    pub rubric_hash: String,
    /// The exact rubric graded, as native JSON.
    pub rubric: serde_json::Value,
    pub dataset: DatasetRef,
    /// How it was graded (judges, strategy, flags), for resume; opaque to the store.
    pub settings: serde_json::Value,
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    #[serde(default)]
    pub totals: Option<Totals>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetRef {
    /// Absolute path, read in place.
    pub path: String,
    /// SHA-256 of the file's bytes.
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Totals {
    pub items: usize,
    pub passed: usize,
    pub incomplete: usize,
    pub cells: usize,
    pub failed_cells: usize,
    pub mean_score: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
}

/// A journal's cells by (item position, criterion id).
pub type Cells = BTreeMap<(usize, String), Cell>;

/// One journal line: a criterion's result for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The item's position in the dataset (0-based).
    pub item: usize,
    pub item_id: String,
    pub result: CriterionResult,
}

/// The journal's first line: which run and rubric its cells belong to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    run: String,
    rubric_hash: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{0}")]
    Corrupt(String),
    #[error("no run '{0}' in this workspace; `rubricate runs list` shows them")]
    NotFound(String),
    #[error("run {0} is being written by another process (it holds {1})")]
    Busy(String, String),
}

fn io(path: &Path, e: &std::io::Error) -> RunError {
    RunError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// A new run id: the start time, sortable, and four random hex digits.
pub fn new_run_id() -> String {
    let now = jiff::Zoned::now();
    let tail = uuid::Uuid::now_v7().simple().to_string();
    format!(
        "{}-{}",
        now.strftime("%Y%m%d-%H%M%S"),
        &tail[tail.len() - 4..]
    )
}

/// SHA-256 hex of a file, read in chunks.
pub fn file_hash(path: &Path) -> Result<String, RunError> {
    use sha2::{Digest, Sha256};
    let mut f = File::open(path).map_err(|e| io(path, &e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = std::io::Read::read(&mut f, &mut buf).map_err(|e| io(path, &e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

pub fn text_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A run's folder.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub dir: PathBuf,
}

impl RunDir {
    pub fn new(runs: &Path, id: &str) -> Self {
        Self { dir: runs.join(id) }
    }

    /// Finds a run by id or by a unique prefix of it.
    pub fn find(runs: &Path, id: &str) -> Result<Self, RunError> {
        let exact = runs.join(id);
        if exact.join(MANIFEST).is_file() {
            return Ok(Self { dir: exact });
        }
        let matches: Vec<PathBuf> = std::fs::read_dir(runs)
            .map_err(|e| io(runs, &e))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(id))
                    && p.join(MANIFEST).is_file()
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok(Self { dir: one.clone() }),
            [] => Err(RunError::NotFound(id.to_owned())),
            _ => Err(RunError::Corrupt(format!(
                "'{id}' matches {} runs; give more of the id",
                matches.len()
            ))),
        }
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join(MANIFEST)
    }

    pub fn results_path(&self) -> PathBuf {
        self.dir.join(RESULTS)
    }

    pub fn write_manifest(&self, m: &Manifest) -> Result<(), RunError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, &e))?;
        let path = self.manifest_path();
        let text = serde_json::to_string_pretty(m)
            .map_err(|e| RunError::Corrupt(format!("cannot write the manifest: {e}")))?;
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| io(&path, &e))
    }

    pub fn read_manifest(&self) -> Result<Manifest, RunError> {
        let path = self.manifest_path();
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, &e))?;
        serde_json::from_str(&text).map_err(|e| {
            RunError::Corrupt(format!(
                "{}:{}:{}: the run manifest is damaged ({e}); the run cannot be read or resumed",
                path.display(),
                e.line(),
                e.column()
            ))
        })
    }

    /// Takes the run's lock (one writer at a time), held while the returned file lives.
    pub fn lock(&self) -> Result<File, RunError> {
        let path = self.dir.join(LOCK);
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, &e))?;
        match f.try_lock() {
            Ok(()) => Ok(f),
            Err(std::fs::TryLockError::WouldBlock) => Err(RunError::Busy(
                self.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path.display().to_string(),
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&path, &e)),
        }
    }

    /// Reads the journal: every complete cell (a later line for the same cell — a retry —
    /// wins); a torn last line is ignored. Returns the cells and the byte length of the valid part.
    ///
    /// Holds every cell in memory: readers of whole runs use [`RunDir::stream_cells`].
    pub fn read_cells(&self, m: &Manifest) -> Result<(Cells, u64), RunError> {
        let path = self.results_path();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((BTreeMap::new(), 0)),
            Err(e) => return Err(io(&path, &e)),
        };
        let mut reader = BufReader::new(file);
        let mut cells = BTreeMap::new();
        let mut valid = 0u64;
        let mut line = Vec::new();
        let mut number = 0usize;
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| io(&path, &e))?;
            if n == 0 {
                break;
            }
            number += 1;
            if line.last() != Some(&b'\n') {
                break; // torn by a crash: never acknowledged
            }
            if number == 1 {
                check_header(&line, &path, m)?;
            } else {
                let cell = parse_cell(&line, &path, number)?;
                // A cell graded again (a retried failure) supersedes its earlier line.
                cells.insert((cell.item, cell.result.criterion_id.clone()), cell);
            }
            valid += n as u64;
        }
        Ok((cells, valid))
    }

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
    pub fn stream_cells(&self, m: &Manifest) -> Result<CellStream, RunError> {
        self.stream_cells_with(m, MAX_CURSORS)
    }

    fn stream_cells_with(&self, m: &Manifest, max_cursors: usize) -> Result<CellStream, RunError> {
        let path = self.results_path();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CellStream::empty(path));
            }
            Err(e) => return Err(io(&path, &e)),
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
                let f = File::open(&stream.path).map_err(|e| io(&stream.path, &e))?;
                sweep = Some((BufReader::with_capacity(64 * 1024, f), 0));
            }
            let Some((reader, at)) = sweep.as_mut() else {
                continue;
            };
            let skip = i64::try_from(segment.offset - *at)
                .map_err(|_| RunError::Corrupt("the results file is too large".into()))?;
            reader
                .seek_relative(skip)
                .map_err(|e| io(&stream.path, &e))?;
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
    type Item = Result<ItemCells, RunError>;

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
    fn open(path: &Path, segment: usize, s: Segment) -> Result<Self, RunError> {
        let mut file = File::open(path).map_err(|e| io(path, &e))?;
        file.seek(SeekFrom::Start(s.offset))
            .map_err(|e| io(path, &e))?;
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
    fn advance(&mut self, path: &Path) -> Result<(), RunError> {
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
) -> Result<(Cell, usize), RunError> {
    buf.clear();
    let n = reader.read_until(b'\n', buf).map_err(|e| io(path, &e))?;
    if n == 0 || buf.last() != Some(&b'\n') {
        return Err(RunError::Corrupt(format!(
            "{}:{number}: the results file was cut while it was read",
            path.display()
        )));
    }
    Ok((parse_cell(buf, path, number)?, n))
}

/// The first pass over a journal: checks its header and every line's item, and returns
/// its segments and the byte length of its valid part (a torn last line is left out).
fn scan(file: File, path: &Path, m: &Manifest) -> Result<(Vec<Segment>, u64), RunError> {
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
            .map_err(|e| io(path, &e))?;
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

/// Checks a journal's first line against the run's manifest.
fn check_header(line: &[u8], path: &Path, m: &Manifest) -> Result<(), RunError> {
    let h: Header = serde_json::from_slice(line).map_err(|e| {
        RunError::Corrupt(format!(
            "{}:1: not a results journal header ({e})",
            path.display()
        ))
    })?;
    if h.rubric_hash != m.rubric_hash || h.run != m.id {
        return Err(RunError::Corrupt(format!(
            "{}:1: these results belong to run {} with rubric hash {}…, not to run {} with rubric {}@{} (hash {}…); the results file is from another run or rubric version",
            path.display(),
            h.run,
            h.rubric_hash.get(..12).unwrap_or(&h.rubric_hash),
            m.id,
            m.rubric_id,
            m.rubric_version,
            m.rubric_hash.get(..12).unwrap_or(&m.rubric_hash)
        )));
    }
    Ok(())
}

/// One journal line (number `number`) as a cell.
fn parse_cell(line: &[u8], path: &Path, number: usize) -> Result<Cell, RunError> {
    serde_json::from_slice(line).map_err(|e| not_a_result(path, number, &e))
}

fn not_a_result(path: &Path, number: usize, e: &serde_json::Error) -> RunError {
    RunError::Corrupt(format!(
        "{}:{number}: not a result line ({e}); the results file is damaged",
        path.display()
    ))
}

/// Appends cells to a run's journal: flushed to the OS per item, synced every
/// [`SYNC_EVERY`] and at the end. Holds the run's lock.
pub struct RunWriter {
    file: std::io::BufWriter<File>,
    path: PathBuf,
    last_sync: Instant,
    _lock: File,
}

impl RunWriter {
    /// Starts the journal of a new run (after its manifest is written).
    pub fn create(run: &RunDir, m: &Manifest) -> Result<Self, RunError> {
        let lock = run.lock()?;
        let path = run.results_path();
        let mut file = File::create(&path).map_err(|e| io(&path, &e))?;
        let header = serde_json::to_string(&Header {
            run: m.id.clone(),
            rubric_hash: m.rubric_hash.clone(),
        })
        .map_err(|e| RunError::Corrupt(e.to_string()))?;
        writeln!(file, "{header}").map_err(|e| io(&path, &e))?;
        file.sync_all().map_err(|e| io(&path, &e))?;
        Ok(Self::wrap(file, path, lock))
    }

    /// Reopens a journal to resume it: the torn tail (past `valid` bytes) is cut first, so
    /// new lines never follow half a line.
    pub fn reopen(run: &RunDir, m: &Manifest, valid: u64) -> Result<Self, RunError> {
        let lock = run.lock()?;
        let path = run.results_path();
        if valid == 0 {
            drop(lock);
            return Self::create(run, m);
        }
        let mut file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, &e))?;
        file.set_len(valid).map_err(|e| io(&path, &e))?;
        file.seek(SeekFrom::End(0)).map_err(|e| io(&path, &e))?;
        Ok(Self::wrap(file, path, lock))
    }

    fn wrap(file: File, path: PathBuf, lock: File) -> Self {
        Self {
            file: std::io::BufWriter::with_capacity(64 * 1024, file),
            path,
            last_sync: Instant::now(),
            _lock: lock,
        }
    }

    /// Appends one item's cells.
    pub fn append(
        &mut self,
        item: usize,
        item_id: &str,
        results: &[CriterionResult],
    ) -> Result<(), RunError> {
        for r in results {
            let cell = Cell {
                item,
                item_id: item_id.to_owned(),
                result: r.clone(),
            };
            let line =
                serde_json::to_string(&cell).map_err(|e| RunError::Corrupt(e.to_string()))?;
            writeln!(self.file, "{line}").map_err(|e| io(&self.path, &e))?;
        }
        self.file.flush().map_err(|e| io(&self.path, &e))?;
        if self.last_sync.elapsed() >= SYNC_EVERY {
            self.file
                .get_ref()
                .sync_data()
                .map_err(|e| io(&self.path, &e))?;
            self.last_sync = Instant::now();
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<(), RunError> {
        self.file.flush().map_err(|e| io(&self.path, &e))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| io(&self.path, &e))
    }
}

/// Every run's manifest, oldest first (by start time); damaged ones are returned as errors, last.
pub fn list_runs(runs: &Path) -> Vec<Result<Manifest, RunError>> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    dirs.sort();
    let mut all: Vec<Result<Manifest, RunError>> = dirs
        .into_iter()
        .map(|dir| RunDir { dir }.read_manifest())
        .collect();
    // Oldest first by start time: ids name the second a run began, so two runs started
    // within one second would sort by their random tail, not by which came first.
    // Damaged manifests come last.
    all.sort_by_key(|m| match m {
        Ok(m) => (false, started(m), m.id.clone()),
        Err(_) => (true, None, String::new()),
    });
    all
}

fn started(m: &Manifest) -> Option<jiff::Timestamp> {
    m.started_at.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MethodKind, Verdict};

    fn manifest(id: &str, hash: &str) -> Manifest {
        Manifest {
            id: id.into(),
            name: None,
            rubric_id: "r".into(),
            rubric_version: "1.0.0".into(),
            rubric_hash: hash.into(),
            rubric: serde_json::json!({}),
            dataset: DatasetRef {
                path: "/d.jsonl".into(),
                hash: "h".into(),
            },
            settings: serde_json::json!({}),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: None,
            totals: None,
        }
    }

    fn result(id: &str) -> CriterionResult {
        let mut r = CriterionResult::failed(
            id,
            MethodKind::Check,
            crate::model::Failure::error("x", "y"),
        );
        r.failure = None;
        r.verdict = Some(Verdict::Met);
        r.value = Some(1.0);
        r
    }

    #[test]
    fn a_torn_tail_is_ignored_then_cut_before_resuming() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "r1");
        let m = manifest("r1", "abc");
        run.write_manifest(&m).unwrap();
        let mut w = RunWriter::create(&run, &m).unwrap();
        w.append(0, "a", &[result("c1"), result("c2")]).unwrap();
        w.finish().unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(run.results_path())
            .unwrap();
        f.write_all(b"{\"item\": 1, \"item_id\": \"b\", \"res")
            .unwrap();
        drop(f);
        let (cells, valid) = run.read_cells(&m).unwrap();
        assert_eq!(cells.len(), 2);
        let mut w = RunWriter::reopen(&run, &m, valid).unwrap();
        w.append(1, "b", &[result("c1")]).unwrap();
        w.finish().unwrap();
        let (cells, _) = run.read_cells(&m).unwrap();
        assert_eq!(cells.len(), 3);
        assert!(cells.contains_key(&(1, "c1".into())));
    }

    #[test]
    fn damage_and_foreign_results_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "r1");
        let m = manifest("r1", "abc");
        run.write_manifest(&m).unwrap();
        let mut w = RunWriter::create(&run, &m).unwrap();
        w.append(0, "a", &[result("c1")]).unwrap();
        w.finish().unwrap();
        let other = manifest("r1", "def");
        let e = run.read_cells(&other).unwrap_err().to_string();
        assert!(
            e.contains(":1: these results belong to run r1 with rubric hash abc…"),
            "{e}"
        );
        let mut f = OpenOptions::new()
            .append(true)
            .open(run.results_path())
            .unwrap();
        f.write_all(b"garbage\n{}\n").unwrap();
        drop(f);
        let e = run.read_cells(&m).unwrap_err().to_string();
        assert!(e.contains("results.jsonl:3: not a result line"), "{e}");
        std::fs::write(run.manifest_path(), "{\"id\": \"r1\", \"rub").unwrap();
        let e = run.read_manifest().unwrap_err().to_string();
        assert!(
            e.contains("manifest.json:1:") && e.contains("the run manifest is damaged"),
            "{e}"
        );
        assert!(
            RunDir::find(dir.path(), "zz")
                .unwrap_err()
                .to_string()
                .contains("no run 'zz'")
        );
    }

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

    #[test]
    fn one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "r1");
        let m = manifest("r1", "abc");
        run.write_manifest(&m).unwrap();
        let _w = RunWriter::create(&run, &m).unwrap();
        let e = RunWriter::reopen(&run, &m, 10).err().unwrap().to_string();
        assert!(e.contains("is being written by another process"), "{e}");
    }
}
