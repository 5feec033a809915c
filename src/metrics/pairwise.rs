//! Results of a pairwise run, per written criterion: each candidate's win / tie / loss
//! rates with Wilson 95 % intervals, position consistency (the share of judged pairs whose
//! two orders agree) and, with more than two candidates, Bradley–Terry ratings with 95 %
//! intervals.
//!
//! A pair counts once both of its orders have a verdict; an order-dependent pair is a tie
//! (`model::pair::combine`). Bradley–Terry counts a tie as half a win for each side (not
//! the Davidson form): strengths are fitted by Hunter's MM iteration, ratings are natural-log
//! strengths centred on 0 (P(i beats j) = 1 / (1 + e^(θj − θi))), and their intervals come
//! from the observed Fisher information (its pseudo-inverse, for the centring constraint).

use serde::Serialize;

use super::{Ci, Z_95};
use crate::model::pair::{Combined, Preference, combine, pair_order, preference};
use crate::model::{CriterionResult, Rubric};

/// Counts as they arrive, one evaluation (item) at a time.
#[derive(Debug, Clone)]
pub struct PairTally {
    systems: Vec<String>,
    /// Written criterion ids, in rubric order.
    criteria: Vec<String>,
    counts: Vec<CriterionCounts>,
}

#[derive(Debug, Clone, Default)]
struct CriterionCounts {
    /// `wins[i][j]`: pairs where i beat j (ties not counted here).
    wins: Vec<Vec<usize>>,
    ties: Vec<Vec<usize>>,
    judged: usize,
    consistent: usize,
    /// Pairs with an order missing a verdict (an error, an abstention).
    unjudged: usize,
    /// Of the pairs whose orders disagree, the orders that named an answer (A or B)…
    disagreed_named: usize,
    /// …and of those, the ones that named the answer shown first.
    disagreed_first: usize,
}

impl PairTally {
    /// A tally for `rubric`, when it is a pairwise run's (expanded) rubric.
    pub fn of(rubric: &Rubric) -> Option<Self> {
        if rubric.systems.is_empty() {
            return None;
        }
        let n = rubric.systems.len();
        let mut criteria: Vec<String> = Vec::new();
        for c in &rubric.criteria {
            let Some(o) = pair_order(c) else { continue };
            if !criteria.contains(&o.criterion) {
                criteria.push(o.criterion.clone());
            }
        }
        let empty = CriterionCounts {
            wins: vec![vec![0; n]; n],
            ties: vec![vec![0; n]; n],
            ..CriterionCounts::default()
        };
        Some(Self {
            systems: rubric.systems.clone(),
            counts: vec![empty; criteria.len()],
            criteria,
        })
    }

    /// Adds one item's cells: each pair whose two orders both have a verdict.
    pub fn add(&mut self, rubric: &Rubric, results: &[CriterionResult]) {
        for c in &rubric.criteria {
            let Some(o) = pair_order(c) else { continue };
            // Each pair once: from its cell with the lower-numbered candidate first.
            if o.first > o.second {
                continue;
            }
            let Some(k) = self.criteria.iter().position(|id| *id == o.criterion) else {
                continue;
            };
            let twin = crate::model::pair::order_id(&o.criterion, o.second, o.first);
            let said = |id: &str| {
                let r = results.iter().find(|r| r.criterion_id == id)?;
                let cell = rubric.criterion(id).and_then(pair_order)?;
                preference(cell, r.verdict.as_ref()?)
            };
            let counts = &mut self.counts[k];
            let (Some(one), Some(other)) = (said(&c.id), said(&twin)) else {
                // Neither order judged yet (a cell still to come) is not a pair at all.
                if results
                    .iter()
                    .any(|r| r.criterion_id == c.id || r.criterion_id == twin)
                {
                    counts.unjudged += 1;
                }
                continue;
            };
            let Combined {
                outcome,
                consistent,
            } = combine(one, other);
            counts.judged += 1;
            counts.consistent += usize::from(consistent);
            if !consistent {
                // Which position each order's verdict picked: `c` shows o.first first, its
                // twin o.second.
                for (said, shown_first) in [(one, o.first), (other, o.second)] {
                    if let Preference::Wins(w) = said {
                        counts.disagreed_named += 1;
                        counts.disagreed_first += usize::from(w == shown_first);
                    }
                }
            }
            match outcome {
                Preference::Wins(w) => {
                    let l = if w == o.first { o.second } else { o.first };
                    counts.wins[w][l] += 1;
                }
                Preference::Tie => {
                    counts.ties[o.first][o.second] += 1;
                    counts.ties[o.second][o.first] += 1;
                }
            }
        }
    }

    /// The figures so far.
    pub fn report(&self) -> PairwiseReport {
        let n = self.systems.len();
        let criteria = self
            .criteria
            .iter()
            .zip(&self.counts)
            .map(|(id, c)| {
                let systems = (0..n)
                    .map(|i| {
                        let wins: usize = c.wins[i].iter().sum();
                        let losses: usize = (0..n).map(|j| c.wins[j][i]).sum();
                        let ties: usize = c.ties[i].iter().sum();
                        let played = wins + losses + ties;
                        SystemRecord {
                            id: self.systems[i].clone(),
                            wins,
                            ties,
                            losses,
                            win_rate: Share::of(wins, played),
                            tie_rate: Share::of(ties, played),
                            loss_rate: Share::of(losses, played),
                        }
                    })
                    .collect();
                let bradley_terry = (n > 2).then(|| bradley_terry(&self.systems, c));
                CriterionPairs {
                    criterion: id.clone(),
                    pairs: c.judged,
                    unjudged: c.unjudged,
                    position_consistency: Share::of(c.consistent, c.judged),
                    first_shown_wins: Share::of(c.disagreed_first, c.disagreed_named),
                    systems,
                    bradley_terry,
                }
            })
            .collect();
        PairwiseReport {
            systems: self.systems.clone(),
            criteria,
        }
    }
}

/// A pairwise run's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseReport {
    /// The candidates compared.
    pub systems: Vec<String>,
    /// One entry per written criterion.
    pub criteria: Vec<CriterionPairs>,
}

/// One criterion's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionPairs {
    /// The written criterion's id.
    pub criterion: String,
    /// Pairs with both orders judged.
    pub pairs: usize,
    /// Pairs with an order that has no verdict (left out of every figure).
    pub unjudged: usize,
    /// The share of judged pairs whose two orders agree.
    pub position_consistency: Share,
    /// Position bias: over the pairs whose two orders disagree, the share of the orders
    /// naming an answer that named the one shown first (½ unbiased, 1 always the first).
    pub first_shown_wins: Share,
    /// Each candidate's record over the pairs it is in.
    pub systems: Vec<SystemRecord>,
    /// With more than two candidates: ratings, or why there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bradley_terry: Option<Result<Vec<Rating>, String>>,
}

impl CriterionPairs {
    /// The Bradley–Terry ratings as one line (`a +0.46 [-0.31, +1.23]  b …`), or why there
    /// are none; `None` with two candidates.
    pub fn ratings_text(&self) -> Option<String> {
        Some(match self.bradley_terry.as_ref()? {
            Ok(r) => r
                .iter()
                .map(|x| {
                    format!(
                        "{} {:+.2} [{:+.2}, {:+.2}]",
                        x.id, x.rating, x.ci.low, x.ci.high
                    )
                })
                .collect::<Vec<_>>()
                .join("  "),
            Err(why) => format!("none ({why})"),
        })
    }
}

/// One candidate's wins, ties and losses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemRecord {
    /// The candidate.
    pub id: String,
    /// Pairs it won.
    pub wins: usize,
    /// Pairs tied (order-dependent ones included).
    pub ties: usize,
    /// Pairs it lost.
    pub losses: usize,
    /// Wins over the pairs it is in.
    pub win_rate: Share,
    /// Ties over the pairs it is in.
    pub tie_rate: Share,
    /// Losses over the pairs it is in.
    pub loss_rate: Share,
}

/// `count` of `of`, as a rate with its Wilson 95 % interval (`None` of nothing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share {
    /// How many.
    pub count: usize,
    /// Out of how many.
    pub of: usize,
    /// `count / of`.
    pub rate: Option<f64>,
    /// Its Wilson 95 % interval.
    pub ci: Option<Ci>,
}

impl Share {
    /// `62.5% [40.9–80.0%]` (`digits` decimals), or `n/a` of nothing: as every report
    /// of pairs writes a share.
    pub fn percent(&self, digits: usize) -> String {
        match (self.rate, self.ci) {
            (Some(r), Some(ci)) => format!(
                "{:.digits$}% [{:.digits$}–{:.digits$}%]",
                r * 100.0,
                ci.low * 100.0,
                ci.high * 100.0
            ),
            _ => "n/a".into(),
        }
    }

    /// The share and its Wilson score interval.
    pub fn of(count: usize, of: usize) -> Self {
        if of == 0 {
            return Self {
                count,
                of,
                rate: None,
                ci: None,
            };
        }
        #[expect(clippy::cast_precision_loss, reason = "counts of items")]
        let (k, n) = (count as f64, of as f64);
        let p = k / n;
        let z2 = Z_95 * Z_95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z_95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Self {
            count,
            of,
            rate: Some(p),
            ci: Some(Ci {
                low: (centre - half).max(0.0),
                high: (centre + half).min(1.0),
            }),
        }
    }
}

/// A candidate's Bradley–Terry rating (log-strength, centred on 0) and its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rating {
    /// The candidate.
    pub id: String,
    /// Its log-strength θ (the candidates' mean is 0).
    pub rating: f64,
    /// θ's 95 % interval.
    pub ci: Ci,
}

fn bradley_terry(systems: &[String], counts: &CriterionCounts) -> Result<Vec<Rating>, String> {
    let size = systems.len();
    // Wins with ties as half a win each side; comparisons per pair.
    #[expect(clippy::cast_precision_loss, reason = "counts of items")]
    let won = |i: usize, j: usize| counts.wins[i][j] as f64 + counts.ties[i][j] as f64 / 2.0;
    let games = |i: usize, j: usize| won(i, j) + won(j, i);
    let total: Vec<f64> = (0..size)
        .map(|i| (0..size).map(|j| won(i, j)).sum())
        .collect();
    for (i, name) in systems.iter().enumerate() {
        let played: f64 = (0..size).map(|j| games(i, j)).sum();
        if played == 0.0 {
            return Err(format!("'{name}' has no judged pair"));
        }
        if total[i] == 0.0 || total[i] == played {
            return Err(format!(
                "'{name}' {} every pair it is in (no ties), so its strength has no finite estimate",
                if total[i] == 0.0 { "loses" } else { "wins" }
            ));
        }
    }
    let mut strength = vec![1.0; size];
    for _ in 0..100_000 {
        let next: Vec<f64> = (0..size)
            .map(|i| {
                let denom: f64 = (0..size)
                    .filter(|&j| j != i)
                    .map(|j| games(i, j) / (strength[i] + strength[j]))
                    .sum();
                total[i] / denom
            })
            .collect();
        #[expect(clippy::cast_precision_loss, reason = "a handful of candidates")]
        let log_mean = next.iter().map(|x: &f64| x.ln()).sum::<f64>() / size as f64;
        let next: Vec<f64> = next.iter().map(|x| x / log_mean.exp()).collect();
        let moved = next
            .iter()
            .zip(&strength)
            .map(|(new, old)| (new.ln() - old.ln()).abs())
            .fold(0.0, f64::max);
        strength = next;
        if moved < 1e-12 {
            break;
        }
    }
    let theta: Vec<f64> = strength.iter().map(|x| x.ln()).collect();
    // Observed information: a Laplacian weighted by games · p(1 − p) per pair.
    let mut info = vec![vec![0.0; size]; size];
    for i in 0..size {
        for j in (0..size).filter(|&j| j != i) {
            let p_win = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
            let weight = games(i, j) * p_win * (1.0 - p_win);
            info[i][j] -= weight;
            info[i][i] += weight;
        }
    }
    let cov = laplacian_pinv(&info).ok_or("the pairs do not connect every candidate")?;
    Ok(systems
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let se = cov[i][i].max(0.0).sqrt();
            Rating {
                id: name.clone(),
                rating: theta[i],
                ci: Ci {
                    low: theta[i] - Z_95 * se,
                    high: theta[i] + Z_95 * se,
                },
            }
        })
        .collect())
}

/// The pseudo-inverse of a connected graph's Laplacian (null space: the constants):
/// `(L + J/n)⁻¹ − J/n`. `None` when the graph is not connected (the inverse does not exist).
fn laplacian_pinv(laplacian: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let size = laplacian.len();
    #[expect(clippy::cast_precision_loss, reason = "a handful of candidates")]
    let share = 1.0 / size as f64;
    let mut work: Vec<Vec<f64>> = laplacian
        .iter()
        .map(|row| row.iter().map(|x| x + share).collect())
        .collect();
    let mut inverse: Vec<Vec<f64>> = (0..size)
        .map(|r| (0..size).map(|c| if r == c { 1.0 } else { 0.0 }).collect())
        .collect();
    // Gauss–Jordan with partial pivoting.
    for col in 0..size {
        let pivot =
            (col..size).max_by(|&x, &y| work[x][col].abs().total_cmp(&work[y][col].abs()))?;
        if work[pivot][col].abs() < 1e-12 {
            return None;
        }
        work.swap(col, pivot);
        inverse.swap(col, pivot);
        let diagonal = work[col][col];
        for k in 0..size {
            work[col][k] /= diagonal;
            inverse[col][k] /= diagonal;
        }
        for row in (0..size).filter(|&row| row != col) {
            let factor = work[row][col];
            for k in 0..size {
                work[row][k] -= factor * work[col][k];
                inverse[row][k] -= factor * inverse[col][k];
            }
        }
    }
    Some(
        inverse
            .into_iter()
            .map(|row| row.into_iter().map(|x| x - share).collect())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(
        n: usize,
        wins: &[(usize, usize, usize)],
        ties: &[(usize, usize, usize)],
    ) -> CriterionCounts {
        let mut c = CriterionCounts {
            wins: vec![vec![0; n]; n],
            ties: vec![vec![0; n]; n],
            ..CriterionCounts::default()
        };
        for &(i, j, k) in wins {
            c.wins[i][j] += k;
        }
        for &(i, j, k) in ties {
            c.ties[i][j] += k;
            c.ties[j][i] += k;
        }
        c
    }

    /// By hand: A beats B 3–1 and C 3–1, B and C split 2–2. B and C are alike, and A's
    /// equation `W_A = Σ n·r/(r+1)` gives 6 = 8r/(r+1), so `r = p_A/p_B = 3`: `θ_A − θ_B =
    /// ln 3`, centred `θ_A = 2·ln3/3`, `θ_B = θ_C = −ln3/3`. The information matrix is
    /// [[1.5, −.75, −.75], [−.75, 1.75, −1], [−.75, −1, 1.75]] (games · ¾ · ¼ for A's pairs,
    /// 4 · ½ · ½ for B–C); its eigenvectors (2, −1, −1)/√6 (value 2.25) and (0, 1, −1)/√2
    /// (value 2.75) give `Var θ_A = (4/6)/2.25` and `Var θ_B = (1/2)/2.75 + (1/6)/2.25`.
    #[test]
    fn bradley_terry_matches_a_hand_computation() {
        let systems = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let c = counts(
            3,
            &[
                (0, 1, 3),
                (1, 0, 1),
                (0, 2, 3),
                (2, 0, 1),
                (1, 2, 2),
                (2, 1, 2),
            ],
            &[],
        );
        let r = bradley_terry(&systems, &c).unwrap();
        let ln3 = 3f64.ln();
        assert!((r[0].rating - 2.0 * ln3 / 3.0).abs() < 1e-9, "{r:?}");
        assert!((r[1].rating + ln3 / 3.0).abs() < 1e-9, "{r:?}");
        assert!((r[2].rating + ln3 / 3.0).abs() < 1e-9, "{r:?}");
        let se_a = ((4.0 / 6.0) / 2.25f64).sqrt();
        let se_b = (0.5 / 2.75 + (1.0 / 6.0) / 2.25f64).sqrt();
        assert!(
            (r[0].ci.high - r[0].rating - Z_95 * se_a).abs() < 1e-6,
            "{r:?}"
        );
        assert!(
            (r[1].rating - r[1].ci.low - Z_95 * se_b).abs() < 1e-6,
            "{r:?}"
        );
    }

    #[test]
    fn a_tie_is_half_a_win_each() {
        // a–b: 1 win each and 2 ties is 2–2 in halves; so is b–c and a–c: all equal.
        let systems = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let c = counts(
            3,
            &[
                (0, 1, 1),
                (1, 0, 1),
                (1, 2, 1),
                (2, 1, 1),
                (0, 2, 1),
                (2, 0, 1),
            ],
            &[(0, 1, 2), (1, 2, 2), (0, 2, 2)],
        );
        let r = bradley_terry(&systems, &c).unwrap();
        assert!(r.iter().all(|x| x.rating.abs() < 1e-9), "{r:?}");
        let unbeaten = counts(3, &[(0, 1, 2), (0, 2, 2), (1, 2, 1), (2, 1, 1)], &[]);
        let e = bradley_terry(&systems, &unbeaten).unwrap_err();
        assert!(e.contains("'a' wins every pair"), "{e}");
    }

    #[test]
    fn wilson_interval_by_hand() {
        // 8 of 10: centre (0.8 + z²/20)/(1 + z²/10), the textbook interval 0.490–0.943.
        let s = Share::of(8, 10);
        let ci = s.ci.unwrap();
        assert!(
            (ci.low - 0.4902).abs() < 1e-3 && (ci.high - 0.9433).abs() < 1e-3,
            "{ci:?}"
        );
        assert_eq!(Share::of(0, 0).rate, None);
    }

    /// By hand, three pairs: q0 judged A then B (consistent: not counted), q1 A then A
    /// (both name the first shown), q2 B then tie (one names an answer: the second
    /// shown). Disagreeing orders naming an answer: 3, of which the first shown: 2.
    #[test]
    fn where_the_orders_disagree_the_first_shown_share_is_counted_by_hand() {
        use crate::model::pair::{Mode, expand};
        use crate::model::{Criterion, Failure, MethodKind, Verdict};
        let mut r = Rubric::new("r", vec![Criterion::binary("acc", "Accurate", 1.0)]);
        r.mode = Mode::Pairwise;
        let x = expand(&r, &["a".to_owned(), "b".to_owned()]);
        let cell = |id: &str, v: &str| {
            let mut c = CriterionResult::failed(id, MethodKind::Judge, Failure::error("", ""));
            c.failure = None;
            c.verdict = Some(Verdict::Choice(v.into()));
            c
        };
        let mut tally = PairTally::of(&x).unwrap();
        for (ab, ba) in [("A", "B"), ("A", "A"), ("B", "tie")] {
            tally.add(&x, &[cell("acc.ab", ab), cell("acc.ba", ba)]);
        }
        let c = &tally.report().criteria[0];
        assert_eq!(
            (c.position_consistency.count, c.position_consistency.of),
            (1, 3)
        );
        assert_eq!((c.first_shown_wins.count, c.first_shown_wins.of), (2, 3));
    }
}
