//! The workspace on disk: crash-safe file replacement (shared by everything that writes
//! files people own), the workspace and its config, the rubric registry, runs and labels.

pub mod artifacts;
pub mod assignments;
pub mod config;
pub mod datasets;
mod error;
pub mod labels;
pub mod names;
mod prices;
pub mod registry;
pub mod runs;
pub mod trust;
pub mod workspace;

/// The ground floor's crash-safe writes, named here too for the front ends that write
/// through the store.
pub use crate::core::atomic::{AtomicFile, open_no_follow};
pub use config::{JudgeDefaults, WorkspaceConfig, load_config};
pub use error::{FileError, StoreError};
pub use workspace::Workspace;
