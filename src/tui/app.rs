//! The terminal UI's state and the one place it changes: `App::update(msg) -> effects`.
//! `update` never waits and does no I/O; reading windows of a dataset, saving labels and
//! scanning for a search are effects the runtime carries out, answering with messages tagged
//! so that an answer to a superseded request is dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

pub use super::browse::{Browse, Filter};
use super::data::{DatasetInfo, Labels, RunData};
use super::keymap::{Action, Context, Key, Keymap};
pub use super::label::{LabelState, Queue, choice_keys, label_text, verdict_for};
use crate::model::{Item, Rubric};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Datasets,
    Rubrics,
    Label,
    Grade,
    Results,
    Review,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Datasets,
        Pane::Rubrics,
        Pane::Label,
        Pane::Grade,
        Pane::Results,
        Pane::Review,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Datasets => "Datasets",
            Pane::Rubrics => "Rubrics",
            Pane::Label => "Label",
            Pane::Grade => "Grade",
            Pane::Results => "Results",
            Pane::Review => "Review",
        }
    }
}

/// Where the first tab begins: after ` rubricate ` and a space.
pub const TAB_BAR_START: usize = 12;

pub struct App {
    pub pane: Pane,
    pub keymap: Keymap,
    pub theme: super::theme::Theme,
    /// The UI opens in this workspace for the first time: the Datasets pane says what is
    /// where.
    pub first_start: bool,
    /// Asking which format to export the Results pane's run in.
    pub export_prompt: bool,
    pub help: bool,
    /// How far the help is scrolled.
    pub help_scroll: usize,
    pub quit: bool,
    pub message: Option<String>,
    pub workspace: PathBuf,
    pub annotator: String,
    pub datasets: Vec<DatasetInfo>,
    pub selected: usize,
    pub browse: Option<Browse>,
    pub labels: Labels,
    pub label: LabelState,
    /// The criterion selected in the Results pane.
    pub results_cursor: usize,
    /// The run the latest is compared with (A; the latest is B), and how far back it is.
    pub compare: Option<Arc<RunData>>,
    pub compare_back: usize,
    /// Side B of a comparison when it is not the latest run, and how far back it is.
    pub compare_b: Option<Arc<RunData>>,
    pub compare_b_back: usize,
    pub size: (u16, u16),
    /// A note being typed for the current label (`Some` while the note line is open).
    pub note: Option<String>,
    /// Everyone with labels for the open dataset (`a` cycles through them).
    pub annotators: Vec<String>,
    /// Notes on the current annotator's labels, by (item, criterion).
    pub notes: BTreeMap<(String, String), String>,
    /// The annotator's name being typed (asked once, when nothing configured it).
    pub annotator_prompt: Option<String>,
    /// The annotator came from config or the environment, or was confirmed at the prompt.
    pub annotator_confirmed: bool,
    pub grade: super::grade::GradeState,
    pub review: super::review::ReviewState,
    pub rubrics: super::rubrics::RubricsState,
    next_tag: u64,
}

/// Rows a page moves.
pub(super) const PAGE: usize = 10;
/// Items read around the view when it moves.
pub(super) const MARGIN: usize = 50;

#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Resize(u16, u16),
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
        after: super::grade::AfterEstimate,
    },
    /// How far an estimate has walked the dataset.
    EstimateProgress(u64),
    /// A label was NOT written (the disk said why).
    LabelFailed(String),
    /// A rubric read (and linted), with what happened; `draft` is the number of the draft
    /// write it answers (`None`: a load or a save).
    RubricLoaded {
        view: super::rubrics::RubricView,
        message: Option<String>,
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
    /// The workspace's artifacts (after a load, a review or a decision), and what happened.
    Artifacts {
        artifacts: Vec<crate::store::artifacts::Artifact>,
        message: Option<String>,
    },
    /// Something to tell the user.
    Info(String),
    Error(String),
}

/// How a run's sitting ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// Every cell graded; the run is marked finished.
    Finished,
    /// Stopped, or cells are missing (why): the run stays resumable.
    Unfinished(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// What grading would cost: calls, cached, tokens, money (nothing is sent).
    Estimate {
        dataset: usize,
        rubric: PathBuf,
        judge: Option<String>,
        strategy: Option<crate::engine::judge::Strategy>,
        max_cost: Option<f64>,
        after: super::grade::AfterEstimate,
    },
    /// Grades the dataset with the rubric (and judge), journalled as a run in the workspace.
    StartRun {
        tag: u64,
        dataset: usize,
        rubric: PathBuf,
        judge: Option<String>,
        strategy: Option<crate::engine::judge::Strategy>,
        /// Stop sending judge calls once this many dollars are spent.
        max_cost: Option<f64>,
        /// Only the cells whose criterion changed since the last run of this rubric; the
        /// rest are copied from that run.
        changed_only: bool,
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
    },
    LoadArtifacts,
    /// Looks for datasets added since the UI started.
    FindDatasets,
    /// Starts a new rubric file in `rubrics/` (one criterion to begin with).
    NewRubric,
    /// Writes a run's results to the workspace's `exports/`.
    ExportRun {
        run_id: String,
        format: super::export::ExportFormat,
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
                | Effect::NewRubric
        )
    }
}

impl App {
    pub fn new(
        workspace: PathBuf,
        keymap: Keymap,
        annotator: String,
        datasets: Vec<DatasetInfo>,
    ) -> Self {
        Self {
            pane: Pane::Datasets,
            keymap,
            theme: super::theme::Theme::load(None, false).unwrap_or_default(),
            first_start: false,
            export_prompt: false,
            help: false,
            help_scroll: 0,
            quit: false,
            message: None,
            workspace,
            annotator,
            datasets,
            selected: 0,
            browse: None,
            labels: Labels::new(),
            label: LabelState::default(),
            results_cursor: 0,
            compare: None,
            compare_back: 0,
            compare_b: None,
            compare_b_back: 0,
            size: (80, 24),
            note: None,
            annotators: Vec::new(),
            notes: BTreeMap::new(),
            annotator_prompt: None,
            annotator_confirmed: true,
            grade: super::grade::GradeState::default(),
            review: super::review::ReviewState::default(),
            rubrics: super::rubrics::RubricsState::default(),
            next_tag: 0,
        }
    }

    fn tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag
    }

    /// A fresh tag for a request or a run.
    pub(super) fn new_tag(&mut self) -> u64 {
        self.tag()
    }

    /// Brings back what the last sitting left: the judge model typed, the dataset (selected)
    /// and the pane.
    pub fn restore(&mut self, state: &super::ui_state::UiState) {
        if state.judge.is_some() {
            self.grade.judge.clone_from(&state.judge);
        }
        if let Some(i) = state
            .dataset
            .as_ref()
            .and_then(|n| self.datasets.iter().position(|d| &d.name == n))
        {
            self.selected = i;
        }
        if let Some(p) = state
            .pane
            .as_ref()
            .and_then(|t| Pane::ALL.into_iter().find(|p| p.title() == t))
        {
            self.pane = p;
        }
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset.
    fn next_annotator(&mut self) -> Vec<Effect> {
        let mut names = self.annotators.clone();
        if !names.contains(&self.annotator) {
            names.push(self.annotator.clone());
        }
        names.sort();
        let at = names.iter().position(|n| *n == self.annotator).unwrap_or(0);
        let Some(next) = names.get((at + 1) % names.len().max(1)).cloned() else {
            return Vec::new();
        };
        if next == self.annotator {
            self.message = Some(format!(
                "only {next} has labels for this dataset; type another name in rubricate.yaml (annotator:) or at the Label prompt"
            ));
            return Vec::new();
        }
        self.annotator.clone_from(&next);
        self.annotator_confirmed = true;
        self.annotator_prompt = None;
        self.message = Some(format!(
            "labels of {next}: shown, and new labels are {next}'s"
        ));
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.browse.as_ref().map(|b| b.dataset),
        }]
    }

    /// The effects that bring back the pane restored: its dataset opened (and, for the
    /// Review pane, the artifacts read).
    pub fn resume_effects(&mut self) -> Vec<Effect> {
        let pane = self.pane;
        if pane == Pane::Datasets {
            return Vec::new();
        }
        self.switch(pane)
    }

    /// What to remember of this sitting.
    pub fn ui_state(&self) -> super::ui_state::UiState {
        let dataset = self.browse.as_ref().map_or(self.selected, |b| b.dataset);
        super::ui_state::UiState {
            annotator: self.annotator_confirmed.then(|| self.annotator.clone()),
            judge: self.grade.judge.clone(),
            dataset: self.datasets.get(dataset).map(|d| d.name.clone()),
            pane: Some(self.pane.title().to_owned()),
        }
    }

    /// Where keys are looked up now.
    pub fn context(&self) -> Context {
        match self.pane {
            Pane::Datasets => Context::List,
            Pane::Label => Context::Label,
            Pane::Grade => Context::Grade,
            Pane::Results => Context::Results,
            Pane::Review => Context::Review,
            Pane::Rubrics => Context::Rubrics,
        }
    }

    /// Rows the item list shows (the screen less the tab and status bars, the list's
    /// borders and its header).
    pub fn list_height(&self) -> usize {
        usize::from(self.size.1.saturating_sub(5)).max(1)
    }

    /// Anything the user could lose by quitting now.
    pub fn unsaved(&self) -> usize {
        self.label.unsaved
    }

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Key(k) if k.kind == KeyEventKind::Press => self.key(k),
            Msg::Key(_) => Vec::new(),
            Msg::Mouse(m) => self.mouse(m),
            Msg::Resize(w, h) => {
                self.size = (w, h);
                let height = self.list_height();
                if let Some(b) = &mut self.browse
                    && b.cursor >= b.offset + height
                {
                    b.offset = b.cursor + 1 - height;
                }
                self.scrolled()
            }
            Msg::Window { tag, total, items } => {
                if let Some(b) = &mut self.browse
                    && b.window_tag == tag
                {
                    b.total = Some(total);
                    for (p, item) in items {
                        b.window.insert(p, item);
                    }
                    // Keep memory bounded: only what is near the view.
                    let keep = b.offset.saturating_sub(4 * MARGIN)..b.offset + 5 * MARGIN;
                    let keep_pos: BTreeSet<usize> = keep.filter_map(|r| b.position(r)).collect();
                    b.window.retain(|p, _| keep_pos.contains(p));
                    if let Some(info) = self.datasets.get_mut(b.dataset) {
                        info.items = Some(total);
                    }
                }
                if self.label.refocus {
                    self.focus_first_unanswered();
                }
                Vec::new()
            }
            Msg::RubricCreated(path) => {
                self.message = Some(format!(
                    "new rubric {}: edit it in place (r n w …) or with ctrl-e; s saves it as a version",
                    path.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                ));
                for list in [&mut self.rubrics.files, &mut self.grade.rubrics] {
                    if !list.contains(&path) {
                        list.push(path.clone());
                        list.sort();
                    }
                }
                self.rubrics.file = self
                    .rubrics
                    .files
                    .iter()
                    .position(|p| *p == path)
                    .unwrap_or(0);
                self.rubrics.line = 0;
                vec![Effect::LoadRubric { path, draft: None }]
            }
            Msg::DatasetsFound(fresh) => {
                self.message = Some(format!(
                    "new: {}",
                    fresh
                        .iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                self.datasets.extend(fresh);
                Vec::new()
            }
            Msg::ScanProgress { tag, read, total } => {
                if let Some(b) = &mut self.browse
                    && b.scan_tag == tag
                {
                    b.scanning = Some((read, total));
                }
                Vec::new()
            }
            Msg::Scanned { tag, matches, ids } => {
                if let Some(b) = &mut self.browse
                    && b.scan_tag == tag
                {
                    b.scanning = None;
                    b.ids = ids;
                    b.total = Some(b.ids.len());
                    let keep = |p: &usize| Self::passes(b, &self.labels, *p);
                    let rows: Vec<usize> = matches.into_iter().filter(keep).collect();
                    b.rows = Some(rows);
                    b.cursor = 0;
                    b.offset = 0;
                    return self.scrolled();
                }
                Vec::new()
            }
            Msg::Opened {
                dataset,
                run,
                rubric,
                labels,
                notes,
                annotators,
            } => {
                if let Some(b) = &mut self.browse
                    && b.dataset == dataset
                {
                    b.run = run;
                    if rubric.is_some() {
                        b.rubric = rubric;
                    }
                    self.labels = labels;
                    self.notes = notes;
                    self.annotators = annotators;
                }
                Vec::new()
            }
            Msg::LabelSaved {
                seq,
                item,
                criterion,
                verdict,
                note,
            } => {
                if note.is_empty() {
                    self.notes.remove(&(item.clone(), criterion.clone()));
                } else {
                    self.notes.insert((item.clone(), criterion.clone()), note);
                }
                self.label.unsaved = self.label.unsaved.saturating_sub(1);
                self.label.sitting += 1;
                self.label
                    .saved
                    .push((seq, item.clone(), criterion.clone()));
                self.labels.insert((item, criterion), verdict);
                self.message = Some(format!("saved label {seq}"));
                Vec::new()
            }
            Msg::LabelUndone {
                item,
                criterion,
                verdict,
            } => {
                match verdict {
                    Some(v) => self.labels.insert((item, criterion), v),
                    None => self.labels.remove(&(item, criterion)),
                };
                self.label.sitting = self.label.sitting.saturating_sub(1);
                self.message = Some("undone".into());
                Vec::new()
            }
            Msg::RunStarted {
                tag,
                run_id,
                criteria,
                items,
            } => {
                self.message = Some(format!("run {run_id} started (journalled; resumable)"));
                self.grade.run = Some(super::grade::GridRun::new(tag, run_id, criteria, items));
                Vec::new()
            }
            Msg::Grade { tag, event } => {
                self.grade_event(tag, &event);
                Vec::new()
            }
            Msg::Preload { tag, cells } => {
                self.grade_preload(tag, &cells);
                Vec::new()
            }
            Msg::InFlight { tag, calls } => {
                self.grade_in_flight(tag, calls);
                Vec::new()
            }
            Msg::GradeFinished {
                tag,
                summary,
                end,
                tokens,
                cost,
            } => {
                self.grade_finished(tag, summary, end, tokens, cost);
                // The Results pane shows the latest run: read it again.
                match &self.browse {
                    Some(b) => vec![Effect::Open { dataset: b.dataset }],
                    None => Vec::new(),
                }
            }
            Msg::Artifacts { artifacts, message } => {
                // The selection follows its artifact when the order changes.
                let keep = self.selected_artifact().map(|a| a.id.clone());
                self.review.artifacts = artifacts;
                self.review.loaded = true;
                self.review.busy = None;
                let ordered = super::review::ordered(&self.review.artifacts);
                let n = ordered.len();
                self.review.selected = keep
                    .and_then(|id| ordered.iter().position(|a| a.id == id))
                    .unwrap_or(self.review.selected)
                    .min(n.saturating_sub(1));
                if message.is_some() {
                    self.message = message;
                }
                Vec::new()
            }
            Msg::EarlierRun { back, run, b: true } => {
                match run {
                    Some(run) => {
                        self.compare_b_back = back;
                        self.compare_b = Some(run);
                    }
                    None => self.message = Some("no run that far back".into()),
                }
                Vec::new()
            }
            Msg::EarlierRun { back, run, .. } => {
                if run.is_none() {
                    self.message = Some(if back <= 1 {
                        "there is no earlier run of this dataset to compare with".into()
                    } else {
                        "no run that far back".into()
                    });
                    if back > 1 {
                        // Stay on the last one that existed.
                        self.compare_back = back - 1;
                    }
                    if back <= 1 {
                        self.compare = None;
                    }
                } else {
                    self.compare_back = back;
                    self.compare = run;
                }
                Vec::new()
            }
            Msg::RubricLoaded {
                view,
                message,
                draft,
            } => {
                if let Some(seq) = draft {
                    self.rubrics.written_seq = self.rubrics.written_seq.max(seq);
                    // A later edit is already on screen (and queued after this write).
                    if seq < self.rubrics.draft_seq && message.is_none() {
                        return Vec::new();
                    }
                }
                // Another rubric: the undo steps belonged to the one before.
                if self
                    .rubrics
                    .view
                    .as_ref()
                    .is_none_or(|v| v.path != view.path)
                {
                    self.rubrics.undo.clear();
                    self.rubrics.confirm_delete = None;
                }
                let lines = view
                    .rubric
                    .as_ref()
                    .map_or(1, |r| super::rubrics::tree(r).len());
                self.rubrics.line = self.rubrics.line.min(lines.saturating_sub(1));
                self.rubrics.view = Some(view);
                if message.is_some() {
                    self.message = message;
                }
                Vec::new()
            }
            Msg::Diff(diff) => {
                match diff {
                    Ok((text, back)) => {
                        self.rubrics.diff = Some(text);
                        self.rubrics.diff_back = back;
                    }
                    Err(why) => self.message = Some(why),
                }
                Vec::new()
            }
            Msg::Estimate { result, after } => self.grade_estimate(result, after),
            Msg::EstimateProgress(items) => {
                if self.grade.estimating.is_some() {
                    self.grade.estimating = Some(items);
                }
                Vec::new()
            }
            Msg::Info(text) => {
                self.message = Some(text);
                Vec::new()
            }
            Msg::LabelFailed(e) => {
                self.label.unsaved = self.label.unsaved.saturating_sub(1);
                self.message = Some(e);
                Vec::new()
            }
            Msg::Error(e) => {
                self.message = Some(e);
                Vec::new()
            }
        }
    }

    /// The one-line text being typed, if any (in the order keys reach them).
    fn typed_text(&mut self) -> Option<&mut String> {
        if let Some((_, note)) = &mut self.review.note {
            return Some(note);
        }
        if self.pane == Pane::Rubrics
            && self.rubrics.edit.is_none()
            && let Some(d) = &mut self.rubrics.save
        {
            return Some(&mut d.note);
        }
        if self.pane == Pane::Grade {
            if let Some(t) = &mut self.grade.max_cost_input {
                return Some(t);
            }
            if let Some(t) = &mut self.grade.judge_input {
                return Some(t);
            }
        }
        if let Some(t) = &mut self.annotator_prompt {
            return Some(t);
        }
        if let Some(t) = &mut self.note {
            return Some(t);
        }
        None
    }

    fn key(&mut self, k: KeyEvent) -> Vec<Effect> {
        if self.export_prompt {
            self.export_prompt = false;
            let format = match k.code {
                KeyCode::Char('c') => Some(super::export::ExportFormat::Csv),
                KeyCode::Char('j') => Some(super::export::ExportFormat::Jsonl),
                KeyCode::Char('m') => Some(super::export::ExportFormat::Markdown),
                _ => None,
            };
            let run_id = self
                .browse
                .as_ref()
                .and_then(|b| b.run.as_ref())
                .map(|r| r.manifest.id.clone());
            if let (Some(format), Some(run_id)) = (format, run_id) {
                self.message = Some("exporting…".into());
                return vec![Effect::ExportRun { run_id, format }];
            }
            self.message = Some("not exported".into());
            return Vec::new();
        }
        // ctrl-u clears the line being typed (as in a shell); other ctrl keys type nothing.
        if k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char(_))
            && self.rubrics.edit.is_none()
            && let Some(text) = self.typed_text()
        {
            if k.code == KeyCode::Char('u') {
                text.clear();
            }
            return Vec::new();
        }
        if k.modifiers.contains(KeyModifiers::CONTROL)
            && k.code == KeyCode::Char('u')
            && self.pane == Pane::Datasets
            && let Some(b) = &mut self.browse
            && let Some(query) = &mut b.search
        {
            query.clear();
            return self.rescan(String::new());
        }
        if let Some(effects) = self.review_key(&k) {
            return effects;
        }
        if self.pane == Pane::Rubrics
            && let Some(effects) = self.rubrics_key(&k)
        {
            return effects;
        }
        if self.pane == Pane::Grade
            && let Some(effects) = self.grade_key(&k)
        {
            return effects;
        }
        // The annotator prompt, the note line, then the search line take typed text first.
        if let Some(name) = &mut self.annotator_prompt {
            match k.code {
                KeyCode::Esc => {
                    self.annotator_prompt = None;
                    self.pane = Pane::Datasets;
                }
                KeyCode::Backspace => {
                    name.pop();
                }
                KeyCode::Char(c) => name.push(c),
                KeyCode::Enter => {
                    let name = name.trim().to_owned();
                    if let Err(e) = crate::store::labels::check_name("annotator", &name) {
                        self.message = Some(e.to_string());
                        return Vec::new();
                    }
                    self.annotator_prompt = None;
                    self.annotator_confirmed = true;
                    self.annotator.clone_from(&name);
                    self.message = Some(format!("labelling as {name}"));
                    return vec![Effect::SetAnnotator {
                        name,
                        dataset: self.browse.as_ref().map(|b| b.dataset),
                    }];
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(note) = &mut self.note {
            match k.code {
                KeyCode::Esc => self.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                KeyCode::Enter => {
                    let text = self.note.take().unwrap_or_default();
                    return self.save_note(text);
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(b) = &mut self.browse
            && let Some(query) = &mut b.search
        {
            match k.code {
                KeyCode::Esc => {
                    b.search = None;
                    return self.rescan(String::new());
                }
                KeyCode::Enter => {
                    b.search = None;
                    return Vec::new();
                }
                KeyCode::Backspace => {
                    query.pop();
                    let q = query.clone();
                    return self.rescan(q);
                }
                KeyCode::Char(c) => {
                    query.push(c);
                    let q = query.clone();
                    return self.rescan(q);
                }
                _ => return Vec::new(),
            }
        }
        if self.help {
            // The help scrolls with the arrows and pages; any other key closes it (quit
            // still quits).
            match k.code {
                KeyCode::Down | KeyCode::Char('j') => self.help_scroll += 1,
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1);
                }
                KeyCode::PageDown | KeyCode::Char(' ') => self.help_scroll += 10,
                KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                _ => {
                    self.help = false;
                    let quit = self.keymap.action(self.context(), Key::from_event(&k))
                        == Some(Action::Quit);
                    if quit {
                        return self.act(Action::Quit);
                    }
                }
            }
            return Vec::new();
        }
        let Some(action) = self.keymap.action(self.context(), Key::from_event(&k)) else {
            return Vec::new();
        };
        self.act(action)
    }

    fn act(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Quit => {
                if self.unsaved() > 0 {
                    self.message = Some(format!(
                        "{} label(s) are still being saved; press q again in a moment",
                        self.unsaved()
                    ));
                } else if self.rubrics.saving() {
                    self.message = Some(
                        "a rubric edit is still being written to its draft; press q again in a moment"
                            .into(),
                    );
                } else {
                    self.quit = true;
                }
                Vec::new()
            }
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
                Vec::new()
            }
            Action::NextPane | Action::PrevPane => {
                let i = Pane::ALL.iter().position(|p| *p == self.pane).unwrap_or(0);
                let n = Pane::ALL.len();
                let next = if action == Action::NextPane {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.switch(Pane::ALL[next])
            }
            Action::DatasetsPane => self.switch(Pane::Datasets),
            Action::LabelPane => self.switch(Pane::Label),
            Action::ResultsPane => self.switch(Pane::Results),
            Action::GradePane => self.switch(Pane::Grade),
            Action::ReviewPane => self.switch(Pane::Review),
            Action::RubricsPane => self.switch(Pane::Rubrics),
            Action::Annotator if matches!(self.pane, Pane::Label | Pane::Results) => {
                self.next_annotator()
            }
            _ => match self.pane {
                Pane::Datasets => self.datasets_action(action),
                Pane::Label => self.label_action(action),
                Pane::Grade => self.grade_action(action),
                Pane::Review => self.review_action(action),
                Pane::Rubrics => self.rubrics_action(action),
                Pane::Results => self.results_action(action),
            },
        }
    }

    fn switch(&mut self, pane: Pane) -> Vec<Effect> {
        // What was said belongs to the pane it was said in.
        if pane != self.pane {
            self.message = None;
        }
        self.pane = pane;
        if pane == Pane::Review {
            return vec![Effect::LoadArtifacts];
        }
        if pane == Pane::Datasets && self.browse.is_none() {
            return vec![Effect::FindDatasets];
        }
        if pane == Pane::Label && !self.annotator_confirmed {
            // Nothing said who labels: ask once, with the login name offered.
            self.annotator_prompt = Some(self.annotator.clone());
        }
        if pane != Pane::Datasets && self.browse.is_none() && !self.datasets.is_empty() {
            return self.open(self.selected);
        }
        if pane == Pane::Label {
            return self.scrolled();
        }
        Vec::new()
    }

    fn results_action(&mut self, action: Action) -> Vec<Effect> {
        let n = self
            .browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .map_or(0, |r| r.rubric.criteria.len());
        match action {
            Action::Up => self.results_cursor = self.results_cursor.saturating_sub(1),
            Action::Down if n > 0 => self.results_cursor = (self.results_cursor + 1).min(n - 1),
            // Jump to the items of one cell of the selected criterion's confusion matrix.
            Action::Choice(cell @ 1..=4) if n > 0 => {
                if let Some(b) = &mut self.browse {
                    b.filter = Filter::Cell {
                        criterion: self.results_cursor,
                        cell: cell - 1,
                    };
                    b.detail = false;
                }
                self.pane = Pane::Datasets;
                return self.rescan(String::new());
            }
            Action::Export => {
                if self.browse.as_ref().and_then(|b| b.run.as_ref()).is_some() {
                    self.export_prompt = true;
                    self.message =
                        Some("export the run as: c CSV · j JSONL · m Markdown (esc: no)".into());
                } else {
                    self.message = Some("no run of this dataset to export".into());
                }
            }
            Action::Compare => {
                if self.compare.is_some() {
                    self.compare = None;
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back: 1,
                        b: false,
                    }];
                }
            }
            Action::Older | Action::Newer if self.compare.is_some() => {
                let back = if action == Action::Older {
                    self.compare_back + 1
                } else {
                    self.compare_back.saturating_sub(1).max(1)
                };
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: false,
                    }];
                }
            }
            // Side B moves too: any two runs of the dataset can be compared.
            Action::OlderB | Action::NewerB if self.compare.is_some() => {
                let back = if action == Action::OlderB {
                    self.compare_b_back + 1
                } else {
                    self.compare_b_back.saturating_sub(1)
                };
                if back == 0 {
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: true,
                    }];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// A tab's text: the key that opens the pane, then its name (`D Datasets`).
    pub fn tab_label(&self, p: Pane) -> String {
        let action = match p {
            Pane::Datasets => Action::DatasetsPane,
            Pane::Rubrics => Action::RubricsPane,
            Pane::Label => Action::LabelPane,
            Pane::Grade => Action::GradePane,
            Pane::Results => Action::ResultsPane,
            Pane::Review => Action::ReviewPane,
        };
        match self.keymap.keys_for(Context::Global, action).first() {
            Some(k) => format!("{k} {}", p.title()),
            None => p.title().to_owned(),
        }
    }

    /// The pane whose tab is at `column` of the tab bar (laid out as the view draws it:
    /// the name `rubricate`, then each tab with a space either side).
    pub fn tab_at(&self, column: u16) -> Option<Pane> {
        let mut x = TAB_BAR_START;
        let column = usize::from(column);
        for p in Pane::ALL {
            let width = self.tab_label(p).chars().count() + 2;
            if (x..x + width).contains(&column) {
                return Some(p);
            }
            x += width;
        }
        None
    }

    fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if m.row == 0
            && matches!(m.kind, MouseEventKind::Down(_))
            && let Some(p) = self.tab_at(m.column)
        {
            return self.switch(p);
        }
        match m.kind {
            MouseEventKind::ScrollDown => self.act(Action::Down),
            MouseEventKind::ScrollUp => self.act(Action::Up),
            MouseEventKind::Drag(_) if self.pane == Pane::Rubrics => {
                let row = usize::from(m.row).saturating_sub(2);
                self.drag_criterion(row)
            }
            MouseEventKind::Down(_) if self.pane == Pane::Rubrics => {
                // Tree lines start below the tab bar and the border.
                let row = usize::from(m.row).saturating_sub(2);
                if self.rubrics.view.is_some() {
                    self.rubrics.line = row;
                } else if row < self.rubrics.files.len() {
                    self.rubrics.file = row;
                }
                Vec::new()
            }
            MouseEventKind::Down(_) if self.pane == Pane::Datasets => {
                // Rows start below the tab bar and the list's border.
                let row = usize::from(m.row).saturating_sub(3);
                if let Some(b) = &self.browse {
                    let target = b.offset + row;
                    let delta = isize::try_from(target).unwrap_or(0)
                        - isize::try_from(b.cursor).unwrap_or(0);
                    self.move_cursor(delta)
                } else {
                    if row < self.datasets.len() {
                        self.selected = row;
                    }
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }
}
