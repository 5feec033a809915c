//! Paired significance tests for comparing two runs over the same items: the exact McNemar
//! test for a pass/fail outcome, and a paired percentile bootstrap for a mean of per-item
//! differences (through [`crate::metrics::bootstrap`]'s resampler, so a seed gives the same
//! answer on every machine).

use serde::Serialize;

use super::bootstrap::{Bootstrap, Ci, for_each_resample, percentile_interval};

/// Exact two-sided McNemar p-value from the discordant pairs: `lost` items passed in the
/// first run and fail in the second, `gained` the other way round. Under "no change" each
/// discordant pair is a fair coin, so the p-value is the two-sided binomial tail
/// `min(1, 2·P[X ≤ min(lost, gained)])` with `X ~ Binomial(lost + gained, ½)`; 1 when there
/// are no discordant pairs.
#[must_use]
pub fn mcnemar_exact(lost: u64, gained: u64) -> f64 {
    let n = lost + gained;
    let k = lost.min(gained);
    if n == 0 {
        return 1.0;
    }
    // Summed in log space: 2^-n underflows past n = 1074.
    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    let nf = n as f64;
    let mut log_pmf = -nf * std::f64::consts::LN_2;
    let mut terms = Vec::with_capacity(usize::try_from(k).unwrap_or(0).saturating_add(1));
    terms.push(log_pmf);
    for i in 0..k {
        #[allow(clippy::cast_precision_loss)]
        let (left, next) = ((n - i) as f64, (i + 1) as f64);
        log_pmf += left.ln() - next.ln();
        terms.push(log_pmf);
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// The paired bootstrap of a mean difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedMean {
    /// The observed mean of the differences.
    pub delta: f64,
    /// The percentile interval of the resampled means (`None` when undefined).
    pub ci: Option<Ci>,
    /// Two-sided bootstrap p-value: twice the smaller share of resampled means on either
    /// side of zero (a mean of exactly zero counts on both sides), at most 1.
    pub p_value: f64,
}

/// Paired percentile bootstrap of the mean of `deltas` (one difference per item, second run
/// minus first): each resample draws the items with replacement, keeping each item's pair
/// together. `None` when there are no items or no resamples.
#[must_use]
pub fn paired_bootstrap(deltas: &[f64], options: &Bootstrap) -> Option<PairedMean> {
    if deltas.is_empty() || options.resamples == 0 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // item counts
    let n = deltas.len() as f64;
    let delta = deltas.iter().sum::<f64>() / n;
    let mut means = Vec::with_capacity(options.resamples);
    for_each_resample(deltas.len(), options, |indices| {
        let sum: f64 = indices.iter().map(|&i| deltas[i as usize]).sum();
        means.push(sum / n);
    });
    if means.is_empty() {
        return None;
    }
    let below = means.iter().filter(|m| **m <= 0.0).count();
    let above = means.iter().filter(|m| **m >= 0.0).count();
    #[allow(clippy::cast_precision_loss)] // resample counts
    let p_value = (2.0 * below.min(above) as f64 / means.len() as f64).min(1.0);
    let ci = percentile_interval(&mut means, options);
    Some(PairedMean { delta, ci, p_value })
}

/// A share's change over `n` paired items — `lost` of them in A only, `gained` in B only —
/// with its 95 % Wald interval for paired proportions (cut to −1…1):
/// `Δ = (gained − lost) / n`, `var = ((lost + gained) − (gained − lost)² / n) / n²`.
/// `None` without items.
pub fn paired_share_change(n: u64, lost: u64, gained: u64) -> Option<(f64, Ci)> {
    if n == 0 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)] // counts
    let (n, lost, gained) = (n as f64, lost as f64, gained as f64);
    let delta = (gained - lost) / n;
    let var = ((lost + gained) - (gained - lost).powi(2) / n).max(0.0) / (n * n);
    let half = super::Z_95 * var.sqrt();
    Some((
        delta,
        Ci {
            low: (delta - half).max(-1.0),
            high: (delta + half).min(1.0),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_matches_the_binomial_tail_by_hand() {
        // 8 discordant pairs, 1 one way: 2·(1 + 8)/256.
        assert!((mcnemar_exact(7, 1) - 18.0 / 256.0).abs() < 1e-15);
        assert!((mcnemar_exact(1, 7) - 18.0 / 256.0).abs() < 1e-15);
        // 6 to 0: 2/64.
        assert!((mcnemar_exact(6, 0) - 2.0 / 64.0).abs() < 1e-15);
        assert!((mcnemar_exact(0, 0) - 1.0).abs() < f64::EPSILON);
        assert!((mcnemar_exact(3, 3) - 1.0).abs() < f64::EPSILON);
        // Far past 2^-1074: still a number, and tiny.
        let p = mcnemar_exact(3000, 1000);
        assert!(p.is_finite() && p > 0.0 && p < 1e-100, "{p}");
        assert!((mcnemar_exact(2000, 2000) - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn bootstrap_of_no_change_is_not_significant_and_of_a_drop_is() {
        let options = Bootstrap::default();
        let same = paired_bootstrap(&[0.0; 20], &options).expect("defined");
        assert!((same.p_value - 1.0).abs() < f64::EPSILON);
        let drop: Vec<f64> = (0..40)
            .map(|i| if i % 4 == 0 { 0.1 } else { -0.5 })
            .collect();
        let dropped = paired_bootstrap(&drop, &options).expect("defined");
        assert!(dropped.delta < 0.0 && dropped.p_value < 0.05, "{dropped:?}");
        let ci = dropped.ci.expect("interval");
        assert!(ci.low <= dropped.delta && dropped.delta <= ci.high && ci.high < 0.0);
        assert_eq!(paired_bootstrap(&[], &options), None);
    }

    /// 9 items, 3 lost, none gained: Δ = −1/3, var = (3 − 9/9) / 81.
    #[test]
    fn a_paired_share_change_and_its_wald_interval_by_hand() {
        let (delta, ci) = paired_share_change(9, 3, 0).unwrap();
        let half = 1.959_963_984_540_054 * (2.0_f64 / 81.0).sqrt();
        assert!((delta + 1.0 / 3.0).abs() < 1e-12);
        assert!((ci.low - (delta - half)).abs() < 1e-12);
        assert!((ci.high - (delta + half)).abs() < 1e-12);
        assert!(paired_share_change(0, 0, 0).is_none());
    }
}
