//! A saved run as the terminal UI holds it: its manifest, rubric and figures (items,
//! passed, mean, histogram, full-marks rates, tag scores, each criterion's verdicts), worked
//! out while the journal streams past — and nothing per item. What is on screen is read on
//! demand by dataset position ([`RunDetails`]); lists and joins with the labels come from
//! streaming passes in the runtime (`run_scan`). A run of a million items costs what its
//! figures take.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::model::{CriterionResult, Evaluation, Rubric};
use crate::store::runs::Manifest;

/// The most distinct verdict texts kept per criterion (a numeric scale with free values
/// could have one per item): `v` cycles through these.
const MAX_VERDICT_TEXTS: usize = 64;

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
    /// A pairwise run's results per written criterion (win/tie/loss, position
    /// consistency, Bradley–Terry with more than two candidates).
    pub pairs: Option<crate::metrics::pairwise::PairwiseReport>,
}

/// A run's results for the UI: what describes it whole (see the module's note).
#[derive(Debug, Clone)]
pub struct RunData {
    pub manifest: Manifest,
    pub rubric: Arc<Rubric>,
    pub figures: RunFigures,
    /// Per criterion (by position), the verdicts given as the list shows them (`-` for a
    /// cell without one, `FAILED`), each once, sorted; at most [`MAX_VERDICT_TEXTS`].
    verdicts: Vec<Vec<String>>,
    /// Its items are the dataset's first ones, in order (item `k` is at position `k`): the
    /// unfiltered item list needs no pass.
    pub dense: bool,
}

impl RunData {
    /// How many items the run holds.
    pub fn len(&self) -> usize {
        self.figures.items
    }

    pub fn is_empty(&self) -> bool {
        self.figures.items == 0
    }

    /// The position of a criterion in the run's rubric.
    pub fn criterion(&self, id: &str) -> Option<usize> {
        self.rubric.criteria.iter().position(|c| c.id == id)
    }

    /// Every verdict given on the criterion at position `c` (as the list shows them), each
    /// once, sorted.
    pub fn verdict_texts(&self, c: usize) -> Vec<String> {
        self.verdicts.get(c).cloned().unwrap_or_default()
    }
}

/// A cell's verdict as the list shows it (`FAILED` for a cell that could not be graded,
/// `-` for one with neither).
pub fn verdict_text(x: &CriterionResult) -> String {
    match (&x.verdict, &x.failure) {
        (Some(v), _) => v.to_string(),
        (None, Some(_)) => "FAILED".to_owned(),
        (None, None) => "-".to_owned(),
    }
}

/// Builds a [`RunData`] from a run's evaluations as they stream past, keeping only sums.
pub(super) struct RunBuilder {
    manifest: Manifest,
    rubric: Arc<Rubric>,
    items: usize,
    passed: usize,
    incomplete: usize,
    dense: bool,
    /// Per criterion id: items with full marks, and the verdict texts seen.
    full: HashMap<String, usize>,
    texts: HashMap<String, BTreeSet<String>>,
    scored: usize,
    score_sum: f64,
    bins: [usize; 10],
    tags: BTreeMap<String, Vec<f64>>,
    /// A pairwise run's (expanded) rubric and its pairs, counted as its items pass.
    pairs: Option<(Arc<Rubric>, crate::metrics::pairwise::PairTally)>,
}

impl RunBuilder {
    pub fn new(manifest: Manifest, rubric: Arc<Rubric>) -> Self {
        Self {
            manifest,
            items: 0,
            passed: 0,
            incomplete: 0,
            dense: true,
            full: HashMap::new(),
            texts: HashMap::new(),
            scored: 0,
            score_sum: 0.0,
            bins: [0; 10],
            tags: BTreeMap::new(),
            pairs: None,
            rubric,
        }
    }

    /// The rubric the run is shown with (for a run of items' own rubrics, the union of their
    /// criteria, known once the journal is read).
    pub fn set_rubric(&mut self, rubric: Arc<Rubric>) {
        self.rubric = rubric;
    }

    /// The rubric the items are graded with, as soon as the journal says it (before its
    /// first item is added): a pairwise run's pairs are counted from then on.
    pub fn graded_with(&mut self, rubric: &Arc<Rubric>) {
        if self.pairs.is_none()
            && let Some(tally) = crate::metrics::pairwise::PairTally::of(rubric)
        {
            self.pairs = Some((Arc::clone(rubric), tally));
        }
    }

    /// Adds the next item (at dataset `position`).
    pub fn add(&mut self, position: usize, e: &Evaluation) {
        self.dense &= position == self.items;
        self.items += 1;
        self.passed += usize::from(e.passed);
        self.incomplete += usize::from(e.incomplete);
        if let Some((rubric, pairs)) = &mut self.pairs {
            pairs.add(rubric, &e.results);
        }
        for x in &e.results {
            if x.value.is_some_and(|v| v >= 1.0 - 1e-9) {
                *self.full.entry(x.criterion_id.clone()).or_insert(0) += 1;
            }
            let texts = self.texts.entry(x.criterion_id.clone()).or_default();
            if texts.len() < MAX_VERDICT_TEXTS {
                let text = verdict_text(x);
                if !texts.contains(&text) {
                    texts.insert(text);
                }
            }
        }
        // Tag scores need each item's value for their bootstrap interval: a float per item
        // per tag, only for rubrics with tags.
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
    }

    /// The run with its figures.
    pub fn finish(mut self) -> RunData {
        let items = self.items;
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
        let criteria = &self.rubric.criteria;
        let figures = RunFigures {
            items,
            passed: self.passed,
            incomplete: self.incomplete,
            mean,
            bins: self.bins,
            full: criteria
                .iter()
                .map(|c| share(self.full.get(&c.id).copied().unwrap_or(0)))
                .collect(),
            // In dataset order, so the bootstrap's interval is the same every time.
            tags: crate::run::tag_scores(&self.tags, 1000),
            pairs: self.pairs.as_ref().map(|(_, tally)| tally.report()),
        };
        let verdicts = criteria
            .iter()
            .map(|c| {
                self.texts
                    .remove(&c.id)
                    .map(|t| t.into_iter().collect())
                    .unwrap_or_default()
            })
            .collect();
        RunData {
            manifest: self.manifest,
            rubric: self.rubric,
            figures,
            verdicts,
            dense: self.dense,
        }
    }
}

/// One item of a run as the screen shows it: its id, score, pass and cells (without
/// evidence or the judge call's record).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemDetail {
    pub id: String,
    pub score: Option<f64>,
    pub passed: bool,
    pub incomplete: bool,
    pub cells: Vec<CriterionResult>,
}

impl ItemDetail {
    pub(super) fn of(e: Evaluation) -> Self {
        Self {
            id: e.target_id,
            score: e.score,
            passed: e.passed,
            incomplete: e.incomplete,
            cells: e.results.into_iter().map(shown).collect(),
        }
    }

    /// Its cell on a criterion.
    pub fn cell(&self, criterion: &str) -> Option<&CriterionResult> {
        self.cells.iter().find(|x| x.criterion_id == criterion)
    }

    /// Its score as the lists show it.
    pub fn score_text(&self) -> String {
        self.score
            .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0))
    }
}

/// The items on screen of one run, read from the journal on demand by dataset position.
#[derive(Debug, Default, Clone)]
pub struct RunDetails {
    /// The run they are of.
    pub run_id: String,
    /// By dataset position.
    pub items: HashMap<usize, ItemDetail>,
    /// The positions the held read asked for, sorted (a position the run has no item at
    /// is not asked again).
    pub read: Vec<usize>,
    /// A read under way: the run and the positions asked for.
    pub loading: Option<(String, Vec<usize>)>,
    /// A run whose journal could not be read for them (not asked again).
    pub failed: Option<String>,
}

impl RunDetails {
    /// The item of `run` at dataset `position`, when it has been read.
    pub fn at(&self, run: &RunData, position: usize) -> Option<&ItemDetail> {
        if self.run_id != run.manifest.id {
            return None;
        }
        self.items.get(&position)
    }

    /// The item of `run` at `position`, when read and it is the item `id` (a dataset
    /// edited since the run no longer lines up).
    pub fn item(&self, run: &RunData, position: usize, id: &str) -> Option<&ItemDetail> {
        self.at(run, position).filter(|d| d.id == id)
    }

    /// Whether every one of `positions` of `run_id` is held or being read.
    pub fn covers(&self, run_id: &str, positions: &[usize]) -> bool {
        let held =
            self.run_id == run_id && positions.iter().all(|p| self.read.binary_search(p).is_ok());
        let asked = self
            .loading
            .as_ref()
            .is_some_and(|(r, ps)| r == run_id && positions.iter().all(|p| ps.contains(p)));
        held || asked
    }
}

/// What the UI shows of a cell's detail: its verdict, value, reason and failure. The
/// evidence, the judge call's record and an ensemble's votes are dropped as it is read.
fn shown(mut r: CriterionResult) -> CriterionResult {
    r.evidence = Vec::new();
    r.invocation = None;
    r.ensemble = None;
    r.reason.shrink_to_fit();
    r
}
