//! The effects `App::update` asks for: everything that reads or writes outside the app's
//! state, carried out by the runtime (`effects.rs`), which answers with messages.

use std::path::PathBuf;

use crate::model::Rubric;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// What grading would cost: calls, cached, tokens, money (nothing is sent).
    Estimate {
        dataset: usize,
        rubric: Option<PathBuf>,
        judge: Option<String>,
        strategy: Option<crate::engine::judge::Strategy>,
        max_cost: Option<f64>,
        after: AfterEstimate,
    },
    /// Grades the dataset with the rubric (and judge), journalled as a run in the workspace.
    StartRun {
        tag: u64,
        dataset: usize,
        /// `None`: each item's own rubric.
        rubric: Option<PathBuf>,
        judge: Option<String>,
        strategy: Option<crate::engine::judge::Strategy>,
        /// Stop sending judge calls once this many dollars are spent.
        max_cost: Option<f64>,
        /// Only the cells whose criterion changed since the last run of this rubric; the
        /// rest are copied from that run.
        changed_only: bool,
        /// The run's name (`None`: `ui`).
        name: Option<String>,
    },
    /// Records a batch run of the dataset and watches it (`tui::effects_batch`).
    StartBatch {
        dataset: usize,
        rubric: Option<PathBuf>,
        judge: Option<String>,
        strategy: Option<crate::engine::judge::Strategy>,
        name: Option<String>,
    },
    /// Asks about a batch run now, then every poll interval until it is finished.
    WatchBatch {
        dataset: usize,
        run_id: String,
    },
    PauseRun {
        tag: u64,
        paused: bool,
    },
    /// Continues an unfinished run of the open dataset.
    ResumeRun {
        tag: u64,
        dataset: usize,
        run_id: String,
        /// The set-up's cost limit, in force instead of the one the run started with.
        max_cost: Option<f64>,
    },
    LoadArtifacts,
    /// Looks for datasets added since the UI started.
    FindDatasets,
    /// Starts a new rubric file in `rubrics/` (one criterion to begin with).
    /// Completes a typed path from its directory.
    CompletePath(String),
    /// Registers a dataset file by its typed path and opens it.
    AddDataset(String),
    /// Reads a file (a typed path) whose content becomes a new artifact.
    ReadArtifactFile(String),
    /// Makes a draft artifact.
    CreateArtifact {
        kind: String,
        name: String,
        content: serde_json::Value,
        rubrics: Vec<String>,
    },
    /// Opens an artifact's content in `$EDITOR` (the terminal's), then revises it.
    EditArtifact {
        id: String,
    },
    /// Saves the edited content (in `file`) as the artifact's revision.
    ReviseArtifact {
        id: String,
        file: PathBuf,
    },
    NewRubric {
        /// The built-in it starts from (`None`: blank, one criterion).
        from: Option<String>,
    },
    /// Writes the first criterion into (the draft of) a rubric that has none, then reads it
    /// back (`seq`: the draft write it is).
    AddFirstCriterion {
        path: PathBuf,
        seq: u64,
    },
    /// Writes a run's results to the workspace's `exports/`.
    ExportRun {
        run_id: String,
        format: super::export::ExportFormat,
        /// Only the items at these dataset positions (the filtered list shown), when given.
        only: Option<Vec<usize>>,
    },
    /// Reads a rubric (the draft being edited, when given) and lints it.
    LoadRubric {
        path: PathBuf,
        draft: Option<PathBuf>,
    },
    /// Opens the rubric's draft in `$EDITOR` (the terminal is handed over meanwhile).
    EditRubric {
        path: PathBuf,
    },
    /// Saves the draft as a new version in the registry and over the rubric file.
    SaveRubric {
        path: PathBuf,
        draft: PathBuf,
        note: String,
        /// The version it is saved as (written into the draft first).
        version: String,
    },
    /// The diff from the version `back` places before the registry's last to the last.
    DiffRubric {
        id: String,
        back: usize,
    },
    /// Writes an edited rubric to its draft, then reads it back and lints it.
    WriteDraft {
        path: PathBuf,
        rubric: Box<Rubric>,
        /// Draft writes are numbered: the answer to an older one never replaces a newer edit.
        seq: u64,
    },
    /// Reads the run `back` places before the dataset's latest, to compare with it (as side
    /// B when `b`).
    LoadEarlierRun {
        dataset: usize,
        back: usize,
        b: bool,
    },
    /// Reads the reasons and failures of a run's items at these dataset positions (the
    /// few on screen: the UI holds no run's reasons whole).
    LoadRunDetails {
        run_id: String,
        positions: Vec<usize>,
    },
    /// Evaluates the artifact's required rubrics and moves it along the review flow.
    SubmitArtifact {
        id: String,
        /// The tag its live grid (in the Grade pane) carries.
        tag: u64,
    },
    /// A reviewer's decision, with a note.
    DecideArtifact {
        id: String,
        to: crate::store::artifacts::Status,
        note: String,
    },
    CancelRun {
        tag: u64,
    },
    /// Grades exactly these cells (item position, criterion) again in the same run.
    RetryCells {
        tag: u64,
        cells: Vec<(usize, String)>,
        /// The set-up's cost limit, in force instead of the one the run started with.
        max_cost: Option<f64>,
    },
    /// Read what belongs to a dataset: its latest run, the labelling rubric, labels.
    Open {
        dataset: usize,
    },
    /// Read items `start..start + count` (building the index first if needed).
    LoadWindow {
        tag: u64,
        dataset: usize,
        start: usize,
        count: usize,
    },
    /// Read every item once: ids, and the positions whose submission contains `query`.
    Scan {
        tag: u64,
        dataset: usize,
        query: String,
        /// A filter on the dataset's run (with the labels it joins), applied as it is read.
        run: Option<RunScan>,
    },
    /// Joins a run with the annotator's labels (generation `labels_gen`): the judge's
    /// verdicts on labelled cells and where they differ.
    JoinLabels {
        run_id: String,
        labels: std::sync::Arc<super::data::Labels>,
        labels_gen: u64,
    },
    /// The dataset positions of the run's items the Results list keeps.
    FilterRunItems {
        tag: u64,
        run_id: String,
        query: super::run_scan::ItemsQuery,
    },
    /// Two runs compared item by item (A, then B).
    CompareRuns {
        a: String,
        b: String,
    },
    SaveLabel {
        dataset: usize,
        item: String,
        criterion: String,
        verdict: serde_json::Value,
        note: String,
        rubric: String,
        rubric_version: String,
    },
    Undo {
        dataset: usize,
        seq: u64,
        item: String,
        criterion: String,
    },
    /// Works out the "labels next" order and each criterion's stop rule for `annotator` on
    /// the dataset (from every run over it and the labels on disk); `labels_gen` is the labels'
    /// generation it answers. `between_top_two`: from the two runs that agree best with the
    /// labels only.
    PlanLabels {
        dataset: usize,
        annotator: String,
        labels_gen: u64,
        between_top_two: bool,
    },
    /// Ranks every run of one rubric over the dataset against the annotator's labels.
    Calibrate {
        dataset: usize,
        annotator: String,
        labels_gen: u64,
    },
    /// Writes the judge of run `run_id` (ranked against the annotator's labels) into its
    /// rubric as the next registry version.
    Adopt {
        dataset: usize,
        annotator: String,
        run_id: String,
    },
    /// Reads the newest `rubricate align` report for the open dataset or a rubric file.
    ReadAlign(AlignSource),
    /// Adopts the winner of the align report at `path` as its rubric's next minor version.
    AdoptAlign {
        path: std::path::PathBuf,
    },
    /// Labels from now on are this annotator's (and theirs are shown).
    SetAnnotator {
        name: String,
        dataset: Option<usize>,
    },
}

impl Effect {
    /// Effects that write a user's files: carried out one at a time, in the order they were
    /// made (two writes to one file never race, and a later edit always lands last).
    pub fn writes_in_order(&self) -> bool {
        matches!(
            self,
            Effect::SaveLabel { .. }
                | Effect::Undo { .. }
                | Effect::SetAnnotator { .. }
                | Effect::WriteDraft { .. }
                | Effect::SaveRubric { .. }
                | Effect::DecideArtifact { .. }
                | Effect::NewRubric { .. }
                | Effect::AddDataset(_)
                | Effect::CreateArtifact { .. }
                | Effect::ReviseArtifact { .. }
                // Both change the runtime's list of datasets, whose order the UI's must match.
                | Effect::FindDatasets
                | Effect::AddFirstCriterion { .. }
                | Effect::Adopt { .. }
                | Effect::AdoptAlign { .. }
        )
    }
}

/// A Datasets filter on a run, joined with the labels, for a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct RunScan {
    pub run_id: String,
    pub filter: super::run_scan::RunFilter,
    pub labels: std::sync::Arc<super::data::Labels>,
}

/// Whose align report the Align view shows: the open dataset's (from Results, the
/// dataset's position) or a rubric file's (from Rubrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlignSource {
    Dataset(usize),
    Rubric(std::path::PathBuf),
}

/// What to do once an estimate arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterEstimate {
    /// Show it.
    Show,
    /// Start the run if it is small, else ask first.
    Start { changed_only: bool },
}
