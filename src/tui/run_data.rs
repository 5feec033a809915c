//! A saved run as the terminal UI holds it: one compact row per item (its id, position,
//! score, pass, and a code per criterion for its verdict) and the figures that do not
//! depend on the labels, worked out while the journal streams past. Reasons, values and
//! failure messages are not held: the few items on screen have theirs read on demand
//! ([`RunDetails`]), so a run of a million items costs tens of bytes per item, not the
//! kilobytes its reasons take.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::{CriterionResult, Rubric, Verdict};
use crate::store::runs::Manifest;

/// A cell's code: no cell for the criterion, a cell with neither verdict nor failure, a
/// cell that could not be graded, or (from [`FIRST_VERDICT`]) the criterion's n-th
/// distinct verdict.
const NO_CELL: u32 = 0;
const NO_VERDICT: u32 = 1;
const FAILED: u32 = 2;
const FIRST_VERDICT: u32 = 3;

/// What one item's cell on a criterion holds, as the UI shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellView<'a> {
    /// The item has no cell for the criterion.
    Missing,
    /// A cell with no verdict and no failure (`-`).
    Empty,
    /// A cell that could not be graded (`FAILED`).
    Failed,
    Verdict(&'a Verdict),
}

impl<'a> CellView<'a> {
    /// The cell as the item list shows it; `None` for no cell.
    pub fn text(self) -> Option<String> {
        match self {
            CellView::Missing => None,
            CellView::Empty => Some("-".to_owned()),
            CellView::Failed => Some("FAILED".to_owned()),
            CellView::Verdict(v) => Some(v.to_string()),
        }
    }

    pub fn verdict(self) -> Option<&'a Verdict> {
        match self {
            CellView::Verdict(v) => Some(v),
            _ => None,
        }
    }
}

/// One item of a run.
#[derive(Debug, Clone, Copy)]
struct Row {
    /// `NaN` when nothing could be scored.
    score: f64,
    /// The item's position in the dataset.
    position: u32,
    flags: u8,
}

const PASSED: u8 = 1;
const INCOMPLETE: u8 = 2;
/// Some cell of the item could not be graded (with or without a verdict).
const ANY_FAILURE: u8 = 4;

/// The run's figures over all its items (they do not change with the labels).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFigures {
    pub items: usize,
    pub passed: usize,
    pub incomplete: usize,
    /// Mean score over the items that have one.
    pub mean: f64,
    /// How many scores fall in each tenth of [0, 1].
    pub bins: [usize; 10],
    /// Share of items with full marks on each criterion (by position in the rubric).
    pub full: Vec<f64>,
    /// Each criterion tag's mean score over the items, with its interval.
    pub tags: Vec<crate::run::TagScore>,
}

/// A run's results for the UI, item by item in dataset order (see the module's note).
#[derive(Debug, Clone)]
pub struct RunData {
    pub manifest: Manifest,
    pub rubric: Arc<Rubric>,
    pub figures: RunFigures,
    rows: Vec<Row>,
    /// Every item's id, one after another; item `i`'s ends at `id_ends[i]`.
    ids: String,
    id_ends: Vec<u32>,
    /// Item indices in id order, to find an item by its id.
    by_id: Vec<u32>,
    /// `criteria` codes per item, item after item.
    cells: Vec<u32>,
    /// Per criterion, its distinct verdicts (code − `FIRST_VERDICT`).
    verdicts: Vec<Vec<Verdict>>,
}

impl RunData {
    /// How many items the run holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Item `i`'s id.
    pub fn id(&self, i: usize) -> &str {
        let end = self.id_ends.get(i).map_or(0, |&e| e as usize);
        let start = i
            .checked_sub(1)
            .and_then(|p| self.id_ends.get(p))
            .map_or(0, |&e| e as usize);
        self.ids.get(start..end).unwrap_or_default()
    }

    /// The index of the item with this id.
    pub fn find(&self, id: &str) -> Option<usize> {
        let k = self
            .by_id
            .binary_search_by(|&i| self.id(i as usize).cmp(id))
            .ok()?;
        self.by_id.get(k).map(|&i| i as usize)
    }

    /// Item `i`'s position in the dataset.
    pub fn position(&self, i: usize) -> Option<usize> {
        self.rows.get(i).map(|r| r.position as usize)
    }

    pub fn score(&self, i: usize) -> Option<f64> {
        self.rows.get(i).map(|r| r.score).filter(|s| !s.is_nan())
    }

    pub fn passed(&self, i: usize) -> bool {
        self.flag(i, PASSED)
    }

    pub fn incomplete(&self, i: usize) -> bool {
        self.flag(i, INCOMPLETE)
    }

    /// Whether some cell of item `i` could not be graded.
    pub fn any_failure(&self, i: usize) -> bool {
        self.flag(i, ANY_FAILURE)
    }

    fn flag(&self, i: usize, flag: u8) -> bool {
        self.rows.get(i).is_some_and(|r| r.flags & flag != 0)
    }

    /// Item `i`'s cell on the criterion at position `c` of the run's rubric.
    pub fn cell(&self, i: usize, c: usize) -> CellView<'_> {
        let n = self.rubric.criteria.len();
        if c >= n {
            return CellView::Missing;
        }
        match self.cells.get(i * n + c).copied().unwrap_or(NO_CELL) {
            NO_CELL => CellView::Missing,
            NO_VERDICT => CellView::Empty,
            FAILED => CellView::Failed,
            code => self
                .verdicts
                .get(c)
                .and_then(|v| v.get((code - FIRST_VERDICT) as usize))
                .map_or(CellView::Missing, CellView::Verdict),
        }
    }

    /// Item `i`'s cell on the criterion with this id.
    pub fn cell_of(&self, i: usize, criterion: &str) -> CellView<'_> {
        self.criterion(criterion)
            .map_or(CellView::Missing, |c| self.cell(i, c))
    }

    /// Item `i`'s verdicts: (criterion id, verdict) for each cell that has one.
    pub fn verdicts_of(&self, i: usize) -> impl Iterator<Item = (&str, &Verdict)> {
        self.rubric
            .criteria
            .iter()
            .enumerate()
            .filter_map(move |(c, x)| Some((x.id.as_str(), self.cell(i, c).verdict()?)))
    }

    /// The position of a criterion in the run's rubric.
    pub fn criterion(&self, id: &str) -> Option<usize> {
        self.rubric.criteria.iter().position(|c| c.id == id)
    }

    /// Every verdict given on a criterion in the run (as the list shows them), each once,
    /// sorted.
    pub fn verdict_texts(&self, c: usize) -> Vec<String> {
        let n = self.rubric.criteria.len();
        let mut seen = [false; FIRST_VERDICT as usize];
        for code in self.cells.iter().skip(c).step_by(n.max(1)).take(self.len()) {
            if let Some(s) = seen.get_mut(*code as usize) {
                *s = true;
            }
        }
        let mut out: Vec<String> = self
            .verdicts
            .get(c)
            .into_iter()
            .flatten()
            .map(ToString::to_string)
            .collect();
        if c < n && seen[NO_VERDICT as usize] {
            out.push("-".to_owned());
        }
        if c < n && seen[FAILED as usize] {
            out.push("FAILED".to_owned());
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Builds a [`RunData`] from a run's evaluations as they stream past.
pub(super) struct RunBuilder {
    run: RunData,
    /// Per criterion, a verdict's text → its code.
    codes: Vec<HashMap<String, u32>>,
    full: Vec<usize>,
    scored: usize,
    score_sum: f64,
    bins: [usize; 10],
    tags: BTreeMap<String, Vec<f64>>,
}

impl RunBuilder {
    /// `rubric`: the run's rubric, or for a run of items' own rubrics the union of their
    /// criteria (known only once the journal is read: [`RunBuilder::widen`]).
    pub fn new(manifest: Manifest, rubric: Arc<Rubric>) -> Self {
        let n = rubric.criteria.len();
        Self {
            run: RunData {
                manifest,
                rubric,
                figures: RunFigures::default(),
                rows: Vec::new(),
                ids: String::new(),
                id_ends: Vec::new(),
                by_id: Vec::new(),
                cells: Vec::new(),
                verdicts: vec![Vec::new(); n],
            },
            codes: vec![HashMap::new(); n],
            full: vec![0; n],
            scored: 0,
            score_sum: 0.0,
            bins: [0; 10],
            tags: BTreeMap::new(),
        }
    }

    /// Adds criteria (a run of items' own rubrics meets them as it goes): earlier items
    /// have no cell for them.
    pub fn widen(&mut self, rubric: Arc<Rubric>) {
        let old = self.run.rubric.criteria.len();
        let new = rubric.criteria.len();
        if new > old {
            let items = self.run.rows.len();
            let mut cells = Vec::with_capacity(items * new);
            for chunk in self.run.cells.chunks(old.max(1)).take(items) {
                cells.extend_from_slice(chunk);
                cells.resize(cells.len() + new - old, NO_CELL);
            }
            if old == 0 {
                cells.resize(items * new, NO_CELL);
            }
            self.run.cells = cells;
            self.run.verdicts.resize(new, Vec::new());
            self.codes.resize(new, HashMap::new());
            self.full.resize(new, 0);
        }
        self.run.rubric = rubric;
    }

    /// Adds the next item. `None` when the run is too large to index (4 billion items or
    /// 4 GB of ids).
    pub fn add(&mut self, position: usize, e: &crate::model::Evaluation) -> Option<()> {
        let run = &mut self.run;
        let n = run.rubric.criteria.len();
        let mut flags = 0;
        if e.passed {
            flags |= PASSED;
        }
        if e.incomplete {
            flags |= INCOMPLETE;
        }
        let at = run.cells.len();
        run.cells.resize(at + n, NO_CELL);
        for x in &e.results {
            if x.failure.is_some() {
                flags |= ANY_FAILURE;
            }
            let Some(c) = run
                .rubric
                .criteria
                .iter()
                .position(|c| c.id == x.criterion_id)
            else {
                continue;
            };
            if x.value.is_some_and(|v| v >= 1.0 - 1e-9) {
                self.full[c] += 1;
            }
            let code = match (&x.verdict, &x.failure) {
                (Some(v), _) => {
                    let codes = &mut self.codes[c];
                    let table = &mut run.verdicts[c];
                    let next = u32::try_from(table.len()).ok()? + FIRST_VERDICT;
                    *codes.entry(v.to_string()).or_insert_with(|| {
                        table.push(v.clone());
                        next
                    })
                }
                (None, Some(_)) => FAILED,
                (None, None) => NO_VERDICT,
            };
            run.cells[at + c] = code;
        }
        for (t, v) in &e.tags {
            self.tags.entry(t.clone()).or_default().push(*v);
        }
        if let Some(s) = e.score {
            self.scored += 1;
            self.score_sum += s;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let bin = ((s * 10.0).floor() as usize).min(9);
            self.bins[bin] += 1;
        }
        run.ids.push_str(&e.target_id);
        run.id_ends.push(u32::try_from(run.ids.len()).ok()?);
        run.rows.push(Row {
            score: e.score.unwrap_or(f64::NAN),
            position: u32::try_from(position).ok()?,
            flags,
        });
        Some(())
    }

    /// The run, with its index by id and its figures.
    pub fn finish(mut self) -> Option<RunData> {
        let run = &mut self.run;
        let items = run.rows.len();
        let mut by_id: Vec<u32> = (0..u32::try_from(items).ok()?).collect();
        by_id.sort_by(|&a, &b| run.id(a as usize).cmp(run.id(b as usize)));
        run.by_id = by_id;
        run.ids.shrink_to_fit();
        run.id_ends.shrink_to_fit();
        run.rows.shrink_to_fit();
        run.cells.shrink_to_fit();
        #[allow(clippy::cast_precision_loss)]
        let share = |k: usize| {
            if items == 0 {
                0.0
            } else {
                k as f64 / items as f64
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let mean = if self.scored == 0 {
            0.0
        } else {
            self.score_sum / self.scored as f64
        };
        run.figures = RunFigures {
            items,
            passed: run.rows.iter().filter(|r| r.flags & PASSED != 0).count(),
            incomplete: run
                .rows
                .iter()
                .filter(|r| r.flags & INCOMPLETE != 0)
                .count(),
            mean,
            bins: self.bins,
            full: self.full.iter().map(|&k| share(k)).collect(),
            // In dataset order, so the bootstrap's interval is the same every time.
            tags: crate::run::tag_scores(&self.tags, 1000),
        };
        Some(self.run)
    }
}

/// The reasons, values and failures of the items on screen, read from the journal on
/// demand (by item position) for one run at a time.
#[derive(Debug, Default, Clone)]
pub struct RunDetails {
    /// The run they are of.
    pub run_id: String,
    /// By item position: the item's id and its cells (without evidence or the judge
    /// call's record).
    pub items: HashMap<usize, (String, Vec<CriterionResult>)>,
    /// A read under way: the run and the positions asked for.
    pub loading: Option<(String, Vec<usize>)>,
    /// A run whose journal could not be read for them (not asked again).
    pub failed: Option<String>,
}

impl RunDetails {
    /// Item `i` of `run`'s cells, when they have been read.
    pub fn of<'a>(&'a self, run: &RunData, i: usize) -> Option<&'a [CriterionResult]> {
        if self.run_id != run.manifest.id {
            return None;
        }
        let (id, cells) = self.items.get(&run.position(i)?)?;
        (id == run.id(i)).then_some(cells.as_slice())
    }

    /// Whether every one of `positions` of `run_id` is held or being read.
    pub fn covers(&self, run_id: &str, positions: &[usize]) -> bool {
        let held = self.run_id == run_id && positions.iter().all(|p| self.items.contains_key(p));
        let asked = self
            .loading
            .as_ref()
            .is_some_and(|(r, ps)| r == run_id && positions.iter().all(|p| ps.contains(p)));
        held || asked
    }

    /// The cell of item `i` of `run` on a criterion, when read.
    pub fn cell<'a>(
        &'a self,
        run: &RunData,
        i: usize,
        criterion: &str,
    ) -> Option<&'a CriterionResult> {
        self.of(run, i)?
            .iter()
            .find(|x| x.criterion_id == criterion)
    }
}

/// What the UI shows of a cell's detail: its verdict, value, reason and failure. The
/// evidence, the judge call's record and an ensemble's votes are dropped as it is read.
pub(super) fn shown(mut r: CriterionResult) -> CriterionResult {
    r.evidence = Vec::new();
    r.invocation = None;
    r.ensemble = None;
    r.reason.shrink_to_fit();
    r
}
