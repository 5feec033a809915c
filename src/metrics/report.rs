//! Per-criterion and pooled judge-versus-human reports, with optional bootstrap intervals.
//!
//! The bootstrap resamples items: one resample draws items with replacement, and every
//! criterion and the pool are computed from that same draw (so their intervals are joint, and
//! the pool keeps an item's criteria together). Each item's cells are reduced beforehand to a
//! confusion-cell index (or a score pair), so a resample only adds up small integer counts.

use std::collections::HashMap;

use serde::Serialize;

use super::bootstrap::{Bootstrap, Ci, bootstrap_weighted};
use super::classification::{
    BinaryConfusion, BinaryLabel, BinaryMetrics, CategoryConfusion, MulticlassMetrics, Weighting,
};
use super::scores::{ScoreMetrics, moment_metrics, score_metrics};
use crate::model::Verdict;

/// How one criterion's labels compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelScale<'a> {
    /// MET / UNMET, `CANNOT_ASSESS` set aside.
    Binary,
    /// Unordered categories (option labels, level ids): unweighted κ.
    Nominal(&'a [String]),
    /// Ordered categories, lowest first (level ids, ordinal options): quadratic-weighted κ.
    Ordinal(&'a [String]),
    /// Numbers (`Score` verdicts): RMSE, MAE, correlations, bias.
    Interval,
}

/// One item's human and judge verdicts on a criterion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelPair<'a> {
    /// The item's id: cells with the same id are resampled together.
    pub item: &'a str,
    /// The human's verdict.
    pub human: &'a Verdict,
    /// The judge's verdict.
    pub judge: &'a Verdict,
}

/// A criterion's paired labels.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionLabels<'a> {
    /// The criterion's id.
    pub criterion: &'a str,
    /// The criterion's scale, which decides the metrics.
    pub scale: LabelScale<'a>,
    /// The labelled items' verdicts.
    pub pairs: Vec<LabelPair<'a>>,
}

/// Every criterion's report, and the binary criteria pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsReport {
    /// One report per criterion, in the rubric's order.
    pub criteria: Vec<CriterionReport>,
    /// All binary criteria's pairs together; `None` when no criterion is binary.
    pub pooled: Option<BinaryReport>,
    /// The bootstrap settings behind the intervals, when there are intervals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<Bootstrap>,
}

/// One criterion's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionReport {
    /// The criterion's id.
    pub criterion: String,
    /// Pairs given, counted or not.
    pub pairs: usize,
    /// Pairs with a verdict of another kind than the criterion's scale (a level on a binary
    /// criterion, a number on a nominal one, a non-finite score): left out of every metric.
    pub mismatched: usize,
    /// The metrics of its scale.
    #[serde(flatten)]
    pub metrics: CriterionMetrics,
}

impl CriterionReport {
    /// κ where the scale has one (quadratic-weighted for ordered kinds; none for scales).
    pub fn kappa(&self) -> Option<f64> {
        match &self.metrics {
            CriterionMetrics::Binary(b) => b.metrics.kappa,
            CriterionMetrics::Nominal(r) | CriterionMetrics::Ordinal(r) => r.metrics.kappa,
            CriterionMetrics::Interval(_) => None,
        }
    }
}

/// The metrics of a criterion, by scale (serialized with a `scale` tag).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "scale", rename_all = "snake_case")]
pub enum CriterionMetrics {
    /// MET / UNMET criteria.
    Binary(BinaryReport),
    /// Unordered categories.
    Nominal(CategoricalReport),
    /// Ordered levels.
    Ordinal(CategoricalReport),
    /// Numeric scores.
    Interval(ScoreReport),
}

/// Binary metrics with their confusion and intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BinaryReport {
    /// Pairs where either side said `CANNOT_ASSESS`: left out of every metric.
    pub abstained: u64,
    /// The judge-versus-human counts.
    pub confusion: BinaryConfusion,
    /// The metrics computed from them.
    #[serde(flatten)]
    pub metrics: BinaryMetrics,
    /// Their bootstrap intervals, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<BinaryIntervals>,
}

/// Bootstrap intervals of the binary metrics; `None` where undefined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BinaryIntervals {
    /// Of accuracy.
    pub accuracy: Option<Ci>,
    /// Of precision.
    pub precision: Option<Ci>,
    /// Of recall.
    pub recall: Option<Ci>,
    /// Of F1.
    pub f1: Option<Ci>,
    /// Of macro-F1.
    pub macro_f1: Option<Ci>,
    /// Of Cohen's κ.
    pub kappa: Option<Ci>,
    /// Of the φ coefficient.
    pub phi: Option<Ci>,
    /// Of leniency (judge MET rate − human MET rate, in percentage points).
    pub leniency: Option<Ci>,
}

impl BinaryIntervals {
    fn from_values(v: &[Option<Ci>]) -> Self {
        Self {
            accuracy: v[0],
            precision: v[1],
            recall: v[2],
            f1: v[3],
            macro_f1: v[4],
            kappa: v[5],
            phi: v[6],
            leniency: v[7],
        }
    }
}

/// Nominal or ordinal metrics with their confusion and intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoricalReport {
    /// The categories, in the order of the confusion's rows and columns.
    pub categories: Vec<String>,
    /// Pairs where either side abstained or gave a label outside `categories` (such as an NA
    /// option): left out of every metric.
    pub abstained: u64,
    /// Rows are the human's category, columns the judge's.
    pub confusion: Vec<Vec<u64>>,
    /// The metrics computed from the confusion.
    #[serde(flatten)]
    pub metrics: MulticlassMetrics,
    /// Their bootstrap intervals, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<MulticlassIntervals>,
}

/// Bootstrap intervals of the multi-class metrics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MulticlassIntervals {
    /// Of accuracy.
    pub accuracy: Option<Ci>,
    /// Of κ.
    pub kappa: Option<Ci>,
}

/// Score metrics (judge = predicted, human = true) with intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreReport {
    /// Pairs where either side said `CANNOT_ASSESS`.
    pub abstained: u64,
    /// The metrics computed from the pairs.
    #[serde(flatten)]
    pub metrics: ScoreMetrics,
    /// Their bootstrap intervals, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<ScoreIntervals>,
}

/// Bootstrap intervals of the score metrics that resample cheaply. Rank correlations and the
/// p-value have none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoreIntervals {
    /// Of the root mean squared error.
    pub rmse: Option<Ci>,
    /// Of the mean absolute error.
    pub mae: Option<Ci>,
    /// Of Pearson's r.
    pub pearson: Option<Ci>,
    /// Of the bias (mean judge score less mean human score).
    pub bias: Option<Ci>,
    /// Of Cohen's d.
    pub cohen_d: Option<Ci>,
}

/// Per-criterion reports and the pooled binary report, with bootstrap intervals when
/// `bootstrap` is given.
pub fn criterion_report(
    criteria: &[CriterionLabels<'_>],
    bootstrap: Option<&Bootstrap>,
) -> MetricsReport {
    let mut items: HashMap<&str, u32> = HashMap::new();
    let prepared: Vec<Prepared> = criteria
        .iter()
        .map(|c| Prepared::new(c, &mut items))
        .collect();
    let binary: Vec<&Prepared> = prepared.iter().filter(|p| p.kind == Kind::Binary).collect();

    let intervals = bootstrap.map(|options| resample(&prepared, items.len(), options));
    let interval_of = |i: usize| intervals.as_ref().map(|all| &all[i][..]);

    let reports = prepared
        .iter()
        .enumerate()
        .map(|(i, p)| p.report(interval_of(i)))
        .collect();
    let pooled = (!binary.is_empty()).then(|| {
        let confusion = binary
            .iter()
            .map(|p| p.binary_confusion())
            .fold(BinaryConfusion::default(), |a, b| a + b);
        BinaryReport {
            abstained: binary.iter().map(|p| p.abstained).sum(),
            confusion,
            metrics: confusion.metrics(),
            ci: interval_of(prepared.len()).map(BinaryIntervals::from_values),
        }
    });
    MetricsReport {
        criteria: reports,
        pooled,
        bootstrap: bootstrap.copied(),
    }
}

/// Percentile intervals for every criterion (in order) and, last, the pool of the binary
/// criteria: one vector of intervals each, laid out like the metrics' `values()`.
fn resample(prepared: &[Prepared], n_items: usize, options: &Bootstrap) -> Vec<Vec<Option<Ci>>> {
    let widths: Vec<usize> = prepared
        .iter()
        .map(|p| p.kind.width())
        .chain([BinaryMetrics::COUNT])
        .collect();
    let width: usize = widths.iter().sum();
    let mut counts: Vec<Vec<u64>> = prepared.iter().map(|p| vec![0; p.bins]).collect();
    let flat = bootstrap_weighted(n_items, options, width, |weights, out| {
        let mut pooled = BinaryConfusion::default();
        let mut offset = 0;
        for (p, counts) in prepared.iter().zip(&mut counts) {
            let slot = &mut out[offset..offset + p.kind.width()];
            offset += p.kind.width();
            if let Kind::Interval = p.kind {
                slot.copy_from_slice(&moment_metrics(&p.scores, |i| {
                    weights[p.cells[i].0 as usize]
                }));
                continue;
            }
            counts.fill(0);
            for &(item, bin) in &p.cells {
                counts[bin as usize] += u64::from(weights[item as usize]);
            }
            if let Kind::Binary = p.kind {
                let confusion =
                    BinaryConfusion::from_array([counts[0], counts[1], counts[2], counts[3]]);
                pooled += confusion;
                slot.copy_from_slice(&confusion.metrics().values());
            } else {
                let confusion = CategoryConfusion::from_cells(p.categories.len(), counts.clone());
                slot.copy_from_slice(&confusion.metrics(p.kind.weighting()).values());
            }
        }
        out[offset..].copy_from_slice(&pooled.metrics().values());
    });
    let mut rest = &flat[..];
    widths
        .iter()
        .map(|&w| {
            let (head, tail) = rest.split_at(w);
            rest = tail;
            head.to_vec()
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Binary,
    Nominal,
    Ordinal,
    Interval,
}

impl Kind {
    /// How many resampled statistics a criterion of this kind has.
    fn width(self) -> usize {
        match self {
            Kind::Binary => BinaryMetrics::COUNT,
            Kind::Nominal | Kind::Ordinal => MulticlassMetrics::COUNT,
            Kind::Interval => ScoreMetrics::RESAMPLED,
        }
    }

    fn weighting(self) -> Weighting {
        match self {
            Kind::Ordinal => Weighting::Quadratic,
            _ => Weighting::Unweighted,
        }
    }
}

/// A criterion reduced to counted cells: `(item, bin)` with bin a confusion-cell index
/// (binary: tp, fp, fn, tn; categorical: human × k + judge), or for interval criteria
/// `(item, 0)` alongside `scores[i]` = (judge, human).
struct Prepared {
    criterion: String,
    kind: Kind,
    categories: Vec<String>,
    bins: usize,
    cells: Vec<(u32, u32)>,
    scores: Vec<(f64, f64)>,
    pairs: usize,
    abstained: u64,
    mismatched: usize,
}

/// The confusion cell of a binary pair (tp, fp, fn, tn); `None` when either side abstained.
fn binary_bin(human: BinaryLabel, judge: BinaryLabel) -> Option<u32> {
    match (human, judge) {
        (BinaryLabel::Met, BinaryLabel::Met) => Some(0),
        (BinaryLabel::Unmet, BinaryLabel::Met) => Some(1),
        (BinaryLabel::Met, BinaryLabel::Unmet) => Some(2),
        (BinaryLabel::Unmet, BinaryLabel::Unmet) => Some(3),
        (BinaryLabel::Abstain, _) | (_, BinaryLabel::Abstain) => None,
    }
}

/// Where one categorical verdict falls.
enum Category {
    Index(usize),
    /// An abstention, or a label outside the categories (such as an NA option).
    Outside,
    /// A verdict of another kind.
    Mismatched,
}

/// How one pair reads on a criterion's scale.
enum Reading {
    Cell(u32),
    Score(f64, f64),
    Abstained,
    Mismatched,
}

impl Prepared {
    fn new<'a>(labels: &CriterionLabels<'a>, items: &mut HashMap<&'a str, u32>) -> Self {
        let (kind, categories): (Kind, &[String]) = match labels.scale {
            LabelScale::Binary => (Kind::Binary, &[]),
            LabelScale::Nominal(c) => (Kind::Nominal, c),
            LabelScale::Ordinal(c) => (Kind::Ordinal, c),
            LabelScale::Interval => (Kind::Interval, &[]),
        };
        let bins = match kind {
            Kind::Binary => 4,
            Kind::Nominal | Kind::Ordinal => categories.len() * categories.len(),
            Kind::Interval => 0,
        };
        let mut prepared = Self {
            criterion: labels.criterion.to_owned(),
            kind,
            categories: categories.to_vec(),
            bins,
            cells: Vec::with_capacity(labels.pairs.len()),
            scores: Vec::new(),
            pairs: labels.pairs.len(),
            abstained: 0,
            mismatched: 0,
        };
        for pair in &labels.pairs {
            let next = u32::try_from(items.len()).unwrap_or(u32::MAX);
            let item = *items.entry(pair.item).or_insert(next);
            match prepared.read(pair) {
                Reading::Cell(bin) => prepared.cells.push((item, bin)),
                Reading::Score(judge, human) => {
                    prepared.cells.push((item, 0));
                    prepared.scores.push((judge, human));
                }
                Reading::Abstained => prepared.abstained += 1,
                Reading::Mismatched => prepared.mismatched += 1,
            }
        }
        prepared
    }

    fn read(&self, pair: &LabelPair<'_>) -> Reading {
        match self.kind {
            Kind::Binary => {
                match (
                    BinaryLabel::from_verdict(pair.human),
                    BinaryLabel::from_verdict(pair.judge),
                ) {
                    (Some(h), Some(j)) => {
                        binary_bin(h, j).map_or(Reading::Abstained, Reading::Cell)
                    }
                    _ => Reading::Mismatched,
                }
            }
            Kind::Nominal | Kind::Ordinal => {
                match (self.category(pair.human), self.category(pair.judge)) {
                    (Category::Index(h), Category::Index(j)) => {
                        Reading::Cell((h * self.categories.len() + j) as u32)
                    }
                    (Category::Mismatched, _) | (_, Category::Mismatched) => Reading::Mismatched,
                    _ => Reading::Abstained,
                }
            }
            Kind::Interval => match (pair.human, pair.judge) {
                (Verdict::Score(h), Verdict::Score(j)) if h.is_finite() && j.is_finite() => {
                    Reading::Score(*j, *h)
                }
                (Verdict::CannotAssess, Verdict::Score(_) | Verdict::CannotAssess)
                | (Verdict::Score(_), Verdict::CannotAssess) => Reading::Abstained,
                _ => Reading::Mismatched,
            },
        }
    }

    /// Where a verdict falls among the categories; labels match trimmed and
    /// case-insensitively.
    fn category(&self, verdict: &Verdict) -> Category {
        match verdict {
            Verdict::Level(label) | Verdict::Choice(label) => {
                let label = label.trim();
                self.categories
                    .iter()
                    .position(|c| c.trim().eq_ignore_ascii_case(label))
                    .map_or(Category::Outside, Category::Index)
            }
            Verdict::CannotAssess => Category::Outside,
            Verdict::Met | Verdict::Unmet | Verdict::Score(_) => Category::Mismatched,
        }
    }

    fn binary_confusion(&self) -> BinaryConfusion {
        let mut counts = [0; 4];
        for &(_, bin) in &self.cells {
            counts[bin as usize] += 1;
        }
        BinaryConfusion::from_array(counts)
    }

    fn category_confusion(&self) -> CategoryConfusion {
        let mut counts = vec![0; self.bins];
        for &(_, bin) in &self.cells {
            counts[bin as usize] += 1;
        }
        CategoryConfusion::from_cells(self.categories.len(), counts)
    }

    fn report(&self, intervals: Option<&[Option<Ci>]>) -> CriterionReport {
        let metrics = match self.kind {
            Kind::Binary => {
                let confusion = self.binary_confusion();
                CriterionMetrics::Binary(BinaryReport {
                    abstained: self.abstained,
                    confusion,
                    metrics: confusion.metrics(),
                    ci: intervals.map(BinaryIntervals::from_values),
                })
            }
            Kind::Nominal | Kind::Ordinal => {
                let confusion = self.category_confusion();
                let report = CategoricalReport {
                    categories: self.categories.clone(),
                    abstained: self.abstained,
                    confusion: confusion.rows(),
                    metrics: confusion.metrics(self.kind.weighting()),
                    ci: intervals.map(|v| MulticlassIntervals {
                        accuracy: v[0],
                        kappa: v[1],
                    }),
                };
                if self.kind == Kind::Nominal {
                    CriterionMetrics::Nominal(report)
                } else {
                    CriterionMetrics::Ordinal(report)
                }
            }
            Kind::Interval => CriterionMetrics::Interval(ScoreReport {
                abstained: self.abstained,
                metrics: score_metrics(&self.scores),
                ci: intervals.map(|v| ScoreIntervals {
                    rmse: v[0],
                    mae: v[1],
                    pearson: v[2],
                    bias: v[3],
                    cohen_d: v[4],
                }),
            }),
        };
        CriterionReport {
            criterion: self.criterion.clone(),
            pairs: self.pairs,
            mismatched: self.mismatched,
            metrics,
        }
    }
}

#[cfg(test)]
mod tests;
