//! The Grade pane's state and its part of `App::update`: choose a rubric and judge for the
//! open dataset, see the dry-run estimate, start a run, and watch a live grid (rows items,
//! columns criteria) whose cells go queued → streaming → verdict or failure. The grid keeps a
//! small summary per cell and the streamed text of the selected cell only, so memory stays
//! bounded however long the run.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::app::{App, Effect};
use super::keymap::Action;
use crate::engine::judge::Strategy;
use crate::engine::{EventKind, GradeEvent};

/// One cell of the grid.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Queued,
    /// The judge's text is arriving (how much so far).
    Streaming(usize),
    /// A verdict, its value, and the reason (shortened).
    Done {
        verdict: String,
        value: Option<f64>,
        reason: String,
    },
    Failed(String),
}

impl Cell {
    /// Whether the outcome is good for the item: full marks, or a penalty not incurred.
    pub fn good(&self, penalty: bool) -> Option<bool> {
        match self {
            Cell::Done { value: Some(v), .. } if *v >= 1.0 - 1e-9 => Some(!penalty),
            Cell::Done { value: Some(v), .. } if *v <= 1e-9 => Some(penalty),
            _ => None,
        }
    }

    /// One character for the grid, usable without colour: `✓` good, `✗` bad, `~` partial,
    /// `?` abstained, `·` queued, `…` streaming, `!` failed.
    pub fn symbol(&self, penalty: bool) -> &'static str {
        match (self, self.good(penalty)) {
            (Cell::Queued, _) => "·",
            (Cell::Streaming(_), _) => "…",
            (_, Some(true)) => "✓",
            (_, Some(false)) => "✗",
            (Cell::Done { value: Some(_), .. }, None) => "~",
            (Cell::Done { value: None, .. }, None) => "?",
            (Cell::Failed(_), None) => "!",
        }
    }
}

/// A run being watched.
#[derive(Debug, Clone)]
pub struct GridRun {
    /// Messages carry this tag; those of any other run are ignored.
    pub tag: u64,
    pub run_id: String,
    pub criteria: Vec<String>,
    /// Which criteria are penalties (a MET there is bad news).
    pub penalties: Vec<bool>,
    /// Rows by item position (`None` until the item starts).
    pub rows: Vec<Option<Row>>,
    pub items_total: Option<usize>,
    pub items_done: usize,
    pub cells_done: usize,
    pub failures: usize,
    /// Selected (row, column).
    pub cursor: (usize, usize),
    pub offset: usize,
    /// The selected cell's streamed text (only that cell's is kept).
    pub stream: String,
    pub paused: bool,
    pub cancelled: bool,
    pub finished: bool,
    pub started: Instant,
    /// Cells finished per second, the last 60 seconds, for the sparkline.
    pub throughput: VecDeque<u64>,
    throughput_at: Instant,
    pub tokens: u64,
    pub cost: f64,
    /// When the last verdict arrived (benchmarks measure verdict-to-screen from it).
    pub last_verdict: Option<Instant>,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub cells: Vec<Cell>,
}

impl GridRun {
    pub fn new(
        tag: u64,
        run_id: String,
        criteria: Vec<(String, bool)>,
        items_total: Option<usize>,
    ) -> Self {
        let now = Instant::now();
        let (criteria, penalties) = criteria.into_iter().unzip();
        Self {
            tag,
            run_id,
            criteria,
            penalties,
            rows: Vec::new(),
            items_total,
            items_done: 0,
            cells_done: 0,
            failures: 0,
            cursor: (0, 0),
            offset: 0,
            stream: String::new(),
            paused: false,
            cancelled: false,
            finished: false,
            started: now,
            throughput: VecDeque::from(vec![0]),
            throughput_at: now,
            tokens: 0,
            cost: 0.0,
            last_verdict: None,
        }
    }

    fn row_mut(&mut self, item: usize) -> &mut Row {
        if self.rows.len() <= item {
            self.rows.resize(item + 1, None);
        }
        let n = self.criteria.len();
        self.rows[item].get_or_insert_with(|| Row {
            id: format!("#{}", item + 1),
            cells: vec![Cell::Queued; n],
        })
    }

    fn tick(&mut self, now: Instant) {
        while now.duration_since(self.throughput_at) >= Duration::from_secs(1) {
            self.throughput_at += Duration::from_secs(1);
            self.throughput.push_back(0);
            if self.throughput.len() > 60 {
                self.throughput.pop_front();
            }
        }
    }

    /// Applies one event of this run.
    pub fn apply(&mut self, ev: &GradeEvent) {
        let now = Instant::now();
        self.tick(now);
        let selected = self.cursor;
        match (&ev.kind, ev.criterion) {
            (EventKind::Queued | EventKind::Started, Some(c)) => {
                if let Some(cell) = self.row_mut(ev.item).cells.get_mut(c) {
                    *cell = Cell::Queued;
                }
            }
            (EventKind::Chunk(text), Some(c)) => {
                if let Some(cell) = self.row_mut(ev.item).cells.get_mut(c) {
                    let before = match cell {
                        Cell::Streaming(n) => *n,
                        _ => 0,
                    };
                    *cell = Cell::Streaming(before + text.chars().count());
                }
                if (ev.item, c) == selected {
                    self.stream.push_str(text);
                }
            }
            (EventKind::Retrying, Some(c)) => {
                if let Some(cell) = self.row_mut(ev.item).cells.get_mut(c) {
                    *cell = Cell::Streaming(0);
                }
                if (ev.item, c) == selected {
                    self.stream.clear();
                }
            }
            (EventKind::Scored(r), Some(c)) => {
                let reason: String = r.reason.chars().take(300).collect();
                if let Some(cell) = self.row_mut(ev.item).cells.get_mut(c) {
                    *cell = Cell::Done {
                        verdict: r
                            .verdict
                            .as_ref()
                            .map_or_else(|| "—".into(), ToString::to_string),
                        value: r.value,
                        reason,
                    };
                }
                if let Some(inv) = &r.invocation {
                    self.tokens += inv.usage.input_tokens + inv.usage.output_tokens;
                }
                self.cells_done += 1;
                if let Some(last) = self.throughput.back_mut() {
                    *last += 1;
                }
                self.last_verdict = Some(now);
            }
            (EventKind::Failed(f), Some(c)) => {
                if let Some(cell) = self.row_mut(ev.item).cells.get_mut(c) {
                    *cell = Cell::Failed(f.message.chars().take(300).collect());
                }
                self.cells_done += 1;
                self.failures += 1;
                self.last_verdict = Some(now);
            }
            (EventKind::ItemDone(e), _) => {
                self.items_done += 1;
                let row = self.row_mut(ev.item);
                row.id.clone_from(&e.target_id);
            }
            _ => {}
        }
    }

    /// Cells per second over the run so far.
    pub fn rate(&self) -> f64 {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        #[allow(clippy::cast_precision_loss)]
        let r = self.cells_done as f64 / secs;
        r
    }

    /// Seconds left at the current rate, when the size is known.
    pub fn eta(&self) -> Option<f64> {
        let total = self.items_total? * self.criteria.len();
        let rate = self.rate();
        #[allow(clippy::cast_precision_loss)]
        let left = total.saturating_sub(self.cells_done) as f64;
        (rate > 0.0).then(|| left / rate)
    }

    /// Every failed cell as (item position, criterion id).
    pub fn failed_cells(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            let Some(row) = row else { continue };
            for (c, cell) in row.cells.iter().enumerate() {
                if matches!(cell, Cell::Failed(_))
                    && let Some(id) = self.criteria.get(c)
                {
                    out.push((i, id.clone()));
                }
            }
        }
        out
    }
}

/// The Grade pane: what would run, and the run being watched.
#[derive(Debug, Clone, Default)]
pub struct GradeState {
    /// Rubric files offered (from `rubrics/`), and which one is chosen.
    pub rubrics: Vec<std::path::PathBuf>,
    pub rubric: usize,
    /// The judge model (from the workspace's `judge.model`, typed with `m`, or none: the
    /// rubric's).
    pub judge: Option<String>,
    /// The strategy (`t` cycles; `None`: the rubric's or the workspace's).
    pub strategy: Option<Strategy>,
    /// A judge model being typed.
    pub judge_input: Option<String>,
    pub estimate: Option<String>,
    pub run: Option<GridRun>,
}

impl App {
    /// The judge model line takes typed keys first.
    pub(super) fn grade_key(&mut self, k: &crossterm::event::KeyEvent) -> Option<Vec<Effect>> {
        use crossterm::event::KeyCode;
        let text = self.grade.judge_input.as_mut()?;
        match k.code {
            KeyCode::Esc => self.grade.judge_input = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) => text.push(c),
            KeyCode::Enter => {
                let model = text.trim().to_owned();
                self.grade.judge = (!model.is_empty()).then_some(model);
                self.grade.judge_input = None;
                self.grade.estimate = None;
            }
            _ => {}
        }
        Some(Vec::new())
    }

    /// A message for the Grade pane: an event of the watched run, or its estimate.
    pub(super) fn grade_event(&mut self, tag: u64, ev: &GradeEvent) {
        if let Some(run) = &mut self.grade.run
            && run.tag == tag
        {
            run.apply(ev);
        }
    }

    pub(super) fn grade_finished(&mut self, tag: u64, summary: String, tokens: u64, cost: f64) {
        if let Some(run) = &mut self.grade.run
            && run.tag == tag
        {
            run.finished = true;
            run.tokens = run.tokens.max(tokens);
            run.cost = cost;
            self.message = Some(summary);
        }
    }

    pub(super) fn grade_action(&mut self, action: Action) -> Vec<Effect> {
        // The set-up grades the open dataset; a grid (a run, or a review) needs none.
        let dataset = self.browse.as_ref().map(|b| b.dataset);
        if self.grade.run.is_none() && dataset.is_none() {
            self.message = Some("open a dataset first (Datasets pane)".into());
            return Vec::new();
        }
        let dataset = dataset.unwrap_or_default();
        let height = self.list_height();
        match (&mut self.grade.run, action) {
            (None, Action::Up) => {
                self.grade.rubric = self.grade.rubric.saturating_sub(1);
                self.grade.estimate = None;
                Vec::new()
            }
            (None, Action::Down) => {
                self.grade.rubric =
                    (self.grade.rubric + 1).min(self.grade.rubrics.len().saturating_sub(1));
                self.grade.estimate = None;
                Vec::new()
            }
            (None, Action::Strategy) => {
                self.grade.strategy = match self.grade.strategy {
                    None => Some(Strategy::PerCriterion),
                    Some(Strategy::PerCriterion) => Some(Strategy::OneShot),
                    Some(Strategy::OneShot) => Some(Strategy::DoublePass),
                    Some(Strategy::DoublePass) => Some(Strategy::Holistic),
                    Some(Strategy::Holistic) => None,
                };
                self.grade.estimate = None;
                Vec::new()
            }
            (None, Action::Continue) => {
                let unfinished = self
                    .browse
                    .as_ref()
                    .and_then(|b| b.run.as_ref())
                    .filter(|r| r.manifest.finished_at.is_none())
                    .map(|r| r.manifest.id.clone());
                let Some(run_id) = unfinished else {
                    self.message = Some(
                        "the latest run of this dataset is finished: nothing to continue".into(),
                    );
                    return Vec::new();
                };
                let tag = self.new_tag();
                vec![Effect::ResumeRun {
                    tag,
                    dataset,
                    run_id,
                }]
            }
            (None, Action::Model) => {
                self.grade.judge_input = Some(self.grade.judge.clone().unwrap_or_default());
                Vec::new()
            }
            (None, Action::Estimate) => match self.grade.rubrics.get(self.grade.rubric) {
                Some(r) => vec![Effect::Estimate {
                    dataset,
                    rubric: r.clone(),
                    judge: self.grade.judge.clone(),
                    strategy: self.grade.strategy,
                }],
                None => Vec::new(),
            },
            (None, Action::Open | Action::RegradeChanged) => {
                let Some(rubric) = self.grade.rubrics.get(self.grade.rubric).cloned() else {
                    self.message = Some("no rubric in rubrics/ to grade with".into());
                    return Vec::new();
                };
                let tag = self.new_tag();
                vec![Effect::StartRun {
                    tag,
                    dataset,
                    rubric,
                    judge: self.grade.judge.clone(),
                    strategy: self.grade.strategy,
                    changed_only: action == Action::RegradeChanged,
                }]
            }
            (Some(run), Action::Up) => {
                run.cursor.0 = run.cursor.0.saturating_sub(1);
                run.stream.clear();
                if run.cursor.0 < run.offset {
                    run.offset = run.cursor.0;
                }
                Vec::new()
            }
            (Some(run), Action::Down) => {
                run.cursor.0 = (run.cursor.0 + 1).min(run.rows.len().saturating_sub(1));
                run.stream.clear();
                if run.cursor.0 >= run.offset + height {
                    run.offset = run.cursor.0 + 1 - height;
                }
                Vec::new()
            }
            (Some(run), Action::PrevItem) => {
                run.cursor.1 = run.cursor.1.saturating_sub(1);
                run.stream.clear();
                Vec::new()
            }
            (Some(run), Action::NextItem) => {
                run.cursor.1 = (run.cursor.1 + 1).min(run.criteria.len().saturating_sub(1));
                run.stream.clear();
                Vec::new()
            }
            (Some(run), Action::Pause) if !run.finished => {
                run.paused = !run.paused;
                vec![Effect::PauseRun {
                    tag: run.tag,
                    paused: run.paused,
                }]
            }
            (Some(run), Action::Back) if !run.finished && !run.cancelled => {
                run.cancelled = true;
                self.message =
                    Some("cancelling: no new item starts; those in flight finish".into());
                vec![Effect::CancelRun { tag: run.tag }]
            }
            (Some(run), Action::Back) => {
                // A finished or cancelled run: back to the set-up (its journal stays).
                let _ = run;
                self.grade.run = None;
                Vec::new()
            }
            (Some(run), Action::Retry) if run.finished || run.cancelled => {
                let (row, col) = run.cursor;
                let cell = run
                    .rows
                    .get(row)
                    .and_then(Option::as_ref)
                    .and_then(|r| r.cells.get(col));
                if !matches!(cell, Some(Cell::Failed(_))) {
                    self.message = Some("the selected cell did not fail".into());
                    return Vec::new();
                }
                let Some(criterion) = run.criteria.get(col).cloned() else {
                    return Vec::new();
                };
                retry(run, vec![(row, criterion)])
            }
            (Some(run), Action::RetryAll) if run.finished || run.cancelled => {
                let cells = run.failed_cells();
                if cells.is_empty() {
                    self.message = Some("no failed cells".into());
                    return Vec::new();
                }
                retry(run, cells)
            }
            (Some(_), Action::Retry | Action::RetryAll) => {
                self.message = Some("retry once the run has finished or been cancelled".into());
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// Re-queues exactly `cells` (and nothing else) in the same run's journal.
fn retry(run: &mut GridRun, cells: Vec<(usize, String)>) -> Vec<Effect> {
    for (item, criterion) in &cells {
        if let Some(col) = run.criteria.iter().position(|c| c == criterion)
            && let Some(Some(row)) = run.rows.get_mut(*item)
            && let Some(cell) = row.cells.get_mut(col)
        {
            *cell = Cell::Queued;
            run.failures = run.failures.saturating_sub(1);
            run.cells_done = run.cells_done.saturating_sub(1);
        }
    }
    run.finished = false;
    run.cancelled = false;
    vec![Effect::RetryCells {
        tag: run.tag,
        cells,
    }]
}
