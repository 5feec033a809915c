//! A pairwise run's results as `grade` and `runs show` print them: per criterion, each
//! candidate's win / tie / loss rates with 95 % intervals, position consistency, and
//! Bradley–Terry ratings with more than two candidates. Table text and Markdown; JSON output
//! carries the report itself under `summary.pairwise`.

use std::fmt::Write as _;

use crate::metrics::pairwise::{CriterionPairs, PairwiseReport, Share};

/// `62.5% [40.9–80.0%]` (`digits` decimals), or `n/a` of nothing.
pub(crate) fn share(s: &Share, digits: usize) -> String {
    s.percent(digits)
}

fn heading(c: &CriterionPairs, digits: usize) -> String {
    let mut h = format!(
        "{}: {} pair{}, both orders agree in {}",
        c.criterion,
        c.pairs,
        if c.pairs == 1 { "" } else { "s" },
        share(&c.position_consistency, digits)
    );
    if c.unjudged > 0 {
        let _ = write!(h, " ({} left out: an order has no verdict)", c.unjudged);
    }
    h
}

fn ratings(c: &CriterionPairs) -> Option<String> {
    c.ratings_text()
}

/// The report as the table's closing lines.
pub(crate) fn table(r: &PairwiseReport) -> String {
    let width = r
        .systems
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "\nPairwise: {} (both orders judged; orders that disagree are a tie)\n",
        r.systems.join(" vs ")
    );
    for c in &r.criteria {
        let _ = writeln!(out, "  {}", heading(c, 0));
        for s in &c.systems {
            let _ = writeln!(
                out,
                "    {:<width$}  wins {}  ties {}  losses {}",
                s.id,
                share(&s.win_rate, 0),
                share(&s.tie_rate, 0),
                share(&s.loss_rate, 0)
            );
        }
        if let Some(bt) = ratings(c) {
            let _ = writeln!(out, "    Bradley–Terry (log-strength, 95% interval): {bt}");
        }
    }
    out
}

/// The report as a Markdown section.
pub(crate) fn markdown(r: &PairwiseReport) -> String {
    let mut out = format!(
        "\n### Pairwise: {} (both orders judged; an order-dependent pair is a tie)\n",
        r.systems.join(" vs ")
    );
    for c in &r.criteria {
        let _ = write!(
            out,
            "\n**{}**\n\n| candidate | wins | ties | losses |\n|---|---:|---:|---:|\n",
            heading(c, 1)
        );
        for s in &c.systems {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                super::markdown::cell(&s.id, 80),
                share(&s.win_rate, 1),
                share(&s.tie_rate, 1),
                share(&s.loss_rate, 1)
            );
        }
        if let Some(bt) = ratings(c) {
            let _ = writeln!(out, "\nBradley–Terry (log-strength, 95% interval): {bt}");
        }
    }
    out
}
