//! The Grade pane: the set-up (rubric, judge, dry-run estimate) and then the live grid —
//! rows items, columns criteria, cells `·` queued, `…` streaming, `✓`/`~`/`✗` by value, `!`
//! failed — with the selected cell's streamed text or verdict and reason beside it, and a
//! header of progress, throughput (with a sparkline), tokens, cost, errors and ETA.

use std::fmt::Write as _;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline, Wrap};

use super::GradePane;
use super::{Cell, GridRun};
use crate::tui::msg::RunEnd;
use crate::tui::shared::Shared;
use crate::tui::widgets::LineInput;

pub fn draw(pane: &GradePane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    match &pane.run {
        Some(run) => grid(sh, run, f, area),
        None => setup(pane, sh, f, area),
    }
}

/// The set-up: the dataset, the judge, strategy, cost limit, run name and call mode, the
/// rubric to choose, an unfinished run to continue, the estimate and a large run's
/// confirmation.
fn setup(pane: &GradePane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let inner_width = area.width.saturating_sub(2);
    let (mut lines, typing) = settings_lines(pane, sh, inner_width);
    lines.extend(rubric_choices(pane, sh));
    lines.extend(unfinished_run_lines(pane, sh));
    lines.push(Line::raw(""));
    lines.push(Line::raw(match (&pane.estimating, &pane.estimate) {
        (Some(0), _) => "estimating… (q still quits)".to_owned(),
        (Some(n), _) => format!("estimating… {n} items walked (q still quits)"),
        (None, Some(e)) => format!("estimate: {e}"),
        (None, None) => "e: dry-run estimate (calls, tokens, cost; nothing is sent) · enter: grade all · u: only what changed since the last run of this rubric".into(),
    }));
    if let Some(c) = &pane.confirm {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("This run is large: {}. Start it? y yes · n no", c.text),
            sh.theme.disagree,
        ));
    }
    // The terminal's cursor in the field being typed: below the lines before it, as
    // they wrap.
    if let Some((at, x)) = typing {
        let above = Paragraph::new(lines[..at].to_vec())
            .wrap(Wrap { trim: false })
            .line_count(inner_width);
        let row = u16::try_from(above).unwrap_or(u16::MAX);
        if row < area.height.saturating_sub(2) {
            f.set_cursor_position((area.x + 1 + x, area.y + 1 + row));
        }
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(" Grade ")),
        area,
    );
}

/// The set-up's settings, one a line with the key that changes it (a field being typed
/// shows its text and cursor): dataset, judge, strategy, cost limit, run name, calls.
fn settings_lines(
    pane: &GradePane,
    sh: &Shared,
    width: u16,
) -> (Vec<Line<'static>>, Option<(usize, u16)>) {
    let dataset = sh
        .browse
        .as_ref()
        .and_then(|b| sh.datasets.get(b.dataset))
        .map_or_else(
            || "— open one in the Datasets pane".into(),
            |d| d.name.clone(),
        );
    // A field being typed: its line, and where the cursor is in it.
    let mut typing = None;
    let mut field = |row: usize, input: &LineInput, prefix: &str, suffix: &str| {
        let (line, x) = input.line(prefix, suffix, width);
        typing = Some((row, x));
        line
    };
    let judge = match &pane.judge_input {
        Some(t) => field(1, t, "judge    ", " (enter keeps, esc drops)"),
        None => Line::raw(format!(
            "judge    {}  (m to type one)",
            pane.judge.as_deref().unwrap_or(
                "none set: the rubric's judge.model, or `judge: {model: …}` in rubricate.yaml"
            )
        )),
    };
    let cost = match (&pane.max_cost_input, pane.max_cost) {
        (Some(t), _) => field(
            3,
            t,
            "cost limit $",
            " (enter keeps, empty for none, esc drops)",
        ),
        (None, Some(c)) => Line::raw(format!(
            "cost limit ${c:.2}  ($ to change; needs prices for every judge)"
        )),
        (None, None) => Line::raw("cost limit none  ($ to set one)"),
    };
    let name = match &pane.name_input {
        Some(t) => field(
            4,
            t,
            "run name ",
            " (enter keeps, empty for `ui`, esc drops)",
        ),
        None => Line::raw(format!(
            "run name {}  (n to name it)",
            pane.name.as_deref().unwrap_or("ui")
        )),
    };
    let lines = vec![
        Line::styled(format!("dataset  {dataset}"), sh.theme.header),
        judge,
        Line::raw(format!(
            "strategy {}  (t for the next)",
            pane.strategy
                .map_or("the rubric's (else per criterion)", |s| s.as_str())
        )),
        cost,
        name,
        Line::raw(if pane.batch {
            "calls    provider batches: about half the price, within 24 h  (b for live)"
        } else {
            "calls    live  (b for the providers' batch engines: about half the price)"
        }),
        Line::raw(""),
    ];
    (lines, typing)
}

/// The rubrics to grade with, the chosen one highlighted, and last each item's own.
fn rubric_choices(pane: &GradePane, sh: &Shared) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("rubric (↑/↓ to choose):", sh.theme.header)];
    if sh.rubric_files.is_empty() {
        lines.push(Line::raw("  no rubric files in rubrics/"));
    }
    let names = sh.rubric_files.iter().map(|r| {
        r.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    });
    // The last choice: each item's own rubric (an agentv eval's cases carry theirs).
    let own =
        std::iter::once("each item's own rubric (agentv evals, datasets with one)".to_owned());
    for (i, name) in names.chain(own).enumerate() {
        let style = if i == pane.rubric {
            sh.theme.selected
        } else {
            Style::new()
        };
        lines.push(Line::styled(format!("  {name}"), style));
    }
    lines
}

/// The latest run when it is not finished: in provider batches (with what they last
/// said) or unfinished, and the key that continues it. Empty when there is none.
fn unfinished_run_lines(pane: &GradePane, sh: &Shared) -> Vec<Line<'static>> {
    if let Some(id) = pane.unfinished_batch_run(sh) {
        let said = pane
            .batch_status
            .as_ref()
            .filter(|s| s.run_id == id)
            .map_or_else(
                || "not asked about since the UI started".into(),
                |s| match &s.shown {
                    Ok(shown) => format!(
                        "{}{}",
                        shown.line,
                        shown
                            .cells
                            .map(|c| format!(", {c} cells in the journal"))
                            .unwrap_or_default()
                    ),
                    Err(e) => format!("the last ask failed: {e}"),
                },
            );
        vec![
            Line::raw(""),
            Line::styled(
                format!("the latest run {id} is in provider batches: {said} · c asks now"),
                sh.theme.disagree,
            ),
        ]
    } else if let Some(r) = sh
        .browse
        .as_ref()
        .and_then(|b| b.run.as_ref())
        .filter(|r| r.manifest.finished_at.is_none())
    {
        vec![
            Line::raw(""),
            Line::styled(
                format!(
                    "the latest run {} is unfinished: c continues it",
                    r.manifest.id
                ),
                sh.theme.disagree,
            ),
        ]
    } else {
        Vec::new()
    }
}

/// The live run: its numbers and throughput sparkline on top, the items × criteria grid
/// below beside the selected cell.
fn grid(sh: &Shared, run: &GridRun, f: &mut Frame<'_>, area: Rect) {
    let [header, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(3)]).areas(area);
    run_header(sh, run, f, header);
    let [table, side] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(body);
    cell_table(sh, run, f, table);
    cell_detail(sh, run, f, side);
}

/// The run's header: its state, progress, throughput, tokens, cost, errors and ETA,
/// beside a sparkline of cells per second.
fn run_header(sh: &Shared, run: &GridRun, f: &mut Frame<'_>, area: Rect) {
    let [numbers, spark] =
        Layout::horizontal([Constraint::Min(40), Constraint::Length(30)]).areas(area);
    let total = run
        .items_total
        .map_or_else(|| "?".into(), |t| t.to_string());
    let state = match (&run.end, run.finished) {
        (Some(RunEnd::Unfinished(why)), _) => {
            format!("stopped: {why} · unfinished (c in the set-up continues it)")
        }
        (_, true) => "finished".to_owned(),
        _ if run.cancelled => "cancelling".to_owned(),
        _ if run.paused => match run.in_flight {
            Some(0) => "paused (nothing in flight)".to_owned(),
            Some(n) => format!("pausing: {n} calls still in flight"),
            None => "paused".to_owned(),
        },
        _ => "running".to_owned(),
    };
    let eta = run
        .eta(sh.now)
        .map_or_else(|| "-".into(), |s| format!("{s:.0}s"));
    // Money only once some was spent (a run without prices costs nothing we know of).
    let cost = if run.cost > 0.0 {
        format!(" · ${:.4}", run.cost)
    } else {
        String::new()
    };
    let text = format!(
        "{state} · {}/{total} items · {} cells · {:6.1} cells/s · {} tokens{cost} · {} errors · ETA {eta}",
        run.items_done,
        run.cells_done,
        run.rate(sh.now),
        run.tokens,
        run.failures
    );
    f.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" run {} ", run.run_id)),
        ),
        numbers,
    );
    let data: Vec<u64> = run.throughput.iter().copied().collect();
    f.render_widget(
        Sparkline::default()
            .data(&data)
            .block(Block::new().borders(Borders::ALL).title(" cells/s ")),
        spark,
    );
}

/// The grid: a row per item (the rows in view, the selected one always among them), a
/// column per criterion (as many as fit, the selected one among them), each cell a
/// symbol coloured by its verdict.
fn cell_table(sh: &Shared, run: &GridRun, f: &mut Frame<'_>, table: Rect) {
    let height = usize::from(table.height.saturating_sub(3));
    let width = usize::from(table.width.saturating_sub(2));
    let id_width = 14usize;
    let fit = ((width.saturating_sub(id_width)) / 3).max(1);
    let first_col = run.cursor.1.saturating_sub(fit.saturating_sub(1));
    let cols: Vec<usize> = (first_col..run.criteria.len()).take(fit).collect();
    let mut lines = Vec::with_capacity(height + 1);
    let mut head = format!("{:<id_width$}", "ITEM");
    for &c in &cols {
        let name: String = run.criteria[c].chars().take(2).collect();
        let _ = write!(head, "{name:<3}");
    }
    lines.push(Line::styled(head, sh.theme.header));
    // The selected row is always drawn: the grid is shorter than the list the cursor's
    // offset was kept for (its header and the run's numbers take rows).
    let rows = height.max(1);
    let offset = if run.cursor.0 < run.offset {
        run.cursor.0
    } else if run.cursor.0 >= run.offset + rows {
        run.cursor.0 + 1 - rows
    } else {
        run.offset
    };
    for r in offset..(offset + rows).min(run.rows.len()) {
        let Some(row) = &run.rows[r] else {
            lines.push(Line::raw(format!("{:<id_width$}", format!("#{}", r + 1))));
            continue;
        };
        let mut spans = vec![Span::raw(format!(
            "{:<id_width$}",
            crate::tui::view::preview(&row.id, id_width - 1)
        ))];
        for &c in &cols {
            // An item graded with its own rubric may have fewer criteria than the columns.
            let Some(cell) = row.cells.get(c) else {
                spans.push(Span::raw("   "));
                continue;
            };
            let penalty = run.penalties.get(c).copied().unwrap_or(false);
            let style = if (r, c) == run.cursor {
                sh.theme.selected
            } else {
                match (cell, cell.good(penalty)) {
                    (_, Some(true)) => sh.theme.met,
                    (_, Some(false)) => sh.theme.unmet,
                    (Cell::Failed(_), _) => sh.theme.disagree,
                    (Cell::Queued, _) => sh.theme.muted,
                    _ => Style::new(),
                }
            };
            spans.push(Span::styled(format!(" {} ", cell.symbol(penalty)), style));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" items × criteria "),
        ),
        table,
    );
}

/// The selected cell: queued, the judge's text as it streams, the verdict and reason, or
/// the failure and how to retry it.
fn cell_detail(sh: &Shared, run: &GridRun, f: &mut Frame<'_>, side: Rect) {
    let (r, c) = run.cursor;
    let cell = run
        .rows
        .get(r)
        .and_then(Option::as_ref)
        .and_then(|row| row.cells.get(c).map(|cell| (row, cell)));
    let criterion = run.criteria.get(c).map_or("", String::as_str);
    let detail = match cell {
        None => vec![Line::raw("waiting for the first item…")],
        Some((row, cell)) => {
            let mut out = vec![Line::styled(
                format!("{} · {criterion}", row.id),
                sh.theme.header,
            )];
            match cell {
                Cell::Queued => out.push(Line::raw("queued")),
                Cell::Streaming(_) => {
                    out.push(Line::raw("the judge is writing:"));
                    out.extend(run.stream.lines().map(|l| Line::raw(l.to_owned())));
                }
                Cell::Done {
                    verdict, reason, ..
                } => {
                    out.push(Line::raw(format!("verdict: {verdict}")));
                    out.extend(reason.lines().map(|l| Line::raw(l.to_owned())));
                }
                Cell::Failed(m) => {
                    out.push(Line::styled("failed:", sh.theme.disagree));
                    out.push(Line::raw(m.clone()));
                    out.push(Line::raw(
                        "r retries this cell, A every failed cell (once the run ends)",
                    ));
                }
            }
            out
        }
    };
    f.render_widget(
        Paragraph::new(detail)
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(" cell ")),
        side,
    );
}
