//! What the terminal UI knows of the workspace's datasets, runs and labels: the values the
//! runtime reads (`runtime/reads.rs`) and the panes show.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// A dataset as the UI lists it.
#[derive(Debug, Clone)]
pub struct DatasetInfo {
    pub name: String,
    pub path: PathBuf,
    /// The key of its label journals.
    pub key: String,
    pub index: PathBuf,
    pub items: Option<usize>,
}

pub use super::run_data::{RunData, RunDetails};

/// Labels by (item id, criterion id) → verdict text or number.
pub type Labels = BTreeMap<(String, String), serde_json::Value>;
