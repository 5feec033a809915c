//! What the UI remembers between sittings, per user and workspace: who labels, the judge
//! model typed, the dataset, the item and the pane last open. Kept in the workspace's
//! `.rubricate/ui/<user>.json`, replaced atomically; a file that cannot be read is as if
//! there were none (preferences, never work).

use crate::store::FileError;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::store::Workspace;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UiState {
    pub annotator: Option<String>,
    pub judge: Option<String>,
    /// The dataset last open, by name.
    pub dataset: Option<String>,
    /// The pane last shown, by title.
    pub pane: Option<String>,
    /// The place in that dataset of the item last shown (the UI comes back to it).
    pub item: Option<usize>,
}

/// `.rubricate/ui/<user>.json`; the user is `$USER` when it is a safe file name.
pub fn path(ws: &Workspace) -> PathBuf {
    let user = std::env::var("USER")
        .ok()
        .filter(|u| crate::store::labels::check_name("user", u).is_ok())
        .unwrap_or_else(|| "default".into());
    ws.path(".rubricate")
        .join("ui")
        .join(format!("{user}.json"))
}

pub fn load(ws: &Workspace) -> UiState {
    std::fs::read_to_string(path(ws))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

pub fn save(ws: &Workspace, state: &UiState) -> Result<(), FileError> {
    let path = path(ws);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(FileError::at(dir))?;
    }
    let text = serde_json::to_string_pretty(state).map_err(|e| FileError::at(&path)(e.into()))?;
    crate::store::AtomicFile::write_whole(&path, text.as_bytes()).map_err(FileError::at(&path))
}

/// Changes only the annotator (the rest as it was saved).
pub fn remember_annotator(ws: &Workspace, name: &str) -> Result<(), FileError> {
    let mut state = load(ws);
    state.annotator = Some(name.to_owned());
    save(ws, &state)
}
