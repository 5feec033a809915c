//! A run's manifest (`runs/<id>/manifest.json`): what was graded, with what, and how it
//! ended — and where a run stands, as every front end names it.

use serde::{Deserialize, Serialize};

use super::BatchRecord;

/// A run's `manifest.json`: what was graded, against what, how, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The run's id (its folder's name).
    pub id: String,
    /// A name the user gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The rubric graded against.
    pub rubric_id: String,
    /// Its version.
    pub rubric_version: String,
    /// SHA-256 of the rubric snapshot's text.
    pub rubric_hash: String,
    /// The exact rubric graded, as native JSON.
    pub rubric: serde_json::Value,
    /// The dataset graded.
    pub dataset: DatasetRef,
    /// How it was graded (judges, strategy, flags), for resume; opaque to the store.
    pub settings: serde_json::Value,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When every cell was graded (RFC 3339); `None` while unfinished.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// Its totals, once written.
    #[serde(default)]
    pub totals: Option<Totals>,
    /// A batch run's batches (empty for a live run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<BatchRecord>,
}

/// Where a run stands, as every front end names it (`runs list`, `runs show`, `runs
/// compare`, `metrics`, the TUI's Results).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Every cell was graded.
    Finished,
    /// A batch run whose requests are at the provider: some of its cells are to come.
    InBatches {
        /// Batches not yet back.
        in_flight: usize,
        /// Batches in all.
        batches: usize,
    },
    /// Stopped before every cell was graded (a kill, a cost limit, a cancel).
    Unfinished,
}

impl RunState {
    /// Every cell was graded.
    pub fn is_finished(self) -> bool {
        self == Self::Finished
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Finished => f.write_str("finished"),
            Self::InBatches { in_flight, batches } => {
                write!(f, "in batches ({in_flight} of {batches} in flight)")
            }
            Self::Unfinished => f.write_str("unfinished"),
        }
    }
}

impl Manifest {
    /// Where the run stands.
    pub fn state(&self) -> RunState {
        let in_flight = self.batches.iter().filter(|b| b.in_flight()).count();
        if self.finished_at.is_some() {
            RunState::Finished
        } else if in_flight > 0 {
            RunState::InBatches {
                in_flight,
                batches: self.batches.len(),
            }
        } else {
            RunState::Unfinished
        }
    }

    /// The rubric as people read it: `id@version`, or the id alone for runs of items' own
    /// rubrics (which have no one version).
    pub fn rubric_label(&self) -> String {
        if self.rubric_version.is_empty() {
            self.rubric_id.clone()
        } else {
            format!("{}@{}", self.rubric_id, self.rubric_version)
        }
    }
}

/// The dataset a run graded, pinned by its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetRef {
    /// Absolute path, read in place.
    pub path: String,
    /// SHA-256 of the file's bytes.
    pub hash: String,
}

/// What a run came to.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Items graded.
    pub items: usize,
    /// Items that passed.
    pub passed: usize,
    /// Items not fully graded (a cell failed or is still to come).
    pub incomplete: usize,
    /// Items with cells still to come (counted in `incomplete` too).
    #[serde(default)]
    pub pending: usize,
    /// Cells graded.
    pub cells: usize,
    /// Cells that failed.
    pub failed_cells: usize,
    /// The mean item score, over items with one.
    pub mean_score: Option<f64>,
    /// Prompt tokens sent.
    pub input_tokens: u64,
    /// Reply tokens received.
    pub output_tokens: u64,
    /// Dollars spent.
    pub cost: f64,
}
