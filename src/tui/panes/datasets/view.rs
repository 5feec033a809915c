//! The Datasets pane: the workspace's datasets; for an open one, a virtualized list (only
//! visible rows are read and drawn) with id, submission preview, label progress and latest
//! score, and an item detail view.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, Wrap};

use crate::tui::nav::PaneId as Pane;
use crate::tui::open_dataset::{Browse, file_verdicts, label_text};
use crate::tui::shared::Shared;
use crate::tui::view::preview;

pub fn draw(sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    match &sh.browse {
        None => list(sh, f, area),
        Some(b) if b.detail => detail(sh, b, f, area),
        Some(b) => items(sh, b, f, area),
    }
}

fn list(sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    // The first time the UI opens here, the space below the list says what is where.
    let area = if sh.first_start {
        let list_height = u16::try_from(sh.datasets.len() + 3)
            .unwrap_or(u16::MAX)
            .max(4);
        let [list, welcome] =
            Layout::vertical([Constraint::Length(list_height), Constraint::Min(0)]).areas(area);
        overview(sh, f, welcome);
        list
    } else {
        area
    };
    let rows: Vec<Row> = sh
        .datasets
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let style = if i == sh.selected {
                sh.theme.selected
            } else {
                Style::new()
            };
            Row::new(vec![
                d.name.clone(),
                d.items.map_or_else(|| "?".into(), |n| n.to_string()),
                d.path.display().to_string(),
            ])
            .style(style)
        })
        .collect();
    let empty = sh.datasets.is_empty();
    let table = Table::new(
        rows,
        [
            Constraint::Length(24),
            Constraint::Length(9),
            Constraint::Min(10),
        ],
    )
    .header(Row::new(vec!["DATASET", "ITEMS", "FILE"]).style(sh.theme.header))
    .block(Block::new().borders(Borders::ALL).title(if empty {
        " Datasets — none yet: put files in datasets/ or `rubricate datasets add FILE` "
    } else {
        " Datasets "
    }));
    f.render_widget(table, area);
}

/// What the workspace holds, what each pane is for, and where to begin.
fn overview(sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    const PANES: [(Pane, &str); 6] = [
        (
            Pane::Datasets,
            "browse items, search and filter; enter opens a dataset",
        ),
        (
            Pane::Rubrics,
            "edit criteria with live lint; save versions; diff them",
        ),
        (
            Pane::Label,
            "label items by keyboard (the ground truth for judges)",
        ),
        (
            Pane::Grade,
            "grade with checks and LLM judges, cell by cell, live",
        ),
        (
            Pane::Results,
            "scores, agreement with your labels, run against run",
        ),
        (Pane::Review, "artifacts and their review"),
    ];
    let mut lines = vec![
        Line::styled(
            format!(
                "This workspace holds {} and {}; you label as {}.",
                crate::engine::checks::plural(sh.datasets.len(), "dataset"),
                crate::engine::checks::plural(sh.rubric_files.len(), "rubric file"),
                sh.annotator
            ),
            sh.theme.header,
        ),
        Line::raw(""),
    ];
    lines.extend(
        PANES
            .iter()
            .map(|(p, what)| Line::raw(format!("{:<12} {what}", sh.tab_label(*p)))),
    );
    lines.extend([
        Line::raw(""),
        Line::raw(
            "Begin: enter opens the selected dataset, then L labels it or G grades it · o opens a dataset file from anywhere",
        ),
        Line::raw("? lists this pane's keys, : finds any action by name"),
    ]);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(" Welcome ")),
        area,
    );
}

/// `labelled/criteria` for an item.
fn progress(sh: &Shared, b: &Browse, id: &str) -> String {
    let Some(r) = &b.rubric else {
        return "-".into();
    };
    let n = r.criteria.len();
    let done = r
        .criteria
        .iter()
        .filter(|c| sh.labels.contains_key(&(id.to_owned(), c.id.clone())))
        .count();
    format!("{done}/{n}")
}

fn items(sh: &Shared, b: &Browse, f: &mut Frame<'_>, area: Rect) {
    let name = sh.datasets.get(b.dataset).map_or("", |d| d.name.as_str());
    let height = usize::from(area.height.saturating_sub(3));
    let preview_width = usize::from(area.width.saturating_sub(40)).max(10);
    let rows: Vec<Row> = (b.offset..b.offset + height)
        .filter_map(|row| b.position(row).map(|p| (row, p)))
        .map(|(row, p)| {
            let style = if row == b.cursor {
                sh.theme.selected
            } else {
                Style::new()
            };
            match b.window.get(&p) {
                Some(item) => {
                    // Read from the run's journal for the rows on screen.
                    let score = match &b.run {
                        Some(r) => match sh.run_details.item(r, p, &item.id) {
                            Some(d) => d.score_text(),
                            None if sh.run_details.covers(&r.manifest.id, &[p]) => "-".into(),
                            None => "…".into(),
                        },
                        None => "-".into(),
                    };
                    Row::new(vec![
                        item.id.clone(),
                        preview(&item.submission, preview_width),
                        progress(sh, b, &item.id),
                        score,
                    ])
                }
                None => Row::new(vec![
                    format!("#{}", p + 1),
                    "…".into(),
                    String::new(),
                    String::new(),
                ]),
            }
            .style(style)
        })
        .collect();
    let total = b.total.map_or_else(|| "…".into(), |t| t.to_string());
    let shown = b.rows.as_ref().map(Vec::len);
    let title = match (b.scanning, shown) {
        (Some((read, Some(of))), _) if of > 0 => format!(
            " {name} — searching… {read} of {of} items read ({:.0}%) ",
            read as f64 * 100.0 / of as f64
        ),
        (Some((read, _)), _) => format!(" {name} — searching… {read} items read "),
        (None, Some(n)) => format!(" {name} — {n} of {total} items ({}) ", b.filter.name()),
        (None, None) => format!(" {name} — {total} items "),
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(14),
            Constraint::Min(10),
            Constraint::Length(7),
            Constraint::Length(6),
        ],
    )
    .header(Row::new(vec!["ID", "SUBMISSION", "LABELS", "SCORE"]).style(sh.theme.header))
    .block(Block::new().borders(Borders::ALL).title(title));
    f.render_widget(table, area);
}

fn detail(sh: &Shared, b: &Browse, f: &mut Frame<'_>, area: Rect) {
    let Some(item) = b.current() else {
        f.render_widget(
            Paragraph::new("loading…").block(Block::new().borders(Borders::ALL)),
            area,
        );
        return;
    };
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
    let mut text = Vec::new();
    if let Some(p) = &item.prompt {
        text.push(Line::styled("PROMPT", sh.theme.header));
        text.extend(p.lines().map(|l| Line::raw(l.to_owned())));
        text.push(Line::raw(""));
    }
    text.push(Line::styled("SUBMISSION", sh.theme.header));
    text.extend(item.submission.lines().map(|l| Line::raw(l.to_owned())));
    if let Some(r) = &item.reference {
        text.push(Line::raw(""));
        text.push(Line::styled("REFERENCE", sh.theme.header));
        text.extend(r.lines().map(|l| Line::raw(l.to_owned())));
    }
    f.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .scroll((b.detail_scroll, 0))
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(format!(" {} ", item.id)),
            ),
        left,
    );
    let mut side = Vec::new();
    // The open item of the latest run, read from its journal by position.
    let position = b.position(b.cursor);
    let result = b
        .run
        .as_ref()
        .zip(position)
        .and_then(|(r, p)| sh.run_details.item(r, p, &item.id));
    if let Some(d) = result {
        side.push(Line::styled(
            format!("LATEST RUN: {}", d.score_text()),
            sh.theme.header,
        ));
    } else if b.run.as_ref().zip(position).is_some_and(|(r, p)| {
        sh.run_details.at(r, p).is_none() && !sh.run_details.covers(&r.manifest.id, &[p])
    }) {
        side.push(Line::styled("LATEST RUN: …", sh.theme.header));
    }
    if let Some(rubric) = sh.labelling_rubric() {
        // What the dataset file says (its ground truth), as `rubricate score` reads it.
        let file = file_verdicts(item, &rubric);
        for (i, c) in rubric.criteria.iter().enumerate() {
            let file = file
                .get(i)
                .cloned()
                .flatten()
                .map(|v| format!(" · file {v}"))
                .unwrap_or_default();
            let human = sh
                .labels
                .get(&(item.id.clone(), c.id.clone()))
                .map_or_else(|| "—".into(), label_text);
            // The judge's verdict and reason, read from the journal for the open item.
            let judged =
                result
                    .and_then(|d| d.cell(&c.id))
                    .map(|x| match (&x.verdict, &x.failure) {
                        (Some(v), _) => (v.to_string(), x.reason.clone()),
                        (None, Some(fl)) => ("failed".into(), fl.message.clone()),
                        (None, None) => ("—".into(), String::new()),
                    });
            side.push(Line::raw(c.name.clone()));
            match judged {
                Some((v, reason)) => {
                    side.push(Line::raw(format!("  judge {v} · human {human}{file}")));
                    if !reason.is_empty() {
                        side.push(Line::raw(format!("  {}", preview(&reason, 200))));
                    }
                }
                None => side.push(Line::raw(format!("  human {human}{file}"))),
            }
        }
    }
    f.render_widget(
        Paragraph::new(side).wrap(Wrap { trim: false }).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" Labels and results "),
        ),
        right,
    );
}
