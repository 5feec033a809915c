//! The workspace on disk: crash-safe file replacement (shared by everything that writes
//! files people own), the workspace and its config, the rubric registry, runs and labels.

pub mod artifacts;
pub mod assignments;
mod atomic;
pub mod config;
pub mod datasets;
mod file_error;
pub mod labels;
pub mod names;
mod prices;
pub mod registry;
pub mod runs;
pub mod trust;
pub mod workspace;

pub use atomic::{AtomicFile, open_no_follow};
pub use config::{JudgeDefaults, WorkspaceConfig, load_config};
pub use file_error::FileError;
pub use workspace::{Workspace, WorkspaceError};
