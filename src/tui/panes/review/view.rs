//! The Review pane: artifacts by status (pending and in review first), and the selected
//! one's type, provenance, required rubrics, history and reviews.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::{ReviewPane, ordered};
use crate::store::artifacts::Artifact;
use crate::tui::keymap::{Action, Context};
use crate::tui::shared::Shared;

/// The pane's two parts: the list and the selected artifact's panel.
fn areas(area: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area)
}

/// How far the selected artifact's panel scrolls at most on a terminal of the app's size
/// (its last row at the bottom): `App::update` keeps the scroll within it.
pub fn detail_scroll_end(sh: &Shared, a: &Artifact) -> u16 {
    let (w, h) = sh.size;
    // The pane lies between the tab bar and the status bar.
    let [_, detail] = areas(Rect::new(0, 0, w, h.saturating_sub(2)));
    let inner = (
        detail.width.saturating_sub(2),
        detail.height.saturating_sub(2),
    );
    panel_rows(&detail_panel(sh, a), inner.0).saturating_sub(inner.1)
}

fn panel_rows(panel: &Paragraph<'_>, width: u16) -> u16 {
    u16::try_from(panel.line_count(width)).unwrap_or(u16::MAX)
}

pub fn draw(pane: &ReviewPane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let [list, detail] = areas(area);
    let items = ordered(&pane.artifacts);
    let mut lines = Vec::new();
    if items.is_empty() {
        lines.push(Line::raw(if pane.loaded {
            "no artifacts yet: `rubricate artifacts create …`"
        } else {
            "loading…"
        }));
    }
    for (i, a) in items.iter().enumerate() {
        let style = if i == pane.selected {
            sh.theme.selected
        } else {
            Style::new()
        };
        let busy = if pane.busy.as_deref() == Some(a.id.as_str()) {
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
    let Some(a) = pane.selected_artifact() else {
        f.render_widget(Block::new().borders(Borders::ALL), detail);
        return;
    };
    // Longer than the panel (two failed reviews and an approving one at 120×40): it
    // scrolls, and its title says where it is and which keys move it.
    let inner = (
        detail.width.saturating_sub(2),
        detail.height.saturating_sub(2),
    );
    let panel = detail_panel(sh, a);
    let rows = panel_rows(&panel, inner.0);
    let scroll = pane.detail_scroll.min(rows.saturating_sub(inner.1));
    let title = if rows > inner.1 {
        let keys = |action| {
            sh.keymap
                .keys_for(Context::Review, action)
                .first()
                .cloned()
                .unwrap_or_default()
        };
        format!(
            " Artifact · rows {}–{} of {rows} · {}/{} scroll ",
            scroll + 1,
            (scroll + inner.1).min(rows),
            keys(Action::PageDown),
            keys(Action::PageUp)
        )
    } else {
        " Artifact ".to_owned()
    };
    f.render_widget(
        panel
            .scroll((scroll, 0))
            .block(Block::new().borders(Borders::ALL).title(title)),
        detail,
    );
}

/// The selected artifact's panel: type, provenance, rubrics, history, each review with
/// its criteria, and the submission.
fn detail_panel<'a>(sh: &Shared, a: &Artifact) -> Paragraph<'a> {
    let mut text = vec![
        Line::styled(
            format!("{} · {}", a.name, a.status.as_str()),
            sh.theme.header,
        ),
        Line::raw(a.id.clone()),
        Line::raw(format!(
            "type {} · made by {} ({})",
            a.kind, a.provenance.source, a.provenance.kind
        )),
        Line::raw(format!("rubrics: {}", a.rubrics.join(", "))),
        Line::raw(""),
        Line::styled("history", sh.theme.header),
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
        text.push(Line::styled("reviews", sh.theme.header));
        for r in &a.reviews {
            let score = r
                .score
                .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0));
            let style = if r.passed {
                sh.theme.met
            } else {
                sh.theme.unmet
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
    Paragraph::new(text).wrap(Wrap { trim: false })
}
