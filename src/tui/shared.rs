//! What every pane may read (and the open dataset's operations change): the workspace, the
//! annotator, the datasets and the one open, the labels, the screen's size and the time.
//! Panes get `&mut Shared` with each action or message; none of them reaches another pane.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::browse::Browse;
use super::data::{DatasetInfo, Labels, RunDetails};
use super::keymap::Keymap;
use super::theme::Theme;

pub struct Shared {
    pub workspace: PathBuf,
    pub keymap: Keymap,
    pub theme: Theme,
    /// The UI opens in this workspace for the first time: the Datasets pane says what is
    /// where.
    pub first_start: bool,
    /// What the last action said (cleared when the pane changes).
    pub message: Option<String>,
    pub annotator: String,
    /// The annotator came from config or the environment, or was confirmed at the prompt.
    pub annotator_confirmed: bool,
    pub datasets: Vec<DatasetInfo>,
    /// The dataset selected in the list of datasets.
    pub selected: usize,
    /// The open dataset: its rows, cursor, window of items, run and rubric.
    pub browse: Option<Browse>,
    /// Shared with the runtime's joins of the run with them (copied on write only while one
    /// is under way).
    pub labels: Arc<Labels>,
    /// Counts changes to `labels`, so figures worked out from them know when to redo it.
    pub labels_gen: u64,
    /// Notes on the current annotator's labels, by (item, criterion).
    pub notes: BTreeMap<(String, String), String>,
    /// Everyone with labels for the open dataset (`a` cycles through them).
    pub annotators: Vec<String>,
    /// While adjudicating, every other annotator's labels (shown beside each criterion).
    pub peers: BTreeMap<String, Labels>,
    /// The items the dataset's assignment gives the annotator: the queues keep to them.
    pub assignment: Option<BTreeSet<String>>,
    /// The reasons and failures of the run items on screen (read on demand).
    pub run_details: RunDetails,
    /// The workspace's artifact types and the rubrics each one's review evaluates.
    pub artifact_types: Vec<(String, Vec<String>)>,
    pub size: (u16, u16),
    /// The time as the runtime last said it (`Msg::Tick`): `update` never reads a clock,
    /// so the same messages give the same state.
    pub now: std::time::Instant,
    /// `y` was pressed at a question: the action it asked about runs now.
    pub confirming: bool,
    next_tag: u64,
}

/// Rows a page moves.
pub const PAGE: usize = 10;
/// Items read around the view when it moves.
pub const MARGIN: usize = 50;

impl Shared {
    pub fn new(
        workspace: PathBuf,
        keymap: Keymap,
        annotator: String,
        datasets: Vec<DatasetInfo>,
    ) -> Self {
        Self {
            workspace,
            keymap,
            theme: Theme::load(None, false).unwrap_or_default(),
            first_start: false,
            message: None,
            annotator,
            annotator_confirmed: true,
            datasets,
            selected: 0,
            browse: None,
            labels: Arc::default(),
            labels_gen: 0,
            notes: BTreeMap::new(),
            annotators: Vec::new(),
            peers: BTreeMap::new(),
            assignment: None,
            run_details: RunDetails::default(),
            artifact_types: Vec::new(),
            size: (80, 24),
            now: std::time::Instant::now(),
            confirming: false,
            next_tag: 0,
        }
    }

    /// A fresh tag for a request or a run (answers to an older tag are dropped).
    pub fn new_tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag
    }

    /// Rows the item list shows (the screen less the tab and status bars, the list's
    /// borders and its header).
    pub fn list_height(&self) -> usize {
        usize::from(self.size.1.saturating_sub(5)).max(1)
    }
}
