//! The command palette over the pane: what is typed, then the matching actions (pane,
//! name, what it does, its keys), the selected one highlighted and kept in view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::app::{App, Pane};

pub fn draw(app: &App, f: &mut Frame<'_>, area: Rect) {
    let Some(palette) = &app.palette else {
        return;
    };
    let w = area.width.saturating_sub(4).min(96);
    let h = area.height.saturating_sub(2);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let found = app.palette_matches();
    let inner = usize::from(w.saturating_sub(2));
    let mut lines = vec![
        Line::raw(format!("> {}▏ {} found", palette.query, found.len())),
        Line::raw(""),
    ];
    let rows = usize::from(h.saturating_sub(4)).max(1);
    let selected = palette.selected.min(found.len().saturating_sub(1));
    let first = (selected + 1).saturating_sub(rows);
    for (i, e) in found.iter().enumerate().skip(first).take(rows) {
        let text = format!(
            "{}{:<9} {:<10} {}",
            if i == selected { "▶ " } else { "  " },
            e.pane().map_or("any pane", Pane::title),
            e.keys.join(" "),
            e.action.describe()
        );
        let line = super::cut(&text, inner);
        lines.push(if i == selected {
            Line::styled(line, app.shared.theme.selected)
        } else {
            Line::raw(line)
        });
    }
    if found.is_empty() {
        lines.push(Line::raw("no action has those words; backspace or ctrl-u"));
    }
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" Actions (type to find · ↑/↓ · enter runs · esc closes) "),
        ),
        r,
    );
}
