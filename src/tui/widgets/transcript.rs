//! A conversation as a person reads it in the terminal: each message under its role, set
//! apart by a bar and a style; an assistant's tool calls under its text, each with its
//! result beneath it — folded to one line each (name, arguments and result cut to the
//! width) until unfolded, then in full (arguments as indented JSON when they parse).
//! Text from the file is shown with its control characters made visible.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::core::text::{clipped, visible};
use crate::model::{Conversation, Message, Role};
use crate::tui::theme::Theme;

/// The lines of `conversation` at `width` columns; `open`: tool calls in full.
pub fn lines(
    conversation: &Conversation,
    open: bool,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let width = usize::from(width).max(20);
    let mut out = Vec::new();
    let mut turn = 0usize;
    let turns = conversation.turns();
    // A result shown under its call is not shown again as a message of its own.
    for m in conversation.shown_messages() {
        if !out.is_empty() {
            out.push(Line::raw(""));
        }
        if m.role == Role::Assistant {
            turn += 1;
        }
        out.push(header(m, turn, turns, theme));
        for l in visible(&m.content).lines() {
            out.push(Line::raw(format!("  {l}")));
        }
        for call in &m.tool_calls {
            let result = conversation.messages.iter().find(|r| {
                r.role == Role::Tool
                    && !call.id.is_empty()
                    && r.tool_call_id.as_deref() == Some(&call.id)
            });
            let arrow = Style::new().add_modifier(Modifier::BOLD);
            if open {
                out.push(Line::from(vec![
                    Span::styled("  → ", arrow),
                    Span::styled(visible(&call.name).into_owned(), theme.header),
                ]));
                let args = call
                    .arguments
                    .as_ref()
                    .and_then(|v| serde_json::to_string_pretty(v).ok())
                    .unwrap_or_else(|| call.arguments_raw.clone());
                for l in visible(&args).lines() {
                    out.push(Line::styled(format!("      {l}"), theme.muted));
                }
                match result {
                    Some(r) => {
                        let mut rows = visible(&r.content).into_owned();
                        if rows.is_empty() {
                            rows = "(empty)".into();
                        }
                        for (i, l) in rows.lines().enumerate() {
                            let lead = if i == 0 { "  ← " } else { "    " };
                            out.push(Line::raw(format!("{lead}{l}")));
                        }
                    }
                    None => out.push(Line::styled("  ← (no result)", theme.muted)),
                }
            } else {
                let room = width.saturating_sub(6 + call.name.chars().count()).max(8);
                out.push(Line::from(vec![
                    Span::styled("  → ", arrow),
                    Span::styled(clipped(&call.name, 40), theme.header),
                    Span::styled(
                        format!("({})", clipped(&call.arguments_raw, room.saturating_sub(2))),
                        theme.muted,
                    ),
                ]));
                let said = result.map_or_else(
                    || "(no result)".to_owned(),
                    // One line: its lines joined.
                    |r| {
                        clipped(
                            &r.content.split_whitespace().collect::<Vec<_>>().join(" "),
                            width.saturating_sub(6),
                        )
                    },
                );
                out.push(Line::styled(format!("  ← {said}"), theme.muted));
            }
        }
    }
    out
}

/// A message's first line: a bar and its role (an assistant's turn number, a tool's name).
fn header(m: &Message, turn: usize, turns: usize, theme: &Theme) -> Line<'static> {
    let style = match m.role {
        Role::User => theme.header,
        Role::Assistant => theme.title,
        Role::System | Role::Tool => theme.muted,
    };
    let mut label = m.role.name().to_owned();
    match m.role {
        Role::Assistant => label = format!("{label} · turn {turn} of {turns}"),
        Role::Tool => {
            if let Some(n) = &m.name {
                label = format!("{label} {}", clipped(n, 40));
            }
        }
        _ => {}
    }
    Line::from(vec![
        Span::styled("▌ ", style),
        Span::styled(label, style.add_modifier(Modifier::BOLD)),
    ])
}

/// Counts for a panel's title: `3 turns · 2 calls` (tool calls).
pub fn summary(conversation: &Conversation) -> String {
    let calls = conversation.tool_calls().count();
    let turns = conversation.turns();
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    if calls == 0 {
        plural(turns, "turn")
    } else {
        format!("{} · {}", plural(turns, "turn"), plural(calls, "call"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn conversation() -> Conversation {
        Conversation::from_value(&serde_json::json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "18 C and sunny\nwind 5 km/h"},
            {"role": "assistant", "content": "It is 18 C and sunny in Paris.\x1b[2J"}
        ]))
        .unwrap()
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn folded_calls_take_two_lines_and_unfolded_show_everything() {
        let c = conversation();
        let theme = Theme::default();
        let folded = text(&lines(&c, false, &theme, 60));
        assert_eq!(
            folded,
            [
                "▌ user",
                "  Weather in Paris?",
                "",
                "▌ assistant · turn 1 of 2",
                "  → weather({\"city\": \"Paris\"})",
                "  ← 18 C and sunny wind 5 km/h",
                "",
                "▌ assistant · turn 2 of 2",
                "  It is 18 C and sunny in Paris.\\e[2J",
            ]
        );
        let open = text(&lines(&c, true, &theme, 60));
        assert!(
            open.contains(&"        \"city\": \"Paris\"".to_owned()),
            "{open:?}"
        );
        assert!(open.contains(&"  ← 18 C and sunny".to_owned()), "{open:?}");
        assert!(open.contains(&"    wind 5 km/h".to_owned()), "{open:?}");
        assert_eq!(summary(&c), "2 turns · 1 call");
    }
}
