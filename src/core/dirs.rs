//! The user's own folders for rubricate (the platform's data, config, cache and state
//! folders, from the `directories` crate): named here once, so every layer finds the same
//! place. `None` where the platform has no home folder.

use std::path::PathBuf;

use directories::ProjectDirs;

fn project() -> Option<ProjectDirs> {
    ProjectDirs::from("", "", "rubricate")
}

/// Where the default workspace and other lasting data live.
pub fn data_dir() -> Option<PathBuf> {
    project().map(|d| d.data_dir().to_path_buf())
}

/// Where the user's settings live (the trusted workspaces).
pub fn config_dir() -> Option<PathBuf> {
    project().map(|d| d.config_dir().to_path_buf())
}

/// Where what can be rebuilt lives (judge replies outside a workspace).
pub fn cache_dir() -> Option<PathBuf> {
    project().map(|d| d.cache_dir().to_path_buf())
}

/// Where logs go: the state folder, or the cache folder where the platform has none.
pub fn state_dir() -> Option<PathBuf> {
    project().map(|d| d.state_dir().unwrap_or(d.cache_dir()).to_path_buf())
}
