//! Runs on disk: `runs/<id>/manifest.json` (what was graded, with what, and how it ended)
//! and `runs/<id>/results.jsonl`, a journal of cells appended by one writer as items finish.
//! A run cut at any byte (kill -9, power loss) is read back without its torn last line and
//! resumed by grading exactly the cells the journal lacks.

use crate::store::StoreError;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod batches;
mod lookup;
mod manifest;
mod stream;
mod writer;

pub use batches::{BATCHES, BatchRecord, BatchStage, OtherBatch};
pub use manifest::{DatasetRef, Manifest, RunState, Totals};
pub use stream::{CellStream, ItemCells};
pub use writer::RunWriter;

use crate::core::atomic::AtomicFile;
use crate::model::CriterionResult;

/// A run's manifest file, in its folder.
pub const MANIFEST: &str = "manifest.json";
/// A run's journal of cells, in its folder.
pub const RESULTS: &str = "results.jsonl";
/// Held while the manifest is replaced.
const MANIFEST_LOCK: &str = "manifest.lock";
const LOCK: &str = ".lock";
/// Held while a batch run talks to its provider (one process at a time submits and polls).
const BATCH_LOCK: &str = ".batch.lock";

/// How often appended cells are synced to disk (a crash loses at most this much; those
/// cells are graded again on resume).
const SYNC_EVERY: Duration = Duration::from_millis(500);

/// A journal's cells by (item position, criterion id).
pub type Cells = BTreeMap<(usize, String), Cell>;

/// One journal line: a criterion's result for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The item's position in the dataset (0-based).
    pub item: usize,
    /// The item's id.
    pub item_id: String,
    /// The criterion's result.
    pub result: CriterionResult,
}

/// The journal's first line: which run and rubric its cells belong to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    run: String,
    rubric_hash: String,
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
pub fn file_hash(path: &Path) -> Result<String, StoreError> {
    crate::core::hash::sha256_file_hex(path).map_err(|e| StoreError::io(path, e))
}

/// A run's folder.
#[derive(Debug, Clone)]
pub struct RunDir {
    /// The folder.
    pub dir: PathBuf,
}

impl RunDir {
    /// The folder of run `id` in `runs`.
    pub fn new(runs: &Path, id: &str) -> Self {
        Self { dir: runs.join(id) }
    }

    /// Where its manifest is.
    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join(MANIFEST)
    }

    /// Where its journal is.
    pub fn results_path(&self) -> PathBuf {
        self.dir.join(RESULTS)
    }

    /// Replaces the manifest, under its own lock: every writer of it holds the lock, so a
    /// temporary file of it found then was left by a writer that died — it is removed.
    pub fn write_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| StoreError::io(&self.dir, e))?;
        let path = self.manifest_path();
        let text = serde_json::to_string_pretty(m)
            .map_err(|e| StoreError::Corrupt(format!("cannot write the manifest: {e}")))?;
        let lock_path = self.dir.join(MANIFEST_LOCK);
        let lock = crate::core::atomic::open_no_follow(
            &lock_path,
            OpenOptions::new().create(true).truncate(false).write(true),
        )
        .map_err(|e| StoreError::io(&lock_path, e))?;
        lock.lock().map_err(|e| StoreError::io(&lock_path, e))?;
        let prefix = format!(".{MANIFEST}.");
        crate::core::stale::remove_temps_older_than(
            &self.dir,
            |n| crate::core::stale::is_temp(n, &prefix),
            std::time::Duration::ZERO,
        );
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))
    }

    /// Reads the manifest; a damaged one is refused with its line and column.
    pub fn read_manifest(&self) -> Result<Manifest, StoreError> {
        let path = self.manifest_path();
        let text = std::fs::read_to_string(&path).map_err(|e| StoreError::io(&path, e))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            StoreError::Corrupt(format!(
                "{}:{}:{}: the run manifest is damaged ({e}); the run cannot be read or resumed",
                path.display(),
                e.line(),
                e.column()
            ))
        })?;
        // The id names the run's folder wherever it is used: it must be this folder's name.
        if self
            .dir
            .file_name()
            .is_none_or(|n| n.to_string_lossy() != m.id)
        {
            return Err(StoreError::Corrupt(format!(
                "{}: its id '{}' is not its folder's name; the run cannot be read or resumed",
                path.display(),
                m.id.escape_debug()
            )));
        }
        Ok(m)
    }

    /// Takes the run's lock (one writer at a time), held while the returned file lives.
    pub fn lock(&self) -> Result<File, StoreError> {
        self.lock_named(LOCK)
    }

    /// Takes the run's batch lock (one process submits and polls at a time).
    pub fn batch_lock(&self) -> Result<File, StoreError> {
        self.lock_named(BATCH_LOCK)
    }

    fn lock_named(&self, name: &str) -> Result<File, StoreError> {
        let path = self.dir.join(name);
        let f = crate::core::atomic::open_no_follow(
            &path,
            OpenOptions::new().create(true).truncate(false).write(true),
        )
        .map_err(|e| StoreError::io(&path, e))?;
        match f.try_lock() {
            Ok(()) => Ok(f),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::RunBusy(
                self.dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path.display().to_string(),
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::io(&path, e)),
        }
    }

    /// Reads the journal: every complete cell (a later line for the same cell — a retry —
    /// wins); a torn last line is ignored. Returns the cells and the byte length of the valid part.
    ///
    /// Holds every cell in memory: readers of whole runs use [`RunDir::stream_cells`].
    pub fn read_cells(&self, m: &Manifest) -> Result<(Cells, u64), StoreError> {
        let path = self.results_path();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((BTreeMap::new(), 0)),
            Err(e) => return Err(StoreError::io(&path, e)),
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
                .map_err(|e| StoreError::io(&path, e))?;
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
}

/// Checks a journal's first line against the run's manifest.
fn check_header(line: &[u8], path: &Path, m: &Manifest) -> Result<(), StoreError> {
    let h: Header = serde_json::from_slice(line).map_err(|e| {
        StoreError::Corrupt(format!(
            "{}:1: not a results journal header ({e})",
            path.display()
        ))
    })?;
    if h.rubric_hash != m.rubric_hash || h.run != m.id {
        return Err(StoreError::Corrupt(format!(
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
fn parse_cell(line: &[u8], path: &Path, number: usize) -> Result<Cell, StoreError> {
    serde_json::from_slice(line).map_err(|e| not_a_result(path, number, &e))
}

fn not_a_result(path: &Path, number: usize, e: &serde_json::Error) -> StoreError {
    StoreError::Corrupt(format!(
        "{}:{number}: not a result line ({e}); the results file is damaged",
        path.display()
    ))
}

/// Removes run folders a kill left before their manifest was in place (only old temporary
/// manifests in them): the next run started cleans up. Returns how many went.
pub fn sweep_abandoned(runs: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return 0;
    };
    let mut removed = 0;
    for dir in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        if dir.join(MANIFEST).exists() {
            continue;
        }
        // Old (not a run starting this moment), judged before the sweep touches it.
        let old = std::fs::metadata(&dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > crate::core::stale::STALE_AFTER);
        if !old {
            continue;
        }
        crate::core::stale::remove_stale_temps(&dir, |n| {
            crate::core::stale::is_temp(n, ".manifest.json.")
        });
        let _ = std::fs::remove_file(dir.join(MANIFEST_LOCK));
        // Empty now (nothing else was ever written there): the folder goes too.
        if std::fs::remove_dir(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Every readable run over `dataset` (by its file; a run's relative dataset path is read
/// from the workspace `root`), oldest first.
pub fn runs_over(runs: &Path, root: &Path, dataset: &Path) -> Vec<Manifest> {
    list_runs(runs)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|m| {
            let p = Path::new(&m.dataset.path);
            let p = if p.is_relative() {
                root.join(p)
            } else {
                p.to_path_buf()
            };
            same_file(&p, dataset)
        })
        .collect()
}

/// Whether two paths name one file (by their real paths; as given when either is missing).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Every run's manifest, oldest first (by start time); damaged ones are returned as errors, last.
pub fn list_runs(runs: &Path) -> Vec<Result<Manifest, StoreError>> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    dirs.sort();
    let mut all: Vec<Result<Manifest, StoreError>> = dirs
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
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_run_folder_killed_before_its_manifest_is_swept_by_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        let long_ago = std::time::SystemTime::now()
            - crate::core::stale::STALE_AFTER
            - Duration::from_secs(60);
        let age = |p: &Path| {
            File::open(p).unwrap().set_modified(long_ago).unwrap();
        };
        // Killed: only a temporary manifest, long ago.
        let dead = dir.path().join("20260101-000000-dead");
        std::fs::create_dir(&dead).unwrap();
        let temp = dead.join(".manifest.json.Xy12ab.tmp");
        std::fs::write(&temp, "{").unwrap();
        age(&temp);
        age(&dead);
        // Starting now: left alone.
        let fresh = dir.path().join("20260101-000001-new0");
        std::fs::create_dir(&fresh).unwrap();
        // A real run: left alone.
        let real = dir.path().join("20260101-000002-real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join(MANIFEST), "{}").unwrap();
        age(&real);
        assert_eq!(sweep_abandoned(dir.path()), 1);
        assert!(!dead.exists() && fresh.exists() && real.exists());
    }
    #[test]
    fn a_manifest_written_again_removes_the_temporary_files_of_writers_that_died() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "20260101-000000-abcd");
        run.write_manifest(&manifest("20260101-000000-abcd", "h"))
            .unwrap();
        // A writer killed between its temporary file and the rename, a moment ago.
        let left = run.dir.join(".manifest.json.Qz81kf.tmp");
        std::fs::write(&left, "{\"id\":").unwrap();
        let other = run.dir.join(".results.jsonl.Qz81kf.tmp");
        std::fs::write(&other, "x").unwrap();
        run.write_manifest(&manifest("20260101-000000-abcd", "h"))
            .unwrap();
        assert!(
            !left.exists(),
            "the dead writer's temporary manifest is gone"
        );
        assert!(other.exists(), "only the manifest's own");
        assert_eq!(run.read_manifest().unwrap().id, "20260101-000000-abcd");
    }

    use crate::model::{MethodKind, Verdict};

    pub(super) fn manifest(id: &str, hash: &str) -> Manifest {
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
            batches: Vec::new(),
        }
    }

    pub(super) fn result(id: &str) -> CriterionResult {
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
