//! Agreement between several raters (annotators or judges): Krippendorff's α and Fleiss' κ.
//!
//! Both take one row per unit (item, or item × criterion) holding that unit's ratings, one
//! slot per rater, `None` where a rater gave none. Ratings are numbers: code categories as
//! numbers (for example their index in the criterion's level or option order). Values must be
//! finite.

use serde::Serialize;

/// How distances between values are measured in Krippendorff's α.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlphaLevel {
    /// Any two different values disagree equally.
    Nominal,
    /// Values are ordered; a disagreement weighs by how many ratings lie between the two
    /// values (Krippendorff's ordinal metric over the coincidence marginals).
    Ordinal,
    /// Squared difference of the values.
    Interval,
}

/// Krippendorff's α = 1 − `D_o / D_e` over the coincidence matrix of pairable ratings (units
/// with at least two ratings; the rest are ignored). Undefined when no rating is pairable or
/// every pairable rating has the same value (`D_e = 0`).
pub fn krippendorff_alpha<R: AsRef<[Option<f64>]>>(units: &[R], level: AlphaLevel) -> Option<f64> {
    UnitTally::of(units).alpha(level)
}

/// Fleiss' κ for units each rated by the same number of raters. That number is the most
/// ratings any unit has; units with fewer ratings (a missing rating) are skipped and counted in
/// [`FleissKappa::skipped`]. Which rater gave which rating does not matter.
pub fn fleiss_kappa<R: AsRef<[Option<f64>]>>(units: &[R]) -> FleissKappa {
    UnitTally::of(units).fleiss()
}

/// Units counted by their ratings: neither α nor Fleiss' κ depends on which rater gave which
/// rating, so a unit is its sorted ratings, and units with the same ratings are one entry
/// with a count. Memory follows the distinct rating patterns (a handful for coded
/// categories), not the units: a million items' ensemble votes are added one at a time.
#[derive(Debug, Clone, Default)]
pub struct UnitTally {
    /// Sorted ratings (as bits; -0.0 folded into 0.0) → how many units have them.
    units: std::collections::BTreeMap<Vec<u64>, usize>,
}

impl UnitTally {
    /// The tally of `units`, each a unit's ratings (`None`: a rater who gave none).
    pub fn of<R: AsRef<[Option<f64>]>>(units: &[R]) -> Self {
        let mut t = Self::default();
        for u in units {
            t.add(u.as_ref());
        }
        t
    }

    /// Adds one unit: its ratings, `None` where a rater gave none.
    pub fn add(&mut self, unit: &[Option<f64>]) {
        let mut ratings: Vec<f64> = unit.iter().flatten().map(|&v| v + 0.0).collect();
        ratings.sort_unstable_by(f64::total_cmp);
        *self
            .units
            .entry(ratings.into_iter().map(f64::to_bits).collect())
            .or_default() += 1;
    }

    /// Each distinct unit's sorted ratings and how many units have them.
    fn each(&self) -> impl Iterator<Item = (Vec<f64>, f64)> + '_ {
        self.units.iter().map(|(bits, &count)| {
            (
                bits.iter().map(|&b| f64::from_bits(b)).collect(),
                count as f64,
            )
        })
    }

    /// Krippendorff's α (see [`krippendorff_alpha`]).
    pub fn alpha(&self, level: AlphaLevel) -> Option<f64> {
        let pairable: Vec<(Vec<f64>, f64)> = self.each().filter(|(r, _)| r.len() >= 2).collect();
        // The distinct values and their totals n_c over pairable ratings.
        let mut distinct: Vec<f64> = pairable
            .iter()
            .flat_map(|(r, _)| r.iter().copied())
            .collect();
        distinct.sort_unstable_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            return None;
        }
        let index = |v: f64| distinct.partition_point(|&d| d < v);
        let mut totals = vec![0.0; distinct.len()];
        for (ratings, count) in &pairable {
            for &v in ratings {
                totals[index(v)] += count;
            }
        }
        let n: f64 = totals.iter().sum();
        // Ordinal distance uses cumulative totals: Σ_{g=c..k} n_g − (n_c + n_k)/2.
        let mut cumulative = vec![0.0; distinct.len() + 1];
        for (i, t) in totals.iter().enumerate() {
            cumulative[i + 1] = cumulative[i] + t;
        }
        let delta2 = |c: usize, k: usize| -> f64 {
            match level {
                AlphaLevel::Nominal => f64::from(u8::from(c != k)),
                AlphaLevel::Ordinal => {
                    let (lo, hi) = (c.min(k), c.max(k));
                    let between =
                        cumulative[hi + 1] - cumulative[lo] - f64::midpoint(totals[lo], totals[hi]);
                    between * between
                }
                AlphaLevel::Interval => (distinct[c] - distinct[k]).powi(2),
            }
        };
        // Observed: Σ_u 1/(m_u − 1) Σ_{i≠j} δ²(v_ui, v_uj).
        let mut observed = 0.0;
        for (ratings, count) in &pairable {
            let idx: Vec<usize> = ratings.iter().map(|&v| index(v)).collect();
            let mut sum = 0.0;
            for (a, &c) in idx.iter().enumerate() {
                for &k in &idx[a + 1..] {
                    sum += 2.0 * delta2(c, k);
                }
            }
            observed += count * sum / (ratings.len() - 1) as f64;
        }
        // Expected: Σ_{c,k} n_c n_k δ²(c, k).
        let expected = match level {
            AlphaLevel::Nominal => n * n - totals.iter().map(|t| t * t).sum::<f64>(),
            AlphaLevel::Interval => {
                let mean = distinct
                    .iter()
                    .zip(&totals)
                    .map(|(v, t)| v * t)
                    .sum::<f64>()
                    / n;
                let spread: f64 = distinct
                    .iter()
                    .zip(&totals)
                    .map(|(v, t)| t * (v - mean).powi(2))
                    .sum();
                2.0 * n * spread
            }
            AlphaLevel::Ordinal => {
                let mut sum = 0.0;
                for c in 0..distinct.len() {
                    for k in c + 1..distinct.len() {
                        sum += 2.0 * totals[c] * totals[k] * delta2(c, k);
                    }
                }
                sum
            }
        };
        (expected > 0.0).then(|| 1.0 - (n - 1.0) * observed / expected)
    }

    /// Fleiss' κ (see [`fleiss_kappa`]).
    pub fn fleiss(&self) -> FleissKappa {
        let all: usize = self.units.values().sum();
        let raters = self.units.keys().map(Vec::len).max().unwrap_or(0);
        let used: Vec<(Vec<f64>, f64)> = self.each().filter(|(r, _)| r.len() == raters).collect();
        let n: f64 = used.iter().map(|(_, c)| c).sum();
        let units = n as usize;
        let mut result = FleissKappa {
            kappa: None,
            raters,
            units,
            skipped: all - units,
        };
        if raters < 2 || used.is_empty() {
            return result;
        }
        let r = raters as f64;
        // Per unit: P_i = (Σ_j n_ij² − r) / (r (r − 1)); overall category shares p_j.
        let mut category_totals: Vec<(f64, f64)> = Vec::new();
        let mut mean_agreement = 0.0;
        for (ratings, count) in &used {
            let mut squares = 0.0;
            for run in ratings.chunk_by(|a, b| a == b) {
                let k = run.len() as f64;
                squares += k * k;
                match category_totals.iter_mut().find(|(v, _)| *v == run[0]) {
                    Some((_, total)) => *total += k * count,
                    None => category_totals.push((run[0], k * count)),
                }
            }
            mean_agreement += count * (squares - r) / (r * (r - 1.0));
        }
        mean_agreement /= n;
        let expected: f64 = category_totals
            .iter()
            .map(|(_, total)| (total / (n * r)).powi(2))
            .sum();
        result.kappa = (expected < 1.0).then(|| (mean_agreement - expected) / (1.0 - expected));
        result
    }
}

/// Fleiss' κ with the units it used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FleissKappa {
    /// Undefined with no usable unit, fewer than 2 raters, or when every rating is the same
    /// category (expected agreement 1).
    pub kappa: Option<f64>,
    /// Ratings per unit: the most any unit has.
    pub raters: usize,
    /// Units with that many ratings, used.
    pub units: usize,
    /// Units with fewer ratings, skipped.
    pub skipped: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: Option<f64>, expected: f64, tol: f64) {
        let a = actual.unwrap_or_else(|| panic!("expected {expected}, got undefined"));
        assert!((a - expected).abs() <= tol, "expected {expected}, got {a}");
    }

    /// Krippendorff's textbook reliability data (4 raters × 12 units, with gaps), as units.
    fn textbook() -> Vec<Vec<Option<f64>>> {
        let raters: [[Option<f64>; 12]; 4] = [
            [
                Some(1.0),
                Some(2.0),
                Some(3.0),
                Some(3.0),
                Some(2.0),
                Some(1.0),
                Some(4.0),
                Some(1.0),
                Some(2.0),
                None,
                None,
                None,
            ],
            [
                Some(1.0),
                Some(2.0),
                Some(3.0),
                Some(3.0),
                Some(2.0),
                Some(2.0),
                Some(4.0),
                Some(1.0),
                Some(2.0),
                Some(5.0),
                None,
                Some(3.0),
            ],
            [
                None,
                Some(3.0),
                Some(3.0),
                Some(3.0),
                Some(2.0),
                Some(3.0),
                Some(4.0),
                Some(2.0),
                Some(2.0),
                Some(5.0),
                Some(1.0),
                None,
            ],
            [
                Some(1.0),
                Some(2.0),
                Some(3.0),
                Some(3.0),
                Some(2.0),
                Some(4.0),
                Some(4.0),
                Some(1.0),
                Some(2.0),
                Some(5.0),
                Some(1.0),
                None,
            ],
        ];
        (0..12)
            .map(|u| raters.iter().map(|r| r[u]).collect())
            .collect()
    }

    /// Reference: `krippendorff.alpha(reliability_data, level_of_measurement=...)` on the data
    /// above (raters × units, NaN for a gap).
    #[test]
    fn alpha_matches_the_krippendorff_package() {
        let units = textbook();
        close(
            krippendorff_alpha(&units, AlphaLevel::Nominal),
            0.743_421_052_631_579,
            1e-12,
        );
        close(
            krippendorff_alpha(&units, AlphaLevel::Ordinal),
            0.815_387_503_754_881_4,
            1e-12,
        );
        close(
            krippendorff_alpha(&units, AlphaLevel::Interval),
            0.849_107_142_857_142_8,
            1e-12,
        );
    }

    /// Reference: krippendorff.alpha on 3 raters × 8 units of ordinal levels 0–3, with gaps.
    #[test]
    fn alpha_with_gaps_matches_the_krippendorff_package() {
        let units: Vec<Vec<Option<f64>>> = vec![
            vec![Some(0.0), Some(0.0), Some(1.0)],
            vec![Some(1.0), Some(1.0), None],
            vec![Some(2.0), Some(3.0), Some(3.0)],
            vec![Some(3.0), None, None],
            vec![Some(2.0), Some(2.0), Some(2.0)],
            vec![None, Some(0.0), Some(1.0)],
            vec![Some(1.0), Some(2.0), Some(1.0)],
            vec![Some(3.0), Some(3.0), Some(2.0)],
        ];
        close(
            krippendorff_alpha(&units, AlphaLevel::Nominal),
            0.318_181_818_181_818_1,
            1e-12,
        );
        close(
            krippendorff_alpha(&units, AlphaLevel::Ordinal),
            0.773_026_315_789_473_7,
            1e-12,
        );
        close(
            krippendorff_alpha(&units, AlphaLevel::Interval),
            0.745_762_711_864_406_8,
            1e-12,
        );
    }

    #[test]
    fn alpha_undefined_cases() {
        let empty: Vec<Vec<Option<f64>>> = Vec::new();
        assert_eq!(krippendorff_alpha(&empty, AlphaLevel::Nominal), None);
        // No unit has two ratings: nothing is pairable.
        let lonely = vec![vec![Some(1.0), None], vec![None, Some(2.0)]];
        assert_eq!(krippendorff_alpha(&lonely, AlphaLevel::Nominal), None);
        // Everyone always gives the same value: D_e = 0.
        let same = vec![vec![Some(2.0), Some(2.0)], vec![Some(2.0), Some(2.0)]];
        for level in [
            AlphaLevel::Nominal,
            AlphaLevel::Ordinal,
            AlphaLevel::Interval,
        ] {
            assert_eq!(krippendorff_alpha(&same, level), None);
        }
    }

    #[test]
    fn alpha_of_perfect_agreement_is_one() {
        let units = vec![
            vec![Some(1.0), Some(1.0), None],
            vec![Some(0.0), Some(0.0), Some(0.0)],
            vec![Some(3.0), None, Some(3.0)],
        ];
        for level in [
            AlphaLevel::Nominal,
            AlphaLevel::Ordinal,
            AlphaLevel::Interval,
        ] {
            close(krippendorff_alpha(&units, level), 1.0, 1e-12);
        }
    }

    /// Reference: `statsmodels.stats.inter_rater.fleiss_kappa(aggregate_raters(data)[0])` on
    /// the 10 complete units below (4 raters, categories 0–2).
    #[test]
    fn fleiss_matches_statsmodels_and_skips_incomplete_units() {
        let complete: [[f64; 4]; 10] = [
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
            [2.0, 2.0, 1.0, 2.0],
            [0.0, 1.0, 2.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [2.0, 2.0, 2.0, 2.0],
            [1.0, 0.0, 1.0, 1.0],
            [2.0, 1.0, 2.0, 2.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 2.0],
        ];
        let mut units: Vec<Vec<Option<f64>>> = complete
            .iter()
            .map(|u| u.iter().copied().map(Some).collect())
            .collect();
        units.push(vec![Some(0.0), None, Some(0.0), Some(0.0)]);
        units.push(vec![None, None, None, Some(2.0)]);
        let f = fleiss_kappa(&units);
        assert_eq!((f.raters, f.units, f.skipped), (4, 10, 2));
        close(f.kappa, 0.393_939_393_939_393_76, 1e-12);
    }

    #[test]
    fn a_tally_of_repeated_units_gives_what_the_units_give() {
        // The textbook units, each repeated 1,000 times, rater order shuffled: the same α.
        let units = textbook();
        let mut many = Vec::new();
        let mut tally = UnitTally::default();
        for k in 0..1000 {
            for u in &units {
                let mut u = u.clone();
                let len = u.len();
                u.rotate_left(k % len);
                tally.add(&u);
                many.push(u);
            }
        }
        for level in [
            AlphaLevel::Nominal,
            AlphaLevel::Ordinal,
            AlphaLevel::Interval,
        ] {
            let (a, b) = (
                tally.alpha(level).unwrap(),
                krippendorff_alpha(&many, level).unwrap(),
            );
            assert!((a - b).abs() < 1e-9, "{level:?}: {a} vs {b}");
        }
        assert!(tally.units.len() <= units.len());
        assert_eq!(tally.fleiss(), fleiss_kappa(&many));
    }

    #[test]
    fn fleiss_undefined_cases() {
        let empty: Vec<Vec<Option<f64>>> = Vec::new();
        assert_eq!(fleiss_kappa(&empty).kappa, None);
        let single = vec![vec![Some(1.0)], vec![Some(0.0)]];
        assert_eq!(fleiss_kappa(&single).kappa, None);
        let same = vec![vec![Some(1.0), Some(1.0)], vec![Some(1.0), Some(1.0)]];
        assert_eq!(fleiss_kappa(&same).kappa, None);
        let perfect = vec![vec![Some(1.0), Some(1.0)], vec![Some(0.0), Some(0.0)]];
        close(fleiss_kappa(&perfect).kappa, 1.0, 1e-12);
    }
}
