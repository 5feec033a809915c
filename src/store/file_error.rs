//! The error of reading or writing one of a user's files, keeping its cause: the path and
//! the `io::Error` (whose kind tells a full disk from a refused permission), or why the
//! content was refused. For helpers above the store (the UI's drafts and state files)
//! that would otherwise pass the cause on as text.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The file was read but what it holds (or what was asked of it) is refused.
    #[error("{0}")]
    Refused(String),
}

impl FileError {
    /// A `map_err` adapter naming the path: `.map_err(FileError::at(&path))`.
    pub fn at(path: &(impl AsRef<Path> + ?Sized)) -> impl FnOnce(std::io::Error) -> FileError {
        let path = path.as_ref().display().to_string();
        move |source| FileError::Io { path, source }
    }
}

impl From<String> for FileError {
    fn from(why: String) -> Self {
        FileError::Refused(why)
    }
}
