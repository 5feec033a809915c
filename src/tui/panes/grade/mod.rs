//! The Grade pane: choose a rubric and judge for the open dataset, see the estimate (and
//! answer the question before a large run), start, continue or retry a run, and watch it
//! on the live grid (`grid.rs`).

mod ask;
mod batch;
mod grid;
mod update;
pub mod view;

pub use crate::tui::effect::AfterEstimate;
pub use crate::tui::msg::BatchShown;
pub use batch::BatchStatus;
pub use grid::{Cell, GridRun, Row};

use crate::engine::judge::Strategy;
use crate::tui::effect::Effect;
use crate::tui::widgets::LineInput;

/// The Grade pane: what would run, and the run being watched.
/// A run's name is at most this many characters (it names the run in lists and files).
pub const RUN_NAME_MAX: usize = 100;

#[derive(Debug, Clone)]
pub struct GradePane {
    /// Which of the rubric files offered (`Shared::rubric_files`) is chosen; the entry
    /// after them (`rubric == rubric_files.len()`) grades each item with its own rubric (an
    /// agentv eval's cases, a dataset that carries its rubric).
    pub rubric: usize,
    /// The judge model (from the workspace's `judge.model`, typed with `m`, or none: the
    /// rubric's).
    pub judge: Option<String>,
    /// The strategy (`t` cycles; `None`: the rubric's or the workspace's).
    pub strategy: Option<Strategy>,
    /// A judge model being typed.
    pub judge_input: Option<LineInput>,
    /// The run's cost limit in dollars (the workspace's `judge.max_cost`, or typed with `$`).
    pub max_cost: Option<f64>,
    /// The workspace's `judge.max_cost`: every run keeps within it, so an emptied limit
    /// comes back to it (the screen shows the limit in force).
    pub workspace_max_cost: Option<f64>,
    /// A cost limit being typed.
    pub max_cost_input: Option<LineInput>,
    /// The next run's name (`n`; `None`: `ui`), and the name being typed.
    pub name: Option<String>,
    pub name_input: Option<LineInput>,
    pub estimate: Option<String>,
    /// Items an estimate in progress has walked.
    pub estimating: Option<u64>,
    /// A large run waiting for the user's yes.
    pub confirm: Option<Confirm>,
    /// Above these the UI asks before starting (rubricate.yaml `judge.confirm_calls` and
    /// `judge.confirm_cost`).
    pub confirm_calls: u64,
    pub confirm_cost: f64,
    pub run: Option<GridRun>,
    /// The next run goes to the providers' batch engines (`b`).
    pub batch: bool,
    /// The last step of a watched batch run.
    pub batch_status: Option<BatchStatus>,
}

impl Default for GradePane {
    fn default() -> Self {
        Self {
            rubric: 0,
            judge: None,
            strategy: None,
            judge_input: None,
            max_cost: None,
            workspace_max_cost: None,
            max_cost_input: None,
            name: None,
            name_input: None,
            estimate: None,
            estimating: None,
            confirm: None,
            confirm_calls: crate::store::config::CONFIRM_CALLS,
            confirm_cost: crate::store::config::CONFIRM_COST,
            run: None,
            batch: false,
            batch_status: None,
        }
    }
}

/// A run to start once the user says yes.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    pub changed_only: bool,
    /// What it would send and cost.
    pub text: String,
}

/// Re-queues exactly `cells` (and nothing else) in the same run's journal, within the
/// set-up's cost limit.
fn retry(run: &mut GridRun, cells: Vec<(usize, String)>, max_cost: Option<f64>) -> Vec<Effect> {
    for (item, criterion) in &cells {
        if let Some(col) = run.column_of(*item, criterion) {
            run.set(*item, col, Cell::Queued);
        }
    }
    run.finished = false;
    run.cancelled = false;
    run.end = None;
    vec![Effect::RetryCells {
        tag: run.tag,
        cells,
        max_cost,
    }]
}
