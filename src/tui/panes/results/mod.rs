//! The Results pane: the selected criterion, a confusion cell's items, the run's items
//! (filtered by verdict or failure, opened), run comparison (both sides move, a changed
//! item opens), export, calibration, an align report.

mod align;
mod calibrate;
mod update;
pub mod view;
mod view_align;
mod view_calibrate;
mod view_compare;
mod view_items;
mod view_pairs;

pub use align::AlignView;
pub use calibrate::CalibrateView;

use crate::tui::data::RunData;
use crate::tui::run_scan::Comparison;
use crate::tui::shared::Shared;
use std::sync::Arc;

pub use crate::tui::run_data::verdict_text;

/// The Results pane's state: the criterion selected, the item list, a comparison.
#[derive(Debug, Default, Clone)]
pub struct ResultsPane {
    /// The criterion selected.
    pub cursor: usize,
    /// The list of the run's items (`i`, `v`, `F`), while it is shown.
    pub items: Option<ItemsView>,
    /// The run the latest is compared with (A; the latest is B), and how far back it is.
    pub compare: Option<Arc<RunData>>,
    pub compare_back: usize,
    /// Side B of a comparison when it is not the latest run, and how far back it is.
    pub compare_b: Option<Arc<RunData>>,
    pub compare_b_back: usize,
    /// The changed item selected in a comparison.
    pub compare_cursor: usize,
    /// The comparison of the two runs shown, from a pass over both in the runtime.
    pub comparison: Option<Arc<Comparison>>,
    /// A comparison asked for (runs A and B) and not answered yet.
    pub comparing: Option<(String, String)>,
    /// The Calibrate view (`K`), while it is open.
    pub calibrate: Option<CalibrateView>,
    /// The Align view (`l`, or `l` on a rubric in Rubrics), while it is open.
    pub align: Option<AlignView>,
    /// `Shared::opens` when its state was made: another dataset opened since starts it
    /// again (runs chosen, compared or listed belonged to the dataset before).
    opened_at: u64,
}

impl ResultsPane {
    /// Another dataset opened since the state was made: starts it again (runs chosen,
    /// compared or listed belonged to the dataset before).
    fn start_again_if_reopened(&mut self, sh: &Shared) {
        if self.opened_at != sh.opens {
            *self = Self {
                opened_at: sh.opens,
                ..Self::default()
            };
        }
    }
}

/// The Results pane's item list: which row is selected and what it shows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ItemsView {
    pub cursor: usize,
    /// Only items the judge gave this verdict on the selected criterion.
    pub verdict: Option<String>,
    /// Only items with a cell that could not be graded.
    pub failed: bool,
    /// The dataset positions of the items listed, from a pass over the run in the runtime
    /// (a few bytes per match); `None`: every item of the run, item `k` at position `k`.
    pub rows: Option<Vec<usize>>,
    /// The pass under way for the list (its tag): answers of older ones are dropped.
    pub filtering: Option<u64>,
    /// What `rows` are for.
    rows_for: Option<RowsFor>,
}

/// What an item list was worked out for: the run (and its size: a continued run grows),
/// the criterion selected and the filters.
#[derive(Debug, Clone, PartialEq)]
struct RowsFor {
    run: String,
    items: usize,
    criterion: Option<String>,
    verdict: Option<String>,
    failed: bool,
}

impl ItemsView {
    /// How many items the list shows.
    pub fn row_count(&self, run: &RunData) -> usize {
        self.rows.as_ref().map_or(run.len(), Vec::len)
    }

    /// The dataset position of the item at `row`.
    pub fn position(&self, run: &RunData, row: usize) -> Option<usize> {
        match &self.rows {
            Some(rows) => rows.get(row).copied(),
            None => (row < run.len()).then_some(row),
        }
    }

    /// Whether it keeps only some items (a verdict or failures).
    pub fn filtered(&self) -> bool {
        self.verdict.is_some() || self.failed
    }
}

/// Every verdict the judge gave on a criterion in the run, each once, in order.
pub fn verdicts(run: &RunData, criterion: &str) -> Vec<String> {
    run.criterion(criterion)
        .map(|c| run.verdict_texts(c))
        .unwrap_or_default()
}
