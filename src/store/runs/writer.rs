//! The one writer of a run's journal: the header first, then cells as items finish,
//! flushed per item and synced every [`SYNC_EVERY`](super::SYNC_EVERY); reopened to resume
//! with its torn tail cut.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Instant;

use super::{Cell, Header, Manifest, RunDir, SYNC_EVERY};
use crate::model::CriterionResult;
use crate::store::StoreError;

/// Appends cells to a run's journal: flushed to the OS per item, synced every
/// [`SYNC_EVERY`] and at the end. Holds the run's lock.
pub struct RunWriter {
    file: std::io::BufWriter<File>,
    path: PathBuf,
    last_sync: Instant,
    throttle: Option<Throttle>,
    _lock: File,
}

/// Set to a number of bytes a second, the journal is written no faster than that: a slow
/// disk on demand, for the memory benchmark (`benches/memory.rs`) to show that a writer
/// falling behind slows grading instead of queueing results. Not a user setting.
pub const THROTTLE_ENV: &str = "RUBRICATE_BENCH_JOURNAL_BYTES_PER_SEC";

/// Holds the journal's pace to a rate, as a slow disk would (see [`THROTTLE_ENV`]).
struct Throttle {
    bytes_per_sec: f64,
    since: Instant,
    written: u64,
}

impl Throttle {
    fn from_env() -> Option<Self> {
        let rate: f64 = std::env::var(THROTTLE_ENV).ok()?.trim().parse().ok()?;
        (rate.is_finite() && rate > 0.0).then(|| Self {
            bytes_per_sec: rate,
            since: Instant::now(),
            written: 0,
        })
    }

    /// Blocks until `bytes` more fit the rate, as a write to a slow disk blocks.
    fn pace(&mut self, bytes: usize) {
        self.written += bytes as u64;
        let due = std::time::Duration::from_secs_f64(self.written as f64 / self.bytes_per_sec);
        if let Some(wait) = due.checked_sub(self.since.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

impl RunWriter {
    /// Starts the journal of a new run (after its manifest is written).
    pub fn create(run: &RunDir, m: &Manifest) -> Result<Self, StoreError> {
        let lock = run.lock()?;
        let path = run.results_path();
        let mut file = crate::core::atomic::open_no_follow(
            &path,
            OpenOptions::new().create(true).truncate(true).write(true),
        )
        .map_err(|e| StoreError::io(&path, e))?;
        let header = serde_json::to_string(&Header {
            run: m.id.clone(),
            rubric_hash: m.rubric_hash.clone(),
        })
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        writeln!(file, "{header}").map_err(|e| StoreError::io(&path, e))?;
        file.sync_all().map_err(|e| StoreError::io(&path, e))?;
        Ok(Self::wrap(file, path, lock))
    }

    /// Reopens a journal to resume it: the torn tail (past `valid` bytes) is cut first, so
    /// new lines never follow half a line.
    pub fn reopen(run: &RunDir, m: &Manifest, valid: u64) -> Result<Self, StoreError> {
        let lock = run.lock()?;
        let path = run.results_path();
        if valid == 0 {
            drop(lock);
            return Self::create(run, m);
        }
        let mut file = crate::core::atomic::open_no_follow(&path, OpenOptions::new().write(true))
            .map_err(|e| StoreError::io(&path, e))?;
        file.set_len(valid).map_err(|e| StoreError::io(&path, e))?;
        file.seek(SeekFrom::End(0))
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(Self::wrap(file, path, lock))
    }

    fn wrap(file: File, path: PathBuf, lock: File) -> Self {
        Self {
            file: std::io::BufWriter::with_capacity(64 * 1024, file),
            path,
            last_sync: Instant::now(),
            throttle: Throttle::from_env(),
            _lock: lock,
        }
    }

    /// Appends one item's cells.
    pub fn append(
        &mut self,
        item: usize,
        item_id: &str,
        results: &[CriterionResult],
    ) -> Result<(), StoreError> {
        let mut bytes = 0;
        for r in results {
            let cell = Cell {
                item,
                item_id: item_id.to_owned(),
                result: r.clone(),
            };
            let line =
                serde_json::to_string(&cell).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            writeln!(self.file, "{line}").map_err(|e| StoreError::io(&self.path, e))?;
            bytes += line.len() + 1;
        }
        self.file
            .flush()
            .map_err(|e| StoreError::io(&self.path, e))?;
        if let Some(t) = self.throttle.as_mut() {
            t.pace(bytes);
        }
        if self.last_sync.elapsed() >= SYNC_EVERY {
            self.file
                .get_ref()
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, e))?;
            self.last_sync = Instant::now();
        }
        Ok(())
    }

    /// Flushes and syncs what is left: the journal is whole on disk.
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.file
            .flush()
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| StoreError::io(&self.path, e))
    }
}
