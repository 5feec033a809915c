//! The terminal UI's state and the one place it changes: `App::update(msg) -> effects`.
//! `update` never waits and does no I/O; reading windows of a dataset, saving labels and
//! scanning for a search are effects the runtime carries out, answering with messages tagged
//! so that an answer to a superseded request is dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::KeyEventKind;

pub use super::browse::{Browse, Filter};
use super::data::{DatasetInfo, Labels};
pub use super::effect::Effect;
use super::keymap::{Action, Context, Keymap};
pub use super::label::{LabelState, Queue, choice_keys, label_text, verdict_for};
pub use super::msg::{Msg, RunEnd};

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
    /// The prompt for a dataset file's path (`o`), while it is open.
    pub path_prompt: Option<super::path_prompt::PathPrompt>,
    /// The command palette, while it is open.
    pub palette: Option<super::palette::Palette>,
    /// How far the help is scrolled.
    pub help_scroll: usize,
    pub quit: bool,
    /// Quit was asked while writes were queued: the UI quits once the disk confirmed them
    /// all (a failed write cancels it; `esc` stays).
    pub quitting: bool,
    pub message: Option<String>,
    pub workspace: PathBuf,
    pub annotator: String,
    pub datasets: Vec<DatasetInfo>,
    pub selected: usize,
    pub browse: Option<Browse>,
    /// Shared with the runtime's joins of the run with them (copied on write only while one
    /// is under way).
    pub labels: Arc<Labels>,
    /// Counts changes to `labels`, so figures worked out from them know when to redo it.
    pub labels_gen: u64,
    pub label: LabelState,
    pub results: super::results::ResultsState,
    /// The reasons and failures of the run items on screen (read on demand).
    pub run_details: super::data::RunDetails,
    pub size: (u16, u16),
    /// The time as the runtime last said it (`Msg::Tick`): `update` never reads a clock,
    /// so the same messages give the same state.
    pub now: std::time::Instant,
    /// A note being typed for the current label (`Some` while the note line is open).
    pub note: Option<String>,
    /// Everyone with labels for the open dataset (`a` cycles through them).
    pub annotators: Vec<String>,
    /// Notes on the current annotator's labels, by (item, criterion).
    pub notes: BTreeMap<(String, String), String>,
    /// While adjudicating, every other annotator's labels (shown beside each criterion).
    pub peers: BTreeMap<String, Labels>,
    /// The items the dataset's assignment gives the annotator: the queues keep to them.
    pub assignment: Option<std::collections::BTreeSet<String>>,
    /// The annotator's name being typed (asked once, when nothing configured it).
    pub annotator_prompt: Option<String>,
    /// The prompt still shows the name offered (the login name): enter keeps it, the first
    /// key typed replaces it (a person types their name, not a suffix to someone else's).
    pub annotator_offered: bool,
    /// The annotator came from config or the environment, or was confirmed at the prompt.
    pub annotator_confirmed: bool,
    /// The workspace's artifact types and the rubrics each one's review evaluates.
    pub artifact_types: Vec<(String, Vec<String>)>,
    pub grade: super::grade::GradeState,
    pub review: super::review::ReviewState,
    pub rubrics: super::rubrics::RubricsState,
    /// A question or a refusal that takes every key until answered (`ask.rs`).
    pub ask: Option<super::ask::Ask>,
    /// `y` was pressed at a question: the action it asked about runs now.
    pub(super) confirming: bool,
    next_tag: u64,
}

/// Rows a page moves.
pub(super) const PAGE: usize = 10;
/// Items read around the view when it moves.
pub(super) const MARGIN: usize = 50;

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
            palette: None,
            path_prompt: None,
            help_scroll: 0,
            quit: false,
            quitting: false,
            message: None,
            workspace,
            annotator,
            datasets,
            selected: 0,
            browse: None,
            labels: Arc::default(),
            labels_gen: 0,
            label: LabelState::default(),
            results: super::results::ResultsState::default(),
            run_details: super::data::RunDetails::default(),
            size: (80, 24),
            now: std::time::Instant::now(),
            note: None,
            annotators: Vec::new(),
            notes: BTreeMap::new(),
            peers: BTreeMap::new(),
            assignment: None,
            annotator_prompt: None,
            annotator_offered: false,
            annotator_confirmed: true,
            artifact_types: Vec::new(),
            grade: super::grade::GradeState::default(),
            review: super::review::ReviewState::default(),
            rubrics: super::rubrics::RubricsState::default(),
            ask: None,
            confirming: false,
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
            // Adjudicating is a mode: the UI comes back as who was labelling before it.
            annotator: if self.adjudicating() {
                self.label.adjudicating_from.clone()
            } else {
                self.annotator_confirmed.then(|| self.annotator.clone())
            },
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

    /// Writes the disk has not confirmed yet: labels, undos and rubric drafts.
    pub fn unsaved(&self) -> usize {
        self.label.pending.len() + usize::from(self.rubrics.saving())
    }

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let failed = matches!(msg, Msg::LabelFailed(_) | Msg::Error(_));
        let mut effects = self.apply(msg);
        effects.extend(self.want_results());
        effects.extend(self.want_run_details());
        effects.extend(self.want_label_plan());
        effects.extend(self.want_calibration());
        if self.quitting {
            if failed {
                // Something was not written: stay, and say what (the message is the error).
                self.quitting = false;
            } else if self.unsaved() == 0 {
                self.quit = true;
            }
        }
        effects
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Key(k) if k.kind == KeyEventKind::Press => self.key(k),
            Msg::Key(_) => Vec::new(),
            Msg::Mouse(m) => self.mouse(m),
            Msg::Paste(text) => self.paste(&text),
            Msg::Tick(now) => {
                self.now = now;
                Vec::new()
            }
            Msg::Stop => self.act(Action::Quit),
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
            Msg::Window { tag, total, items } => self.window_read(tag, total, items),
            Msg::RubricCreated(path) => self.rubric_created(path),
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
            Msg::ScanProgress { tag, read, total } => self.scan_progress(tag, read, total),
            Msg::Scanned { tag, matches, ids } => self.scanned(tag, matches, ids),
            Msg::Opened {
                dataset,
                run,
                rubric,
                labels,
                notes,
                annotators,
                peers,
                assignment,
            } => {
                let mut refocus = false;
                if let Some(b) = &mut self.browse
                    && b.dataset == dataset
                {
                    self.peers = peers;
                    self.assignment = assignment;
                    refocus = std::mem::take(&mut self.label.refocus_on_open);
                    b.items_rubrics = run.as_ref().is_none_or(|r| {
                        !crate::run::RunSettings::of(&r.manifest).is_ok_and(|s| s.override_rubric)
                    });
                    b.run = run;
                    // Items read of an earlier state of the run (it may have grown) go.
                    self.run_details = super::data::RunDetails::default();
                    b.opened = true;
                    if rubric.is_some() {
                        b.rubric = rubric;
                    }
                    self.labels = Arc::new(labels);
                    self.labels_gen += 1;
                    self.notes = notes;
                    self.annotators = annotators;
                }
                if refocus {
                    self.focus_first_unanswered();
                }
                Vec::new()
            }
            Msg::LabelSaved {
                seq,
                item,
                criterion,
                verdict,
                note,
            } => self.label_saved(seq, item, criterion, verdict, note),
            Msg::LabelUndone {
                item,
                criterion,
                verdict,
            } => self.label_undone(item, criterion, verdict),
            Msg::RunStarted {
                tag,
                run_id,
                criteria,
                items,
            } => {
                // A retry grades cells of the run on screen again: its grid stays (with
                // every other cell, and the columns an item's own rubric gave it).
                let shown = self
                    .grade
                    .run
                    .as_ref()
                    .is_some_and(|r| r.tag == tag && r.run_id == run_id);
                if !shown {
                    self.message = Some(format!("run {run_id} started (journalled; resumable)"));
                    self.grade.run = Some(super::grade::GridRun::new(
                        tag, run_id, criteria, items, self.now,
                    ));
                }
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
            Msg::Artifacts { artifacts, message } => self.artifacts_read(artifacts, message),
            Msg::EarlierRun { back, run, b } => self.earlier_run(back, run, b),
            Msg::RunDetails {
                run_id,
                positions,
                items,
            } => self.run_details_read(run_id, &positions, items),
            Msg::LabelsJoined {
                run_id,
                labels_gen,
                join,
            } => self.labels_joined(&run_id, labels_gen, join),
            Msg::RunItemsFiltered { tag, positions } => self.run_items_filtered(tag, positions),
            Msg::Compared { a, b, result } => self.compared(&a, &b, result),
            Msg::RubricLoaded {
                view,
                message,
                draft,
            } => self.rubric_loaded(view, message, draft),
            Msg::Diff(diff) => self.diff_read(diff),
            Msg::Estimate { result, after } => self.grade_estimate(result, after),
            Msg::BatchStepped {
                dataset,
                run_id,
                result,
            } => self.batch_stepped(dataset, run_id, result),
            Msg::EstimateProgress(items) => {
                if self.grade.estimating.is_some() {
                    self.grade.estimating = Some(items);
                }
                Vec::new()
            }
            Msg::PathCompleted {
                typed,
                text,
                candidates,
            } => self.path_completed(&typed, text, candidates),
            Msg::DatasetAdded(info) => self.dataset_added(info),
            Msg::ArtifactContent { from, content } => self.artifact_content(from, content),
            Msg::Info(text) => {
                self.message = Some(text);
                Vec::new()
            }
            Msg::LabelPlan {
                dataset,
                annotator,
                labels_gen,
                plan,
                people,
            } => {
                self.label.planning = false;
                self.label.plan = Some(super::label_plan::PlanShown {
                    dataset,
                    annotator,
                    labels_gen,
                    plan,
                    people,
                });
                Vec::new()
            }
            Msg::Calibrated { labels_gen, ranked } => self.calibrated(labels_gen, ranked),
            Msg::LabelFailed(e) => self.label_failed(e),
            Msg::Error(e) => {
                self.message = Some(e);
                Vec::new()
            }
        }
    }

    pub(super) fn act(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Quit => {
                if self.unsaved() > 0 {
                    // Quit once the disk has every queued write (never before).
                    self.quitting = true;
                    self.message = Some(format!(
                        "writing {} change(s) to disk; quitting when they are saved (esc stays)",
                        self.unsaved()
                    ));
                } else {
                    self.quit = true;
                }
                Vec::new()
            }
            Action::Palette => self.open_palette(),
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

    pub(super) fn switch(&mut self, pane: Pane) -> Vec<Effect> {
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
            self.annotator_offered = true;
        }
        if pane != Pane::Datasets && self.browse.is_none() && !self.datasets.is_empty() {
            return self.open(self.selected);
        }
        if pane == Pane::Label {
            return self.scrolled();
        }
        Vec::new()
    }
}
