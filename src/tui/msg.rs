//! The messages `App::update` takes: keys and the mouse, and every answer of the runtime
//! (tagged where a newer request may supersede it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyEvent, MouseEvent};

use super::data::{DatasetInfo, Labels, RunData};
use crate::model::{Item, Rubric};

#[derive(Debug)]
pub enum Msg {
    /// The time now: sent before every batch of messages, so `update` reads no clock.
    Tick(std::time::Instant),
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// Text pasted into the terminal (bracketed paste), all at once.
    Paste(String),
    Resize(u16, u16),
    /// SIGTERM or SIGHUP: quit as `q` does, once every queued write is on disk.
    Stop,
    /// A window of the open dataset.
    Window {
        tag: u64,
        total: usize,
        items: Vec<(usize, Item)>,
    },
    /// Datasets that appeared since the UI started (appended to the list).
    DatasetsFound(Vec<DatasetInfo>),
    /// A new rubric file was written: add it to the lists and open it.
    RubricCreated(PathBuf),
    /// How far a scan (search or filter) has read: items read, of how many when known.
    ScanProgress {
        tag: u64,
        read: usize,
        total: Option<usize>,
    },
    /// A scan: matching positions and every item's id.
    Scanned {
        tag: u64,
        matches: Vec<usize>,
        ids: Vec<String>,
    },
    /// The dataset's latest run, rubric and labels, read when it opened.
    Opened {
        dataset: usize,
        run: Option<Arc<RunData>>,
        rubric: Option<Arc<Rubric>>,
        labels: Labels,
        /// The notes on those labels.
        notes: BTreeMap<(String, String), String>,
        /// Everyone with a label journal for the dataset.
        annotators: Vec<String>,
        /// While adjudicating: every other annotator's labels, by annotator.
        peers: BTreeMap<String, Labels>,
        /// The items the dataset's assignment gives the annotator (`None`: no assignment
        /// names them).
        assignment: Option<std::collections::BTreeSet<String>>,
    },
    /// A label is on disk.
    LabelSaved {
        seq: u64,
        item: String,
        criterion: String,
        verdict: serde_json::Value,
        note: String,
    },
    LabelUndone {
        item: String,
        criterion: String,
        verdict: Option<serde_json::Value>,
    },
    /// A run started: its tag, id in the workspace, criteria and size.
    RunStarted {
        tag: u64,
        run_id: String,
        /// Each criterion's id, and whether it is a penalty.
        criteria: Vec<(String, bool)>,
        items: Option<usize>,
    },
    /// One grading event of a run.
    Grade {
        tag: u64,
        event: Box<crate::engine::GradeEvent>,
    },
    /// Cells already in a run's journal (copied, or graded in an earlier sitting).
    Preload {
        tag: u64,
        cells: Vec<crate::store::runs::Cell>,
    },
    /// Judge calls still in flight while the run pauses.
    InFlight {
        tag: u64,
        calls: usize,
    },
    GradeFinished {
        tag: u64,
        summary: String,
        end: RunEnd,
        tokens: u64,
        cost: f64,
    },
    /// The estimate for the chosen rubric and judge, and what to do with it.
    Estimate {
        result: Result<crate::run::estimate::Estimate, String>,
        after: super::effect::AfterEstimate,
    },
    /// How far an estimate has walked the dataset.
    EstimateProgress(u64),
    /// A step of a watched batch run: where it stands, or why the step failed.
    BatchStepped {
        dataset: usize,
        run_id: String,
        result: Result<BatchShown, String>,
    },
    /// A label (or an undo) was NOT written (the disk said why).
    LabelFailed(Failure),
    /// A rubric read (and linted), with what happened; `draft` is the number of the draft
    /// write it answers (`None`: a load or a save).
    RubricLoaded {
        view: RubricView,
        message: Option<String>,
        /// The write it answers failed (the draft or the version was NOT written).
        failed: Option<Failure>,
        draft: Option<u64>,
    },
    /// A diff to show and how far back its base is (or why there is none).
    Diff(Result<(String, usize), String>),
    /// The earlier run to compare with (`None`: there is none that far back), as side A
    /// or, when `b`, side B.
    EarlierRun {
        back: usize,
        run: Option<Arc<RunData>>,
        b: bool,
    },
    /// The cells of a run's items read for the screen, by item position (with its id).
    RunDetails {
        run_id: String,
        positions: Vec<usize>,
        items: Result<std::collections::HashMap<usize, super::run_data::ItemDetail>, String>,
    },
    /// A run joined with the labels of generation `labels_gen`.
    LabelsJoined {
        run_id: String,
        labels_gen: u64,
        join: Result<Arc<super::run_scan::LabelJoin>, String>,
    },
    /// The positions the Results list keeps (for the pass tagged `tag`).
    RunItemsFiltered {
        tag: u64,
        positions: Result<Vec<usize>, String>,
    },
    /// Runs A and B compared.
    Compared {
        a: String,
        b: String,
        result: Result<Arc<super::run_scan::Comparison>, String>,
    },
    /// The workspace's artifacts (after a load, a review or a decision), and what happened.
    Artifacts {
        artifacts: Vec<crate::store::artifacts::Artifact>,
        message: Option<String>,
    },
    /// A typed path completed from its directory (applied while the prompt still holds
    /// `typed`).
    PathCompleted {
        typed: String,
        text: String,
        candidates: Vec<String>,
    },
    /// A dataset file registered from the UI (or already listed): listed and opened.
    DatasetAdded(DatasetInfo),
    /// A file's content read for a new artifact (`from`: the file).
    ArtifactContent {
        from: String,
        content: serde_json::Value,
    },
    /// The "labels next" order and stop rule (or why there is none), for the labels'
    /// generation `labels_gen`.
    LabelPlan {
        dataset: usize,
        annotator: String,
        labels_gen: u64,
        /// The two runs it was planned between (their labels), when it was.
        between_top_two: Option<[String; 2]>,
        plan: Result<Arc<crate::run::label_next::LabelPlan>, String>,
        /// Annotators against each other and the judge against each (two people or more).
        people: Option<Arc<crate::run::people::PeopleReport>>,
    },
    /// Runs of the dataset ranked against the labels (generation `labels_gen`).
    Calibrated {
        labels_gen: u64,
        ranked: Result<Arc<crate::run::calibration::Calibration>, String>,
    },
    /// The newest align report for `source` (or why there is none).
    AlignRead {
        source: crate::tui::effect::AlignSource,
        found: Result<Arc<crate::run::align_report::Found>, String>,
    },
    /// The winner of the align report at `path` adopted (`rubric@version`), or why not.
    AlignAdopted {
        path: std::path::PathBuf,
        adopted: Result<String, String>,
    },
    /// Something to tell the user.
    Info(String),
    /// Something the runtime could not do.
    Error(Failure),
}

/// Something the runtime could not do, kept typed: what to tell the person, and what kind
/// of failure it is — a write of their work that did not reach the disk reads (and acts)
/// differently from a file to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub kind: FailureKind,
    /// What to tell the person (`the label was NOT saved: …`).
    pub said: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The person's work (a label, an undo, a rubric edit or version) did NOT reach the
    /// disk: it is not saved, and a quit waiting for it stays.
    Unwritten,
    /// The disk refused something else (full, read-only, gone).
    Disk,
    /// What was asked for or read is not right (a rubric, a dataset, a path, a setting):
    /// fix it and try again.
    Refused,
    /// A judge could not be set up or asked.
    Judge,
    /// Anything else.
    Other,
}

impl Failure {
    pub fn new(kind: FailureKind, said: impl std::fmt::Display) -> Self {
        Self {
            kind,
            said: said.to_string(),
        }
    }
}

impl FailureKind {
    /// The kind of a run engine's error.
    pub fn of_run(error: &crate::run::Error) -> Self {
        match error.kind() {
            crate::run::ErrorKind::Disk(_) => FailureKind::Disk,
            crate::run::ErrorKind::Refused => FailureKind::Refused,
            crate::run::ErrorKind::Judge => FailureKind::Judge,
        }
    }

    /// The kind of a file system's error: a file not there or not readable as asked is
    /// the person's to fix; the rest is the disk's.
    pub fn of_io(error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound
            | std::io::ErrorKind::InvalidInput
            | std::io::ErrorKind::InvalidData
            | std::io::ErrorKind::IsADirectory
            | std::io::ErrorKind::NotADirectory => FailureKind::Refused,
            _ => FailureKind::Disk,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

/// How a run's sitting ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// Every cell graded; the run is marked finished.
    Finished,
    /// Stopped, or cells are missing (why): the run stays resumable.
    Unfinished(String),
}

impl Msg {
    /// A write of the person's work that did not reach the disk (a quit waiting for the
    /// writes stays, and says why).
    pub fn unwritten(&self) -> bool {
        let failure = match self {
            Msg::Error(f) | Msg::LabelFailed(f) => Some(f),
            Msg::RubricLoaded { failed, .. } => failed.as_ref(),
            _ => None,
        };
        failure.is_some_and(|f| f.kind == FailureKind::Unwritten)
    }

    /// The pane a runtime answer is for (`None`: for the app or what every pane shares).
    pub fn pane(&self) -> Option<super::nav::PaneId> {
        use super::nav::PaneId;
        match self {
            Msg::RunStarted { .. }
            | Msg::Grade { .. }
            | Msg::Preload { .. }
            | Msg::InFlight { .. }
            | Msg::GradeFinished { .. }
            | Msg::Estimate { .. }
            | Msg::EstimateProgress(_)
            | Msg::BatchStepped { .. } => Some(PaneId::Grade),
            Msg::EarlierRun { .. }
            | Msg::RunItemsFiltered { .. }
            | Msg::Compared { .. }
            | Msg::Calibrated { .. }
            | Msg::AlignRead { .. }
            | Msg::AlignAdopted { .. } => Some(PaneId::Results),
            Msg::RubricCreated(_) | Msg::RubricLoaded { .. } | Msg::Diff(_) => {
                Some(PaneId::Rubrics)
            }
            Msg::Artifacts { .. } => Some(PaneId::Review),
            _ => None,
        }
    }
}

/// A rubric as the pane shows it.
#[derive(Debug, Clone, Default)]
pub struct RubricView {
    pub path: PathBuf,
    /// The draft being edited, when there is one.
    pub draft: Option<PathBuf>,
    pub rubric: Option<Arc<Rubric>>,
    /// Validation problems (the draft or file does not load).
    pub problems: Vec<String>,
    /// Lint findings: (criterion index if about one, severity and text).
    pub findings: Vec<(Option<usize>, String)>,
    /// The meta-rubric's structural score.
    pub score: Option<f64>,
    /// The version a save must go above: the highest saved in the registry, else the
    /// file's own (a version not above it is refused).
    pub base_version: Option<String>,
}

/// A batch run's state as the UI shows it (from its last step).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchShown {
    /// Batches, requests in flight, answered, failed.
    pub line: String,
    /// Cells in the run's journal.
    pub cells: Option<usize>,
    pub finished: bool,
    /// Nothing in flight and cells missing: `runs resume ID --live` grades them.
    pub stuck: bool,
}

impl BatchShown {
    pub fn of(r: &crate::run::batch::Report) -> Self {
        Self {
            line: r.line(),
            cells: r
                .outcome
                .as_ref()
                .and_then(|o| o.totals.as_ref())
                .map(|t| t.cells),
            finished: r.finished,
            stuck: r.stuck(),
        }
    }
}
