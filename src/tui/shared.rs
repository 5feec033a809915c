//! What every pane may read (and the open dataset's operations change): the workspace, the
//! annotator, the datasets and the one open, the labels, the screen's size and the time.
//! Panes get `&mut Shared` with each action or message; none of them reaches another pane.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::data::{DatasetInfo, Labels, RunDetails};
use super::effect::Effect;
use super::keymap::{Action, Context, Keymap};
use super::msg::{Failure, FailureKind, Msg};
use super::nav::PaneId;
use super::open_dataset::Browse;
use super::theme::Theme;

pub struct Shared {
    /// The pane in front (only `app.rs` changes it).
    pub front: PaneId,
    pub workspace: PathBuf,
    pub keymap: Keymap,
    pub theme: Theme,
    /// The UI opens in this workspace for the first time: the Datasets pane says what is
    /// where.
    pub first_start: bool,
    /// The item the last sitting ended on (dataset, its place), brought back once that
    /// dataset's first items are read: quitting mid-way and coming back goes on from there.
    pub resume_item: Option<(usize, usize)>,
    /// What the last action said (cleared when the pane changes).
    pub message: Option<String>,
    /// The last failure that said work was not saved or the disk refused: while it is the
    /// message, the status bar marks it.
    pub alarm: Option<String>,
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
    /// The runs' joins with the labels and the criteria tables' figures (Results shows
    /// them; the Label pane's disagreements-first queue walks them).
    pub stats: super::run_stats::StatsCache,
    /// The "labels next" order and stop rule as last worked out.
    pub plan: Option<super::label_plan::PlanShown>,
    /// One is being worked out (never two at once: labels typed meanwhile are counted in
    /// the next).
    pub planning: bool,
    /// The Label pane's queue wants the plan between the two runs that agree best with the
    /// labels, not over every run.
    pub plan_between_top_two: bool,
    /// Rubric files of the workspace (`rubrics/`): Rubrics edits them, Grade offers them.
    pub rubric_files: Vec<PathBuf>,
    /// The workspace's artifact types and the rubrics each one's review evaluates.
    pub artifact_types: Vec<(String, Vec<String>)>,
    pub size: (u16, u16),
    /// The time as the runtime last said it (`Msg::Tick`): `update` never reads a clock,
    /// so the same messages give the same state.
    pub now: std::time::Instant,
    /// `y` was pressed at a question: the action it asked about runs now.
    pub confirming: bool,
    /// Counts datasets opened: panes that keep something of the dataset before (runs
    /// compared, figures) start again when it changes.
    pub opens: u64,
    /// Counts moves to another item (and opens): the Label pane focuses the new item's
    /// first criterion left to answer when it changes.
    pub item_moves: u64,
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
            front: PaneId::Datasets,
            workspace,
            keymap,
            theme: Theme::load(None, false).unwrap_or_default(),
            first_start: false,
            resume_item: None,
            message: None,
            alarm: None,
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
            stats: super::run_stats::StatsCache::default(),
            plan: None,
            planning: false,
            plan_between_top_two: false,
            rubric_files: Vec::new(),
            artifact_types: Vec::new(),
            size: (80, 24),
            now: std::time::Instant::now(),
            confirming: false,
            opens: 0,
            item_moves: 0,
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

    /// Says what failed: a write that did not reach the disk, or the disk refusing, as an
    /// alarm (the status bar marks it), a file to fix or a judge as it is said.
    pub fn failed(&mut self, failure: Failure) {
        self.alarm = matches!(failure.kind, FailureKind::Unwritten | FailureKind::Disk)
            .then(|| failure.said.clone());
        self.message = Some(failure.said);
    }

    /// Labels go to the adjudicated journal, each annotator's shown beside them.
    pub fn adjudicating(&self) -> bool {
        self.annotator == crate::store::labels::ADJUDICATED
    }

    /// A tab's text: the key that opens the pane, then its name (`D Datasets`).
    pub fn tab_label(&self, p: PaneId) -> String {
        let action = match p {
            PaneId::Datasets => Action::DatasetsPane,
            PaneId::Rubrics => Action::RubricsPane,
            PaneId::Label => Action::LabelPane,
            PaneId::Grade => Action::GradePane,
            PaneId::Results => Action::ResultsPane,
            PaneId::Review => Action::ReviewPane,
        };
        match self.keymap.keys_for(Context::Global, action).first() {
            Some(k) => format!("{k} {}", p.title()),
            None => p.title().to_owned(),
        }
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset (no
    /// effect: there is no other).
    pub fn next_annotator(&mut self) -> Vec<Effect> {
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
        self.message = Some(format!(
            "labels of {next}: shown, and new labels are {next}'s"
        ));
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.browse.as_ref().map(|b| b.dataset),
        }]
    }

    /// The runtime's answers about what every pane shares: the time and the screen's
    /// size, the datasets and the open one, run items read, the labels' plan, what was said.
    pub fn on_msg(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Tick(now) => {
                self.now = now;
                Vec::new()
            }
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
            Msg::DatasetAdded(info) => self.dataset_added(info),
            Msg::ScanProgress { tag, read, total } => self.scan_progress(tag, read, total),
            Msg::Scanned { tag, matches, ids } => self.scanned(tag, matches, ids),
            Msg::RunDetails {
                run_id,
                positions,
                items,
            } => self.run_details_read(run_id, &positions, items),
            Msg::LabelPlan {
                dataset,
                annotator,
                labels_gen,
                between_top_two,
                plan,
                people,
            } => {
                self.planning = false;
                self.plan = Some(super::label_plan::PlanShown {
                    dataset,
                    annotator,
                    labels_gen,
                    between_top_two,
                    plan,
                    people,
                });
                Vec::new()
            }
            Msg::Info(text) => {
                self.message = Some(text);
                Vec::new()
            }
            Msg::Error(failure) => {
                self.failed(failure);
                Vec::new()
            }
            // The app and the panes take the others (`App::update`).
            _ => Vec::new(),
        }
    }
}
