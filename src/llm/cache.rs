//! The response cache: content-addressed on disk. The key is the SHA-256 of the provider,
//! base URL, model, parameters and messages, so an unchanged rubric on an unchanged dataset
//! asks nothing twice. Entries are written to a temporary name and renamed; an entry that
//! cannot be read is a miss, never an error. No key or header is part of an entry.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use super::{ChatRequest, ChatResponse};

/// Replies kept on disk by a hash of their endpoint and request (one JSON file each), so
/// a repeated call costs nothing; shared between runs and processes.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// What `rubricate cache stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Replies kept.
    pub entries: u64,
    /// Bytes they take on disk.
    pub bytes: u64,
}

static TEMP: AtomicU64 = AtomicU64::new(0);

impl Cache {
    /// A cache in `dir` (made when the first reply is stored).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Where its files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the temporary files killed runs left in the cache's shards (old ones only:
    /// another run may be writing now). Called when a run starts writing to the cache.
    pub fn sweep_stale(&self) -> usize {
        let Ok(shards) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        shards
            .flatten()
            .filter(|s| s.file_type().is_ok_and(|t| t.is_dir()))
            .map(|s| {
                crate::core::stale::remove_stale_temps(&s.path(), |n| {
                    crate::core::stale::is_temp(n, ".")
                })
            })
            .sum()
    }

    /// The key of a request to one endpoint.
    pub fn key(endpoint: &str, req: &ChatRequest) -> String {
        let canonical = json!({"endpoint": endpoint, "request": req}).to_string();
        crate::core::hash::sha256_hex(canonical)
    }

    fn path(&self, key: &str) -> PathBuf {
        let (head, tail) = key.split_at(2.min(key.len()));
        self.dir.join(head).join(format!("{tail}.json"))
    }

    /// The reply kept under `key`; `None` when there is none or it cannot be read (a damaged
    /// entry is a miss, never an error).
    pub fn get(&self, key: &str) -> Option<ChatResponse> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        ChatResponse::from_stored(&v)
    }

    /// Stores a response; a failure to write only costs a later miss.
    pub fn put(&self, key: &str, response: &ChatResponse) {
        let path = self.path(key);
        let Some(parent) = path.parent() else {
            return;
        };
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
        let body = response.stored().to_string();
        let temp = parent.join(format!(
            ".{}.{}.tmp",
            std::process::id(),
            TEMP.fetch_add(1, Ordering::Relaxed)
        ));
        // A write that fails half-way (a full disk) leaves nothing behind either.
        if std::fs::write(&temp, body).is_err() || std::fs::rename(&temp, &path).is_err() {
            let _ = std::fs::remove_file(&temp);
        }
    }

    /// How many replies are kept and how much space they take.
    pub fn stats(&self) -> CacheStats {
        let mut stats = CacheStats::default();
        let Ok(shards) = std::fs::read_dir(&self.dir) else {
            return stats;
        };
        for shard in shards.flatten() {
            for entry in std::fs::read_dir(shard.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if entry.path().extension().is_some_and(|e| e == "json") {
                    stats.entries += 1;
                    stats.bytes += entry.metadata().map_or(0, |m| m.len());
                }
            }
        }
        stats
    }

    /// Removes every entry (the folder itself).
    pub fn clear(&self) -> std::io::Result<CacheStats> {
        let before = self.stats();
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(before),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CacheStats::default()),
            Err(e) => Err(e),
        }
    }
}
