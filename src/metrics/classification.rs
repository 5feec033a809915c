//! Judge-versus-human classification metrics: binary (MET is the positive class, the human
//! label is the truth) and nominal or ordinal multi-class.
//!
//! Everything is computed from confusion counts, so summing the counts of several criteria
//! (or of a bootstrap resample) and asking for the metrics again is all pooling takes.

use std::ops::{Add, AddAssign};

use serde::Serialize;

use crate::model::Verdict;

/// A binary label: MET, UNMET or an abstention (`CANNOT_ASSESS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryLabel {
    /// The criterion is met.
    Met,
    /// The criterion is not met.
    Unmet,
    /// `CANNOT_ASSESS`: left out of the metrics.
    Abstain,
}

impl BinaryLabel {
    /// The binary reading of a verdict; `None` for levels, options and scores.
    pub fn from_verdict(verdict: &Verdict) -> Option<Self> {
        match verdict {
            Verdict::Met => Some(Self::Met),
            Verdict::Unmet => Some(Self::Unmet),
            Verdict::CannotAssess => Some(Self::Abstain),
            Verdict::Level(_) | Verdict::Choice(_) | Verdict::Score(_) => None,
        }
    }
}

/// The 2×2 confusion of paired binary labels: rows are the human, columns the judge, MET is
/// positive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BinaryConfusion {
    /// Human MET, judge MET.
    pub tp: u64,
    /// Human UNMET, judge MET.
    pub fp: u64,
    /// Human MET, judge UNMET.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Human UNMET, judge UNMET.
    pub tn: u64,
}

impl BinaryConfusion {
    /// Counts one (human, judge) pair; returns `false`, counting nothing, when either side
    /// abstained.
    pub fn record(&mut self, human: BinaryLabel, judge: BinaryLabel) -> bool {
        match (human, judge) {
            (BinaryLabel::Met, BinaryLabel::Met) => self.tp += 1,
            (BinaryLabel::Unmet, BinaryLabel::Met) => self.fp += 1,
            (BinaryLabel::Met, BinaryLabel::Unmet) => self.fn_ += 1,
            (BinaryLabel::Unmet, BinaryLabel::Unmet) => self.tn += 1,
            (BinaryLabel::Abstain, _) | (_, BinaryLabel::Abstain) => return false,
        }
        true
    }

    /// Builds the confusion of (human, judge) pairs; the second value counts the pairs set
    /// aside because either side abstained.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (BinaryLabel, BinaryLabel)>) -> (Self, u64) {
        let mut confusion = Self::default();
        let mut abstained = 0;
        for (human, judge) in pairs {
            if !confusion.record(human, judge) {
                abstained += 1;
            }
        }
        (confusion, abstained)
    }

    /// The confusion from counts in the order `[tp, fp, fn, tn]`.
    pub fn from_array([tp, fp, fn_, tn]: [u64; 4]) -> Self {
        Self { tp, fp, fn_, tn }
    }

    /// The pairs counted (abstentions excluded).
    pub fn support(&self) -> u64 {
        self.tp + self.fp + self.fn_ + self.tn
    }

    /// Every binary metric of these counts.
    pub fn metrics(&self) -> BinaryMetrics {
        let Self { tp, fp, fn_, tn } = *self;
        let n = self.support();
        // Exact in f64 for any realistic count (< 2^53).
        let (tpf, fpf, fnf, tnf, nf) = (tp as f64, fp as f64, fn_ as f64, tn as f64, n as f64);
        let f1_met = ratio(2.0 * tpf, 2.0 * tpf + fpf + fnf);
        let f1_unmet = ratio(2.0 * tnf, 2.0 * tnf + fpf + fnf);
        let cross = tpf * tnf - fpf * fnf;
        // κ = (p_o − p_e) / (1 − p_e), written over the counts so that p_e = 1 is an exact 0.
        let kappa = ratio(
            2.0 * cross,
            (tpf + fpf) * (fpf + tnf) + (tpf + fnf) * (fnf + tnf),
        );
        let marginals = (tpf + fpf) * (tpf + fnf) * (tnf + fpf) * (tnf + fnf);
        let phi = (marginals > 0.0).then(|| cross / marginals.sqrt());
        BinaryMetrics {
            support: n,
            accuracy: ratio(tpf + tnf, nf),
            precision: ratio(tpf, tpf + fpf),
            recall: ratio(tpf, tpf + fnf),
            f1: f1_met,
            macro_f1: f1_met.zip(f1_unmet).map(|(a, b)| f64::midpoint(a, b)),
            kappa,
            phi,
            leniency: ratio(100.0 * (fpf - fnf), nf),
        }
    }
}

impl Add for BinaryConfusion {
    type Output = Self;
    fn add(mut self, other: Self) -> Self {
        self += other;
        self
    }
}

impl AddAssign for BinaryConfusion {
    fn add_assign(&mut self, other: Self) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.tn += other.tn;
    }
}

/// Binary judge-versus-human metrics; `None` wherever a metric is undefined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BinaryMetrics {
    /// Pairs counted (both sides MET or UNMET).
    pub support: u64,
    /// Share of pairs where judge and human agree.
    pub accuracy: Option<f64>,
    /// Undefined when the judge never says MET.
    pub precision: Option<f64>,
    /// Undefined when the human never says MET.
    pub recall: Option<f64>,
    /// F1 of MET, `2tp / (2tp + fp + fn)`: undefined only when neither side says MET (0 when
    /// one side does and they never agree on it).
    pub f1: Option<f64>,
    /// Mean of the F1 of MET and the F1 of UNMET; undefined when either is.
    pub macro_f1: Option<f64>,
    /// Cohen's κ; undefined when the expected agreement is 1 (both sides use one same class).
    pub kappa: Option<f64>,
    /// φ (Matthews correlation); undefined when either side uses one class only.
    pub phi: Option<f64>,
    /// Judge MET rate − human MET rate, in percentage points (positive: the judge is lenient).
    pub leniency: Option<f64>,
}

impl BinaryMetrics {
    /// How many metrics [`values`](Self::values) returns.
    pub const COUNT: usize = 8;

    /// The metrics other than support, in field order.
    pub fn values(&self) -> [Option<f64>; Self::COUNT] {
        [
            self.accuracy,
            self.precision,
            self.recall,
            self.f1,
            self.macro_f1,
            self.kappa,
            self.phi,
            self.leniency,
        ]
    }
}

/// How disagreements between categories weigh in Cohen's κ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Every disagreement weighs 1 (nominal categories).
    Unweighted,
    /// A disagreement weighs (i − j)² (ordinal categories, listed in order).
    Quadratic,
}

/// A k×k confusion of paired category indices: rows are the human, columns the judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryConfusion {
    k: usize,
    cells: Vec<u64>,
}

impl CategoryConfusion {
    /// An empty confusion over `k` categories.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            cells: vec![0; k * k],
        }
    }

    /// A confusion over `k` categories from row-major counts (`cells.len()` must be k²).
    pub fn from_cells(k: usize, cells: Vec<u64>) -> Self {
        assert_eq!(k * k, cells.len(), "a k×k confusion needs k² cells");
        Self { k, cells }
    }

    /// Builds the confusion of (human, judge) category indices, each below `k`.
    pub fn from_pairs(k: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut confusion = Self::new(k);
        for (human, judge) in pairs {
            confusion.record(human, judge);
        }
        confusion
    }

    /// Counts one pair of category indices.
    pub fn record(&mut self, human: usize, judge: usize) {
        assert!(
            human < self.k && judge < self.k,
            "category index out of range"
        );
        self.cells[human * self.k + judge] += 1;
    }

    /// The number of categories.
    pub fn categories(&self) -> usize {
        self.k
    }

    /// The count of pairs with human category `human` and judge category `judge`.
    pub fn get(&self, human: usize, judge: usize) -> u64 {
        self.cells[human * self.k + judge]
    }

    /// The matrix as rows (human) of columns (judge).
    pub fn rows(&self) -> Vec<Vec<u64>> {
        self.cells
            .chunks(self.k.max(1))
            .map(<[u64]>::to_vec)
            .collect()
    }

    /// The pairs counted.
    pub fn support(&self) -> u64 {
        self.cells.iter().sum()
    }

    /// Share of pairs on the diagonal; undefined when empty.
    pub fn accuracy(&self) -> Option<f64> {
        let agree: u64 = (0..self.k).map(|i| self.get(i, i)).sum();
        ratio(agree as f64, self.support() as f64)
    }

    /// Cohen's κ, `1 − Σ w·observed / Σ w·expected`; undefined when the expected weighted
    /// disagreement is 0 (no pairs, or both sides always use one same category).
    pub fn kappa(&self, weighting: Weighting) -> Option<f64> {
        let k = self.k;
        let n = self.support() as f64;
        let human: Vec<f64> = (0..k)
            .map(|i| (0..k).map(|j| self.get(i, j)).sum::<u64>() as f64)
            .collect();
        let judge: Vec<f64> = (0..k)
            .map(|j| (0..k).map(|i| self.get(i, j)).sum::<u64>() as f64)
            .collect();
        let mut observed = 0.0;
        let mut expected = 0.0;
        for (i, human_i) in human.iter().enumerate() {
            for (j, judge_j) in judge.iter().enumerate() {
                let w = match weighting {
                    Weighting::Unweighted => f64::from(u8::from(i != j)),
                    Weighting::Quadratic => (i.abs_diff(j) as f64).powi(2),
                };
                observed += w * self.get(i, j) as f64;
                expected += w * human_i * judge_j;
            }
        }
        // observed / n versus expected / n²: scale the observed side instead of dividing.
        (expected > 0.0 && n > 0.0).then(|| 1.0 - observed * n / expected)
    }

    /// Support, accuracy and κ with the given weighting.
    pub fn metrics(&self, weighting: Weighting) -> MulticlassMetrics {
        MulticlassMetrics {
            support: self.support(),
            accuracy: self.accuracy(),
            kappa: self.kappa(weighting),
        }
    }
}

/// Multi-class judge-versus-human metrics; `None` wherever a metric is undefined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MulticlassMetrics {
    /// Pairs counted (both sides gave a category).
    pub support: u64,
    /// Share of pairs where judge and human agree.
    pub accuracy: Option<f64>,
    /// Cohen's κ: unweighted for nominal categories, quadratic-weighted for ordinal ones.
    pub kappa: Option<f64>,
}

impl MulticlassMetrics {
    /// How many metrics [`values`](Self::values) returns.
    pub const COUNT: usize = 2;

    /// The metrics other than support, in field order.
    pub fn values(&self) -> [Option<f64>; Self::COUNT] {
        [self.accuracy, self.kappa]
    }
}

/// `num / den`, undefined when `den` is 0.
fn ratio(num: f64, den: f64) -> Option<f64> {
    (den != 0.0).then(|| num / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: BinaryLabel = BinaryLabel::Met;
    const U: BinaryLabel = BinaryLabel::Unmet;
    const A: BinaryLabel = BinaryLabel::Abstain;

    fn confusion(human: &[BinaryLabel], judge: &[BinaryLabel]) -> (BinaryConfusion, u64) {
        assert_eq!(human.len(), judge.len());
        BinaryConfusion::from_pairs(human.iter().copied().zip(judge.iter().copied()))
    }

    fn close(actual: Option<f64>, expected: f64, tol: f64) {
        let a = actual.unwrap_or_else(|| panic!("expected {expected}, got undefined"));
        assert!((a - expected).abs() <= tol, "expected {expected}, got {a}");
    }

    /// The public case in SCORING.md "Metrics against human labels".
    #[test]
    fn scoring_md_public_case() {
        let (c, abstained) = confusion(&[M, M, U, U], &[M, U, U, U]);
        assert_eq!(abstained, 0);
        assert_eq!(c, BinaryConfusion::from_array([1, 0, 1, 2]));
        let m = c.metrics();
        assert_eq!(m.support, 4);
        close(m.accuracy, 0.75, 1e-12);
        close(m.precision, 1.0, 1e-12);
        close(m.recall, 0.5, 1e-12);
        close(m.f1, 0.666_667, 5e-7);
        close(m.kappa, 0.5, 1e-12);
        close(m.phi, 0.577_35, 5e-6);
        // F1(UNMET) = 0.8, so macro-F1 = (2/3 + 0.8) / 2; judge MET rate 25 %, human 50 %.
        close(m.macro_f1, 0.733_333_333_333_333_3, 1e-12);
        close(m.leniency, -25.0, 1e-12);
    }

    /// Reference: `sklearn.metrics` on the 17 non-abstained pairs below (MET = 1 = positive):
    /// `accuracy_score` 0.5882352941176471, `precision_score` 0.5555555555555556,
    /// `recall_score` 0.625, `f1_score` 0.5882352941176471, `f1_score(average="macro")`
    /// 0.5882352941176471, `cohen_kappa_score` 0.17931034482758623, `matthews_corrcoef`
    /// 0.18055555555555555.
    #[test]
    fn binary_matches_sklearn_with_abstentions_set_aside() {
        let human = [M, M, U, U, M, U, M, M, U, U, A, M, U, M, U, U, M, U, A];
        let judge = [M, U, U, M, M, M, U, M, U, U, M, U, M, M, U, M, M, U, A];
        let (c, abstained) = confusion(&human, &judge);
        assert_eq!(abstained, 2);
        assert_eq!(c, BinaryConfusion::from_array([5, 4, 3, 5]));
        let m = c.metrics();
        assert_eq!(m.support, 17);
        close(m.accuracy, 0.588_235_294_117_647_1, 1e-12);
        close(m.precision, 0.555_555_555_555_555_6, 1e-12);
        close(m.recall, 0.625, 1e-12);
        close(m.f1, 0.588_235_294_117_647_1, 1e-12);
        close(m.macro_f1, 0.588_235_294_117_647_1, 1e-12);
        close(m.kappa, 0.179_310_344_827_586_23, 1e-12);
        close(m.phi, 0.180_555_555_555_555_55, 1e-12);
        // Judge MET 9/17, human MET 8/17.
        close(m.leniency, 100.0 / 17.0, 1e-12);
    }

    #[test]
    fn undefined_binary_metrics_are_none_never_zero() {
        let empty = BinaryConfusion::default().metrics();
        assert_eq!(empty.support, 0);
        assert!(empty.values().iter().all(Option::is_none));

        // Judge never says MET: precision undefined; recall and F1 are a true 0.
        let m = BinaryConfusion::from_array([0, 0, 3, 2]).metrics();
        assert_eq!(m.precision, None);
        assert_eq!(m.recall, Some(0.0));
        assert_eq!(m.f1, Some(0.0));
        assert_eq!(m.phi, None);
        close(m.kappa, 0.0, 1e-12);

        // Everyone says MET: perfect accuracy, but κ, φ and macro-F1 are undefined.
        let m = BinaryConfusion::from_array([4, 0, 0, 0]).metrics();
        assert_eq!(m.accuracy, Some(1.0));
        assert_eq!(m.f1, Some(1.0));
        assert_eq!((m.kappa, m.phi, m.macro_f1), (None, None, None));

        // Human never says MET: recall undefined.
        let m = BinaryConfusion::from_array([0, 2, 0, 3]).metrics();
        assert_eq!(m.recall, None);
        assert_eq!(m.precision, Some(0.0));
        assert_eq!(m.phi, None);

        // Only abstentions: nothing counted.
        let (c, abstained) = confusion(&[A, M], &[U, A]);
        assert_eq!((c.support(), abstained), (0, 2));
    }

    #[test]
    fn identical_labels_agree_perfectly_when_defined() {
        let patterns: [&[BinaryLabel]; 4] = [&[M, U], &[M, M, U], &[U, U, U, M, M], &[M]];
        for labels in patterns {
            let m = confusion(labels, labels).0.metrics();
            assert_eq!(m.accuracy, Some(1.0));
            if m.kappa.is_some() {
                close(m.kappa, 1.0, 1e-12);
                close(m.phi, 1.0, 1e-12);
                close(m.macro_f1, 1.0, 1e-12);
            }
            assert_eq!(m.leniency, Some(0.0));
        }
    }

    #[test]
    fn confusions_add_up() {
        let a = BinaryConfusion::from_array([1, 2, 3, 4]);
        let b = BinaryConfusion::from_array([10, 20, 30, 40]);
        assert_eq!(a + b, BinaryConfusion::from_array([11, 22, 33, 44]));
    }

    #[test]
    fn verdicts_read_as_binary_labels() {
        assert_eq!(BinaryLabel::from_verdict(&Verdict::Met), Some(M));
        assert_eq!(BinaryLabel::from_verdict(&Verdict::Unmet), Some(U));
        assert_eq!(BinaryLabel::from_verdict(&Verdict::CannotAssess), Some(A));
        assert_eq!(BinaryLabel::from_verdict(&Verdict::Score(1.0)), None);
    }

    const HUMAN_5: [usize; 20] = [0, 1, 2, 3, 4, 2, 2, 1, 0, 3, 4, 4, 1, 2, 3, 0, 1, 2, 3, 4];
    const JUDGE_5: [usize; 20] = [0, 2, 2, 3, 3, 2, 1, 1, 1, 4, 4, 3, 1, 2, 2, 0, 0, 2, 3, 4];

    /// Reference: `sklearn.metrics.accuracy_score` 0.6, `cohen_kappa_score`
    /// 0.49526813880126186, `cohen_kappa_score(weights="quadratic")` 0.8823529411764706.
    #[test]
    fn multiclass_matches_sklearn() {
        let c = CategoryConfusion::from_pairs(5, HUMAN_5.into_iter().zip(JUDGE_5));
        assert_eq!(c.support(), 20);
        assert_eq!(c.rows()[2], vec![0, 1, 4, 0, 0]);
        close(c.accuracy(), 0.6, 1e-12);
        close(
            c.kappa(Weighting::Unweighted),
            0.495_268_138_801_261_86,
            1e-12,
        );
        close(
            c.kappa(Weighting::Quadratic),
            0.882_352_941_176_470_6,
            1e-12,
        );
        let m = c.metrics(Weighting::Quadratic);
        assert_eq!(m.support, 20);
        assert_eq!(m.kappa, c.kappa(Weighting::Quadratic));
    }

    /// Reference: `sklearn.metrics.cohen_kappa_score` on human [0, 1, 1, 0], judge [0, 1, 0, 0]
    /// (0.5) — the binary path and the unweighted multi-class path agree.
    #[test]
    fn two_categories_match_the_binary_kappa() {
        let c = CategoryConfusion::from_pairs(2, [(0, 0), (1, 1), (1, 0), (0, 0)]);
        close(c.kappa(Weighting::Unweighted), 0.5, 1e-12);
        close(c.kappa(Weighting::Quadratic), 0.5, 1e-12);
    }

    #[test]
    fn undefined_multiclass_metrics_are_none() {
        let empty = CategoryConfusion::new(3);
        assert_eq!(empty.accuracy(), None);
        assert_eq!(empty.kappa(Weighting::Unweighted), None);
        assert_eq!(empty.kappa(Weighting::Quadratic), None);
        // Both sides always choose category 1: expected disagreement is 0.
        let one = CategoryConfusion::from_pairs(3, [(1, 1), (1, 1)]);
        assert_eq!(one.accuracy(), Some(1.0));
        assert_eq!(one.kappa(Weighting::Unweighted), None);
        assert_eq!(one.kappa(Weighting::Quadratic), None);
    }

    proptest::proptest! {
        /// Any counts: metrics stay in range, κ and φ are symmetric in who is the truth, and
        /// labels compared with themselves agree perfectly wherever κ is defined.
        #[test]
        fn binary_metrics_stay_in_range(tp in 0_u64..50, fp in 0_u64..50, fn_ in 0_u64..50, tn in 0_u64..50) {
            let c = BinaryConfusion::from_array([tp, fp, fn_, tn]);
            let m = c.metrics();
            for v in [m.accuracy, m.precision, m.recall, m.f1, m.macro_f1].into_iter().flatten() {
                proptest::prop_assert!((0.0..=1.0).contains(&v));
            }
            for v in [m.kappa, m.phi].into_iter().flatten() {
                proptest::prop_assert!((-1.0 - 1e-12..=1.0 + 1e-12).contains(&v));
            }
            let swapped = BinaryConfusion::from_array([tp, fn_, fp, tn]).metrics();
            proptest::prop_assert_eq!(m.kappa, swapped.kappa);
            proptest::prop_assert_eq!(m.phi, swapped.phi);
            let k2 = CategoryConfusion::from_cells(2, vec![tp, fn_, fp, tn]).kappa(Weighting::Unweighted);
            proptest::prop_assert_eq!(m.kappa.is_some(), k2.is_some());
            if let (Some(a), Some(b)) = (m.kappa, k2) {
                proptest::prop_assert!((a - b).abs() < 1e-12);
            }
            let same = BinaryConfusion::from_array([tp + fn_, 0, 0, tn + fp]).metrics();
            if let Some(k) = same.kappa {
                proptest::prop_assert!((k - 1.0).abs() < 1e-12);
            }
        }
    }
}
