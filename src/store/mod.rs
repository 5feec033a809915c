//! The workspace on disk. Today: crash-safe file replacement (shared by everything that
//! writes files people own) and the workspace config.

mod atomic;
pub mod config;

pub use atomic::AtomicFile;
pub use config::{JudgeDefaults, WorkspaceConfig, load_config};
