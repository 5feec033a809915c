//! The live grid of a run: rows items, columns criteria, cells going queued → streaming →
//! verdict or failure. It keeps a small summary per cell and the streamed text of the
//! selected cell only, so memory stays bounded however long the run; items and cells are
//! counted once however they got there (copied, continued, retried).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

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
    /// Each item is graded with its own rubric (the run has none): columns are criterion
    /// positions, added as items reach them.
    pub per_item: bool,
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
    pub end: Option<crate::tui::msg::RunEnd>,
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
    /// The criterion ids of the item's own rubric, by column (a run without a rubric of
    /// its own; known once the item is done).
    ids: Vec<String>,
    /// Cells with a verdict or a failure.
    settled: usize,
}

impl GridRun {
    pub fn new(
        tag: u64,
        run_id: String,
        criteria: Vec<(String, bool)>,
        items_total: Option<usize>,
        now: Instant,
    ) -> Self {
        let per_item = criteria.is_empty();
        let (criteria, penalties) = criteria.into_iter().unzip();
        Self {
            tag,
            run_id,
            per_item,
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
        let n = if self.per_item {
            0
        } else {
            self.criteria.len()
        };
        self.rows[item].get_or_insert_with(|| Row {
            id: format!("#{}", item + 1),
            cells: vec![Cell::Queued; n],
            ids: Vec::new(),
            settled: 0,
        })
    }

    /// Puts `new` in a cell, keeping the counts of settled cells, items and failures.
    /// When each item brings its own rubric (the run has none: `per_item`), a row has as
    /// many cells as its item has criteria, and the columns are positions (`c1`, `c2` …).
    pub fn set(&mut self, item: usize, col: usize, new: Cell) {
        if self.per_item {
            while self.criteria.len() <= col {
                self.criteria.push(format!("c{}", self.criteria.len() + 1));
                self.penalties.push(false);
            }
            let row = self.row_mut(item);
            if row.cells.len() <= col {
                row.cells.resize(col + 1, Cell::Queued);
            }
        }
        let row = self.row_mut(item);
        let n = row.cells.len();
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
    /// When each item brings its own rubric, a cell's column is its criterion's place in
    /// the row (as the item's evaluation last listed them, else in the journal's order, which
    /// is the rubric's for an item journalled whole), and the row learns the criterion ids so
    /// its failed cells can be retried.
    pub fn preload(&mut self, cells: &[crate::store::runs::Cell]) {
        for c in cells {
            let id = &c.result.criterion_id;
            let col = if self.per_item {
                let row = self.row_mut(c.item);
                Some(row.ids.iter().position(|i| i == id).unwrap_or_else(|| {
                    row.ids.push(id.clone());
                    row.ids.len() - 1
                }))
            } else {
                self.criteria.iter().position(|i| i == id)
            };
            let Some(col) = col else {
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

    /// Applies one event of this run, arrived at `now`.
    pub fn apply(&mut self, ev: &GradeEvent, now: Instant) {
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
                let per_item = self.per_item;
                let row = self.row_mut(ev.item);
                row.id.clone_from(&e.target_id);
                // A retry's evaluation lists only the cells graded again: the row keeps
                // the ids of its other columns.
                if per_item && e.results.len() >= row.ids.len().max(row.cells.len()) {
                    row.ids = e.results.iter().map(|r| r.criterion_id.clone()).collect();
                }
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

    /// Cells per second over the run so far (up to `now`).
    pub fn rate(&self, now: Instant) -> f64 {
        let secs = now.duration_since(self.started).as_secs_f64().max(1e-3);
        #[allow(clippy::cast_precision_loss)]
        let r = self.cells_live as f64 / secs;
        r
    }

    /// Seconds left at the current rate, when the size is known.
    pub fn eta(&self, now: Instant) -> Option<f64> {
        let total = self.items_total? * self.criteria.len();
        let rate = self.rate(now);
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
                    && let Some(id) = self.criterion_id(i, c)
                {
                    out.push((i, id.to_owned()));
                }
            }
        }
        out
    }

    /// The selected cell, when it failed: its item and criterion (what `r` retries).
    pub fn selected_failed(&self) -> Option<(usize, String)> {
        let (row, col) = self.cursor;
        let cell = self
            .rows
            .get(row)
            .and_then(Option::as_ref)
            .and_then(|r| r.cells.get(col));
        if !matches!(cell, Some(Cell::Failed(_))) {
            return None;
        }
        Some((row, self.criterion_id(row, col)?.to_owned()))
    }

    /// The criterion id of a cell: its column's, or, when each item has its own rubric,
    /// the item's criterion at that position.
    pub fn criterion_id(&self, item: usize, col: usize) -> Option<&str> {
        if self.per_item {
            let row = self.rows.get(item)?.as_ref()?;
            row.ids.get(col).map(String::as_str)
        } else {
            self.criteria.get(col).map(String::as_str)
        }
    }

    /// The column of an item's criterion (see [`GridRun::criterion_id`]).
    pub fn column_of(&self, item: usize, id: &str) -> Option<usize> {
        if self.per_item {
            let row = self.rows.get(item)?.as_ref()?;
            row.ids.iter().position(|c| c == id)
        } else {
            self.criteria.iter().position(|c| c == id)
        }
    }
}
