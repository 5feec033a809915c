//! The Markdown report of a run (`--format md`, and a GitHub job's summary): the figures,
//! the gates, the comparison with a baseline (regressions first), then the items that did
//! not pass, lowest score first, with the criteria that cost them and why.

use std::fmt::Write as _;

use crate::core::text::clipped;
use crate::model::{Evaluation, Rubric, met_as_wanted};
use crate::run::Summary;

use super::gates::{Findings, gates_md};

/// Items a Markdown report lists: the lowest-scoring of those that did not pass.
const WORST: usize = 20;

/// The report, built as items arrive (only the worst rows are kept).
#[derive(Debug)]
pub(crate) struct MdReport {
    suite: String,
    penalties: Vec<String>,
    /// Lowest score first, at most [`WORST`].
    worst: Vec<(f64, String)>,
}

/// The main rubric's penalties: its negative-weight criteria's ids.
pub(crate) fn penalty_ids(rubric: Option<&Rubric>) -> Vec<String> {
    rubric
        .map(|r| {
            r.criteria
                .iter()
                .filter(|c| c.weight < 0.0)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

impl MdReport {
    /// `suite` names the run in the title; `rubric` is the main one.
    pub(crate) fn new(suite: &str, rubric: Option<&Rubric>) -> Self {
        Self {
            suite: suite.to_owned(),
            penalties: penalty_ids(rubric),
            worst: Vec::new(),
        }
    }

    /// One graded item.
    pub(crate) fn add(&mut self, e: &Evaluation) {
        // An item still waiting for cells (a saved run's) has not failed: counted apart.
        if e.passed || !e.pending.is_empty() {
            return;
        }
        let key = e.score.unwrap_or(-1.0);
        if self.worst.len() < WORST || self.worst.last().is_some_and(|(w, _)| key < *w) {
            let row = row(e, &self.penalties);
            let at = self.worst.partition_point(|(w, _)| *w <= key);
            self.worst.insert(at, (key, row));
            self.worst.truncate(WORST);
        }
    }

    /// The whole report.
    pub(crate) fn render(&self, s: &Summary, findings: &Findings) -> String {
        // Items still waiting for cells (a saved run's) are not among the failures.
        let failed = s.items - s.passed - s.pending;
        #[allow(clippy::cast_precision_loss)] // counts of items
        let rate = if s.items == 0 {
            0.0
        } else {
            100.0 * s.passed as f64 / s.items as f64
        };
        let verdict = if findings.failed() {
            "❌ "
        } else if findings.gates.is_empty() && findings.baseline.is_none() {
            ""
        } else {
            "✅ "
        };
        let mut out = format!(
            "## {verdict}rubricate: {}\n\n| items | passed | not passed | incomplete | mean score |\n|---:|---:|---:|---:|---:|\n| {} | {} ({rate:.1}%) | {} | {} | {} |\n",
            cell(&self.suite, 80),
            s.items,
            s.passed,
            s.items - s.passed,
            s.incomplete,
            s.mean_score()
                .map_or_else(|| "n/a".into(), |m| format!("{:.1}%", m * 100.0)),
        );
        if let Some(tags) = s.tags_line(1000) {
            let _ = write!(out, "\n{}\n", cell(&tags, 1000));
        }
        if s.pending > 0 {
            let _ = write!(
                out,
                "\n**The run is unfinished**: cells are still to come for {} (counted incomplete, not failed).\n",
                crate::engine::checks::plural(s.pending, "item")
            );
        }
        out.push_str(&gates_md(&findings.gates));
        if let Some(b) = &findings.baseline {
            out.push('\n');
            out.push_str(&b.md);
        }
        if !self.worst.is_empty() {
            // "The 1 item that did not pass", not "1 lowest-scoring of the 1 items".
            let heading = if self.worst.len() == failed {
                format!(
                    "The {} that did not pass",
                    crate::engine::checks::plural(failed, "item")
                )
            } else {
                format!(
                    "{} lowest-scoring of the {failed} items that did not pass",
                    self.worst.len()
                )
            };
            let _ = write!(
                out,
                "\n### {heading}\n\n| item | score | what cost it |\n|---|---:|---|\n"
            );
            for (_, row) in &self.worst {
                out.push_str(row);
            }
        }
        out
    }
}

/// Text in a Markdown table cell: one line, its pipes escaped, cut.
pub(crate) fn cell(text: &str, chars: usize) -> String {
    let one: String = crate::core::text::visible(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    clipped(&one, chars)
}

/// The criteria that cost an item points (failed, below full marks, or a penalty
/// applied), each with its reason: `(criterion, why)`.
pub(crate) fn what_cost<'e>(
    e: &'e Evaluation,
    penalties: &[String],
) -> impl Iterator<Item = (&'e str, String)> {
    e.results
        .iter()
        .filter(|r| {
            r.failure.is_some()
                || r.value
                    .is_some_and(|v| !met_as_wanted(v, penalties.contains(&r.criterion_id)))
        })
        .map(|r| match &r.failure {
            Some(f) => (r.criterion_id.as_str(), format!("failed: {}", f.category)),
            None => (r.criterion_id.as_str(), r.reason.clone()),
        })
}

/// One item that did not pass: its score, and each criterion that cost it points with why.
fn row(e: &Evaluation, penalties: &[String]) -> String {
    let score = e
        .score
        .map_or_else(|| "n/a".into(), |s| format!("{:.1}%", s * 100.0));
    let why: Vec<String> = what_cost(e, penalties)
        .map(|(id, why)| format!("**{}**: {}", cell(id, 60), cell(&why, 120)))
        .collect();
    format!(
        "| {} | {score} | {} |\n",
        cell(&e.target_id, 40),
        if why.is_empty() {
            "—".to_owned()
        } else {
            why.join("<br>")
        }
    )
}
