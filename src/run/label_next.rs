//! What to label next: the items whose labels teach the most — where the judges (several
//! runs, an ensemble's votes or samples) disagree, abstain or fail — stratified so every
//! criterion and verdict gets coverage, with a stop rule per criterion: κ's interval
//! half-width now and about how many more labels reach a target half-width.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::Error;
use super::agreement::{read_labels, run_agreement};
use crate::metrics::{Bootstrap, CriterionMetrics};
use crate::model::Verdict;
use crate::store::Workspace;
use crate::store::labels::dataset_key;
use crate::store::runs::{RunDir, runs_over};

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

/// Below this confidence a verdict counts as uncertain.
const UNSURE: f64 = 0.9;

/// Plans the next `n` items for `annotator` on `dataset` from the workspace's runs over
/// it, with the stop rule at `target` half-width.
pub fn plan(
    ws: &Workspace,
    dataset: &Path,
    annotator: &str,
    n: usize,
    target: f64,
    bootstrap: &Bootstrap,
) -> Result<LabelPlan, Error> {
    let (runs_dir, labels_dir) = (ws.runs_dir(), ws.labels_dir());
    let (runs_dir, labels_dir) = (runs_dir.as_path(), labels_dir.as_path());
    let root = ws.root.as_path();
    let key = dataset_key(dataset);
    let labelled: HashSet<(String, String)> = read_labels(labels_dir, &key, annotator)?
        .into_keys()
        .collect();
    // With an assignment, only the annotator's own items are planned.
    let assigned = crate::store::assignments::read(labels_dir, &key)
        .map_err(|e| Error::input(e.to_string()))?
        .and_then(|a| a.of(annotator));
    let runs: Vec<_> = runs_over(runs_dir, root, dataset)
        .into_iter()
        .filter(|m| !m.rubric.is_null())
        .collect();
    // Every cell's verdicts (each run's, and each vote of an ensemble or samples).
    let mut cells: HashMap<(String, String), Seen> = HashMap::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    let mut criteria: Vec<String> = Vec::new();
    for m in &runs {
        let dir = RunDir::new(runs_dir, &m.id);
        let Ok((journal, _)) = dir.read_cells(m) else {
            continue;
        };
        for cell in journal.into_values() {
            let r = &cell.result;
            if !criteria.contains(&r.criterion_id) {
                criteria.push(r.criterion_id.clone());
            }
            positions.entry(cell.item_id.clone()).or_insert(cell.item);
            let seen = cells
                .entry((cell.item_id.clone(), r.criterion_id.clone()))
                .or_default();
            seen.failed |= r.failure.is_some();
            if let Some(p) = r.invocation.as_ref().and_then(|i| i.confidence) {
                seen.confidence = Some(seen.confidence.map_or(p, |q: f64| q.min(p)));
            }
            let votes: Vec<&Verdict> = match &r.ensemble {
                Some(e) => e.votes.iter().filter_map(|v| v.verdict.as_ref()).collect(),
                None => r.verdict.iter().collect(),
            };
            for v in votes {
                if *v == Verdict::CannotAssess {
                    seen.abstained = true;
                } else {
                    *seen.verdicts.entry(v.to_string()).or_default() += 1;
                }
            }
        }
    }
    let mut scored: Vec<(NextItem, String)> = Vec::new();
    for (item, position) in &positions {
        if assigned.as_ref().is_some_and(|mine| !mine.contains(item)) {
            continue;
        }
        let mut priority = 0.0;
        let mut reasons = Vec::new();
        // The stratum: the criterion the item is least settled on, and the judges' verdict.
        let mut stratum = (f64::NEG_INFINITY, String::new());
        let mut open = false;
        for c in &criteria {
            if labelled.contains(&(item.clone(), c.clone())) {
                continue;
            }
            let Some(seen) = cells.get(&(item.clone(), c.clone())) else {
                continue;
            };
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
        if open {
            scored.push((
                NextItem {
                    item: item.clone(),
                    position: *position,
                    priority,
                    reasons,
                },
                stratum.1,
            ));
        }
    }
    let next = stratified(scored, n);
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

/// The items with something to teach first, then the rest; within each, strata (criterion
/// and verdict) in turn, each stratum's best first, so every criterion and verdict is
/// covered early. Ties go to dataset order.
fn stratified(mut scored: Vec<(NextItem, String)>, n: usize) -> Vec<NextItem> {
    scored.sort_by(|(a, _), (b, _)| {
        b.priority
            .total_cmp(&a.priority)
            .then(a.position.cmp(&b.position))
    });
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
    let z = 1.959_964;
    // Perfect agreement so far still leaves the chance of a disagreement unseen: count
    // p₀ as at most 1 − 1/(n+1).
    let p0 = p0.min(1.0 - 1.0 / (n + 1.0));
    Some((z * z * p0 * (1.0 - p0) / ((1.0 - pe).powi(2) * target * target)).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_needed_follow_the_standard_error_of_kappa() {
        // 35 of 40 agree, half MET on each side: p₀ 0.875, pₑ 0.5 → 1.96²·0.109/(0.25·0.0025).
        let confusion = vec![vec![18, 2], vec![3, 17]];
        let n = labels_for(&confusion, 0.05).unwrap();
        assert!((660..=680).contains(&n), "{n}");
        // Twice the half-width, a quarter of the labels.
        let wide = labels_for(&confusion, 0.10).unwrap();
        assert!(wide * 4 >= n && wide * 4 <= n + 4, "{wide} vs {n}");
        assert_eq!(labels_for(&[], 0.05), None);
    }
}
