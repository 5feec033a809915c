//! Text from files and servers shown on a terminal: control characters (an escape sequence
//! that recolours the screen, moves the cursor or sets the window title; a carriage return
//! that overwrites a line) are shown as visible escapes, never sent raw. JSON, JSONL and
//! CSV output keep them as those formats require; this is for tables, text and messages.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character except line breaks and tabs made visible (`\e`,
/// `\r`, `\u{7}` …): for messages and text blocks that may span lines.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// `text` on one line: every control character made visible, line breaks and tabs too —
/// for a table cell or a one-line listing.
pub fn cell(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// A table cell: [`cell`], cut to `n` characters (`…` where it is cut).
pub fn clipped(text: &str, n: usize) -> String {
    let text = cell(text);
    if text.chars().count() <= n {
        text.into_owned()
    } else {
        text.chars()
            .take(n.saturating_sub(1))
            .chain(std::iter::once('…'))
            .collect()
    }
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let hostile = |c: char| (c.is_control() || is_bidi_control(c)) && !keep(c);
    if !text.chars().any(hostile) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !hostile(c) {
            out.push(c);
            continue;
        }
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            other => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(other));
            }
        }
    }
    Cow::Owned(out)
}

/// Unicode's direction overrides and isolates, which reorder what a terminal shows.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::{cell, visible};

    #[test]
    fn escapes_are_shown_never_sent() {
        assert_eq!(visible("plain"), "plain");
        assert!(matches!(visible("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            visible("a\x1b[31mred\x1b]0;title\x07"),
            "a\\e[31mred\\e]0;title\\u{7}"
        );
        assert_eq!(visible("two\nlines\r"), "two\nlines\\r");
        assert_eq!(cell("two\nlines\ttab"), "two\\nlines\\ttab");
        assert_eq!(cell("\u{202e}evil"), "\\u{202e}evil");
        assert_eq!(cell("nul\0"), "nul\\0");
        assert_eq!(super::clipped("a\nbcdef", 4), "a\\n…");
        assert_eq!(super::clipped("abc", 4), "abc");
    }
}
