//! The rubric registry: every saved version of every rubric, on files.
//!
//! Under the workspace root, one folder per rubric id:
//!
//! ```text
//! .rubricate/registry/<id>/<version>.yaml  native YAML snapshot of a saved version (never rewritten)
//! .rubricate/registry/<id>/history.jsonl   registered / updated / deleted events, appended and synced
//! .rubricate/registry/<id>/current         the current version (replaced atomically; gone once deleted)
//! .rubricate/registry/<id>/.lock           locked by every writer for the length of its write
//! ```
//!
//! A save writes the snapshot, then appends the event, then points `current` at it, so a
//! crash leaves at worst a snapshot nothing points at yet; saving the same rubric again
//! completes it. Readers take no lock: every file they read is replaced whole or appended.

mod diff;
mod files;
mod history;
mod semver;
#[cfg(test)]
mod tests;

pub use history::{Event, EventKind};
pub use semver::{Bump, Version};

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::core::atomic::AtomicFile;
use crate::core::atomic::sync_dir;
use crate::core::hash::sha256_hex;
use crate::formats::native::rubric_to_json;
use crate::formats::{Diagnostics, Format, parse_rubric_text};
use crate::model::Rubric;
use files::{
    CURRENT, HISTORY, check_id, file_time, io_err, lock, one_line, parse_version, read_current,
    read_events, read_snapshot_text, render, saved_versions, short, snapshot_path,
};

/// Lines of context around each change in [`Registry::diff`].
pub const DIFF_CONTEXT: usize = 3;

/// Why a registry operation failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file system refused a read or write.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `create`).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The OS's error, whole (kind and code).
        #[source]
        source: io::Error,
    },
    #[error(
        "rubric id '{id}' cannot name a registry folder: {why}; give the rubric an `id` made of letters, digits, '-' and '_'"
    )]
    /// The rubric's id cannot name a registry folder.
    BadId {
        /// The id as written.
        id: String,
        /// Why it cannot.
        why: &'static str,
    },
    #[error(
        "version '{version}' of rubric '{id}' is not a semantic version ({why}); use MAJOR.MINOR.PATCH with an optional -PRERELEASE, like 1.2.0 or 2.0.0-rc.1"
    )]
    /// The rubric's version is not a semantic version.
    BadVersion {
        /// The rubric's id.
        id: String,
        /// The version as written.
        version: String,
        /// What semver found wrong.
        #[source]
        why: ::semver::Error,
    },
    #[error(
        "rubric '{id}' is already registered (current version {current}); save a new version with update instead (`rubricate rubrics add FILE` updates a registered id)"
    )]
    /// Registering an id that is registered already.
    AlreadyRegistered {
        /// The rubric's id.
        id: String,
        /// Its current version.
        current: String,
    },
    #[error(
        "no rubric '{id}' in the registry at {}; register it first (`rubricate rubrics add FILE`), or see what is there with `rubricate rubrics list`",
        dir.display()
    )]
    /// No rubric has this id.
    NotFound {
        /// The id asked for.
        id: String,
        /// The registry's folder.
        dir: PathBuf,
    },
    #[error(
        "rubric '{id}' was deleted (its last version was {last}); every version is kept: ask for one as {id}@{last}, or register the rubric again with a higher version"
    )]
    /// The rubric was deleted.
    Deleted {
        /// The rubric's id.
        id: String,
        /// Its current version when it was deleted.
        last: String,
    },
    /// The version asked for was never saved.
    #[error("rubric '{id}' has no version {version}; saved versions: {saved}")]
    NoSuchVersion {
        /// The rubric's id.
        id: String,
        /// The version asked for.
        version: String,
        /// The versions there are.
        saved: String,
    },
    #[error(
        "rubric '{id}' {version} has the same content as its current version {current}; nothing to save: change the rubric, then give it a higher version"
    )]
    /// The new version's content is the current one's.
    Unchanged {
        /// The rubric's id.
        id: String,
        /// The new version.
        version: String,
        /// The current version.
        current: String,
    },
    #[error(
        "rubric '{id}' version {version} is not above {highest}, its highest saved version; set `version:` higher (versions compare by semver: 1.10.0 > 1.9.0 > 1.9.0-rc.1)"
    )]
    /// The new version is not above every saved one.
    NotIncreasing {
        /// The rubric's id.
        id: String,
        /// The new version.
        version: String,
        /// The highest saved version.
        highest: String,
    },
    #[error("{}: {detail}", file.display())]
    /// A registry file holds what it should not (edited or damaged by hand).
    Corrupt {
        /// The file.
        file: PathBuf,
        /// What is wrong, and how to repair it.
        detail: String,
    },
    #[error(
        "rubric '{id}' does not read back once written as native YAML, so it cannot be saved:\n{diagnostics}"
    )]
    /// The rubric would not read back the same from its snapshot.
    Unsaveable {
        /// The rubric's id.
        id: String,
        /// What reading it back found.
        diagnostics: Diagnostics,
    },
    /// The rubric cannot be written as YAML at all.
    #[error("rubric '{id}' cannot be saved: {source}")]
    Unwritable {
        /// The rubric's id.
        id: String,
        /// Why it cannot be written.
        #[source]
        source: crate::formats::export::RenderError,
    },
}

type Result<T> = std::result::Result<T, RegistryError>;

/// What is known about one saved version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionMeta {
    /// The rubric's id.
    pub id: String,
    /// The version.
    pub version: String,
    /// SHA-256 (hex) of the snapshot text.
    pub hash: String,
    /// When it was saved (from the history; the file's time when the history lacks it).
    pub saved: jiff::Timestamp,
    /// The note it was saved with.
    pub note: String,
    /// Whether it is the version `current` names.
    pub current: bool,
}

/// One saved version: the rubric as read back from its snapshot, and the snapshot itself.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The rubric.
    pub rubric: Rubric,
    /// The snapshot file's exact text.
    pub text: String,
    /// The snapshot file.
    pub path: PathBuf,
    /// What is known about the version.
    pub meta: VersionMeta,
}

/// A row of [`Registry::list_latest`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The rubric's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its current version.
    pub version: String,
    /// What it grades.
    pub target_type: String,
    /// When that version was saved.
    pub saved: jiff::Timestamp,
    /// SHA-256 (hex) of that version's snapshot.
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Register,
    Update,
    Either,
}

/// The registry of the workspace at `root` (the folder holding `rubricate.yaml`).
#[derive(Debug, Clone)]
pub struct Registry {
    root: PathBuf,
}

impl Registry {
    /// The registry of the workspace at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The workspace's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `root/.rubricate/registry`.
    pub fn dir(&self) -> PathBuf {
        self.root.join(".rubricate").join("registry")
    }

    fn rubric_dir(&self, id: &str) -> Result<PathBuf> {
        check_id(id)?;
        Ok(self.dir().join(id))
    }

    /// Saves the first version of a rubric (or the first after a delete, which must still
    /// be above every saved version). Refuses an id that is registered and current.
    pub fn register(&self, rubric: &Rubric, note: &str) -> Result<Event> {
        self.save_as(rubric, note, Mode::Register)
    }

    /// Saves a new version of a registered rubric. Refuses content equal to the current
    /// version's (the version field aside) and a version not above every saved one.
    pub fn update(&self, rubric: &Rubric, note: &str) -> Result<Event> {
        self.save_as(rubric, note, Mode::Update)
    }

    /// Registers the rubric when its id has no current version, else updates it.
    pub fn save(&self, rubric: &Rubric, note: &str) -> Result<Event> {
        self.save_as(rubric, note, Mode::Either)
    }

    /// Saves `rubric` as the next minor version of its id (`1.2.0` → `1.3.0`; the rubric's
    /// own version when the id is not registered yet; `1.1.0` when neither is a semantic
    /// version): what `calibrate --adopt` and `align --adopt` keep. The version saved.
    pub fn save_next_minor(&self, rubric: &Rubric, note: &str) -> Result<String> {
        let mut next = rubric.clone();
        let base = self
            .get(&rubric.id, None)
            .ok()
            .map_or_else(|| rubric.version.clone(), |s| s.rubric.version);
        next.version = match ::semver::Version::parse(&base) {
            Ok(v) => format!("{}.{}.0", v.major, v.minor + 1),
            Err(_) => "1.1.0".into(),
        };
        self.save(&next, note)?;
        Ok(next.version)
    }

    /// A saved version, or the current one when `version` is `None`, read back through the
    /// native reader (so it is validated).
    pub fn get(&self, id: &str, version: Option<&str>) -> Result<Snapshot> {
        let dir = self.rubric_dir(id)?;
        let current = read_current(&dir)?;
        let events = read_events(&dir)?;
        let version = match version {
            Some(v) => {
                parse_version(id, v)?;
                v.to_owned()
            }
            None => match &current {
                Some(c) => c.clone(),
                None => return Err(self.missing(id, &events)),
            },
        };
        let is_current = current.as_deref() == Some(version.as_str());
        self.load(id, &dir, &version, is_current, &events)
    }

    /// The current version.
    pub fn latest(&self, id: &str) -> Result<Snapshot> {
        self.get(id, None)
    }

    /// Every rubric with a current version, by id.
    pub fn list_latest(&self) -> Result<Vec<Entry>> {
        let dir = self.dir();
        let read = match std::fs::read_dir(&dir) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("read", &dir)(e)),
        };
        let mut ids = Vec::new();
        for entry in read {
            let entry = entry.map_err(io_err("read", &dir))?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if let Some(name) = entry.file_name().to_str()
                && is_dir
                && check_id(name).is_ok()
                && entry.path().join(CURRENT).exists()
            {
                ids.push(name.to_owned());
            }
        }
        ids.sort();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let s = match self.get(&id, None) {
                Ok(s) => s,
                // Deleted between the listing and the read.
                Err(RegistryError::Deleted { .. } | RegistryError::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            out.push(Entry {
                id,
                name: s.rubric.name,
                version: s.meta.version,
                target_type: s.rubric.target_type,
                saved: s.meta.saved,
                hash: s.meta.hash,
            });
        }
        Ok(out)
    }

    /// The current rubrics whose `target_type` is `target_type`.
    pub fn list_by_target_type(&self, target_type: &str) -> Result<Vec<Entry>> {
        let mut all = self.list_latest()?;
        all.retain(|e| e.target_type == target_type);
        Ok(all)
    }

    /// Every saved version of a rubric, lowest first (deleted rubrics included).
    pub fn versions(&self, id: &str) -> Result<Vec<String>> {
        let dir = self.rubric_dir(id)?;
        Ok(saved_versions(&dir)?.into_iter().map(|(_, s)| s).collect())
    }

    /// Removes the current pointer; every version stays readable with `get(id, Some(v))`.
    pub fn delete(&self, id: &str, note: &str) -> Result<Event> {
        let dir = self.rubric_dir(id)?;
        if !dir.is_dir() {
            return Err(self.not_found(id));
        }
        let _lock = lock(&dir)?;
        let events = read_events(&dir)?;
        let Some(current) = read_current(&dir)? else {
            return Err(self.missing(id, &events));
        };
        let text = read_snapshot_text(id, &dir, &current)?;
        let event = Event {
            event: EventKind::Deleted,
            id: id.to_owned(),
            version: current,
            hash: sha256_hex(&text),
            time: jiff::Timestamp::now(),
            note: one_line(note),
        };
        let path = dir.join(HISTORY);
        history::append(&path, &event).map_err(io_err("append to", &path))?;
        let current_path = dir.join(CURRENT);
        std::fs::remove_file(&current_path).map_err(io_err("remove", &current_path))?;
        sync_dir(Some(&dir));
        Ok(event)
    }

    /// The rubric's events, oldest first.
    pub fn history(&self, id: &str) -> Result<Vec<Event>> {
        let dir = self.rubric_dir(id)?;
        let events = read_events(&dir)?;
        if events.is_empty() && saved_versions(&dir)?.is_empty() {
            return Err(self.not_found(id));
        }
        Ok(events)
    }

    /// A unified diff (3 lines of context) from version `a`'s snapshot to version `b`'s;
    /// empty when they are equal.
    pub fn diff(&self, id: &str, a: &str, b: &str) -> Result<String> {
        let old = self.get(id, Some(a))?;
        let new = self.get(id, Some(b))?;
        Ok(diff::unified(
            &format!("{id}@{a}"),
            &format!("{id}@{b}"),
            &old.text,
            &new.text,
            DIFF_CONTEXT,
        ))
    }

    fn not_found(&self, id: &str) -> RegistryError {
        RegistryError::NotFound {
            id: id.to_owned(),
            dir: self.dir(),
        }
    }

    /// Why a rubric has no current version: deleted, or never registered.
    fn missing(&self, id: &str, events: &[Event]) -> RegistryError {
        match events.iter().rfind(|e| e.event == EventKind::Deleted) {
            Some(e) => RegistryError::Deleted {
                id: id.to_owned(),
                last: e.version.clone(),
            },
            None => self.not_found(id),
        }
    }

    fn load(
        &self,
        id: &str,
        dir: &Path,
        version: &str,
        current: bool,
        events: &[Event],
    ) -> Result<Snapshot> {
        let path = snapshot_path(dir, version);
        let text = read_snapshot_text(id, dir, version)?;
        let hash = sha256_hex(&text);
        let saved_event = events
            .iter()
            .rfind(|e| e.event != EventKind::Deleted && e.version == version);
        if let Some(e) = saved_event
            && e.hash != hash
        {
            return Err(RegistryError::Corrupt {
                file: path,
                detail: format!(
                    "its content hash {} differs from {} recorded in {HISTORY} when {id} {version} was saved, so it was changed afterwards; restore it from a backup (snapshots are never rewritten)",
                    short(&hash),
                    short(&e.hash)
                ),
            });
        }
        let file = path.display().to_string();
        let loaded = parse_rubric_text(&file, &text, id, &self.root, Some(Format::Native))
            .map_err(|d| RegistryError::Corrupt {
                file: path.clone(),
                detail: format!(
                    "the snapshot of {id} {version} does not read back; restore it from a backup (snapshots are never rewritten):\n{d}"
                ),
            })?;
        let rubric = std::sync::Arc::unwrap_or_clone(loaded.rubric);
        if rubric.id != id || rubric.version != version {
            return Err(RegistryError::Corrupt {
                file: path,
                detail: format!(
                    "it holds rubric '{}' {} where {id} {version} belongs; restore it from a backup",
                    rubric.id, rubric.version
                ),
            });
        }
        let saved = saved_event.map_or_else(|| file_time(&path), |e| e.time);
        Ok(Snapshot {
            rubric,
            text,
            meta: VersionMeta {
                id: id.to_owned(),
                version: version.to_owned(),
                hash,
                saved,
                note: saved_event.map(|e| e.note.clone()).unwrap_or_default(),
                current,
            },
            path,
        })
    }

    fn save_as(&self, rubric: &Rubric, note: &str, mode: Mode) -> Result<Event> {
        let id = rubric.id.as_str();
        let dir = self.rubric_dir(id)?;
        let version = parse_version(id, &rubric.version)?;
        let text = render(rubric)?;
        let hash = sha256_hex(&text);
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
            sync_dir(dir.parent());
        }
        let _lock = lock(&dir)?;
        let current = read_current(&dir)?;
        let events = read_events(&dir)?;
        let kind = match (mode, &current) {
            (Mode::Register, Some(c)) => {
                return Err(RegistryError::AlreadyRegistered {
                    id: id.to_owned(),
                    current: c.clone(),
                });
            }
            (Mode::Update, None) => return Err(self.missing(id, &events)),
            (_, None) => EventKind::Registered,
            (_, Some(_)) => EventKind::Updated,
        };
        if let Some(cur) = &current {
            let cur_text = read_snapshot_text(id, &dir, cur)?;
            let mut probe = rubric.clone();
            probe.version.clone_from(cur);
            // Compared as content, not text: a snapshot written by an earlier version of
            // the YAML writer reads the same and is worded differently.
            let file = snapshot_path(&dir, cur).display().to_string();
            let same = parse_rubric_text(&file, &cur_text, id, &self.root, Some(Format::Native))
                .is_ok_and(|l| rubric_to_json(&l.rubric) == rubric_to_json(&probe));
            if same {
                return Err(RegistryError::Unchanged {
                    id: id.to_owned(),
                    version: rubric.version.clone(),
                    current: cur.clone(),
                });
            }
        }
        let target = snapshot_path(&dir, &rubric.version);
        let existing = match std::fs::read_to_string(&target) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err("read", &target)(e)),
        };
        // A snapshot left by a save that crashed before pointing `current` at it: the same
        // text, never current, never deleted. Saving it again finishes that save.
        let pending = existing.as_deref() == Some(text.as_str())
            && !events
                .iter()
                .any(|e| e.event == EventKind::Deleted && e.version == rubric.version);
        if let Some((highest, name)) = saved_versions(&dir)?.pop()
            && !(version > highest || (pending && version == highest))
        {
            return Err(RegistryError::NotIncreasing {
                id: id.to_owned(),
                version: rubric.version.clone(),
                highest: name,
            });
        }
        if existing.is_none() {
            AtomicFile::write_whole(&target, text.as_bytes()).map_err(io_err("write", &target))?;
        }
        let logged = events
            .iter()
            .rfind(|e| e.event != EventKind::Deleted && e.version == rubric.version)
            .filter(|e| pending && e.hash == hash)
            .cloned();
        let event = if let Some(e) = logged {
            e
        } else {
            let e = Event {
                event: kind,
                id: id.to_owned(),
                version: rubric.version.clone(),
                hash,
                time: jiff::Timestamp::now(),
                note: one_line(note),
            };
            let path = dir.join(HISTORY);
            history::append(&path, &e).map_err(io_err("append to", &path))?;
            e
        };
        let current_path = dir.join(CURRENT);
        AtomicFile::write_whole(&current_path, format!("{}\n", rubric.version).as_bytes())
            .map_err(io_err("write", &current_path))?;
        Ok(event)
    }
}
