//! The Results pane's item list: the run's items (all, or a filter's matches from a pass
//! in the runtime), each row read from the journal by position, and the selected item's
//! verdicts and reasons below.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::{ItemsView, ResultsPane};
use crate::model::Criterion;
use crate::tui::data::RunData;
use crate::tui::run_data::verdict_text;
use crate::tui::shared::Shared;

/// The run's items (filtered), the selected one's verdicts and reasons below.
pub fn item_list(
    pane: &ResultsPane,
    sh: &Shared,
    run: &RunData,
    view: &ItemsView,
    f: &mut Frame<'_>,
    list: Rect,
    detail: Rect,
) {
    let criterion = run.rubric.criteria.get(pane.cursor);
    // The matches came from a pass in the runtime; the rows on screen are read from the
    // journal (`…` until they are).
    let count = view.row_count(run);
    let mut lines = vec![Line::styled(
        format!(
            "  {:<16} {:>6} {:<5} {:<14} REASON",
            "ITEM",
            "SCORE",
            "PASS",
            criterion.map_or("", |c| c.id.as_str())
        ),
        sh.theme.header,
    )];
    let height = usize::from(list.height.saturating_sub(3)).max(1);
    let selected = view.cursor.min(count.saturating_sub(1));
    let first = (selected + 1).saturating_sub(height);
    let width = usize::from(list.width.saturating_sub(2));
    for k in first..(first + height).min(count) {
        let Some(position) = view.position(run, k) else {
            continue;
        };
        let line = crate::tui::view::cut(
            &row_text(sh, run, criterion, position, k == selected),
            width,
        );
        lines.push(if k == selected {
            Line::styled(line, sh.theme.selected)
        } else {
            Line::raw(line)
        });
    }
    if view.filtering.is_some() {
        lines.push(Line::raw("reading the run for the items the filter keeps…"));
    } else if count == 0 {
        lines.push(Line::raw("no item passes the filter (v, F change it)"));
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(list_title(run, view, criterion, count)),
        ),
        list,
    );
    item_detail(sh, run, view, selected, count, f, detail);
}

/// The list's title: how many items it shows of the run's (`…` while a filter reads the
/// run), the filter, and the keys.
fn list_title(
    run: &RunData,
    view: &ItemsView,
    criterion: Option<&Criterion>,
    count: usize,
) -> String {
    let mut filter = Vec::new();
    if let (Some(v), Some(c)) = (&view.verdict, criterion) {
        filter.push(format!("{} = {v}", c.id));
    }
    if view.failed {
        filter.push("failed cells".to_owned());
    }
    format!(
        " Items {}/{}{} (v verdict · F failed · enter open · i criteria) ",
        if view.filtering.is_some() {
            "…".to_owned()
        } else {
            count.to_string()
        },
        run.len(),
        if filter.is_empty() {
            String::new()
        } else {
            format!(" · {}", filter.join(" · "))
        }
    )
}

/// One item's row: its id, score, pass and the selected criterion's verdict and reason,
/// or its position and `…` until the journal is read there.
fn row_text(
    sh: &Shared,
    run: &RunData,
    criterion: Option<&Criterion>,
    position: usize,
    selected: bool,
) -> String {
    let marker = if selected { "▶ " } else { "  " };
    match sh.run_details.at(run, position) {
        Some(d) => {
            let cell = criterion.and_then(|c| d.cell(&c.id));
            format!(
                "{}{:<16} {:>6} {:<5} {:<14} {}",
                marker,
                crate::tui::view::preview(&d.id, 16),
                d.score
                    .map_or_else(|| "-".to_owned(), |s| format!("{:.0}%", s * 100.0)),
                if d.passed { "pass" } else { "FAIL" },
                cell.map_or_else(|| "-".to_owned(), verdict_text),
                cell.map_or("", |x| x.reason.as_str()),
            )
        }
        None => format!(
            "{}{:<16} {:>6} {:<5} {:<14} …",
            marker,
            format!("#{}", position + 1),
            "…",
            "…",
            "…"
        ),
    }
}

/// The selected item: every criterion's verdict and reason (its feedback), titled with
/// its id.
fn item_detail(
    sh: &Shared,
    run: &RunData,
    view: &ItemsView,
    selected: usize,
    count: usize,
    f: &mut Frame<'_>,
    detail: Rect,
) {
    let mut lines = Vec::new();
    let chosen = view
        .position(run, selected)
        .filter(|_| count > 0)
        .and_then(|p| sh.run_details.at(run, p));
    if view.position(run, selected).is_some() && count > 0 && chosen.is_none() {
        lines.push(Line::raw("reading its reasons…"));
    }
    if let Some(d) = chosen {
        let width = usize::from(detail.width.saturating_sub(2));
        for c in &run.rubric.criteria {
            let Some(x) = d.cell(&c.id) else {
                continue;
            };
            let reason = x
                .failure
                .as_ref()
                .map_or_else(|| x.reason.clone(), |f| f.message.clone());
            lines.push(Line::raw(crate::tui::view::cut(
                &format!("{:<14} {:<9} {reason}", c.id, verdict_text(x)),
                width,
            )));
            // A criterion judged turn by turn: each assistant turn's verdict under it.
            for t in &x.turns {
                let verdict = t
                    .verdict
                    .as_ref()
                    .map_or_else(|| "failed".to_owned(), ToString::to_string);
                let why = t
                    .failure
                    .as_ref()
                    .map_or(t.reason.as_str(), |f| f.message.as_str());
                lines.push(Line::styled(
                    crate::tui::view::cut(
                        &format!("  {:<12} {verdict:<9} {why}", format!("turn {}", t.turn)),
                        width,
                    ),
                    sh.theme.muted,
                ));
            }
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" {} ", chosen.map_or("", |d| d.id.as_str()))),
        ),
        detail,
    );
}
