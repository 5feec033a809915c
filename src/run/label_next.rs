//! What to label next: the items whose labels teach the most — where the judges (several
//! runs, an ensemble's votes or samples) disagree, abstain or fail — stratified so every
//! criterion and verdict gets coverage, with a stop rule per criterion: κ's interval
//! half-width now and about how many more labels reach a target half-width.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::Error;
use super::agreement::{read_verdicts, run_agreement};
use crate::metrics::{Bootstrap, CriterionMetrics};
use crate::model::Verdict;
use crate::store::Workspace;
use crate::store::labels::dataset_key;
use crate::store::runs::{CellStream, ItemCells, RunDir, runs_over};

/// The stop rule's default target: κ's 95 % interval within ±0.05.
pub const DEFAULT_TARGET: f64 = 0.05;

/// One item to label, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NextItem {
    pub item: String,
    /// Its position in the dataset.
    pub position: usize,
    /// How much its labels are expected to teach (0: nothing stands out).
    pub priority: f64,
    pub reasons: Vec<String>,
}

/// A criterion's stop rule.
#[derive(Debug, Clone, Serialize)]
pub struct CriterionProgress {
    pub criterion: String,
    /// Pairs of the latest run's verdict and a label that count toward κ.
    pub labelled: u64,
    pub kappa: Option<f64>,
    /// Half the width of κ's 95 % interval.
    pub half_width: Option<f64>,
    /// About how many more labels bring the half-width to the target (0: reached); `None`
    /// while there is no interval yet.
    pub more_needed: Option<u64>,
}

/// The order to label in, and where each criterion stands.
#[derive(Debug, Clone, Serialize)]
pub struct LabelPlan {
    pub annotator: String,
    pub runs: usize,
    pub target_half_width: f64,
    /// How many items the dataset's assignment gives the annotator (`None`: no assignment
    /// names them; every item is theirs to label).
    pub assigned: Option<usize>,
    pub next: Vec<NextItem>,
    pub criteria: Vec<CriterionProgress>,
}

/// What the judges said about one cell, over every run over the dataset.
#[derive(Default)]
struct Seen {
    verdicts: BTreeMap<String, usize>,
    abstained: bool,
    failed: bool,
    /// The least confidence a judge gave a verdict (from log-probabilities).
    confidence: Option<f64>,
}

impl Seen {
    fn add(&mut self, r: &crate::model::CriterionResult) {
        self.failed |= r.failure.is_some();
        if let Some(p) = r.invocation.as_ref().and_then(|i| i.confidence) {
            self.confidence = Some(self.confidence.map_or(p, |q: f64| q.min(p)));
        }
        let votes: Vec<&Verdict> = match &r.ensemble {
            Some(e) => e.votes.iter().filter_map(|v| v.verdict.as_ref()).collect(),
            None => r.verdict.iter().collect(),
        };
        for v in votes {
            if *v == Verdict::CannotAssess {
                self.abstained = true;
            } else {
                *self.verdicts.entry(v.to_string()).or_default() += 1;
            }
        }
    }
}

/// Below this confidence a verdict counts as uncertain.
const UNSURE: f64 = 0.9;

/// Plans the next `n` items for `annotator` on `dataset` from the workspace's runs over
/// it, with the stop rule at `target` half-width.
///
/// The runs are read as streams merged item by item (each journal is in dataset order), so
/// memory follows `n` and the labels, not the runs: an item is scored once every run has
/// passed it, and only the best `n` of each stratum are kept (no more can be chosen). A
/// run whose journal cannot be read is left out (from where the damage is, when it is
/// found mid-stream). Runs over a dataset that changed between them are merged by
/// position: an item that moved is weighed at each of its positions.
pub fn plan(
    ws: &Workspace,
    dataset: &Path,
    annotator: &str,
    n: usize,
    target: f64,
    bootstrap: &Bootstrap,
    between: &[String],
) -> Result<LabelPlan, Error> {
    let (runs_dir, labels_dir) = (ws.runs_dir(), ws.labels_dir());
    let (runs_dir, labels_dir) = (runs_dir.as_path(), labels_dir.as_path());
    let root = ws.root.as_path();
    let key = dataset_key(dataset);
    let labelled: HashSet<(String, String)> = read_verdicts(labels_dir, &key, annotator)?
        .into_keys()
        .collect();
    // With an assignment, only the annotator's own items are planned.
    let assigned = crate::store::assignments::read(labels_dir, &key)
        .map_err(Error::from)?
        .and_then(|a| a.of(annotator));
    // `between`: only these runs (candidates to tell apart: what separates them is where
    // they disagree).
    let runs: Vec<_> = runs_over(runs_dir, root, dataset)
        .into_iter()
        .filter(|m| !m.rubric.is_null())
        .filter(|m| between.is_empty() || between.contains(&m.id))
        .collect();
    let mut criteria = criteria_order(&runs);
    let mut shortlist = Shortlist::new(n);
    let mut merged = Merged::open(runs_dir, &runs);
    while let Some((position, groups)) = merged.next_position() {
        // Every run's cells of this position, by item id (one id unless the dataset changed).
        let mut items: Vec<(String, BTreeMap<String, Seen>)> = Vec::new();
        for group in &groups {
            for cell in &group.cells {
                let r = &cell.result;
                if !criteria.contains(&r.criterion_id) {
                    criteria.push(r.criterion_id.clone());
                }
                let at = items
                    .iter()
                    .position(|(id, _)| *id == cell.item_id)
                    .unwrap_or_else(|| {
                        items.push((cell.item_id.clone(), BTreeMap::new()));
                        items.len() - 1
                    });
                items[at]
                    .1
                    .entry(r.criterion_id.clone())
                    .or_default()
                    .add(r);
            }
        }
        for (item, seen) in items {
            if assigned.as_ref().is_some_and(|mine| !mine.contains(&item)) {
                continue;
            }
            if let Some(scored) = score(&item, position, &seen, &criteria, &labelled) {
                shortlist.push(scored);
            }
        }
    }
    let next = stratified(shortlist.into_vec(), n);
    let criteria = progress(runs_dir, labels_dir, &runs, annotator, target, bootstrap);
    Ok(LabelPlan {
        annotator: annotator.to_owned(),
        runs: runs.len(),
        target_half_width: target,
        assigned: assigned.as_ref().map(std::collections::BTreeSet::len),
        next,
        criteria,
    })
}

/// The order criteria are weighed in (it orders an item's reasons and breaks ties between
/// strata): oldest run first, each run's rubric's criteria by id — the order in which a
/// journal read whole meets them.
fn criteria_order(runs: &[crate::store::runs::Manifest]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for m in runs {
        let mut ids: Vec<&str> = m.rubric["criteria"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .collect();
        ids.sort_unstable();
        for id in ids {
            if !order.iter().any(|c| c == id) {
                order.push(id.to_owned());
            }
        }
    }
    order
}

/// How much an item's labels would teach, why, and its stratum (the criterion it is least
/// settled on and the judges' verdict there); `None` when nothing of it is left to label.
fn score(
    item: &str,
    position: usize,
    seen: &BTreeMap<String, Seen>,
    criteria: &[String],
    labelled: &HashSet<(String, String)>,
) -> Option<(NextItem, String)> {
    let mut priority = 0.0;
    let mut reasons = Vec::new();
    let mut stratum = (f64::NEG_INFINITY, String::new());
    let mut open = false;
    for c in criteria {
        let Some(seen) = seen.get(c) else {
            continue;
        };
        if labelled.contains(&(item.to_owned(), c.clone())) {
            continue;
        }
        open = true;
        let total: usize = seen.verdicts.values().sum();
        let (top, top_n) = seen
            .verdicts
            .iter()
            .max_by_key(|(_, k)| **k)
            .map_or(("", 0), |(v, k)| (v.as_str(), *k));
        let spread = if total == 0 {
            0.0
        } else {
            1.0 - top_n as f64 / total as f64
        };
        let mut here = 4.0 * spread;
        if spread > 0.0 {
            reasons.push(format!(
                "judges disagree on {c} ({top_n} of {total} say {top})"
            ));
        }
        if seen.abstained {
            here += 1.0;
            reasons.push(format!("a judge could not assess {c}"));
        }
        if seen.failed {
            here += 1.0;
            reasons.push(format!("grading {c} failed"));
        }
        // Where the judge itself was unsure: 4 × (1 − p), up to 2 (a coin toss).
        if let Some(p) = seen.confidence.filter(|p| *p < UNSURE) {
            here += (4.0 * (1.0 - p)).min(2.0);
            reasons.push(format!("the judge was unsure of {c} (p {p:.2})"));
        }
        priority += here;
        if here > stratum.0 {
            stratum = (here, format!("{c}={top}"));
        }
    }
    open.then(|| {
        (
            NextItem {
                item: item.to_owned(),
                position,
                priority,
                reasons,
            },
            stratum.1,
        )
    })
}

/// The runs' journals read together, position by position.
struct Merged {
    /// Each readable run's stream and the item group it is at, oldest run first.
    streams: Vec<(CellStream, Option<ItemCells>)>,
}

impl Merged {
    fn open(runs_dir: &Path, runs: &[crate::store::runs::Manifest]) -> Self {
        let mut streams = Vec::new();
        for m in runs {
            let Ok(mut stream) = RunDir::new(runs_dir, &m.id).stream_cells(m) else {
                continue;
            };
            let head = stream.next().and_then(Result::ok);
            streams.push((stream, head));
        }
        Self { streams }
    }

    /// The next position any run holds, with every run's cells there (oldest run first).
    fn next_position(&mut self) -> Option<(usize, Vec<ItemCells>)> {
        let position = self
            .streams
            .iter()
            .filter_map(|(_, head)| head.as_ref().map(|g| g.item))
            .min()?;
        let mut groups = Vec::new();
        for (stream, head) in &mut self.streams {
            if let Some(group) = head.take_if(|g| g.item == position) {
                groups.push(group);
                // A damaged line ends this run's part here, as a damaged journal is left out.
                *head = stream.next().and_then(Result::ok);
            }
        }
        Some((position, groups))
    }
}

/// The order items are chosen in within a group: most to teach first, then dataset order
/// (then item id, for items sharing a position).
fn rank(a: &NextItem, b: &NextItem) -> std::cmp::Ordering {
    b.priority
        .total_cmp(&a.priority)
        .then(a.position.cmp(&b.position))
        .then_with(|| a.item.cmp(&b.item))
}

/// The best `n` items of each stratum (of items with something to teach and of the rest):
/// [`stratified`] takes at most `n` from any one, so the others never matter.
struct Shortlist {
    n: usize,
    strata: HashMap<(bool, String), Vec<NextItem>>,
}

impl Shortlist {
    fn new(n: usize) -> Self {
        Self {
            n,
            strata: HashMap::new(),
        }
    }

    fn push(&mut self, (item, stratum): (NextItem, String)) {
        let n = self.n;
        let kept = self
            .strata
            .entry((item.priority > 0.0, stratum))
            .or_default();
        kept.push(item);
        // Cut back to the best n whenever twice that many wait: amortised, and bounded.
        if kept.len() >= 2 * n.max(1) {
            kept.sort_by(rank);
            kept.truncate(n);
        }
    }

    fn into_vec(self) -> Vec<(NextItem, String)> {
        self.strata
            .into_iter()
            .flat_map(|((_, stratum), items)| items.into_iter().map(move |i| (i, stratum.clone())))
            .collect()
    }
}

/// The items with something to teach first, then the rest; within each, strata (criterion
/// and verdict) in turn, each stratum's best first, so every criterion and verdict is
/// covered early. Ties go to dataset order.
fn stratified(mut scored: Vec<(NextItem, String)>, n: usize) -> Vec<NextItem> {
    scored.sort_by(|(a, _), (b, _)| rank(a, b));
    let (hot, cold): (Vec<_>, Vec<_>) = scored.into_iter().partition(|(i, _)| i.priority > 0.0);
    let mut out = Vec::with_capacity(n);
    for group in [hot, cold] {
        let mut strata: Vec<(String, std::collections::VecDeque<NextItem>)> = Vec::new();
        for (item, stratum) in group {
            match strata.iter_mut().find(|(s, _)| *s == stratum) {
                Some((_, q)) => q.push_back(item),
                None => strata.push((stratum, std::collections::VecDeque::from([item]))),
            }
        }
        while out.len() < n && strata.iter().any(|(_, q)| !q.is_empty()) {
            for (_, q) in &mut strata {
                if out.len() >= n {
                    break;
                }
                if let Some(item) = q.pop_front() {
                    out.push(item);
                }
            }
        }
    }
    out
}

/// Each criterion's κ against the labels in the latest run, its bootstrap interval's
/// half-width, and the labels still needed: κ's large-sample standard error is
/// √(p₀(1−p₀) / (n(1−pₑ)²)), so a half-width `target` takes n = 1.96²·p₀(1−p₀) / ((1−pₑ)²·target²)
/// labels at the agreement seen so far (p₀ observed, pₑ by chance).
fn progress(
    runs_dir: &Path,
    labels_dir: &Path,
    runs: &[crate::store::runs::Manifest],
    annotator: &str,
    target: f64,
    bootstrap: &Bootstrap,
) -> Vec<CriterionProgress> {
    let Some(latest) = runs.last() else {
        return Vec::new();
    };
    let Ok(a) = run_agreement(
        runs_dir,
        labels_dir,
        &latest.id,
        Some(annotator),
        Some(bootstrap),
    ) else {
        return Vec::new();
    };
    a.report
        .criteria
        .iter()
        .map(|c| {
            let (labelled, kappa, ci, confusion) = match &c.metrics {
                CriterionMetrics::Binary(b) => {
                    let m = &b.confusion;
                    (
                        b.metrics.support,
                        b.metrics.kappa,
                        b.ci.and_then(|ci| ci.kappa),
                        vec![vec![m.tp, m.fn_], vec![m.fp, m.tn]],
                    )
                }
                CriterionMetrics::Nominal(r) | CriterionMetrics::Ordinal(r) => (
                    r.metrics.support,
                    r.metrics.kappa,
                    r.ci.and_then(|ci| ci.kappa),
                    r.confusion.clone(),
                ),
                CriterionMetrics::Interval(s) => (s.metrics.n as u64, None, None, Vec::new()),
            };
            let half_width = ci.map(|ci| (ci.high - ci.low) / 2.0);
            let more_needed = half_width
                .and(labels_for(&confusion, target))
                .map(|total| total.saturating_sub(labelled));
            CriterionProgress {
                criterion: c.criterion.clone(),
                labelled,
                kappa,
                half_width,
                more_needed,
            }
        })
        .collect()
}

/// The labels κ needs for a 95 % half-width of `target` at the agreement of `confusion`
/// (rows one rater, columns the other); `None` when there is nothing to go by.
fn labels_for(confusion: &[Vec<u64>], target: f64) -> Option<u64> {
    let n: u64 = confusion.iter().flatten().sum();
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let k = confusion.len();
    let p0 = (0..k)
        .map(|i| confusion[i].get(i).copied().unwrap_or(0) as f64)
        .sum::<f64>()
        / n;
    let pe = (0..k)
        .map(|i| {
            let row: u64 = confusion[i].iter().sum();
            let col: u64 = confusion
                .iter()
                .map(|r| r.get(i).copied().unwrap_or(0))
                .sum();
            row as f64 / n * (col as f64 / n)
        })
        .sum::<f64>();
    if pe >= 1.0 {
        return None;
    }
    let z = crate::metrics::Z_95;
    // Perfect agreement so far still leaves the chance of a disagreement unseen: count
    // p₀ as at most 1 − 1/(n+1).
    let p0 = p0.min(1.0 - 1.0 / (n + 1.0));
    Some((z * z * p0 * (1.0 - p0) / ((1.0 - pe).powi(2) * target * target)).ceil() as u64)
}

#[cfg(test)]
mod tests;
