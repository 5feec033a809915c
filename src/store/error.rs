//! The store's one error: reading or writing a workspace file failed (keeping the path and
//! the `io::Error` itself, whose kind and OS code tell a full disk from a refused
//! permission), or what a file holds, or what was asked of it, is refused.

use std::path::Path;

use crate::core::diag::Diagnostics;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file system refused a read or a write of `path`.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The OS's error, whole (kind and code).
        #[source]
        source: std::io::Error,
    },
    /// What was asked is refused (a bad name, an unknown item, an entry that is not there),
    /// with what to do about it.
    #[error("{0}")]
    Refused(String),
    /// A file the store wrote cannot be read back as it should be (a run's manifest or
    /// journal, an index).
    #[error("{0}")]
    Corrupt(String),
    /// The workspace's config has problems, located.
    #[error("{0}")]
    Config(Diagnostics),
    /// No run has this id (or prefix).
    #[error("no run '{0}' in this workspace; `rubricate runs list` shows them")]
    RunNotFound(String),
    /// Another process holds the run's lock (the run id, the lock file).
    #[error("run {0} is being written by another process (it holds {1})")]
    RunBusy(String, String),
}

/// The name the UI's file helpers (drafts, state files) use for the same error.
pub type FileError = StoreError;

impl StoreError {
    /// The error of an I/O call on `path`, keeping the `io::Error` whole (kind and OS code).
    pub fn io(path: &(impl AsRef<Path> + ?Sized), source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }

    /// A `map_err` adapter naming the path: `.map_err(StoreError::at(&path))`.
    pub fn at(path: &(impl AsRef<Path> + ?Sized)) -> impl FnOnce(std::io::Error) -> StoreError {
        let path = path.as_ref().display().to_string();
        move |source| StoreError::Io { path, source }
    }

    /// The I/O error's kind, when the file system refused (`StorageFull`, `PermissionDenied`…).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            StoreError::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }
}

impl From<String> for StoreError {
    fn from(why: String) -> Self {
        StoreError::Refused(why)
    }
}

impl From<Diagnostics> for StoreError {
    fn from(d: Diagnostics) -> Self {
        StoreError::Config(d)
    }
}
