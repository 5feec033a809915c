//! A question or a refusal (`tui::ask`), in a box over the pane that says which keys
//! answer it: it takes every key until then.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::tui::app::App;
use crate::tui::ask::Ask;

pub fn draw(app: &App, f: &mut Frame<'_>, area: Rect) {
    let Some(ask) = &app.ask else {
        return;
    };
    let (title, text, keys) = match ask {
        Ask::Refused(why) => (" Not done ", why.as_str(), "esc or enter closes"),
        Ask::Confirm { question, .. } => (
            " Go ahead? ",
            question.as_str(),
            "y goes ahead · any other key does nothing",
        ),
    };
    let w = area.width.saturating_sub(4).min(72);
    let body = Paragraph::new(vec![
        Line::raw(text.to_owned()),
        Line::raw(""),
        Line::styled(keys, app.shared.theme.header),
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
        body.block(Block::new().borders(Borders::ALL).title(title)),
        r,
    );
}
