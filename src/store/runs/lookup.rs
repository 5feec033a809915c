//! Finding a saved run by what a person types: its id, its name, or a unique prefix of its
//! id; and keeping names unique (a name must always find one run).

use std::path::{Path, PathBuf};

use super::{MANIFEST, RunDir};
use crate::store::StoreError;

impl RunDir {
    /// Finds a run by its id, its name (`grade --save --name`), or a unique prefix of its id
    /// — in that order, so a name never hides an id and a prefix never hides a name. A name
    /// two runs share is refused, listing their ids.
    pub fn find(runs: &Path, id: &str) -> Result<Self, StoreError> {
        // A name need not be a file name (it is matched, never joined to a path).
        if crate::store::names::problem(id).is_none() {
            let exact = runs.join(id);
            if exact.join(MANIFEST).is_file() {
                return Ok(Self { dir: exact });
            }
        }
        let dirs: Vec<PathBuf> = std::fs::read_dir(runs)
            .map_err(|e| StoreError::io(runs, e))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(MANIFEST).is_file())
            .collect();
        let named = runs_named(&dirs, id);
        match named.as_slice() {
            [] => {}
            [one] => return Ok(one.clone()),
            _ => return Err(ambiguous_name(id, &named)),
        }
        let matches: Vec<&PathBuf> = dirs
            .iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(id))
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok(Self {
                dir: (*one).clone(),
            }),
            [] => Err(StoreError::RunNotFound(id.to_owned())),
            _ => Err(StoreError::Corrupt(format!(
                "'{id}' matches {} runs; give more of the id",
                matches.len()
            ))),
        }
    }

    /// `base`, or `base (2)`, `base (3)`… — the first no run of `runs` has (for names made
    /// up for the user, such as an import's).
    pub fn unused_name(runs: &Path, base: &str) -> String {
        let mut name = base.to_owned();
        let mut n = 1;
        // Bounded: a base refused for what it is (not for being taken) is returned as made.
        while n < 1000 && Self::check_new_name(runs, &name).is_err() {
            n += 1;
            name = format!("{base} ({n})");
        }
        name
    }

    /// Refuses `name` for a new run when another run of `runs` has it already, or has it as
    /// its id (the name could then never be looked up).
    pub fn check_new_name(runs: &Path, name: &str) -> Result<(), StoreError> {
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(StoreError::Refused(format!(
                "run name {name:?} is empty or has control characters; give a name such as `baseline`"
            )));
        }
        if runs.join(name).join(MANIFEST).is_file() {
            return Err(StoreError::Refused(format!(
                "'{name}' is the id of a run already; give another name"
            )));
        }
        let Ok(entries) = std::fs::read_dir(runs) else {
            return Ok(());
        };
        let dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(MANIFEST).is_file())
            .collect();
        match runs_named(&dirs, name).as_slice() {
            [] => Ok(()),
            taken => Err(StoreError::Refused(format!(
                "run name '{name}' is taken by run {}; names are unique: give another, or rename it in {}",
                ids(taken),
                taken[0].manifest_path().display()
            ))),
        }
    }
}

/// The runs among `dirs` whose manifest names them `name` (a damaged manifest names none).
fn runs_named(dirs: &[PathBuf], name: &str) -> Vec<RunDir> {
    dirs.iter()
        .map(|dir| RunDir { dir: dir.clone() })
        .filter(|run| {
            run.read_manifest()
                .is_ok_and(|m| m.name.as_deref() == Some(name))
        })
        .collect()
}

fn ambiguous_name(name: &str, runs: &[RunDir]) -> StoreError {
    StoreError::Refused(format!(
        "'{name}' names {} runs ({}); give one of their ids",
        runs.len(),
        ids(runs)
    ))
}

/// The runs' ids (their folders' names), comma-separated, sorted.
fn ids(runs: &[RunDir]) -> String {
    let mut ids: Vec<String> = runs
        .iter()
        .filter_map(|r| r.dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids.join(", ")
}
