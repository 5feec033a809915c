//! Streaming passes over saved runs' journals, run by the effect runtime (never in
//! `update`): each reads a run once, item by item in dataset order, and keeps only what it
//! produces — the judge's verdicts on the labelled cells, the positions of the items a
//! filter keeps, the changed items of a comparison. Memory follows the answer, not the run.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::data::Labels;
use super::open_dataset::label_text;
use super::run_data::verdict_text;
use crate::model::{Evaluation, Verdict};
use crate::run::record::Recording;

/// A run joined with an annotator's labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelJoin {
    pub run_id: String,
    /// The labels' generation it was worked out for.
    pub labels_gen: u64,
    /// Per labelled item, the judge's verdicts: O(labelled items), a code per criterion.
    items: HashMap<String, JudgedItem>,
    /// The criteria met, in the order of an item's codes.
    criteria: Vec<String>,
    /// Per criterion, the verdicts met (a code is an index into them).
    verdicts: Vec<Vec<Verdict>>,
    /// The positions of the items where a label differs from the judge's verdict, in order.
    pub disagree: Vec<usize>,
    /// The run's mean score and pass rate corrected by the labelled items (as `metrics`).
    pub correcting: Correcting,
}

/// A labelled item's position and, per criterion of the join, its verdict's code.
#[derive(Debug, Clone, Default, PartialEq)]
struct JudgedItem {
    position: usize,
    codes: Vec<u16>,
}

/// No verdict (no cell, a failed one, or more distinct verdicts than a code holds).
const NO_VERDICT: u16 = u16::MAX;

impl LabelJoin {
    /// Whether no labelled item of the run was found.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The judge's verdict on a cell of a labelled item.
    pub fn verdict(&self, item: &str, criterion: &str) -> Option<&Verdict> {
        let c = self.criteria.iter().position(|x| x == criterion)?;
        let code = *self.items.get(item)?.codes.get(c)?;
        self.verdicts.get(c)?.get(usize::from(code))
    }

    /// Takes in a labelled item's cells (at dataset `position`): its verdicts replace what
    /// was held for it; whether a label differs from one of them.
    pub(super) fn add_item<'a>(
        &mut self,
        position: usize,
        id: &str,
        cells: impl IntoIterator<Item = (&'a str, Option<&'a Verdict>)>,
        labels: &Labels,
    ) -> bool {
        let mut codes = vec![NO_VERDICT; self.criteria.len()];
        let mut differs = false;
        for (criterion, verdict) in cells {
            let c = if let Some(c) = self.criteria.iter().position(|x| x == criterion) {
                c
            } else {
                self.criteria.push(criterion.to_owned());
                self.verdicts.push(Vec::new());
                self.criteria.len() - 1
            };
            codes.resize(self.criteria.len(), NO_VERDICT);
            let Some(v) = verdict else { continue };
            let known = &mut self.verdicts[c];
            let code = known.iter().position(|k| k == v).unwrap_or_else(|| {
                known.push(v.clone());
                known.len() - 1
            });
            codes[c] = u16::try_from(code).unwrap_or(NO_VERDICT);
            if let Some(h) = labels.get(&(id.to_owned(), criterion.to_owned())) {
                differs |= label_text(h) != v.to_string();
            }
        }
        self.items
            .insert(id.to_owned(), JudgedItem { position, codes });
        differs
    }
}

/// Which items of a run the Results pane's list keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemsQuery {
    /// The criterion selected (the verdict filter's).
    pub criterion: Option<String>,
    /// Only items given this verdict on it (as the list shows verdicts).
    pub verdict: Option<String>,
    /// Only items with a cell that could not be graded.
    pub failed: bool,
}

/// A Datasets filter that depends on the run (and, for some, the labels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunFilter {
    /// Some cell could not be graded.
    Failed,
    /// The item's score is below 50 %.
    ScoreLow,
    /// The item's score is 50 % or more.
    ScoreHigh,
    /// A label differs from the judge's verdict.
    Disagreement,
    /// The human said `human` and the judge `judge` on the criterion.
    Cell {
        criterion: String,
        human: String,
        judge: String,
    },
}

/// Two runs compared item by item.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Runs A and B.
    pub a: String,
    pub b: String,
    /// The items whose score or pass changed: (id, change, regression, position in the
    /// dataset), regressions first, then the largest change — the first [`MOVED_KEPT`].
    pub moved: Vec<(String, f64, bool, usize)>,
    /// How many items changed in all.
    pub moved_total: usize,
    /// Per criterion id, the items whose verdict in B differs from the one they had in A
    /// (items A did not give a verdict on it are not counted).
    pub changed: HashMap<String, usize>,
    /// Positions both runs graded with different items (the dataset changed between them).
    pub mismatched: usize,
}

/// The most changed items a comparison keeps (in its order): a change of every item of a
/// huge run lists the ones that matter most, in bounded memory.
pub const MOVED_KEPT: usize = 10_000;

/// Each item of a run, in dataset order, until `each` says stop (`false`).
fn each_item(
    runs_dir: &Path,
    run_id: &str,
    mut each: impl FnMut(usize, Evaluation) -> bool,
) -> Result<(), crate::run::Error> {
    let rec = Recording::open(runs_dir, run_id)?;
    for next in rec.evaluations()? {
        let (position, e) = next?;
        if !each(position, e) {
            break;
        }
    }
    Ok(())
}

/// The run joined with the labels: the judge's verdicts on labelled cells and where they
/// differ from the labels.
pub fn join_labels(
    runs_dir: &Path,
    run_id: &str,
    labels: &Labels,
    labels_gen: u64,
) -> Result<LabelJoin, crate::run::Error> {
    let labelled: HashSet<&str> = labels.keys().map(|(item, _)| item.as_str()).collect();
    let mut join = LabelJoin {
        run_id: run_id.to_owned(),
        labels_gen,
        ..LabelJoin::default()
    };
    let loaded = Recording::open(runs_dir, run_id)?.rubric()?;
    // A pairwise run is compared with people's preferences (one per written criterion).
    let measured = loaded
        .as_ref()
        .map(|r| crate::metrics::preference::measured(&r.rubric));
    let rubric = measured.as_deref();
    each_item(runs_dir, run_id, |position, e| {
        if e.pending.is_empty() {
            join.correcting.add(e.score, e.passed);
            // Only a labelled item has people's figures to look up.
            if labelled.contains(e.target_id.as_str()) {
                join.correcting
                    .relabel(rubric, &e.target_id, e.score, e.passed, labels);
            }
        }
        if !labelled.contains(e.target_id.as_str()) {
            return true;
        }
        let cells = match &loaded {
            Some(r) => crate::metrics::preference::compared_cells(&r.rubric, &e.results),
            None => e
                .results
                .iter()
                .map(|x| (x.criterion_id.clone(), x.verdict.clone()))
                .collect(),
        };
        let cells = cells.iter().map(|(c, v)| (c.as_str(), v.as_ref()));
        if join.add_item(position, &e.target_id, cells, labels) {
            join.disagree.push(position);
        }
        true
    })?;
    Ok(join)
}

/// The judge's item scores and passes over the run, with the people's where they
/// labelled every criterion: what the corrected figures are made of. A label changed is
/// taken back and put in again, so labelling never reads the run again.
#[derive(Debug, Clone, Default)]
pub struct Correcting {
    score: crate::metrics::ppi::Corrector,
    pass: crate::metrics::ppi::Corrector,
    /// Per item labelled on every criterion: the judge's score and pass, the people's.
    labelled: HashMap<String, (Option<f64>, f64, f64, f64)>,
}

impl PartialEq for Correcting {
    /// The same items labelled, and the same figures (sums taken back and put in again may
    /// differ in their last bits).
    fn eq(&self, other: &Self) -> bool {
        fn close(
            a: Option<crate::metrics::ppi::Corrected>,
            b: Option<crate::metrics::ppi::Corrected>,
        ) -> bool {
            match (a, b) {
                (Some(x), Some(y)) => {
                    x.items == y.items
                        && x.labelled == y.labelled
                        && [
                            (x.raw, y.raw),
                            (x.corrected, y.corrected),
                            (x.ci.low, y.ci.low),
                            (x.ci.high, y.ci.high),
                            (x.bias, y.bias),
                        ]
                        .iter()
                        .all(|(p, q)| (p - q).abs() < 1e-9)
                }
                (None, None) => true,
                _ => false,
            }
        }
        self.labelled == other.labelled
            && close(self.score.corrected(), other.score.corrected())
            && close(self.pass.corrected(), other.pass.corrected())
    }
}

impl Correcting {
    /// An item of the run (not one with cells still to come): the judge's figures.
    fn add(&mut self, score: Option<f64>, passed: bool) {
        if let Some(s) = score {
            self.score.add(s, None);
        }
        self.pass.add(f64::from(u8::from(passed)), None);
    }

    /// The item's labels as they are now: what was counted for it is taken back, and its
    /// people's score and pass counted when every criterion is labelled.
    pub fn relabel(
        &mut self,
        rubric: Option<&crate::model::Rubric>,
        id: &str,
        score: Option<f64>,
        passed: bool,
        labels: &Labels,
    ) {
        if let Some((js, jp, ps, pp)) = self.labelled.remove(id) {
            if let Some(js) = js {
                self.score.unlabel(js, ps);
            }
            self.pass.unlabel(jp, pp);
        }
        let Some(r) = rubric else { return };
        let verdicts: Vec<Option<crate::model::Verdict>> = r
            .criteria
            .iter()
            .map(|c| {
                let v = labels.get(&(id.to_owned(), c.id.clone()))?;
                crate::metrics::judge_vs_human::label_verdict(c, v)
            })
            .collect();
        let Some((ps, pp)) = crate::run::agreement::person_outcome(r, &verdicts, id) else {
            return;
        };
        let (jp, pp) = (f64::from(u8::from(passed)), f64::from(u8::from(pp)));
        if let Some(js) = score {
            self.score.label(js, ps);
        }
        self.pass.label(jp, pp);
        self.labelled.insert(id.to_owned(), (score, jp, ps, pp));
    }

    /// The corrected mean score and pass rate.
    pub fn figures(&self) -> crate::run::agreement::CorrectedFigures {
        crate::run::agreement::CorrectedFigures {
            score: self.score.corrected(),
            pass_rate: self.pass.corrected(),
        }
    }
}

/// The positions of the run's items the Results list keeps.
pub fn filter_items(
    runs_dir: &Path,
    run_id: &str,
    q: &ItemsQuery,
) -> Result<Vec<usize>, crate::run::Error> {
    let mut out = Vec::new();
    each_item(runs_dir, run_id, |position, e| {
        let failed = !q.failed || e.results.iter().any(|x| x.failure.is_some());
        let verdict = match (&q.verdict, &q.criterion) {
            (Some(want), Some(c)) => e
                .results
                .iter()
                .find(|x| x.criterion_id == *c)
                .is_some_and(|x| verdict_text(x) == *want),
            _ => true,
        };
        if failed && verdict {
            out.push(position);
        }
        true
    })?;
    Ok(out)
}

/// The positions of the run's items a Datasets filter keeps (joined with the labels).
pub fn filter_run(
    runs_dir: &Path,
    run_id: &str,
    filter: &RunFilter,
    labels: &Labels,
) -> Result<Vec<usize>, crate::run::Error> {
    let mut out = Vec::new();
    each_item(runs_dir, run_id, |position, e| {
        let label = |criterion: &str| labels.get(&(e.target_id.clone(), criterion.to_owned()));
        let keep = match filter {
            // Any cell the judge or a check could not grade (an item can be complete, with
            // its failures handled by the rubric's error policy, and still have some).
            RunFilter::Failed => e.results.iter().any(|x| x.failure.is_some()),
            RunFilter::ScoreLow => e.score.is_some_and(|s| s < 0.5),
            RunFilter::ScoreHigh => e.score.is_some_and(|s| s >= 0.5),
            RunFilter::Disagreement => e.results.iter().any(|x| {
                x.verdict.as_ref().is_some_and(|v| {
                    label(&x.criterion_id).is_some_and(|h| label_text(h) != v.to_string())
                })
            }),
            RunFilter::Cell {
                criterion,
                human,
                judge,
            } => {
                let judged = e
                    .results
                    .iter()
                    .find(|x| x.criterion_id == *criterion)
                    .and_then(|x| x.verdict.as_ref())
                    .is_some_and(|v| v.to_string() == *judge);
                judged && label(criterion).is_some_and(|h| label_text(h) == *human)
            }
        };
        if keep {
            out.push(position);
        }
        true
    })?;
    Ok(out)
}

/// What one item of a run brings to a comparison.
struct Side {
    position: usize,
    id: String,
    score: Option<f64>,
    passed: bool,
    verdicts: Vec<(String, Verdict)>,
}

impl Side {
    fn of(position: usize, e: Evaluation) -> Self {
        Self {
            position,
            id: e.target_id,
            score: e.score,
            passed: e.passed,
            verdicts: e
                .results
                .into_iter()
                .filter_map(|x| Some((x.criterion_id, x.verdict?)))
                .collect(),
        }
    }
}

/// Runs A and B item by item. Both journals are in dataset order: they are read in step
/// and joined by position (an item only one of them graded is skipped); where the two
/// items at a position differ in id, they are counted as mismatched, not compared.
pub fn compare(runs_dir: &Path, a: &str, b: &str) -> Result<Comparison, crate::run::Error> {
    let open = |id: &str| -> Result<_, crate::run::Error> {
        let rec = Recording::open(runs_dir, id)?;
        let items = rec.evaluations()?;
        Ok(items.map(|next| next.map(|(p, e)| Side::of(p, e))))
    };
    let (mut sa, mut sb) = (open(a)?, open(b)?);
    let mut out = Comparison {
        a: a.to_owned(),
        b: b.to_owned(),
        ..Comparison::default()
    };
    let (mut x, mut y) = (sa.next().transpose()?, sb.next().transpose()?);
    while let (Some(ia), Some(ib)) = (&x, &y) {
        if ia.position < ib.position {
            x = sa.next().transpose()?;
            continue;
        }
        if ib.position < ia.position {
            y = sb.next().transpose()?;
            continue;
        }
        if ia.id == ib.id {
            compare_item(ia, ib, &mut out);
        } else {
            out.mismatched += 1;
        }
        x = sa.next().transpose()?;
        y = sb.next().transpose()?;
    }
    keep_most_moved(&mut out.moved);
    Ok(out)
}

/// Sorts changed items (regressions first, then the largest change, then by id) and keeps
/// the first [`MOVED_KEPT`].
fn keep_most_moved(moved: &mut Vec<(String, f64, bool, usize)>) {
    moved.sort_by(|p, q| {
        q.2.cmp(&p.2)
            .then(q.1.abs().total_cmp(&p.1.abs()))
            .then(p.0.cmp(&q.0))
    });
    moved.truncate(MOVED_KEPT);
}

fn compare_item(a: &Side, b: &Side, out: &mut Comparison) {
    let d = b.score.unwrap_or(0.0) - a.score.unwrap_or(0.0);
    if d.abs() > 1e-12 || a.passed != b.passed {
        let regression = a.passed && !b.passed;
        out.moved_total += 1;
        out.moved.push((b.id.clone(), d, regression, b.position));
        if out.moved.len() >= 2 * MOVED_KEPT {
            keep_most_moved(&mut out.moved);
        }
    }
    for (criterion, va) in &a.verdicts {
        let after = b
            .verdicts
            .iter()
            .find(|(c, _)| c == criterion)
            .map(|x| &x.1);
        if after != Some(va) {
            *out.changed.entry(criterion.clone()).or_insert(0) += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MOVED_KEPT, keep_most_moved};

    #[test]
    fn a_comparison_keeps_the_regressions_and_largest_changes_first_and_no_more() {
        #[allow(clippy::cast_precision_loss)]
        let mut moved: Vec<(String, f64, bool, usize)> = (0..2 * MOVED_KEPT + 5)
            .map(|i| (format!("item-{i:06}"), i as f64 / 1e6, i % 1000 == 7, i))
            .collect();
        keep_most_moved(&mut moved);
        assert_eq!(moved.len(), MOVED_KEPT);
        // Every regression (items 7, 1007 … 19007) first, the largest change first.
        let regressions = 20;
        assert!(moved[..regressions].iter().all(|m| m.2));
        assert_eq!(moved[0].3, 19_007);
        // Then the other largest changes, in order.
        assert!(!moved[regressions].2);
        assert_eq!(moved[regressions].3, 2 * MOVED_KEPT + 4);
        assert!(moved.windows(2).skip(regressions).all(|w| w[0].1 >= w[1].1));
    }
}
