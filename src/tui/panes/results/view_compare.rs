//! The Compare view (in Results): two runs side by side — per criterion the full-marks rate
//! and agreement with the labels in each and how many verdicts changed, then the items
//! whose score changed most, regressions first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::ResultsPane;
use super::view::{figure, kappa, state_note, stats};
use crate::model::Criterion;
use crate::tui::data::RunData;
use crate::tui::run_scan::Comparison;
use crate::tui::shared::Shared;

/// Two runs side by side: per criterion the full-marks rate and agreement with the labels
/// in each, and how many verdicts changed; then the items whose score changed most,
/// regressions (passed in A, not in B) first.
pub fn draw(
    pane: &ResultsPane,
    sh: &Shared,
    a: &RunData,
    b: &RunData,
    f: &mut Frame<'_>,
    area: Rect,
) {
    // Runs of different rubrics share only some criteria, and their scores mean different
    // things: only the shared criteria are compared, and no item is called a regression.
    let same_rubric = a.manifest.rubric_id == b.manifest.rubric_id;
    let shared: Vec<(usize, &Criterion)> = b
        .rubric
        .criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| a.rubric.criteria.iter().any(|x| x.id == c.id))
        .collect();
    let head = heading(pane, sh, a, b, same_rubric, shared.len());
    let [top, table, items] = Layout::vertical([
        Constraint::Length(u16::try_from(head.len() + 2).unwrap_or(4)),
        Constraint::Min(5),
        Constraint::Min(5),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(head).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" Compare (A: [ older · ] newer · B: { older · } newer · c off) "),
        ),
        top,
    );
    let comparison = pane.shown_comparison(sh);
    f.render_widget(
        Paragraph::new(criteria_lines(sh, a, b, &shared, comparison))
            .block(Block::new().borders(Borders::ALL).title(" Criteria ")),
        table,
    );
    if !same_rubric {
        f.render_widget(
            Paragraph::new(
                "the runs grade with different rubrics: their item scores are not compared",
            )
            .block(Block::new().borders(Borders::ALL).title(" Items ")),
            items,
        );
        return;
    }
    // Worked out by a pass over both runs in the runtime.
    let Some(comparison) = comparison else {
        f.render_widget(
            Paragraph::new("comparing the runs item by item…")
                .block(Block::new().borders(Borders::ALL).title(" Items ")),
            items,
        );
        return;
    };
    moved_items(pane, sh, comparison, f, items);
}

/// The heading: which runs A and B are (their rubric, how far back, their state), and a
/// warning when their rubrics differ.
fn heading(
    pane: &ResultsPane,
    sh: &Shared,
    a: &RunData,
    b: &RunData,
    same_rubric: bool,
    shared: usize,
) -> Vec<Line<'static>> {
    let mut head = vec![
        Line::raw(format!(
            "A = {} ({}, {} back{})",
            a.manifest.id,
            a.manifest.rubric_label(),
            pane.compare_back,
            state_note(&a.manifest)
        )),
        Line::raw(format!(
            "B = {} ({}, {}{})",
            b.manifest.id,
            b.manifest.rubric_label(),
            if pane.compare_b.is_some() {
                format!("{} back", pane.compare_b_back)
            } else {
                "the latest".to_owned()
            },
            state_note(&b.manifest)
        )),
    ];
    if !same_rubric {
        head.push(Line::styled(
            format!(
                "different rubrics: only the {shared} criteria both have are compared; item scores are not"
            ),
            sh.theme.disagree,
        ));
    }
    head
}

/// The criteria table: per shared criterion the full-marks rate in A and B, its change,
/// κ in each, and how many verdicts changed (`…` until the comparison is worked out).
fn criteria_lines(
    sh: &Shared,
    a: &RunData,
    b: &RunData,
    shared: &[(usize, &Criterion)],
    comparison: Option<&Comparison>,
) -> Vec<Line<'static>> {
    let (sa, sb) = (stats(sh, a), stats(sh, b));
    let (ra, rb) = (&sa.report, &sb.report);
    let mut lines = vec![Line::styled(
        format!(
            "{:<22} {:>7} {:>7} {:>7} {:>6} {:>6} {:>8}",
            "CRITERION", "A FULL", "B FULL", "Δ", "κ A", "κ B", "CHANGED"
        ),
        sh.theme.header,
    )];
    for &(i, c) in shared {
        let ia = a.rubric.criteria.iter().position(|x| x.id == c.id);
        let fa = ia.and_then(|i| sa.full.get(i)).copied().unwrap_or(0.0);
        let fb = sb.full.get(i).copied().unwrap_or(0.0);
        let changed = comparison.map_or_else(
            || "…".to_owned(),
            |x| x.changed.get(&c.id).copied().unwrap_or(0).to_string(),
        );
        lines.push(Line::raw(format!(
            "{:<22} {:>6.0}% {:>6.0}% {:>+7.1} {} {} {:>8}",
            crate::tui::view::preview(&c.name, 22),
            fa * 100.0,
            fb * 100.0,
            (fb - fa) * 100.0,
            figure(ia.and_then(|i| kappa(ra, i))),
            figure(kappa(rb, i)),
            changed
        )));
    }
    lines
}

/// The items whose score changed, regressions first, the selected one marked and kept in
/// view.
fn moved_items(
    pane: &ResultsPane,
    sh: &Shared,
    comparison: &Comparison,
    f: &mut Frame<'_>,
    items: Rect,
) {
    let moved = &comparison.moved;
    let mut lines = vec![Line::styled(
        if comparison.moved_total > moved.len() {
            format!(
                "{} items changed; regressions first (the {} that changed most listed)",
                comparison.moved_total,
                moved.len()
            )
        } else {
            format!("{} items changed; regressions first", moved.len())
        },
        sh.theme.header,
    )];
    let rows = usize::from(items.height.saturating_sub(3)).max(1);
    let selected = pane.compare_cursor.min(moved.len().saturating_sub(1));
    let first = (selected + 1).saturating_sub(rows);
    for (i, (id, d, regression, _)) in moved.iter().enumerate().skip(first).take(rows) {
        let style = if i == selected {
            sh.theme.selected
        } else if *regression {
            sh.theme.disagree
        } else {
            Style::new()
        };
        lines.push(Line::styled(
            format!(
                "{}{id:<16} {:>+7.1} points{}",
                if i == selected { "▶ " } else { "  " },
                d * 100.0,
                if *regression { "  REGRESSION" } else { "" }
            ),
            style,
        ));
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" Items (↑/↓ · enter opens the item) "),
        ),
        items,
    );
}
