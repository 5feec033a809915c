//! Drawing the modal on top: a question or a refusal in a box that says which keys answer
//! it, the palette, the help, and what `tab` found for a path (above the status bar). The
//! lines being typed (a path, a name, a note) are drawn in the status bar
//! (`Modal::typing`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::{Modal, Palette, PathPrompt, SHOWN, entries};
use crate::tui::keymap::Context;
use crate::tui::nav::PaneId;
use crate::tui::shared::Shared;

/// Draws `modal` over the frame (`here`: the pane in front; `status`: the status bar).
pub fn draw(modal: &Modal, here: Context, sh: &Shared, f: &mut Frame<'_>, status: Rect) {
    let area = f.area();
    match modal {
        Modal::Refused(why) => ask(sh, f, area, " Not done ", why, "esc or enter closes"),
        Modal::Confirm { question, .. } => ask(
            sh,
            f,
            area,
            " Go ahead? ",
            question,
            "y goes ahead · any other key does nothing",
        ),
        Modal::Palette(p) => palette(p, sh, f, area),
        Modal::Help { scroll } => help(here, *scroll, sh, f, area),
        Modal::Path(p) => completions(p, f, status),
        Modal::Annotator(_) | Modal::Note(_) | Modal::Export { .. } | Modal::NewArtifact(_) => {}
    }
}

fn ask(sh: &Shared, f: &mut Frame<'_>, area: Rect, title: &str, text: &str, keys: &str) {
    let w = area.width.saturating_sub(4).min(72);
    let body = Paragraph::new(vec![
        Line::raw(text.to_owned()),
        Line::raw(""),
        Line::styled(keys.to_owned(), sh.theme.header),
    ])
    .wrap(Wrap { trim: false });
    let rows = u16::try_from(body.line_count(w.saturating_sub(2))).unwrap_or(u16::MAX);
    let h = rows.saturating_add(2).min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + area.height.saturating_sub(h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    f.render_widget(
        body.block(Block::new().borders(Borders::ALL).title(title.to_owned())),
        r,
    );
}

/// The command palette over the pane: what is typed, then the matching actions (pane,
/// name, what it does, its keys), the selected one highlighted and kept in view.
fn palette(palette: &Palette, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let w = area.width.saturating_sub(4).min(96);
    let h = area.height.saturating_sub(2);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let found = palette.matches(&sh.keymap);
    let inner = usize::from(w.saturating_sub(2));
    let (query, cursor) = palette.query.line(
        "> ",
        &format!(" {} found", found.len()),
        w.saturating_sub(2),
    );
    f.set_cursor_position((r.x + 1 + cursor, r.y + 1));
    let mut lines = vec![query, Line::raw("")];
    let rows = usize::from(h.saturating_sub(4)).max(1);
    let selected = palette.selected.min(found.len().saturating_sub(1));
    let first = (selected + 1).saturating_sub(rows);
    for (i, e) in found.iter().enumerate().skip(first).take(rows) {
        let text = format!(
            "{}{:<9} {:<10} {}",
            if i == selected { "▶ " } else { "  " },
            e.pane().map_or("any pane", PaneId::title),
            e.keys.join(" "),
            e.action.describe()
        );
        let line = crate::tui::view::cut(&text, inner);
        lines.push(if i == selected {
            Line::styled(line, sh.theme.selected)
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

/// Every key: this pane's first, then the keys that work everywhere, then the other
/// panes' (the palette's order).
fn help(here: Context, scroll: usize, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let w = area.width.saturating_sub(4).min(72);
    let h = area.height.saturating_sub(2);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let mut lines = Vec::new();
    let mut context = None;
    for e in entries(&sh.keymap, here) {
        if context != Some(e.context) {
            context = Some(e.context);
            let name = e.context.name().to_uppercase();
            lines.push(Line::styled(
                if e.context == here {
                    format!("{name} (this pane)")
                } else {
                    name
                },
                sh.theme.header,
            ));
        }
        lines.push(Line::raw(format!(
            "  {:<18} {}",
            e.keys.join(" "),
            e.action.describe()
        )));
    }
    let visible = usize::from(h.saturating_sub(2)).max(1);
    let scroll = scroll.min(lines.len().saturating_sub(visible));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(" Keys (↑/↓ scroll · any other key closes) "),
            ),
        r,
    );
}

/// What `tab` found for a path being typed, in a box just above the status bar.
fn completions(prompt: &PathPrompt, f: &mut Frame<'_>, status: Rect) {
    if prompt.candidates.is_empty() {
        return;
    }
    let mut lines: Vec<Line> = prompt
        .candidates
        .iter()
        .take(SHOWN)
        .map(|c| Line::raw(c.clone()))
        .collect();
    if prompt.candidates.len() > SHOWN {
        lines.push(Line::raw(format!(
            "… {} more (type more, then tab)",
            prompt.candidates.len() - SHOWN
        )));
    }
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(status.y);
    let width = status.width.min(60);
    let area = Rect::new(status.x, status.y.saturating_sub(height), width, height);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" tab found ")),
        area,
    );
}
