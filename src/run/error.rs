//! The run engine's error. It keeps the layer's own error (the store's, a located file
//! problem, the LLM client's, the registry's) instead of flattening it to text, so a front
//! end can tell a full disk from a bad rubric; its text is the message that names what to
//! fix (the front end adds the exit code or shows it where the user is).

use crate::core::diag::{Diagnostic, Diagnostics};
use crate::llm::LlmError;
use crate::store::StoreError;
use crate::store::registry::RegistryError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What was asked cannot be done as asked (an unknown item, a flag that does not fit,
    /// nothing to do), with what to do instead.
    #[error("{0}")]
    Input(String),
    /// A file's content is refused, each problem located (`file:line:column: message`).
    #[error("{0}")]
    Diagnostics(#[from] Diagnostics),
    /// The workspace on disk: a read or write the file system refused, or a store file
    /// that is damaged or refused.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The rubric registry (its own files, ids and versions).
    #[error("{0}")]
    Registry(#[from] RegistryError),
    /// Setting up a judge: an unknown provider or model, a missing key, a bad base URL.
    #[error("{0}")]
    Llm(#[from] LlmError),
}

/// What kind of failure an [`Error`] is, for a front end that reacts to each differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user's input (a request, a rubric, a dataset, a config) is refused: fix it and
    /// try again.
    Refused,
    /// The file system failed a read or a write (a full disk, a refused permission, a
    /// vanished folder): the work was not saved, or not read.
    Disk(std::io::ErrorKind),
    /// A judge could not be set up or asked.
    Judge,
}

impl Error {
    pub fn input(message: impl Into<String>) -> Self {
        Error::Input(message.into())
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Store(StoreError::Io { source, .. })
            | Error::Registry(RegistryError::Io { source, .. }) => ErrorKind::Disk(source.kind()),
            Error::Llm(_) => ErrorKind::Judge,
            Error::Input(_) | Error::Diagnostics(_) | Error::Store(_) | Error::Registry(_) => {
                ErrorKind::Refused
            }
        }
    }

    /// The file system failed the operation (disk full, permission refused, …). When the
    /// operation was a write, this is the failure that must stop a quit: the user's work
    /// is not on disk. A refused rubric or request is not.
    pub fn is_disk_failure(&self) -> bool {
        matches!(self.kind(), ErrorKind::Disk(_))
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Error::Diagnostics(Diagnostics::one(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_and_a_bad_rubric_are_told_apart_and_read_as_before() {
        let full = Error::from(StoreError::io(
            "labels/d/pat.jsonl",
            std::io::Error::from(std::io::ErrorKind::StorageFull),
        ));
        assert_eq!(
            full.kind(),
            ErrorKind::Disk(std::io::ErrorKind::StorageFull)
        );
        assert!(full.is_disk_failure());
        assert!(
            full.to_string().starts_with("labels/d/pat.jsonl: "),
            "{full}"
        );

        let bad = Error::from(Diagnostic::whole("r.yaml", "no criteria"));
        assert_eq!(bad.kind(), ErrorKind::Refused);
        assert!(!bad.is_disk_failure());
        assert_eq!(bad.to_string(), "r.yaml: no criteria");

        let asked = Error::input("no item 'x' in the dataset");
        assert_eq!(asked.kind(), ErrorKind::Refused);
        assert_eq!(asked.to_string(), "no item 'x' in the dataset");
    }

    /// A registry write the file system refuses reaches a front end as a disk failure, with
    /// the `io::Error` itself (its OS code) under the message, not its text.
    #[test]
    fn a_registry_write_the_disk_refuses_is_a_disk_failure_keeping_the_os_error() {
        use crate::model::{Criterion, Rubric};
        use crate::store::registry::Registry;

        let dir = tempfile::tempdir().unwrap();
        // The registry's folder is a file: every write under it is refused by the OS.
        let root = dir.path().join("rubrics");
        std::fs::write(&root, "not a folder").unwrap();
        let rubric = Rubric::new(
            "answer",
            vec![Criterion::binary("accurate", "The answer is correct.", 1.0)],
        );
        let err = Error::from(Registry::new(&root).save(&rubric, "first").unwrap_err());

        assert!(matches!(err, Error::Registry(_)), "{err:?}");
        assert!(matches!(err.kind(), ErrorKind::Disk(_)), "{err:?}");
        assert!(err.is_disk_failure());
        let mut cause = std::error::Error::source(&err);
        let mut os_code = None;
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                os_code = io.raw_os_error();
            }
            cause = c.source();
        }
        assert!(
            os_code.is_some(),
            "no io::Error with an OS code under {err:?}"
        );
        assert!(
            err.to_string().contains(&root.display().to_string()),
            "{err}"
        );
    }
}
