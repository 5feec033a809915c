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
    /// A graded cell from its result.
    pub fn of(r: &crate::model::CriterionResult) -> Cell {
        match &r.failure {
            Some(f) => Cell::Failed(f.message.chars().take(300).collect()),
            None => Cell::Done {
                verdict: r
                    .verdict
                    .as_ref()
                    .map_or_else(|| "—".into(), ToString::to_string),
                value: r.value,
                reason: r.reason.chars().take(300).collect(),
            },
        }
    }

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
    /// Items whose every cell has a verdict or a failure (each counted once, however
    /// often it was graded: copied, continued and retried cells included).
    pub items_done: usize,
    /// Cells with a verdict or a failure.
    pub cells_done: usize,
    /// Cells graded live in this sitting (the rate counts only these).
    pub cells_live: usize,
    pub failures: usize,
    /// Judge calls still in flight while pausing (`None`: not reported).
    pub in_flight: Option<usize>,
    /// How the run ended, once it did: finished, or why it is not.
    pub end: Option<super::app::RunEnd>,
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
    /// Cells with a verdict or a failure.
    settled: usize,
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
            cells_live: 0,
            failures: 0,
            in_flight: None,
            end: None,
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
            settled: 0,
        })
    }

    /// Puts `new` in a cell, keeping the counts of settled cells, items and failures.
    fn set(&mut self, item: usize, col: usize, new: Cell) {
        let n = self.criteria.len();
        let row = self.row_mut(item);
        let Some(cell) = row.cells.get_mut(col) else {
            return;
        };
        let settled = |c: &Cell| matches!(c, Cell::Done { .. } | Cell::Failed(_));
        let (was, now) = (settled(cell), settled(&new));
        let (was_failed, now_failed) = (
            matches!(cell, Cell::Failed(_)),
            matches!(new, Cell::Failed(_)),
        );
        let complete_before = row.settled == n;
        *cell = new;
        match (was, now) {
            (false, true) => row.settled += 1,
            (true, false) => row.settled -= 1,
            _ => {}
        }
        let complete_after = row.settled == n;
        match (was, now) {
            (false, true) => self.cells_done += 1,
            (true, false) => self.cells_done = self.cells_done.saturating_sub(1),
            _ => {}
        }
        match (complete_before, complete_after) {
            (false, true) => self.items_done += 1,
            (true, false) => self.items_done = self.items_done.saturating_sub(1),
            _ => {}
        }
        match (was_failed, now_failed) {
            (false, true) => self.failures += 1,
            (true, false) => self.failures = self.failures.saturating_sub(1),
            _ => {}
        }
    }

    /// Shows cells already in the run's journal (copied, or from an earlier sitting):
    /// settled, but not part of this sitting's rate.
    pub fn preload(&mut self, cells: &[crate::store::runs::Cell]) {
        for c in cells {
            let Some(col) = self
                .criteria
                .iter()
                .position(|id| *id == c.result.criterion_id)
            else {
                continue;
            };
            self.set(c.item, col, Cell::of(&c.result));
            let row = self.row_mut(c.item);
            row.id.clone_from(&c.item_id);
        }
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
                self.set(ev.item, c, Cell::Queued);
            }
            (EventKind::Chunk(text), Some(c)) => {
                let before = match self.row_mut(ev.item).cells.get(c) {
                    Some(Cell::Streaming(n)) => *n,
                    _ => 0,
                };
                self.set(ev.item, c, Cell::Streaming(before + text.chars().count()));
                if (ev.item, c) == selected {
                    self.stream.push_str(text);
                }
            }
            (EventKind::Retrying, Some(c)) => {
                self.set(ev.item, c, Cell::Streaming(0));
                if (ev.item, c) == selected {
                    self.stream.clear();
                }
            }
            (EventKind::Scored(r), Some(c)) => {
                self.set(ev.item, c, Cell::of(r));
                if let Some(inv) = &r.invocation {
                    self.tokens += inv.usage.input_tokens + inv.usage.output_tokens;
                }
                self.live(now);
            }
            (EventKind::Failed(f), Some(c)) => {
                // A call the run stopped before sending is not a result: the cell stays
                // to be graded when the run continues.
                if f.unsent() {
                    self.set(ev.item, c, Cell::Queued);
                } else {
                    self.set(
                        ev.item,
                        c,
                        Cell::Failed(f.message.chars().take(300).collect()),
                    );
                    self.live(now);
                }
            }
            (EventKind::ItemDone(e), _) => {
                let row = self.row_mut(ev.item);
                row.id.clone_from(&e.target_id);
            }
            _ => {}
        }
    }

    fn live(&mut self, now: Instant) {
        self.cells_live += 1;
        if let Some(last) = self.throughput.back_mut() {
            *last += 1;
        }
        self.last_verdict = Some(now);
    }

    /// Cells per second over the run so far.
    pub fn rate(&self) -> f64 {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        #[allow(clippy::cast_precision_loss)]
        let r = self.cells_live as f64 / secs;
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
#[derive(Debug, Clone)]
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
    /// The run's cost limit in dollars (the workspace's `judge.max_cost`, or typed with `$`).
    pub max_cost: Option<f64>,
    /// A cost limit being typed.
    pub max_cost_input: Option<String>,
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
}

impl Default for GradeState {
    fn default() -> Self {
        Self {
            rubrics: Vec::new(),
            rubric: 0,
            judge: None,
            strategy: None,
            judge_input: None,
            max_cost: None,
            max_cost_input: None,
            estimate: None,
            estimating: None,
            confirm: None,
            confirm_calls: crate::store::config::CONFIRM_CALLS,
            confirm_cost: crate::store::config::CONFIRM_COST,
            run: None,
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

/// What to do once an estimate arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterEstimate {
    /// Show it.
    Show,
    /// Start the run if it is small, else ask first.
    Start { changed_only: bool },
}

impl App {
    /// The judge model line takes typed keys first.
    /// Typed keys go first to the judge model or cost limit being typed, and to the
    /// question before a large run.
    pub(super) fn grade_key(&mut self, k: &crossterm::event::KeyEvent) -> Option<Vec<Effect>> {
        use crossterm::event::KeyCode;
        if let Some(confirm) = &self.grade.confirm {
            return Some(match k.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                    let changed_only = confirm.changed_only;
                    self.grade.confirm = None;
                    self.start_effect(changed_only)
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                    self.grade.confirm = None;
                    self.message = Some("not started".into());
                    Vec::new()
                }
                _ => Vec::new(),
            });
        }
        if let Some(text) = self.grade.max_cost_input.as_mut() {
            match k.code {
                KeyCode::Esc => self.grade.max_cost_input = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if c.is_ascii_digit() || c == '.' => text.push(c),
                KeyCode::Enter => {
                    let typed = text.trim().trim_start_matches('$').to_owned();
                    match typed.parse::<f64>() {
                        _ if typed.is_empty() => {
                            self.grade.max_cost = None;
                            self.grade.max_cost_input = None;
                            self.message = Some("no cost limit".into());
                        }
                        Ok(x) if x.is_finite() && x > 0.0 => {
                            self.grade.max_cost = Some(x);
                            self.grade.max_cost_input = None;
                            self.grade.estimate = None;
                        }
                        _ => {
                            self.message =
                                Some("the cost limit is a positive number of dollars".into());
                        }
                    }
                }
                _ => {}
            }
            return Some(Vec::new());
        }
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

    /// Cells already in the run's journal.
    pub(super) fn grade_preload(&mut self, tag: u64, cells: &[crate::store::runs::Cell]) {
        if let Some(run) = &mut self.grade.run
            && run.tag == tag
        {
            run.preload(cells);
        }
    }

    /// Judge calls still in flight while a run pauses.
    pub(super) fn grade_in_flight(&mut self, tag: u64, calls: usize) {
        if let Some(run) = &mut self.grade.run
            && run.tag == tag
            && run.paused
        {
            run.in_flight = Some(calls);
        }
    }

    pub(super) fn grade_finished(
        &mut self,
        tag: u64,
        summary: String,
        end: super::app::RunEnd,
        tokens: u64,
        cost: f64,
    ) {
        if let Some(run) = &mut self.grade.run
            && run.tag == tag
        {
            run.finished = true;
            run.paused = false;
            run.in_flight = None;
            run.tokens = run.tokens.max(tokens);
            run.cost = cost;
            self.message = Some(match &end {
                super::app::RunEnd::Finished => summary,
                super::app::RunEnd::Unfinished(why) => {
                    format!("{summary} · unfinished: {why} (c in the set-up continues it)")
                }
            });
            run.end = Some(end);
        }
    }

    /// An estimate arrived: shown, or (when it was asked for before starting) the run
    /// starts, or the user is asked first when it is large.
    pub(super) fn grade_estimate(
        &mut self,
        result: Result<crate::run::estimate::Estimate, String>,
        after: AfterEstimate,
    ) -> Vec<Effect> {
        self.grade.estimating = None;
        let e = match result {
            Ok(e) => e,
            Err(why) => {
                self.message = Some(match after {
                    AfterEstimate::Show => why,
                    AfterEstimate::Start { .. } => format!("the run did not start: {why}"),
                });
                return Vec::new();
            }
        };
        let line = e.line();
        self.grade.estimate = Some(line.clone());
        let AfterEstimate::Start { changed_only } = after else {
            return Vec::new();
        };
        let large_calls = e.to_send() > self.grade.confirm_calls;
        let large_cost = e.cost().is_some_and(|c| c > self.grade.confirm_cost);
        // Without prices the money is unknown: a large number of calls is the warning.
        if large_calls || large_cost {
            self.grade.confirm = Some(Confirm {
                changed_only,
                text: line,
            });
            return Vec::new();
        }
        self.start_effect(changed_only)
    }

    /// The run of the set-up's rubric and judge, as an effect.
    fn start_effect(&mut self, changed_only: bool) -> Vec<Effect> {
        let Some(dataset) = self.browse.as_ref().map(|b| b.dataset) else {
            self.message = Some("open a dataset first (Datasets pane)".into());
            return Vec::new();
        };
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
            max_cost: self.grade.max_cost,
            changed_only,
        }]
    }

    fn estimate_effect(&mut self, after: AfterEstimate) -> Vec<Effect> {
        let Some(dataset) = self.browse.as_ref().map(|b| b.dataset) else {
            return Vec::new();
        };
        let Some(rubric) = self.grade.rubrics.get(self.grade.rubric).cloned() else {
            self.message = Some("no rubric in rubrics/ to grade with".into());
            return Vec::new();
        };
        self.grade.estimating = Some(0);
        vec![Effect::Estimate {
            dataset,
            rubric,
            judge: self.grade.judge.clone(),
            strategy: self.grade.strategy,
            max_cost: self.grade.max_cost,
            after,
        }]
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
            (None, Action::MaxCost) => {
                self.grade.max_cost_input = Some(
                    self.grade
                        .max_cost
                        .map(|c| c.to_string())
                        .unwrap_or_default(),
                );
                Vec::new()
            }
            (None, Action::Estimate) if self.grade.estimating.is_none() => {
                self.estimate_effect(AfterEstimate::Show)
            }
            // The plan is estimated first (a sample, scaled up): a large run asks first.
            (None, Action::Open | Action::RegradeChanged) if self.grade.estimating.is_none() => {
                self.estimate_effect(AfterEstimate::Start {
                    changed_only: action == Action::RegradeChanged,
                })
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
                run.in_flight = None;
                vec![Effect::PauseRun {
                    tag: run.tag,
                    paused: run.paused,
                }]
            }
            (Some(run), Action::Back) if !run.finished && !run.cancelled => {
                run.cancelled = true;
                self.message = Some(
                    "cancelling: no new judge call starts; those in flight finish (the run stays resumable)".into(),
                );
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
        if let Some(col) = run.criteria.iter().position(|c| c == criterion) {
            run.set(*item, col, Cell::Queued);
        }
    }
    run.finished = false;
    run.cancelled = false;
    run.end = None;
    vec![Effect::RetryCells {
        tag: run.tag,
        cells,
    }]
}
