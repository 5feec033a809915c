//! The Review pane: artifacts by status (pending and in review first), and the selected
//! one's type, provenance, required rubrics, history and reviews.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::review::ordered;

pub fn draw(app: &App, f: &mut Frame<'_>, area: Rect) {
    let [list, detail] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);
    let items = ordered(&app.review.artifacts);
    let mut lines = Vec::new();
    if items.is_empty() {
        lines.push(Line::raw(if app.review.loaded {
            "no artifacts yet: `rubricate artifacts create …`"
        } else {
            "loading…"
        }));
    }
    for (i, a) in items.iter().enumerate() {
        let style = if i == app.review.selected {
            app.theme.selected
        } else {
            Style::new()
        };
        let busy = if app.review.busy.as_deref() == Some(a.id.as_str()) {
            " ⟳"
        } else {
            ""
        };
        lines.push(Line::styled(
            format!(
                "{:<15} {:<10} {}{busy}",
                a.status.as_str(),
                crate::tui::view::preview(&a.kind, 10),
                a.name
            ),
            style,
        ));
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" Artifacts ")),
        list,
    );
    let Some(a) = app.selected_artifact() else {
        f.render_widget(Block::new().borders(Borders::ALL), detail);
        return;
    };
    let mut text = vec![
        Line::styled(
            format!("{} · {}", a.name, a.status.as_str()),
            app.theme.header,
        ),
        Line::raw(a.id.clone()),
        Line::raw(format!(
            "type {} · made by {} ({})",
            a.kind, a.provenance.source, a.provenance.kind
        )),
        Line::raw(format!("rubrics: {}", a.rubrics.join(", "))),
        Line::raw(""),
        Line::styled("history", app.theme.header),
    ];
    for t in &a.history {
        let from = t.from.map_or("-", |s| s.as_str());
        let time = t.time.get(..19).unwrap_or(&t.time);
        text.push(Line::raw(format!(
            "{time}  {from} → {}  {}",
            t.to.as_str(),
            t.note
        )));
    }
    if !a.reviews.is_empty() {
        text.push(Line::raw(""));
        text.push(Line::styled("reviews", app.theme.header));
        for r in &a.reviews {
            let score = r
                .score
                .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0));
            let style = if r.passed {
                app.theme.met
            } else {
                app.theme.unmet
            };
            text.push(Line::styled(
                format!(
                    "{}@{}  {score}  {}",
                    r.rubric_id,
                    r.rubric_version,
                    if r.passed { "passed" } else { "failed" }
                ),
                style,
            ));
            // Each criterion's verdict and reason, as the review stored them.
            for c in r.evaluation["criteria"].as_array().into_iter().flatten() {
                let id = c["id"].as_str().unwrap_or_default();
                let outcome = match (&c["failure"], &c["verdict"]) {
                    (f, _) if f.is_object() => {
                        format!("failed: {}", f["message"].as_str().unwrap_or_default())
                    }
                    (_, serde_json::Value::String(v)) => v.clone(),
                    (_, serde_json::Value::Null) => "—".to_owned(),
                    (_, v) => v.to_string(),
                };
                let reason = c["reason"].as_str().unwrap_or_default();
                let line = if reason.is_empty() {
                    format!("  {id}: {outcome}")
                } else {
                    format!(
                        "  {id}: {outcome} — {}",
                        crate::tui::view::preview(reason, 120)
                    )
                };
                text.push(Line::raw(line));
            }
        }
    }
    text.push(Line::raw(""));
    text.push(Line::raw(crate::tui::view::preview(&a.submission(), 400)));
    f.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(" Artifact ")),
        detail,
    );
}
