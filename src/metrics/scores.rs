//! Metrics of paired scores `(predicted, true)`: errors, correlations and bias.
//!
//! Values must be finite. Every metric that can be undefined (no pairs, a constant side, a
//! constant difference) is `None`, never 0.

use serde::Serialize;

use super::special::student_t_two_sided;

/// Metrics of paired `(predicted, true)` scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoreMetrics {
    /// Pairs compared.
    pub n: usize,
    /// Root mean squared error (undefined without pairs).
    pub rmse: Option<f64>,
    /// Mean absolute error (undefined without pairs).
    pub mae: Option<f64>,
    /// Undefined with fewer than 2 pairs or a constant side.
    pub pearson: Option<f64>,
    /// Pearson of average ranks (ties share their mean rank).
    pub spearman: Option<f64>,
    /// Kendall τ-b (tie-corrected).
    pub kendall_tau_b: Option<f64>,
    /// Mean of predicted − true.
    pub bias: Option<f64>,
    /// Two-sided p-value of the paired t-test of the bias; undefined with fewer than 2 pairs or
    /// when every difference is the same (up to the rounding of the subtraction).
    pub bias_p_value: Option<f64>,
    /// Cohen's d of the differences: mean / standard deviation (n − 1); undefined like the
    /// p-value.
    pub cohen_d: Option<f64>,
}

impl ScoreMetrics {
    /// How many metrics [`resampled`](Self::resampled) returns.
    pub const RESAMPLED: usize = 5;

    /// The metrics the bootstrap resamples (RMSE, MAE, Pearson, bias, Cohen's d), in order.
    pub fn resampled(&self) -> [Option<f64>; Self::RESAMPLED] {
        [self.rmse, self.mae, self.pearson, self.bias, self.cohen_d]
    }
}

/// Every score metric of `(predicted, true)` pairs.
pub fn score_metrics(pairs: &[(f64, f64)]) -> ScoreMetrics {
    let [rmse, mae, pearson, bias, cohen_d] = moment_metrics(pairs, |_| 1);
    ScoreMetrics {
        n: pairs.len(),
        rmse,
        mae,
        pearson,
        spearman: spearman(pairs),
        kendall_tau_b: kendall_tau_b(pairs),
        bias,
        bias_p_value: paired_t_test(pairs).map(|t| t.p_value),
        cohen_d,
    }
}

/// RMSE, MAE, Pearson, bias and Cohen's d with pair `i` counted `weight(i)` times (a bootstrap
/// resample), in that order. Two passes, so large offsets do not cancel.
pub(crate) fn moment_metrics(
    pairs: &[(f64, f64)],
    weight: impl Fn(usize) -> u32,
) -> [Option<f64>; ScoreMetrics::RESAMPLED] {
    let mut n = 0.0;
    let (mut sum_x, mut sum_y, mut sum_sq, mut sum_abs) = (0.0, 0.0, 0.0, 0.0);
    let mut scale: f64 = 0.0;
    let mut constant_x = Constant::default();
    let mut constant_y = Constant::default();
    for (i, &(x, y)) in pairs.iter().enumerate() {
        let w = f64::from(weight(i));
        if w == 0.0 {
            continue;
        }
        let d = x - y;
        n += w;
        sum_x += w * x;
        sum_y += w * y;
        sum_sq += w * d * d;
        sum_abs += w * d.abs();
        constant_x.see(x);
        constant_y.see(y);
        scale = scale.max(x.abs()).max(y.abs());
    }
    if n == 0.0 {
        return [None; ScoreMetrics::RESAMPLED];
    }
    let (mean_x, mean_y) = (sum_x / n, sum_y / n);
    let mean_d = mean_x - mean_y;
    let (mut ss_x, mut ss_y, mut cross, mut ss_d) = (0.0, 0.0, 0.0, 0.0);
    for (i, &(x, y)) in pairs.iter().enumerate() {
        let w = f64::from(weight(i));
        let (dx, dy) = (x - mean_x, y - mean_y);
        let dd = (x - y) - mean_d;
        ss_x += w * dx * dx;
        ss_y += w * dy * dy;
        cross += w * dx * dy;
        ss_d += w * dd * dd;
    }
    let pearson = (n >= 2.0 && !constant_x.is_constant() && !constant_y.is_constant())
        .then(|| (cross / (ss_x * ss_y).sqrt()).clamp(-1.0, 1.0));
    // Differences that vary only by the rounding of `x − y` count as constant.
    let spread_d = if n >= 2.0 {
        (ss_d / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let cohen_d = (spread_d > DIFFERENCE_TOLERANCE * scale).then(|| mean_d / spread_d);
    [
        Some((sum_sq / n).sqrt()),
        Some(sum_abs / n),
        pearson,
        Some(mean_d),
        cohen_d,
    ]
}

/// Differences whose standard deviation is at most this share of the largest magnitude are
/// taken as constant: a spread that small is the rounding of the subtraction, not data.
const DIFFERENCE_TOLERANCE: f64 = 1e-12;

/// Tracks whether every value seen so far is the same (exact comparison, so a constant
/// column is never mistaken for a tiny variance made of rounding errors).
#[derive(Default)]
struct Constant {
    first: Option<f64>,
    varies: bool,
}

impl Constant {
    fn see(&mut self, v: f64) {
        match self.first {
            None => self.first = Some(v),
            Some(first) => self.varies |= first != v,
        }
    }

    fn is_constant(&self) -> bool {
        !self.varies
    }
}

/// Root mean squared error; undefined when empty.
pub fn rmse(pairs: &[(f64, f64)]) -> Option<f64> {
    moment_metrics(pairs, |_| 1)[0]
}

/// Mean absolute error; undefined when empty.
pub fn mae(pairs: &[(f64, f64)]) -> Option<f64> {
    moment_metrics(pairs, |_| 1)[1]
}

/// Pearson's r; undefined with fewer than 2 pairs or when either side is constant.
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    moment_metrics(pairs, |_| 1)[2]
}

/// Spearman's ρ: Pearson's r of the average ranks.
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let ranked: Vec<(f64, f64)> = average_ranks(&xs)
        .into_iter()
        .zip(average_ranks(&ys))
        .collect();
    pearson(&ranked)
}

/// 1-based ranks, ties sharing the mean of the ranks they span.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| key(values[a]).total_cmp(&key(values[b])));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end; their mean:
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// Kendall's τ-b, `(C − D) / √((n₀ − n₁)(n₀ − n₂))`, in O(n log n): sort by (x, y), count the
/// y-inversions with a merge sort, and correct for ties in x, in y and in both. Undefined
/// with fewer than 2 pairs or when either side is constant.
pub fn kendall_tau_b(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as u64;
    if n < 2 {
        return None;
    }
    let mut sorted: Vec<(f64, f64)> = pairs.iter().map(|&(x, y)| (key(x), key(y))).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let all_pairs = n * (n - 1) / 2;
    let tied_x = tied_pairs(&sorted, |a, b| a.0 == b.0);
    let tied_both = tied_pairs(&sorted, |a, b| a == b);
    let mut ys: Vec<f64> = sorted.iter().map(|p| p.1).collect();
    let discordant = count_inversions(&mut ys);
    let tied_y = tied_pairs(&ys, |a, b| a == b);
    // Pairs untied on both sides are C + D; C − D = (C + D) − 2D.
    let untied = all_pairs + tied_both - tied_x - tied_y;
    let numerator = untied as f64 - 2.0 * discordant as f64;
    let denominator = ((all_pairs - tied_x) as f64) * ((all_pairs - tied_y) as f64);
    (denominator > 0.0).then(|| (numerator / denominator.sqrt()).clamp(-1.0, 1.0))
}

/// Σ t(t − 1)/2 over the runs of equal neighbours of a sorted slice.
fn tied_pairs<T>(sorted: &[T], equal: impl Fn(&T, &T) -> bool) -> u64 {
    let mut total = 0;
    let mut run: u64 = 1;
    for w in sorted.windows(2) {
        if equal(&w[0], &w[1]) {
            run += 1;
        } else {
            total += run * (run - 1) / 2;
            run = 1;
        }
    }
    total + run * (run - 1) / 2
}

/// Sorts `values` ascending (stable merge sort) and returns how many pairs were strictly out of
/// order.
fn count_inversions(values: &mut [f64]) -> u64 {
    let mut buffer = values.to_vec();
    let mut inversions = 0;
    let n = values.len();
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if values[j] < values[i] {
                    buffer[k] = values[j];
                    inversions += (mid - i) as u64;
                    j += 1;
                } else {
                    buffer[k] = values[i];
                    i += 1;
                }
                k += 1;
            }
            buffer[k..k + mid - i].copy_from_slice(&values[i..mid]);
            k += mid - i;
            buffer[k..k + hi - j].copy_from_slice(&values[j..hi]);
            lo = hi;
        }
        values.copy_from_slice(&buffer);
        width *= 2;
    }
    inversions
}

/// `-0.0` and `0.0` as one value, so that ordering agrees with `==`.
fn key(v: f64) -> f64 {
    v + 0.0
}

/// The paired t-test of predicted − true against 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedTTest {
    /// The t statistic.
    pub t: f64,
    /// Degrees of freedom, n − 1.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// The paired t-test of the differences predicted − true; undefined with fewer than 2 pairs
/// or when every difference is the same up to rounding (t would be infinite or 0/0).
pub fn paired_t_test(pairs: &[(f64, f64)]) -> Option<PairedTTest> {
    let d = moment_metrics(pairs, |_| 1)[4]?;
    let n = pairs.len() as f64;
    // t = mean / (sd / √n) = d · √n.
    let t = d * n.sqrt();
    let df = n - 1.0;
    Some(PairedTTest {
        t,
        df,
        p_value: student_t_two_sided(t, df),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: Option<f64>, expected: f64, tol: f64) {
        let a = actual.unwrap_or_else(|| panic!("expected {expected}, got undefined"));
        assert!((a - expected).abs() <= tol, "expected {expected}, got {a}");
    }

    /// (predicted, true), with ties on both sides.
    const PAIRS: [(f64, f64); 12] = [
        (0.8, 0.7),
        (0.6, 0.7),
        (0.9, 1.0),
        (0.4, 0.2),
        (0.6, 0.5),
        (1.0, 0.9),
        (0.3, 0.4),
        (0.6, 0.6),
        (0.75, 0.5),
        (0.2, 0.0),
        (0.8, 0.9),
        (0.5, 0.5),
    ];

    /// References: `sklearn.metrics.root_mean_squared_error`, `mean_absolute_error`;
    /// `scipy.stats.pearsonr`, `spearmanr`, `kendalltau` (τ-b), `ttest_rel(pred, true)`.
    #[test]
    fn matches_scipy_and_sklearn() {
        let m = score_metrics(&PAIRS);
        assert_eq!(m.n, 12);
        close(m.rmse, 0.133_072_661_855_594_27, 1e-12);
        close(m.mae, 0.1125, 1e-12);
        close(m.pearson, 0.897_805_345_580_433_5, 1e-12);
        close(m.spearman, 0.909_092_353_375_014, 1e-12);
        close(m.kendall_tau_b, 0.796_774_300_597_110_6, 1e-12);
        close(m.bias, 0.045_833_333_333_333_344, 1e-12);
        close(m.bias_p_value, 0.249_153_639_050_193_7, 1e-10);
        close(m.cohen_d, 0.351_251_800_302_040_6, 1e-12);
        let t = paired_t_test(&PAIRS).expect("defined");
        close(Some(t.t), 1.216_771_928_746_342_8, 1e-10);
        assert_eq!(t.df, 11.0);
    }

    /// Reference: scipy.stats.rankdata(method="average").
    #[test]
    fn average_ranks_share_ties() {
        assert_eq!(
            average_ranks(&[3.0, 1.0, 3.0, 2.0, 3.0, -0.0, 0.0]),
            vec![6.0, 3.0, 6.0, 4.0, 6.0, 1.5, 1.5]
        );
    }

    /// Reference: scipy.stats.kendalltau on larger tied data (x = i % 7, y = (i * 5) % 11 for
    /// i in 0..200), checked against the O(n²) definition as well.
    #[test]
    fn kendall_agrees_with_quadratic_definition() {
        let pairs: Vec<(f64, f64)> = (0..200)
            .map(|i| (f64::from(i % 7), f64::from((i * 5) % 11)))
            .collect();
        let fast = kendall_tau_b(&pairs);
        let (mut c, mut d, mut tx, mut ty) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
        for i in 0..pairs.len() {
            for j in i + 1..pairs.len() {
                let sx = (pairs[i].0 - pairs[j].0).signum();
                let sy = (pairs[i].1 - pairs[j].1).signum();
                let (ex, ey) = (pairs[i].0 == pairs[j].0, pairs[i].1 == pairs[j].1);
                match (ex, ey) {
                    (true, true) => {}
                    (true, false) => tx += 1.0,
                    (false, true) => ty += 1.0,
                    (false, false) if sx == sy => c += 1.0,
                    (false, false) => d += 1.0,
                }
            }
        }
        let slow = (c - d) / ((c + d + tx) * (c + d + ty)).sqrt();
        close(fast, slow, 1e-12);
        close(fast, 0.011_102_389_069_253_553, 1e-12);
    }

    #[test]
    fn undefined_score_metrics_are_none() {
        let empty = score_metrics(&[]);
        assert_eq!(empty.n, 0);
        assert_eq!(empty.resampled(), [None; 5]);
        assert_eq!((empty.spearman, empty.kendall_tau_b), (None, None));
        assert_eq!(empty.bias_p_value, None);

        let one = score_metrics(&[(0.5, 0.25)]);
        assert_eq!(
            (one.rmse, one.mae, one.bias),
            (Some(0.25), Some(0.25), Some(0.25))
        );
        assert_eq!(
            (one.pearson, one.cohen_d, one.bias_p_value),
            (None, None, None)
        );

        // The judge gives every item the same score: no correlation, but errors are defined.
        let flat = score_metrics(&[(0.1, 0.2), (0.1, 0.4), (0.1, 0.9)]);
        assert_eq!(
            (flat.pearson, flat.spearman, flat.kendall_tau_b),
            (None, None, None)
        );
        assert!(flat.cohen_d.is_some() && flat.bias_p_value.is_some());

        // A constant offset: the bias is certain, so t and d are undefined (not infinite).
        let shifted = score_metrics(&[(0.3, 0.1), (0.5, 0.3), (0.9, 0.7)]);
        close(shifted.pearson, 1.0, 1e-12);
        assert!(shifted.bias.is_some_and(|b| (b - 0.2).abs() < 1e-12));
        assert_eq!((shifted.cohen_d, shifted.bias_p_value), (None, None));
    }

    #[test]
    fn perfect_predictions() {
        let pairs = [(0.1, 0.1), (0.5, 0.5), (0.7, 0.7)];
        let m = score_metrics(&pairs);
        assert_eq!((m.rmse, m.mae, m.bias), (Some(0.0), Some(0.0), Some(0.0)));
        close(m.pearson, 1.0, 1e-12);
        close(m.spearman, 1.0, 1e-12);
        close(m.kendall_tau_b, 1.0, 1e-12);
    }

    #[test]
    fn weights_repeat_pairs() {
        let weights = [2, 0, 1, 3, 1, 1, 0, 2, 1, 1, 0, 1];
        let repeated: Vec<(f64, f64)> = PAIRS
            .iter()
            .zip(weights)
            .flat_map(|(&p, w)| std::iter::repeat_n(p, w))
            .collect();
        let weighted = moment_metrics(&PAIRS, |i| weights[i] as u32);
        let plain = moment_metrics(&repeated, |_| 1);
        for (a, b) in weighted.into_iter().zip(plain) {
            close(a, b.expect("defined"), 1e-12);
        }
    }

    proptest::proptest! {
        /// The O(n log n) τ-b equals the O(n²) definition on small tied data.
        #[test]
        fn kendall_matches_pairwise_definition(
            pairs in proptest::collection::vec((0_u8..5, 0_u8..5), 0..40),
        ) {
            let pairs: Vec<(f64, f64)> = pairs.iter().map(|&(x, y)| (f64::from(x), f64::from(y))).collect();
            let (mut s, mut tx, mut ty, mut untied) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
            for i in 0..pairs.len() {
                for j in i + 1..pairs.len() {
                    let dx = (pairs[i].0 - pairs[j].0).signum();
                    let dy = (pairs[i].1 - pairs[j].1).signum();
                    match (pairs[i].0 == pairs[j].0, pairs[i].1 == pairs[j].1) {
                        (true, true) => {}
                        (true, false) => tx += 1.0,
                        (false, true) => ty += 1.0,
                        (false, false) => {
                            untied += 1.0;
                            s += dx * dy;
                        }
                    }
                }
            }
            let den = ((untied + tx) * (untied + ty)).sqrt();
            let expected = (den > 0.0).then(|| s / den);
            let fast = kendall_tau_b(&pairs);
            proptest::prop_assert_eq!(fast.is_some(), expected.is_some());
            if let (Some(a), Some(b)) = (fast, expected) {
                proptest::prop_assert!((a - b).abs() < 1e-12, "{} vs {}", a, b);
            }
        }
    }
}
