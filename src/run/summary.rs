//! A run's totals: items, passes, scores, cells and failures, added up one evaluation at
//! a time (so they never need the run in memory), and the one-line summary every front
//! end prints.

use std::fmt::Write as _;

use crate::model::Evaluation;
use crate::store::runs::Totals;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub items: usize,
    pub passed: usize,
    pub incomplete: usize,
    /// Items with cells still to come (in a batch, or a run that stopped): counted in
    /// `incomplete` too.
    pub pending: usize,
    pub unscored: usize,
    pub score_sum: f64,
    pub cells: usize,
    pub failed_cells: usize,
    /// Each tag's item scores (only for rubrics whose criteria carry tags).
    pub tags: std::collections::BTreeMap<String, Vec<f64>>,
}

/// A tag's score over the items: the mean of its item scores, with a bootstrap interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TagScore {
    pub tag: String,
    pub mean: f64,
    pub items: usize,
    pub ci: Option<crate::metrics::Ci>,
}

/// How a part of the summary line reads, for front ends that colour it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Bad,
    Warn,
}

impl Summary {
    pub fn add(&mut self, e: &Evaluation) {
        self.items += 1;
        self.passed += usize::from(e.passed);
        self.incomplete += usize::from(e.incomplete);
        self.pending += usize::from(!e.pending.is_empty());
        match e.score {
            Some(s) => self.score_sum += s,
            None => self.unscored += 1,
        }
        self.cells += e.results.len();
        self.failed_cells += e.failures;
        for (t, v) in &e.tags {
            self.tags.entry(t.clone()).or_default().push(*v);
        }
    }

    /// Each tag's mean over the items and its percentile bootstrap 95 % interval.
    pub fn tag_scores(&self, resamples: usize) -> Vec<TagScore> {
        tag_scores(&self.tags, resamples)
    }

    /// `tags: axis:accuracy 0.620 [0.551, 0.690] · theme:emergency …`, or `None` without tags.
    pub fn tags_line(&self, resamples: usize) -> Option<String> {
        let scores = self.tag_scores(resamples);
        (!scores.is_empty()).then(|| tags_text(&scores, 3))
    }

    /// Mean score over all items, unscored items counting 0.
    pub fn mean_score(&self) -> Option<f64> {
        (self.items > 0).then(|| self.score_sum / self.items as f64)
    }

    pub fn error_rate(&self) -> f64 {
        if self.cells == 0 {
            0.0
        } else {
            self.failed_cells as f64 / self.cells as f64
        }
    }

    /// `5 items: 3 passed, 2 failed · mean score 0.704 · 0 of 20 criterion results failed (0.0%)`
    pub fn line(&self) -> String {
        self.line_styled(&|_, text| text.to_owned())
    }

    /// The line with each counted part passed through `paint` (only when it is non-zero).
    pub fn line_styled(&self, paint: &dyn Fn(Tone, &str) -> String) -> String {
        // An item still waiting for a cell has not failed (it is counted as incomplete).
        let failed = self.items.saturating_sub(self.passed + self.pending);
        let mean = self
            .mean_score()
            .map_or_else(|| "n/a".into(), |m| format!("{m:.3}"));
        let plain = |tone, text: String, on: bool| if on { paint(tone, &text) } else { text };
        let passed = plain(
            Tone::Good,
            format!("{} passed", self.passed),
            self.passed > 0,
        );
        let failed = plain(Tone::Bad, format!("{failed} failed"), failed > 0);
        let mut s = format!("{} items: {passed}, {failed}", self.items);
        if self.incomplete > 0 {
            let _ = write!(
                s,
                ", {}",
                paint(Tone::Warn, &format!("{} incomplete", self.incomplete))
            );
            if self.pending > 0 {
                let _ = write!(s, " ({} with cells still to come)", self.pending);
            }
        }
        let _ = write!(
            s,
            " · mean score {mean} · {} of {} criterion results failed ({:.1}%)",
            self.failed_cells,
            self.cells,
            self.error_rate() * 100.0
        );
        s
    }

    /// The manifest's totals: these counts, and the tokens and cost spent.
    pub fn totals(&self, input_tokens: u64, output_tokens: u64, cost: f64) -> Totals {
        Totals {
            items: self.items,
            passed: self.passed,
            incomplete: self.incomplete,
            pending: self.pending,
            cells: self.cells,
            failed_cells: self.failed_cells,
            mean_score: self.mean_score(),
            input_tokens,
            output_tokens,
            cost,
        }
    }
}

/// Each tag's mean over its items' scores and its percentile bootstrap 95 % interval
/// (`HealthBench` reports its axes and themes so).
pub fn tag_scores(
    tags: &std::collections::BTreeMap<String, Vec<f64>>,
    resamples: usize,
) -> Vec<TagScore> {
    let options = crate::metrics::Bootstrap {
        resamples,
        ..crate::metrics::Bootstrap::default()
    };
    tags.iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(tag, values)| {
            let mean = |xs: &[&f64]| {
                (!xs.is_empty()).then(|| xs.iter().copied().sum::<f64>() / xs.len() as f64)
            };
            TagScore {
                tag: tag.clone(),
                mean: values.iter().sum::<f64>() / values.len() as f64,
                items: values.len(),
                ci: crate::metrics::bootstrap(values, &options, mean),
            }
        })
        .collect()
}

/// `tags: axis:accuracy 0.620 [0.551, 0.690] · …` with `digits` decimals.
pub fn tags_text(scores: &[TagScore], digits: usize) -> String {
    let parts: Vec<String> = scores
        .iter()
        .map(|t| match t.ci {
            Some(ci) => format!(
                "{} {:.digits$} [{:.digits$}, {:.digits$}]",
                t.tag, t.mean, ci.low, ci.high
            ),
            None => format!("{} {:.digits$}", t.tag, t.mean),
        })
        .collect();
    format!("tags: {}", parts.join(" · "))
}
