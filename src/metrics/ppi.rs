//! The figure you can quote: a judge's mean (of item scores, or of passes) over a whole
//! run, corrected by the items people labelled — prediction-powered inference (Angelopoulos
//! et al., 2023, "Prediction-powered inference", the mean estimator).
//!
//! With N items only the judge graded and n items both graded, the estimate is the judge's
//! mean over the N, minus the judge's mean error on the n (its "rectifier"):
//! `θ̂ = mean_N(f) − mean_n(f − y)`, with the normal 95 % interval
//! `θ̂ ± 1.96 · √(s²_f / N + s²_{f−y} / n)`. It is unbiased whatever the judge's bias, and
//! narrower than the people's mean alone when the judge tracks them. Everything is added up
//! in running sums (which let a label change be taken back): memory does not grow with
//! the run.

use serde::Serialize;

use super::{Ci, Z_95};

/// Running count, sum and sum of squares: a value can be taken out again (a label
/// changed), and for values in [0, 1] the variance stays exact to far below what is printed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    n: usize,
    sum: f64,
    sumsq: f64,
}

impl Sums {
    /// Adds a value.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sumsq += x * x;
    }

    /// Takes out a value added before.
    pub fn remove(&mut self, x: f64) {
        self.n = self.n.saturating_sub(1);
        self.sum -= x;
        self.sumsq -= x * x;
    }

    /// These values without `other`'s (a part of them).
    #[must_use]
    pub fn without(self, other: Sums) -> Sums {
        Sums {
            n: self.n.saturating_sub(other.n),
            sum: self.sum - other.sum,
            sumsq: self.sumsq - other.sumsq,
        }
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The sample variance (n − 1); 0 for fewer than two values.
    fn variance(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            let n = self.n as f64;
            ((self.sumsq - self.sum * self.sum / n) / (n - 1.0)).max(0.0)
        }
    }
}

/// What a corrected figure is built from, fed one item at a time.
#[derive(Debug, Clone, Default)]
pub struct Corrector {
    /// The judge's values on every item (the raw figure).
    all: Sums,
    /// The judge's values on the labelled items.
    labelled: Sums,
    /// Judge − person on the labelled items.
    rectifier: Sums,
    /// The people's values on the labelled items.
    people: Sums,
}

/// The judge's raw figure next to the corrected one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Corrected {
    /// The judge's mean over every item it graded.
    pub raw: f64,
    /// Items the judge graded.
    pub items: usize,
    /// Of them, the items people labelled too.
    pub labelled: usize,
    /// The prediction-powered estimate.
    pub corrected: f64,
    /// Its 95 % interval (cut to 0–1).
    pub ci: Ci,
    /// The judge's mean error on the labelled items (judge − people): what the correction
    /// takes away.
    pub bias: f64,
    /// The people's mean on the labelled items alone, and its 95 % interval: what one could
    /// quote without the judge.
    pub people_only: f64,
    /// Its interval (normal, 95 %).
    pub people_only_ci: Ci,
}

impl Corrector {
    /// An item the judge graded: `judge` its value, `person` the people's when labelled.
    pub fn add(&mut self, judge: f64, person: Option<f64>) {
        self.all.add(judge);
        if let Some(y) = person {
            self.label(judge, y);
        }
    }

    /// An item already added is labelled now (`person` the people's value).
    pub fn label(&mut self, judge: f64, person: f64) {
        self.labelled.add(judge);
        self.rectifier.add(judge - person);
        self.people.add(person);
    }

    /// An item's label is taken back (it was added with `judge` and `person`).
    pub fn unlabel(&mut self, judge: f64, person: f64) {
        self.labelled.remove(judge);
        self.rectifier.remove(judge - person);
        self.people.remove(person);
    }

    /// The figures; `None` until at least two items are labelled (no interval from one).
    pub fn corrected(&self) -> Option<Corrected> {
        let n = self.rectifier.n;
        if n < 2 {
            return None;
        }
        let unlabelled = self.all.without(self.labelled);
        let people_se = (self.people.variance() / n as f64).sqrt();
        let (corrected, se) = if unlabelled.n == 0 {
            // Everyone labelled everything: the people's mean is the figure.
            (self.people.mean(), people_se)
        } else {
            (
                unlabelled.mean() - self.rectifier.mean(),
                (unlabelled.variance() / unlabelled.n as f64
                    + self.rectifier.variance() / n as f64)
                    .sqrt(),
            )
        };
        Some(Corrected {
            raw: self.all.mean(),
            items: self.all.n,
            labelled: n,
            corrected,
            ci: within_shares(corrected, se),
            bias: self.rectifier.mean(),
            people_only: self.people.mean(),
            people_only_ci: within_shares(self.people.mean(), people_se),
        })
    }
}

/// `mean ± 1.96·se`, cut to [0, 1]: scores and pass rates cannot leave it.
fn within_shares(mean: f64, se: f64) -> Ci {
    Ci {
        low: (mean - Z_95 * se).clamp(0.0, 1.0),
        high: (mean + Z_95 * se).clamp(0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// By hand: unlabelled judge values 1, 0, 1, 1 (mean 0.75, s² = 0.25); labelled pairs
    /// (judge, person) (1, 0), (1, 1), (0, 0) — differences 1, 0, 0 (mean 1/3, s² = 1/3).
    /// θ̂ = 0.75 − 1/3; se = √(0.25/4 + (1/3)/3).
    #[test]
    fn matches_a_hand_computation() {
        let mut c = Corrector::default();
        for f in [1.0, 0.0, 1.0, 1.0] {
            c.add(f, None);
        }
        for (f, y) in [(1.0, 0.0), (1.0, 1.0), (0.0, 0.0)] {
            c.add(f, Some(y));
        }
        let got = c.corrected().unwrap();
        let theta = 0.75 - 1.0 / 3.0;
        let se = (0.25_f64 / 4.0 + (1.0 / 3.0) / 3.0).sqrt();
        assert!((got.corrected - theta).abs() < 1e-12);
        assert!((got.ci.low - (theta - 1.959_963_984_540_054 * se).max(0.0)).abs() < 1e-12);
        assert!((got.ci.high - (theta + 1.959_963_984_540_054 * se).min(1.0)).abs() < 1e-12);
        assert!((got.raw - 5.0 / 7.0).abs() < 1e-12);
        assert!((got.bias - 1.0 / 3.0).abs() < 1e-12);
        assert!((got.people_only - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((got.items, got.labelled), (7, 3));
    }

    #[test]
    fn a_judge_that_is_always_half_a_point_high_is_corrected_exactly() {
        let mut c = Corrector::default();
        for i in 0..1000 {
            let truth = f64::from(i % 2) * 0.5;
            c.add(truth + 0.5, (i % 10 == 0).then_some(truth));
        }
        let got = c.corrected().unwrap();
        // Every labelled item is even (truth 0): the rectifier is 0.5 exactly.
        assert!((got.bias - 0.5).abs() < 1e-12);
        assert!((got.raw - 0.75).abs() < 1e-12);
        assert!(got.corrected < got.raw);
    }

    /// Coverage of the interval, by a seeded simulation: 2,000 replicates of 2,000 items
    /// whose true pass rate is 0.6, a judge that passes 90 % of the good and 30 % of the
    /// bad (a raw rate of 0.66: biased), and 100 items labelled at random. A 95 % interval
    /// covers 0.6 in about 95 % of the replicates (the binomial spread of the count over
    /// 2,000 is ±1 point, so 93–97 % is four of them either way); the raw judge's figure
    /// would almost never.
    #[test]
    fn the_interval_covers_the_truth_about_95_percent_of_the_time() {
        use rand::rngs::ChaCha8Rng;
        use rand::{RngExt as _, SeedableRng as _};
        let mut rng = ChaCha8Rng::seed_from_u64(28);
        let (reps, items, labelled, truth) = (2000, 2000, 100, 0.6);
        let mut covered = 0;
        let mut raw_within = 0;
        for _ in 0..reps {
            let mut c = Corrector::default();
            // The labelled items: a uniform draw (items are exchangeable, so the first
            // `labelled` of a fresh sample are a random subset).
            for i in 0..items {
                let good = rng.random::<f64>() < truth;
                let passes = rng.random::<f64>() < if good { 0.9 } else { 0.3 };
                let judge = f64::from(u8::from(passes));
                let person = f64::from(u8::from(good));
                c.add(judge, (i < labelled).then_some(person));
            }
            let got = c.corrected().unwrap();
            if got.ci.low <= truth && truth <= got.ci.high {
                covered += 1;
            }
            if (got.raw - truth).abs() < 0.02 {
                raw_within += 1;
            }
        }
        let coverage = f64::from(covered) / f64::from(reps);
        eprintln!("coverage {coverage}, raw within 0.02 of the truth in {raw_within} of {reps}");
        assert!((0.93..=0.97).contains(&coverage), "coverage {coverage}");
        assert!(
            raw_within < reps / 100,
            "the raw figure is biased: {raw_within}"
        );
    }

    #[test]
    fn one_labelled_item_gives_no_figure() {
        let mut c = Corrector::default();
        c.add(1.0, Some(1.0));
        c.add(1.0, None);
        assert!(c.corrected().is_none());
    }
}
