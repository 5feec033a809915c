//! The registry's files: paths, ids and versions, snapshot text, the `current` pointer,
//! the history, the writer's lock.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::history::{self, Event};
use super::{RegistryError, Result, Version};
use crate::formats::native::rubric_to_yaml;
use crate::formats::{Diagnostic, Diagnostics, Format, parse_rubric_text};
use crate::model::Rubric;

pub(super) const CURRENT: &str = "current";
pub(super) const HISTORY: &str = "history.jsonl";
const LOCK: &str = ".lock";

pub(super) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> RegistryError {
    let path = path.to_path_buf();
    move |source| RegistryError::Io {
        action,
        path,
        source,
    }
}

/// Refuses ids that would escape the registry folder or that file systems refuse.
pub(super) fn check_id(id: &str) -> Result<()> {
    crate::store::names::problem(id).map_or(Ok(()), |why| {
        Err(RegistryError::BadId {
            id: id.to_owned(),
            why,
        })
    })
}

pub(super) fn parse_version(id: &str, version: &str) -> Result<Version> {
    Version::parse(version).map_err(|why| RegistryError::BadVersion {
        id: id.to_owned(),
        version: version.to_owned(),
        why,
    })
}

/// The snapshot text of a rubric, checked to read back as the same id and version.
pub(super) fn render(rubric: &Rubric) -> Result<String> {
    let text = rubric_to_yaml(rubric).map_err(|source| RegistryError::Unwritable {
        id: rubric.id.clone(),
        source,
    })?;
    let file = format!("{}.yaml", rubric.version);
    let unsaveable = |diagnostics| RegistryError::Unsaveable {
        id: rubric.id.clone(),
        diagnostics,
    };
    let back = parse_rubric_text(
        &file,
        &text,
        &rubric.id,
        Path::new("."),
        Some(Format::Native),
    )
    .map_err(unsaveable)?;
    if back.rubric.id != rubric.id || back.rubric.version != rubric.version {
        return Err(unsaveable(Diagnostics::one(Diagnostic::whole(
            &file,
            format!(
                "it reads back as '{}' {} instead of '{}' {}",
                back.rubric.id, back.rubric.version, rubric.id, rubric.version
            ),
        ))));
    }
    Ok(text)
}

pub(super) fn snapshot_path(dir: &Path, version: &str) -> PathBuf {
    dir.join(format!("{version}.yaml"))
}

pub(super) fn read_snapshot_text(id: &str, dir: &Path, version: &str) -> Result<String> {
    let path = snapshot_path(dir, version);
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let saved: Vec<String> = saved_versions(dir)?.into_iter().map(|(_, s)| s).collect();
            Err(RegistryError::NoSuchVersion {
                id: id.to_owned(),
                version: version.to_owned(),
                saved: if saved.is_empty() {
                    "none".into()
                } else {
                    saved.join(", ")
                },
            })
        }
        Err(e) if e.kind() == io::ErrorKind::InvalidData => Err(RegistryError::Corrupt {
            file: path,
            detail: "the snapshot is not UTF-8 text; restore it from a backup (snapshots are never rewritten)".into(),
        }),
        Err(e) => Err(io_err("read", &path)(e)),
    }
}

/// Saved versions by semver precedence, lowest first.
pub(super) fn saved_versions(dir: &Path) -> Result<Vec<(Version, String)>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("read", dir)(e)),
    };
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(io_err("read", dir))?;
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".yaml")) else {
            continue;
        };
        if let Ok(v) = Version::parse(stem) {
            out.push((v, stem.to_owned()));
        }
    }
    out.sort();
    Ok(out)
}

/// The version `current` names, or `None` when there is no current pointer.
pub(super) fn read_current(dir: &Path) -> Result<Option<String>> {
    let path = dir.join(CURRENT);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("read", &path)(e)),
    };
    let version = text.trim();
    if let Err(why) = Version::parse(version) {
        return Err(RegistryError::Corrupt {
            file: path,
            detail: format!(
                "it should hold the current version but holds '{}' ({why}); write the current version into it, or remove it to mark the rubric deleted",
                version.chars().take(40).collect::<String>()
            ),
        });
    }
    Ok(Some(version.to_owned()))
}

pub(super) fn read_events(dir: &Path) -> Result<Vec<Event>> {
    let path = dir.join(HISTORY);
    history::read(&path).map_err(|e| match e {
        history::ReadError::Io(e) => io_err("read", &path)(e),
        history::ReadError::BadLine { line, detail } => RegistryError::Corrupt {
            file: path.clone(),
            detail: format!(
                "line {line} is not a registry event ({detail}); the file is only ever appended to, so repair or remove that line"
            ),
        },
    })
}

/// Holds the rubric folder's lock until dropped.
pub(super) fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err("open", &path))?;
    file.lock().map_err(io_err("lock", &path))?;
    Ok(file)
}

pub(super) fn file_time(path: &Path) -> jiff::Timestamp {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

pub(super) fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

pub(super) fn one_line(note: &str) -> String {
    note.split_whitespace().collect::<Vec<_>>().join(" ")
}
