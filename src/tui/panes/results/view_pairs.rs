//! The Results pane on a pairwise run: per written criterion, how many pairs were judged,
//! how often both orders agree (position consistency) and, where they disagree, how often
//! the answer shown first won; each candidate's win / tie / loss rates with Wilson 95 %
//! intervals; Bradley–Terry ratings with more than two candidates; and κ against the
//! annotator's preferences when there are labels — the selected criterion's preference
//! confusion beneath.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use std::fmt::Write as _;

use super::ResultsPane;
use crate::metrics::pairwise::PairwiseReport;
use crate::metrics::{CriterionMetrics, MetricsReport};
use crate::tui::shared::Shared;

/// Every criterion's lines, the selected one marked and kept in view.
pub(super) fn table(
    pane: &ResultsPane,
    sh: &Shared,
    pairs: &PairwiseReport,
    report: &MetricsReport,
    f: &mut Frame<'_>,
    area: Rect,
) {
    let width = pairs
        .systems
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let mut lines = Vec::new();
    let mut focus = 0;
    for (i, c) in pairs.criteria.iter().enumerate() {
        let selected = i == pane.cursor;
        if selected {
            focus = lines.len();
        }
        let mut head = format!(
            "{} {}: {} pair{} · orders agree {}",
            if selected { "▶" } else { " " },
            c.criterion,
            c.pairs,
            if c.pairs == 1 { "" } else { "s" },
            c.position_consistency.percent(0)
        );
        if c.first_shown_wins.of > 0 {
            let _ = write!(
                head,
                " · first shown won {} when not",
                c.first_shown_wins.percent(0)
            );
        }
        if c.unjudged > 0 {
            let _ = write!(head, " · {} left out (an order has no verdict)", c.unjudged);
        }
        lines.push(Line::styled(
            head,
            if selected {
                sh.theme.selected
            } else {
                Style::new()
            },
        ));
        for s in &c.systems {
            lines.push(Line::raw(format!(
                "    {:<width$}  wins {}  ties {}  losses {}",
                s.id,
                s.win_rate.percent(0),
                s.tie_rate.percent(0),
                s.loss_rate.percent(0)
            )));
        }
        if let Some(bt) = c.ratings_text() {
            lines.push(Line::raw(format!("    Bradley–Terry: {bt}")));
        }
        if let Some(k) = kappa_line(report, &c.criterion, &sh.annotator) {
            lines.push(Line::styled(k, sh.theme.muted));
        }
    }
    // The selected criterion's first line and its candidates in view.
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = (focus + pairs.systems.len() + 2)
        .saturating_sub(height)
        .min(focus);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(Block::new().borders(Borders::ALL).title(format!(
                " Pairs: {} (orders that disagree are a tie) ",
                pairs.systems.join(" vs ")
            ))),
        area,
    );
}

/// `    κ vs alice's preferences 0.50 (30 items)`, once the annotator labelled some pairs.
fn kappa_line(report: &MetricsReport, criterion: &str, annotator: &str) -> Option<String> {
    let r = report.criteria.iter().find(|r| r.criterion == criterion)?;
    let CriterionMetrics::Nominal(m) = &r.metrics else {
        return None;
    };
    if m.metrics.support == 0 {
        return None;
    }
    Some(format!(
        "    κ vs {annotator}'s preferences {} · agree {} ({} items)",
        super::view::figure(m.metrics.kappa).trim(),
        super::view::figure(m.metrics.accuracy).trim(),
        m.metrics.support
    ))
}
