//! The terminal UI's state and the one place it changes: `App::update(msg) -> effects`.
//! `update` never waits and does no I/O; reading windows of a dataset, saving labels and
//! scanning for a search are effects the runtime carries out, answering with messages tagged
//! so that an answer to a superseded request is dropped.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::data::{DatasetInfo, Labels, RunData};
use super::keymap::{Action, Context, Key, Keymap};
use crate::model::{Item, Kind, Rubric, Verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Datasets,
    Label,
    Grade,
    Results,
}

impl Pane {
    pub const ALL: [Pane; 4] = [Pane::Datasets, Pane::Label, Pane::Grade, Pane::Results];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Datasets => "Datasets",
            Pane::Label => "Label",
            Pane::Grade => "Grade",
            Pane::Results => "Results",
        }
    }
}

/// Which items the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Unlabelled,
    Labelled,
    Disagreement,
    Failed,
    /// The latest run's score below 50 %.
    ScoreLow,
    /// The latest run's score 50 % or more.
    ScoreHigh,
    /// One cell of a criterion's confusion matrix (0 human MET/judge MET, 1 MET/UNMET,
    /// 2 UNMET/MET, 3 UNMET/UNMET), from the Results pane.
    Cell {
        criterion: usize,
        cell: u8,
    },
}

impl Filter {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Filter::All => Filter::Unlabelled,
            Filter::Unlabelled => Filter::Labelled,
            Filter::Labelled => Filter::Disagreement,
            Filter::Disagreement => Filter::Failed,
            Filter::Failed => Filter::ScoreLow,
            Filter::ScoreLow => Filter::ScoreHigh,
            Filter::ScoreHigh | Filter::Cell { .. } => Filter::All,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Unlabelled => "unlabelled",
            Filter::Labelled => "labelled",
            Filter::Disagreement => "disagreement",
            Filter::Failed => "failed",
            Filter::ScoreLow => "score < 50%",
            Filter::ScoreHigh => "score ≥ 50%",
            Filter::Cell { .. } => "confusion cell",
        }
    }
}

/// The label queue's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Queue {
    #[default]
    InOrder,
    UnlabelledFirst,
    DisagreementsFirst,
    /// Items the judge was least sure of: votes that disagreed, an abstention, a failure.
    MostInformative,
}

impl Queue {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Queue::InOrder => Queue::UnlabelledFirst,
            Queue::UnlabelledFirst => Queue::DisagreementsFirst,
            Queue::DisagreementsFirst => Queue::MostInformative,
            Queue::MostInformative => Queue::InOrder,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Queue::InOrder => "in order",
            Queue::UnlabelledFirst => "unlabelled first",
            Queue::DisagreementsFirst => "disagreements first",
            Queue::MostInformative => "most informative",
        }
    }
}

/// The open dataset.
#[derive(Debug, Clone)]
pub struct Browse {
    pub dataset: usize,
    /// Items in the dataset once known (after its index is read).
    pub total: Option<usize>,
    /// Positions shown, in order: every item, or the matches of a search or filter.
    pub rows: Option<Vec<usize>>,
    /// The selected row.
    pub cursor: usize,
    /// The first row on screen.
    pub offset: usize,
    /// Items read so far around the view (position → item).
    pub window: std::collections::BTreeMap<usize, Item>,
    pub window_tag: u64,
    pub detail: bool,
    pub detail_scroll: u16,
    pub filter: Filter,
    /// The search being typed (`Some` while the search line is open).
    pub search: Option<String>,
    pub scan_tag: u64,
    /// Item ids by position (from the last scan), for filters on labels and results.
    pub ids: Vec<String>,
    pub run: Option<Arc<RunData>>,
    pub rubric: Option<Arc<Rubric>>,
}

impl Browse {
    /// The item position at a row.
    pub fn position(&self, row: usize) -> Option<usize> {
        match &self.rows {
            Some(rows) => rows.get(row).copied(),
            None => self.total.filter(|t| row < *t).map(|_| row),
        }
    }

    pub fn row_count(&self) -> usize {
        self.rows
            .as_ref()
            .map_or_else(|| self.total.unwrap_or(0), Vec::len)
    }

    pub fn current(&self) -> Option<&Item> {
        self.position(self.cursor).and_then(|p| self.window.get(&p))
    }
}

/// The labelling session.
#[derive(Debug, Clone)]
pub struct LabelState {
    pub criterion: usize,
    pub blind: bool,
    pub queue: Queue,
    /// Labels saved this sitting, and when it began.
    pub sitting: usize,
    pub started: Instant,
    /// Sequence numbers of this sitting's labels, newest last (for undo).
    pub saved: Vec<(u64, String, String)>,
    /// Labels sent but not yet acknowledged (synced to disk).
    pub unsaved: usize,
}

impl Default for LabelState {
    fn default() -> Self {
        Self {
            criterion: 0,
            blind: false,
            queue: Queue::default(),
            sitting: 0,
            started: Instant::now(),
            saved: Vec::new(),
            unsaved: 0,
        }
    }
}

pub struct App {
    pub pane: Pane,
    pub keymap: Keymap,
    pub theme: super::theme::Theme,
    pub help: bool,
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
    pub size: (u16, u16),
    /// A note being typed for the current label (`Some` while the note line is open).
    pub note: Option<String>,
    /// The annotator's name being typed (asked once, when nothing configured it).
    pub annotator_prompt: Option<String>,
    /// The annotator came from config or the environment, or was confirmed at the prompt.
    pub annotator_confirmed: bool,
    pub grade: super::grade::GradeState,
    next_tag: u64,
}

/// Rows a page moves.
const PAGE: usize = 10;
/// Items read around the view when it moves.
const MARGIN: usize = 50;

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
    },
    /// A label is on disk.
    LabelSaved {
        seq: u64,
        item: String,
        criterion: String,
        verdict: serde_json::Value,
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
    GradeFinished {
        tag: u64,
        summary: String,
        tokens: u64,
        cost: f64,
    },
    /// The dry-run estimate for the chosen rubric and judge.
    Estimate(String),
    Error(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// What grading would cost: calls, cached, tokens, money (nothing is sent).
    Estimate {
        dataset: usize,
        rubric: PathBuf,
        judge: Option<String>,
    },
    /// Grades the dataset with the rubric (and judge), journalled as a run in the workspace.
    StartRun {
        tag: u64,
        dataset: usize,
        rubric: PathBuf,
        judge: Option<String>,
    },
    PauseRun {
        tag: u64,
        paused: bool,
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
            help: false,
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
            size: (80, 24),
            note: None,
            annotator_prompt: None,
            annotator_confirmed: true,
            grade: super::grade::GradeState::default(),
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

    /// Where keys are looked up now.
    pub fn context(&self) -> Context {
        match self.pane {
            Pane::Datasets => Context::List,
            Pane::Label => Context::Label,
            Pane::Grade => Context::Grade,
            Pane::Results => Context::Results,
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
                Vec::new()
            }
            Msg::Scanned { tag, matches, ids } => {
                if let Some(b) = &mut self.browse
                    && b.scan_tag == tag
                {
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
            } => {
                if let Some(b) = &mut self.browse
                    && b.dataset == dataset
                {
                    b.run = run;
                    if rubric.is_some() {
                        b.rubric = rubric;
                    }
                    self.labels = labels;
                }
                Vec::new()
            }
            Msg::LabelSaved {
                seq,
                item,
                criterion,
                verdict,
            } => {
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
            Msg::GradeFinished {
                tag,
                summary,
                tokens,
                cost,
            } => {
                self.grade_finished(tag, summary, tokens, cost);
                // The Results pane shows the latest run: read it again.
                match &self.browse {
                    Some(b) => vec![Effect::Open { dataset: b.dataset }],
                    None => Vec::new(),
                }
            }
            Msg::Estimate(text) => {
                self.grade.estimate = Some(text);
                Vec::new()
            }
            Msg::Error(e) => {
                self.label.unsaved = 0;
                self.message = Some(e);
                Vec::new()
            }
        }
    }

    fn key(&mut self, k: KeyEvent) -> Vec<Effect> {
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
        let Some(action) = self.keymap.action(self.context(), Key::from_event(&k)) else {
            return Vec::new();
        };
        if self.help {
            // Any key closes the help; quit still quits.
            self.help = false;
            if action != Action::Quit {
                return Vec::new();
            }
        }
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
                } else {
                    self.quit = true;
                }
                Vec::new()
            }
            Action::Help => {
                self.help = true;
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
            _ => match self.pane {
                Pane::Datasets => self.datasets_action(action),
                Pane::Label => self.label_action(action),
                Pane::Grade => self.grade_action(action),
                Pane::Results => self.results_action(action),
            },
        }
    }

    fn switch(&mut self, pane: Pane) -> Vec<Effect> {
        self.pane = pane;
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

    fn open(&mut self, dataset: usize) -> Vec<Effect> {
        let tag = self.tag();
        self.browse = Some(Browse {
            dataset,
            total: self.datasets.get(dataset).and_then(|d| d.items),
            rows: None,
            cursor: 0,
            offset: 0,
            window: std::collections::BTreeMap::new(),
            window_tag: tag,
            detail: false,
            detail_scroll: 0,
            filter: Filter::All,
            search: None,
            scan_tag: 0,
            ids: Vec::new(),
            run: None,
            rubric: None,
        });
        self.label.criterion = 0;
        vec![
            Effect::Open { dataset },
            Effect::LoadWindow {
                tag,
                dataset,
                start: 0,
                count: self.list_height() + MARGIN,
            },
        ]
    }

    fn rescan(&mut self, query: String) -> Vec<Effect> {
        let tag = self.tag();
        let Some(b) = &mut self.browse else {
            return Vec::new();
        };
        b.scan_tag = tag;
        if query.is_empty() && b.filter == Filter::All {
            b.rows = None;
            b.cursor = 0;
            b.offset = 0;
            return self.scrolled();
        }
        vec![Effect::Scan {
            tag,
            dataset: b.dataset,
            query,
        }]
    }

    /// Whether the item at `position` passes the open dataset's filter.
    fn passes(b: &Browse, labels: &Labels, position: usize) -> bool {
        let Some(id) = b.ids.get(position) else {
            return b.filter == Filter::All;
        };
        let criteria: Vec<&str> = b
            .rubric
            .as_ref()
            .map(|r| r.criteria.iter().map(|c| c.id.as_str()).collect())
            .unwrap_or_default();
        let labelled = criteria
            .iter()
            .filter(|c| labels.contains_key(&(id.clone(), (**c).to_owned())))
            .count();
        let result = b.run.as_ref().and_then(|r| r.by_item.get(id));
        match b.filter {
            Filter::All => true,
            Filter::Unlabelled => labelled < criteria.len().max(1),
            Filter::Labelled => labelled > 0 && labelled == criteria.len(),
            Filter::Failed => result.is_some_and(|r| r.incomplete),
            Filter::ScoreLow => result.and_then(|r| r.score).is_some_and(|x| x < 0.5),
            Filter::ScoreHigh => result.and_then(|r| r.score).is_some_and(|x| x >= 0.5),
            Filter::Cell { criterion, cell } => {
                let Some(c) = b.rubric.as_ref().and_then(|r| r.criteria.get(criterion)) else {
                    return false;
                };
                let human = labels.get(&(id.clone(), c.id.clone())).map(label_text);
                let judge = result
                    .and_then(|r| r.results.iter().find(|x| x.criterion_id == c.id))
                    .and_then(|x| x.verdict.as_ref().map(ToString::to_string));
                let (want_h, want_j) = match cell {
                    0 => ("MET", "MET"),
                    1 => ("MET", "UNMET"),
                    2 => ("UNMET", "MET"),
                    _ => ("UNMET", "UNMET"),
                };
                human.as_deref() == Some(want_h) && judge.as_deref() == Some(want_j)
            }
            Filter::Disagreement => result.is_some_and(|r| {
                r.results.iter().any(|c| {
                    let human = labels.get(&(id.clone(), c.criterion_id.clone()));
                    match (human, &c.verdict) {
                        (Some(h), Some(v)) => label_text(h) != v.to_string(),
                        _ => false,
                    }
                })
            }),
        }
    }

    /// Moves the cursor by `delta` rows and asks for the items the view now needs.
    fn move_cursor(&mut self, delta: isize) -> Vec<Effect> {
        let height = self.list_height();
        let Some(b) = &mut self.browse else {
            return Vec::new();
        };
        let rows = b.row_count();
        if rows == 0 {
            return Vec::new();
        }
        let target = b.cursor.saturating_add_signed(delta).min(rows - 1);
        b.cursor = target;
        b.detail_scroll = 0;
        if b.cursor < b.offset {
            b.offset = b.cursor;
        } else if b.cursor >= b.offset + height {
            b.offset = b.cursor + 1 - height;
        }
        self.scrolled()
    }

    /// Asks for the visible items that are not read yet (and a margin around them).
    fn scrolled(&mut self) -> Vec<Effect> {
        let height = self.list_height();
        let tag = self.tag();
        let Some(b) = &mut self.browse else {
            return Vec::new();
        };
        let visible: Vec<usize> = (b.offset..b.offset + height)
            .chain(std::iter::once(b.cursor))
            .filter_map(|r| b.position(r))
            .collect();
        let missing: Vec<usize> = visible
            .into_iter()
            .filter(|p| !b.window.contains_key(p))
            .collect();
        let (Some(&lo), Some(&hi)) = (missing.iter().min(), missing.iter().max()) else {
            return Vec::new();
        };
        if b.total.is_none() && !b.window.is_empty() {
            return Vec::new();
        }
        b.window_tag = tag;
        let start = lo.saturating_sub(MARGIN / 2);
        vec![Effect::LoadWindow {
            tag,
            dataset: b.dataset,
            start,
            count: hi + 1 - start + MARGIN,
        }]
    }

    fn datasets_action(&mut self, action: Action) -> Vec<Effect> {
        if self.browse.is_none() {
            let n = self.datasets.len();
            match action {
                Action::Up => self.selected = self.selected.saturating_sub(1),
                Action::Down if n > 0 => self.selected = (self.selected + 1).min(n - 1),
                Action::Open if n > 0 => return self.open(self.selected),
                _ => {}
            }
            return Vec::new();
        }
        let page = isize::try_from(self.list_height().max(PAGE)).unwrap_or(10);
        if let Some(b) = &mut self.browse
            && b.detail
        {
            let step: i32 = match action {
                Action::Up => -1,
                Action::Down => 1,
                Action::PageUp => -10,
                Action::PageDown => 10,
                _ => 0,
            };
            if step != 0 {
                b.detail_scroll =
                    u16::try_from((i32::from(b.detail_scroll) + step).max(0)).unwrap_or(0);
                return Vec::new();
            }
        }
        match action {
            Action::Up => self.move_cursor(-1),
            Action::Down => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-page),
            Action::PageDown => self.move_cursor(page),
            Action::Top => self.move_cursor(isize::MIN / 2),
            Action::Bottom => self.move_cursor(isize::MAX / 2),
            Action::Open => {
                if let Some(b) = &mut self.browse {
                    b.detail = !b.detail;
                }
                Vec::new()
            }
            Action::Back => {
                match &mut self.browse {
                    Some(b) if b.detail => b.detail = false,
                    _ => self.browse = None,
                }
                Vec::new()
            }
            Action::Search => {
                if let Some(b) = &mut self.browse {
                    b.search = Some(String::new());
                }
                Vec::new()
            }
            Action::Filter => {
                let Some(b) = &mut self.browse else {
                    return Vec::new();
                };
                b.filter = b.filter.next();
                self.message = Some(format!("filter: {}", b.filter.name()));
                self.rescan(String::new())
            }
            _ => Vec::new(),
        }
    }

    /// The criteria being labelled.
    pub fn label_criteria(&self) -> Vec<crate::model::Criterion> {
        self.browse
            .as_ref()
            .and_then(|b| b.rubric.as_ref())
            .map(|r| r.criteria.clone())
            .unwrap_or_default()
    }

    fn label_action(&mut self, action: Action) -> Vec<Effect> {
        let criteria = self.label_criteria();
        let n = criteria.len();
        match action {
            Action::NextCriterion if n > 0 => {
                self.label.criterion = (self.label.criterion + 1).min(n - 1);
                Vec::new()
            }
            Action::PrevCriterion => {
                self.label.criterion = self.label.criterion.saturating_sub(1);
                Vec::new()
            }
            Action::NextItem => self.next_item(1),
            Action::PrevItem => self.next_item(-1),
            Action::Note => {
                self.note = Some(String::new());
                Vec::new()
            }
            Action::Blind => {
                self.label.blind = !self.label.blind;
                self.message = Some(format!(
                    "blind mode {}",
                    if self.label.blind { "on" } else { "off" }
                ));
                Vec::new()
            }
            Action::Queue => {
                self.label.queue = self.label.queue.next();
                self.message = Some(format!("queue: {}", self.label.queue.name()));
                Vec::new()
            }
            Action::Undo => {
                let Some((seq, item, criterion)) = self.label.saved.pop() else {
                    self.message = Some("nothing to undo in this sitting".into());
                    return Vec::new();
                };
                let Some(b) = &self.browse else {
                    return Vec::new();
                };
                vec![Effect::Undo {
                    dataset: b.dataset,
                    seq,
                    item,
                    criterion,
                }]
            }
            Action::Met | Action::Unmet | Action::CannotAssess | Action::Choice(_) => {
                let Some(c) = criteria.get(self.label.criterion) else {
                    return Vec::new();
                };
                let Some(verdict) = verdict_for(c, action) else {
                    self.message = Some(format!("that key does not answer '{}'", c.name));
                    return Vec::new();
                };
                let Some(b) = &self.browse else {
                    return Vec::new();
                };
                let Some(item) = b.current() else {
                    self.message = Some("the item is still loading".into());
                    return Vec::new();
                };
                let (rubric, version) = b
                    .rubric
                    .as_ref()
                    .map(|r| (r.id.clone(), r.version.clone()))
                    .unwrap_or_default();
                let effect = Effect::SaveLabel {
                    dataset: b.dataset,
                    item: item.id.clone(),
                    criterion: c.id.clone(),
                    verdict: verdict.label_value(),
                    note: String::new(),
                    rubric,
                    rubric_version: version,
                };
                self.label.unsaved += 1;
                // On to the next criterion; after the last, the next item in the queue.
                if self.label.criterion + 1 < n {
                    self.label.criterion += 1;
                    vec![effect]
                } else {
                    self.label.criterion = 0;
                    let mut out = vec![effect];
                    out.extend(self.next_item(1));
                    out
                }
            }
            _ => Vec::new(),
        }
    }

    /// Saves the current criterion's label again with a note (a label must exist).
    fn save_note(&mut self, note: String) -> Vec<Effect> {
        let criteria = self.label_criteria();
        let Some(c) = criteria.get(self.label.criterion) else {
            return Vec::new();
        };
        let Some(b) = &self.browse else {
            return Vec::new();
        };
        let Some(item) = b.current() else {
            return Vec::new();
        };
        let Some(verdict) = self.labels.get(&(item.id.clone(), c.id.clone())).cloned() else {
            self.message = Some(format!("label '{}' first, then add a note", c.name));
            return Vec::new();
        };
        let (rubric, rubric_version) = b
            .rubric
            .as_ref()
            .map(|r| (r.id.clone(), r.version.clone()))
            .unwrap_or_default();
        self.label.unsaved += 1;
        vec![Effect::SaveLabel {
            dataset: b.dataset,
            item: item.id.clone(),
            criterion: c.id.clone(),
            verdict,
            note,
            rubric,
            rubric_version,
        }]
    }

    /// The next item in the queue's order (or the previous one).
    fn next_item(&mut self, dir: isize) -> Vec<Effect> {
        if dir < 0 || self.label.queue == Queue::InOrder {
            return self.move_cursor(dir);
        }
        let Some(b) = &self.browse else {
            return Vec::new();
        };
        let rows = b.row_count();
        let criteria = self.label_criteria();
        let wanted = |row: usize| -> bool {
            let Some(id) = b.position(row).and_then(|p| {
                b.window
                    .get(&p)
                    .map(|i| i.id.clone())
                    .or_else(|| b.ids.get(p).cloned())
            }) else {
                return false;
            };
            match self.label.queue {
                Queue::UnlabelledFirst => criteria
                    .iter()
                    .any(|c| !self.labels.contains_key(&(id.clone(), c.id.clone()))),
                Queue::DisagreementsFirst => b
                    .run
                    .as_ref()
                    .and_then(|r| r.by_item.get(&id))
                    .is_some_and(|r| {
                        r.results.iter().any(|c| {
                            self.labels
                                .get(&(id.clone(), c.criterion_id.clone()))
                                .zip(c.verdict.as_ref())
                                .is_some_and(|(h, v)| label_text(h) != v.to_string())
                        })
                    }),
                Queue::MostInformative => b
                    .run
                    .as_ref()
                    .and_then(|r| r.by_item.get(&id))
                    .is_some_and(|r| {
                        r.results.iter().any(|c| {
                            c.failure.is_some()
                                || c.verdict == Some(Verdict::CannotAssess)
                                || c.ensemble
                                    .as_ref()
                                    .and_then(|e| e.agreement)
                                    .is_some_and(|a| a < 1.0)
                        })
                    }),
                Queue::InOrder => true,
            }
        };
        let from = b.cursor + 1;
        let target = (from..rows)
            .find(|r| wanted(*r))
            .unwrap_or(from.min(rows.saturating_sub(1)));
        let delta = isize::try_from(target).unwrap_or(0) - isize::try_from(b.cursor).unwrap_or(0);
        self.move_cursor(delta)
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
            _ => {}
        }
        Vec::new()
    }

    fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        match m.kind {
            MouseEventKind::ScrollDown => self.act(Action::Down),
            MouseEventKind::ScrollUp => self.act(Action::Up),
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

/// A label's verdict as text (numbers as written).
pub fn label_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The verdict a key gives for a criterion: MET/UNMET/`CANNOT_ASSESS` for binary ones, the
/// n-th option or level (or scale point) for the others.
pub fn verdict_for(c: &crate::model::Criterion, action: Action) -> Option<Verdict> {
    match (action, &c.kind) {
        (Action::CannotAssess, _) => Some(Verdict::CannotAssess),
        (Action::Met, Kind::Binary) => Some(Verdict::Met),
        (Action::Unmet, Kind::Binary) => Some(Verdict::Unmet),
        (Action::Choice(n), Kind::Options { options, .. }) => options
            .get(usize::from(n) - 1)
            .map(|o| Verdict::Choice(o.label.clone())),
        (Action::Choice(n), Kind::Levels(levels)) => levels
            .get(usize::from(n) - 1)
            .map(|l| Verdict::Level(l.id.clone())),
        (Action::Choice(n), Kind::Scale(s)) => {
            let x = s.min + f64::from(n) - 1.0;
            (x <= s.max).then_some(Verdict::Score(x))
        }
        _ => None,
    }
}
