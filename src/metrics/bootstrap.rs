//! Seeded percentile bootstrap over items.
//!
//! A resample draws `n` items with replacement from the `n` given, from a `ChaCha8` stream
//! seeded with [`Bootstrap::seed`], so the same seed gives the same intervals on every
//! machine. A resample whose statistic is undefined (or not finite) is skipped; when fewer
//! than [`MIN_DEFINED_SHARE`] of the resamples remain, the interval is undefined.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

/// The least share of resamples that must give a defined statistic for its interval to be
/// defined.
pub const MIN_DEFINED_SHARE: f64 = 0.5;

/// Bootstrap settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bootstrap {
    /// How many resamples to draw.
    pub resamples: usize,
    /// The random seed: the same seed gives the same intervals.
    pub seed: u64,
    /// Confidence level in (0, 1), e.g. 0.95.
    pub level: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Self {
            resamples: 1000,
            seed: 0,
            level: 0.95,
        }
    }
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ci {
    /// The lower bound.
    pub low: f64,
    /// The upper bound.
    pub high: f64,
}

/// Percentile bootstrap interval of `stat` over resamples of `items`. `None` when there are
/// no items, no resamples, a level outside (0, 1), or too few resamples with a defined
/// statistic.
pub fn bootstrap<T>(
    items: &[T],
    options: &Bootstrap,
    stat: impl Fn(&[&T]) -> Option<f64>,
) -> Option<Ci> {
    let mut picked = Vec::with_capacity(items.len());
    let mut values = Vec::with_capacity(options.resamples);
    for_each_resample(items.len(), options, |indices| {
        picked.clear();
        picked.extend(indices.iter().map(|&i| &items[i as usize]));
        values.extend(stat(&picked).filter(|v| v.is_finite()));
    });
    percentile_interval(&mut values, options)
}

/// Percentile bootstrap intervals of `width` statistics at once, for statistics that only need
/// how many times each item was drawn: `stats(weights, out)` gets one weight per item (the
/// item's multiplicity in the resample) and writes the resample's statistics into `out`
/// (cleared to `None` beforehand). Draws exactly the resamples [`bootstrap`] draws with the
/// same settings and item count.
pub fn bootstrap_weighted(
    n_items: usize,
    options: &Bootstrap,
    width: usize,
    mut stats: impl FnMut(&[u32], &mut [Option<f64>]),
) -> Vec<Option<Ci>> {
    let mut weights = vec![0_u32; n_items];
    let mut out = vec![None; width];
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(options.resamples); width];
    for_each_resample(n_items, options, |indices| {
        weights.fill(0);
        for &i in indices {
            weights[i as usize] += 1;
        }
        out.fill(None);
        stats(&weights, &mut out);
        for (sample, value) in samples.iter_mut().zip(&out) {
            sample.extend(value.filter(|v| v.is_finite()));
        }
    });
    samples
        .iter_mut()
        .map(|values| percentile_interval(values, options))
        .collect()
}

/// Calls `visit` with the item indices of each resample, in order. Nothing is drawn when
/// there are no items (or more than `u32::MAX`) or the level is not in (0, 1).
pub(crate) fn for_each_resample(
    n_items: usize,
    options: &Bootstrap,
    mut visit: impl FnMut(&[u32]),
) {
    if n_items == 0 || !valid_level(options.level) {
        return;
    }
    // Item indices are drawn as u32, the same on every platform.
    let Ok(n) = u32::try_from(n_items) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut indices = vec![0_u32; n_items];
    for _ in 0..options.resamples {
        for slot in &mut indices {
            *slot = rng.random_range(0..n);
        }
        visit(&indices);
    }
}

fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// The (1 − level)/2 and (1 + level)/2 quantiles of the defined resample values (linear
/// interpolation between order statistics); sorts `values`.
pub(crate) fn percentile_interval(values: &mut [f64], options: &Bootstrap) -> Option<Ci> {
    let needed = (options.resamples as f64 * MIN_DEFINED_SHARE)
        .ceil()
        .max(1.0);
    if !valid_level(options.level) || (values.len() as f64) < needed {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - options.level) / 2.0;
    Some(Ci {
        low: quantile(values, tail),
        high: quantile(values, 1.0 - tail),
    })
}

/// The `q` quantile of sorted, non-empty `values`, interpolating linearly.
fn quantile(values: &[f64], q: f64) -> f64 {
    let position = q * (values.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(values.len() - 1);
    let fraction = position - below as f64;
    values[below] + (values[above] - values[below]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(items: &[&f64]) -> Option<f64> {
        (!items.is_empty()).then(|| items.iter().copied().sum::<f64>() / items.len() as f64)
    }

    const DATA: [f64; 10] = [1.0, 3.0, 2.0, 8.0, 5.0, 4.0, 4.0, 9.0, 0.0, 6.0];

    #[test]
    fn same_seed_same_interval_other_seed_other_interval() {
        let options = Bootstrap {
            resamples: 500,
            seed: 7,
            level: 0.9,
        };
        let a = bootstrap(&DATA, &options, mean).expect("defined");
        let b = bootstrap(&DATA, &options, mean).expect("defined");
        assert_eq!(a, b);
        let c = bootstrap(&DATA, &Bootstrap { seed: 8, ..options }, mean).expect("defined");
        assert_ne!(a, c);
        // The sample mean is 4.2; a 90 % interval lies around it and inside the data's range.
        assert!(
            a.low < 4.2 && 4.2 < a.high && a.low >= 0.0 && a.high <= 9.0,
            "{a:?}"
        );
    }

    #[test]
    fn weighted_draws_the_same_resamples() {
        let options = Bootstrap {
            resamples: 300,
            seed: 42,
            level: 0.95,
        };
        let direct = bootstrap(&DATA, &options, mean);
        let weighted = bootstrap_weighted(DATA.len(), &options, 2, |w, out| {
            let n: u32 = w.iter().sum();
            let sum: f64 = DATA.iter().zip(w).map(|(x, &k)| x * f64::from(k)).sum();
            out[0] = Some(sum / f64::from(n));
            // A statistic that is never defined gets no interval.
            out[1] = None;
        });
        let (d, w) = (direct.expect("defined"), weighted[0].expect("defined"));
        assert!((d.low - w.low).abs() < 1e-12 && (d.high - w.high).abs() < 1e-12);
        assert_eq!(weighted[1], None);
    }

    #[test]
    fn too_few_defined_resamples_give_no_interval() {
        let options = Bootstrap {
            resamples: 200,
            seed: 1,
            level: 0.95,
        };
        // Defined only when the resample holds the 9 at least twice: rare, so no interval.
        let rare =
            |items: &[&f64]| (items.iter().filter(|&&&x| x == 9.0).count() >= 2).then_some(1.0);
        assert_eq!(bootstrap(&DATA, &options, rare), None);
        // Defined whenever the 0 is absent (about 35 % of resamples): still too few.
        let without_zero = |items: &[&f64]| (!items.contains(&&0.0)).then_some(1.0);
        assert_eq!(bootstrap(&DATA, &options, without_zero), None);
        // Defined whenever the 0 is present (about 65 %): enough.
        let with_zero = |items: &[&f64]| items.contains(&&0.0).then_some(1.0);
        assert_eq!(
            bootstrap(&DATA, &options, with_zero),
            Some(Ci {
                low: 1.0,
                high: 1.0
            })
        );
    }

    #[test]
    fn degenerate_settings_give_no_interval() {
        let none: [f64; 0] = [];
        assert_eq!(bootstrap(&none, &Bootstrap::default(), mean), None);
        let zero = Bootstrap {
            resamples: 0,
            ..Bootstrap::default()
        };
        assert_eq!(bootstrap(&DATA, &zero, mean), None);
        for level in [0.0, 1.0, 95.0, f64::NAN] {
            let options = Bootstrap {
                level,
                ..Bootstrap::default()
            };
            assert_eq!(bootstrap(&DATA, &options, mean), None);
        }
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        // numpy.quantile([0, 1, 2, 3, 10], [0.025, 0.975]) = [0.1, 9.3]
        let mut values = [3.0, 0.0, 10.0, 1.0, 2.0];
        let options = Bootstrap {
            resamples: 5,
            ..Bootstrap::default()
        };
        let ci = percentile_interval(&mut values, &options).expect("defined");
        assert!(
            (ci.low - 0.1).abs() < 1e-12 && (ci.high - 9.3).abs() < 1e-12,
            "{ci:?}"
        );
    }
}
