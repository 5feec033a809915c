//! One line of typed text, the editor behind every field the TUI reads typed text from
//! (a search, a note, a name, a path, a cost limit …), with the keys people expect of a
//! text field: see docs/tui.md "Typing in fields".
//!
//! It is written here rather than over `ratatui-textarea` (which the multi-line rubric field
//! editor keeps using) because that crate counts its cursor in `char`s: left/right stop
//! inside an emoji with a skin tone, a flag or an accent typed as a combining mark, and
//! backspace leaves half of one behind; its jumps take `u16` columns (a longer pasted line
//! cannot be addressed); its default keys differ (ctrl-u undoes, ctrl-m breaks the line);
//! and it draws itself through its own viewport, with no way to get the visible text and the
//! cursor's column to draw a field inside a status line. Here the cursor is a byte offset on
//! a grapheme-cluster boundary (`unicode-segmentation`) and columns are measured the way
//! ratatui draws them (`CellWidth`), so the terminal cursor lands where the text is.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::buffer::CellWidth as _;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation as _};

/// What a key or a paste did to the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The text changed (a search would run again).
    Changed,
    /// The key was the field's, the text is the same (the cursor may have moved).
    Moved,
    /// Enter: the caller takes the text.
    Submit,
    /// Esc: the caller drops the field.
    Cancel,
    /// Not a key of the field: the caller may use it (tab completes, ctrl-n moves a list).
    Ignored,
}

/// One line of editable text and its cursor.
#[derive(Debug, Clone, Default)]
pub struct LineInput {
    text: String,
    /// Byte offset of the cursor in `text`, always on a grapheme-cluster boundary.
    cursor: usize,
    /// The text is a suggestion: the first key that types or deletes replaces all of it.
    offered: bool,
    /// The characters the field takes (a cost limit: digits and `.`); `None`: any.
    accepts: Option<fn(char) -> bool>,
    /// At most this many characters (a run name: 100).
    max_chars: Option<usize>,
    /// Columns scrolled off the left at the last draw, kept so the view moves only when
    /// the cursor would leave it (a `Cell`: drawing takes `&self`).
    scroll: Cell<usize>,
}

/// What the field holds: its text, cursor and offer (not its rules, nor where the view
/// scrolled to).
impl PartialEq for LineInput {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.cursor == other.cursor && self.offered == other.offered
    }
}

impl Eq for LineInput {}

/// The visible part of a field at some width.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The visible text (a wide character cut by an edge shows as blanks).
    pub span: Span<'static>,
    /// The cursor's column, counted from the field's left edge.
    pub cursor: u16,
}

/// How the cursor moves, or how far a deletion reaches from it.
#[derive(Debug, Clone, Copy)]
enum Reach {
    Left,
    Right,
    /// Back over non-word characters, then over a word (letters, digits, `_`).
    WordLeft,
    /// Forward over non-word characters, then over a word.
    WordRight,
    /// Back over blanks, then over everything up to the blank before (ctrl-w, as shells do:
    /// `openai/gpt-4o` goes at once).
    BlankWordLeft,
    Start,
    End,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Submit,
    Cancel,
    Insert(char),
    Move(Reach),
    Delete(Reach),
}

impl Op {
    fn of(key: &KeyEvent) -> Option<Self> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        Some(match key.code {
            KeyCode::Enter => Self::Submit,
            KeyCode::Esc => Self::Cancel,
            KeyCode::Left if ctrl || alt => Self::Move(Reach::WordLeft),
            KeyCode::Left => Self::Move(Reach::Left),
            KeyCode::Right if ctrl || alt => Self::Move(Reach::WordRight),
            KeyCode::Right => Self::Move(Reach::Right),
            KeyCode::Home => Self::Move(Reach::Start),
            KeyCode::End => Self::Move(Reach::End),
            KeyCode::Backspace if ctrl || alt => Self::Delete(Reach::WordLeft),
            KeyCode::Backspace => Self::Delete(Reach::Left),
            KeyCode::Delete if ctrl || alt => Self::Delete(Reach::WordRight),
            KeyCode::Delete => Self::Delete(Reach::Right),
            KeyCode::Char(c) if ctrl => match c {
                'a' => Self::Move(Reach::Start),
                'e' => Self::Move(Reach::End),
                'h' => Self::Delete(Reach::Left),
                'w' => Self::Delete(Reach::BlankWordLeft),
                'u' => Self::Delete(Reach::Start),
                'k' => Self::Delete(Reach::End),
                _ => return None,
            },
            KeyCode::Char(c) if alt => match c {
                'b' => Self::Move(Reach::WordLeft),
                'f' => Self::Move(Reach::WordRight),
                'd' => Self::Delete(Reach::WordRight),
                _ => return None,
            },
            KeyCode::Char(c) if !c.is_control() => Self::Insert(c),
            _ => return None,
        })
    }
}

impl LineInput {
    /// A field holding `initial` (made one line), the cursor at its end.
    pub fn new(initial: &str) -> Self {
        let mut input = Self::default();
        input.set_text(initial);
        input
    }

    /// A field offering `initial`: enter takes it as it is, a moving key starts editing it,
    /// and the first key that types or deletes replaces all of it.
    pub fn offered(initial: &str) -> Self {
        let mut input = Self::new(initial);
        input.offered = !input.text.is_empty();
        input
    }

    /// Only characters `accepts` admits are typed or pasted (the others are left out).
    #[must_use]
    pub fn accepting(mut self, accepts: fn(char) -> bool) -> Self {
        self.accepts = Some(accepts);
        self
    }

    /// At most `n` characters are typed or pasted (a paste is cut at the limit).
    #[must_use]
    pub fn max_chars(mut self, n: usize) -> Self {
        self.max_chars = Some(n);
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the text is still only offered (nothing typed yet).
    pub fn is_offered(&self) -> bool {
        self.offered
    }

    /// Replaces the text (made one line); the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = one_line(text);
        self.cursor = self.text.len();
        self.offered = false;
    }

    /// The cursor's column in the whole text (display width of what is before it).
    pub fn cursor_column(&self) -> usize {
        columns(&self.text[..self.cursor])
    }

    /// Applies a key (a press or a repeat); see [`Edit`] for what comes back.
    pub fn handle_key(&mut self, key: &KeyEvent) -> Edit {
        if key.kind == KeyEventKind::Release {
            return Edit::Ignored;
        }
        match Op::of(key) {
            Some(op) => self.apply(op),
            None => Edit::Ignored,
        }
    }

    /// Inserts pasted text at the cursor: line breaks inside it become spaces (the field is
    /// one line), those at either end and other control characters are dropped.
    pub fn paste(&mut self, text: &str) -> Edit {
        self.type_in(&one_line(text))
    }

    /// Inserts what of `s` the field's rules admit (nothing admitted: the text stays, an
    /// offer too).
    fn type_in(&mut self, s: &str) -> Edit {
        let held = if self.offered {
            0
        } else {
            self.text.chars().count()
        };
        let room = self
            .max_chars
            .map_or(usize::MAX, |n| n.saturating_sub(held));
        let admitted: String = s
            .chars()
            .filter(|c| self.accepts.is_none_or(|accepts| accepts(*c)))
            .take(room)
            .collect();
        if admitted.is_empty() {
            return Edit::Moved;
        }
        self.take_offer();
        self.insert(&admitted);
        Edit::Changed
    }

    fn apply(&mut self, op: Op) -> Edit {
        match op {
            Op::Submit => Edit::Submit,
            Op::Cancel => Edit::Cancel,
            Op::Insert(c) => self.type_in(c.encode_utf8(&mut [0; 4])),
            Op::Move(reach) => {
                self.offered = false;
                self.cursor = self.reach(reach);
                Edit::Moved
            }
            Op::Delete(_) if self.offered => {
                self.take_offer();
                Edit::Changed
            }
            Op::Delete(reach) => {
                let to = self.reach(reach);
                if to == self.cursor {
                    return Edit::Moved;
                }
                let (from, to) = (to.min(self.cursor), to.max(self.cursor));
                self.text.replace_range(from..to, "");
                self.cursor = from;
                self.snap();
                Edit::Changed
            }
        }
    }

    /// An offered text goes as soon as something is typed or deleted.
    fn take_offer(&mut self) {
        if std::mem::take(&mut self.offered) {
            self.text.clear();
            self.cursor = 0;
        }
    }

    fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.snap();
    }

    /// Moves the cursor to the end of the cluster it is inside, if an edit joined it to
    /// its neighbours (a regional indicator typed before another makes one flag).
    fn snap(&mut self) {
        let mut at = GraphemeCursor::new(self.cursor, self.text.len(), true);
        if at.is_boundary(&self.text, 0) == Ok(false) {
            self.cursor = match at.next_boundary(&self.text, 0) {
                Ok(Some(next)) => next,
                _ => self.text.len(),
            };
        }
    }

    /// Where the cursor would go.
    fn reach(&self, reach: Reach) -> usize {
        let blank = |g: &str| g.chars().next().is_some_and(char::is_whitespace);
        match reach {
            Reach::Left => self.text[..self.cursor]
                .grapheme_indices(true)
                .next_back()
                .map_or(0, |(i, _)| i),
            Reach::Right => {
                self.cursor
                    + self.text[self.cursor..]
                        .graphemes(true)
                        .next()
                        .map_or(0, str::len)
            }
            Reach::WordLeft => {
                let gap = self.back_while(self.cursor, |g| !is_word(g));
                self.back_while(gap, is_word)
            }
            Reach::WordRight => {
                let gap = self.forward_while(self.cursor, |g| !is_word(g));
                self.forward_while(gap, is_word)
            }
            Reach::BlankWordLeft => {
                let gap = self.back_while(self.cursor, blank);
                self.back_while(gap, |g| !blank(g))
            }
            Reach::Start => 0,
            Reach::End => self.text.len(),
        }
    }

    /// The start of the run of clusters before `from` that all `keep`.
    fn back_while(&self, from: usize, keep: impl Fn(&str) -> bool) -> usize {
        let mut at = from;
        for (i, g) in self.text[..from].grapheme_indices(true).rev() {
            if !keep(g) {
                break;
            }
            at = i;
        }
        at
    }

    /// The end of the run of clusters after `from` that all `keep`.
    fn forward_while(&self, from: usize, keep: impl Fn(&str) -> bool) -> usize {
        let mut at = from;
        for g in self.text[from..].graphemes(true) {
            if !keep(g) {
                break;
            }
            at += g.len();
        }
        at
    }

    /// The part of the text that fits in `width` columns with the cursor in view (the view
    /// scrolls only when the cursor would leave it). An offered text is dimmed.
    pub fn shown(&self, width: u16) -> Shown {
        let room = usize::from(width);
        let style = if self.offered {
            Style::new().add_modifier(Modifier::DIM)
        } else {
            Style::new()
        };
        if room == 0 {
            return Shown {
                span: Span::styled(String::new(), style),
                cursor: 0,
            };
        }
        let before = self.cursor_column();
        let total = before + columns(&self.text[self.cursor..]);
        let mut scroll = self.scroll.get().min(before);
        if before >= scroll + room {
            // The cursor needs a column of its own past the text.
            scroll = before + 1 - room;
        }
        // No blank tail while text is hidden on the left (after a deletion).
        scroll = scroll.min((total + 1).saturating_sub(room));
        self.scroll.set(scroll);
        Shown {
            span: Span::styled(cut(&self.text, scroll, room), style),
            cursor: u16::try_from(before - scroll).unwrap_or(u16::MAX),
        }
    }

    /// The field drawn after `prefix` and followed by `suffix` (hints) in a line `width`
    /// columns wide, and the cursor's column in that line. The prefix takes at most half
    /// the width, so what is typed stays in view on a narrow terminal; the suffix shows in
    /// what the field leaves.
    pub fn line(&self, prefix: &str, suffix: &str, width: u16) -> (Line<'static>, u16) {
        let prefix = cut(prefix, 0, usize::from(width / 2));
        let prefix_width = u16::try_from(columns(&prefix)).unwrap_or(u16::MAX);
        let shown = self.shown(width.saturating_sub(prefix_width));
        let field_width = columns(&shown.span.content);
        let mut spans = vec![Span::raw(prefix), shown.span];
        if usize::from(shown.cursor) >= field_width {
            // The cursor's own cell at the end of the text.
            spans.push(Span::raw(" "));
        }
        spans.push(Span::raw(suffix.to_owned()));
        (Line::from(spans), prefix_width + shown.cursor)
    }

    /// Draws the field (see [`LineInput::line`]) on the first row of `area` in `style`,
    /// and puts the terminal's cursor in it.
    pub fn render(
        &self,
        frame: &mut Frame<'_>,
        area: Rect,
        prefix: &str,
        suffix: &str,
        style: Style,
    ) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let (line, x) = self.line(prefix, suffix, area.width);
        let row = Rect { height: 1, ..area };
        frame.render_widget(Paragraph::new(line).style(style), row);
        frame.set_cursor_position(Position::new(area.x + x, area.y));
    }
}

/// Text made one line: line breaks inside become spaces (`\r\n` one space), tabs a space;
/// line breaks at either end and other control characters (a stray escape) are dropped.
pub fn one_line(text: &str) -> String {
    let text = text.trim_matches(['\r', '\n']);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(' ');
            }
            '\n' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A cluster of letters, digits or `_` (CJK included): what word jumps stop around.
fn is_word(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Display columns, as ratatui draws them (cluster by cluster).
fn columns(s: &str) -> usize {
    s.graphemes(true).map(|g| usize::from(g.cell_width())).sum()
}

/// The columns `skip..skip + room` of `text`; a wide cluster cut by either edge shows as
/// blanks in the columns it would take.
fn cut(text: &str, skip: usize, room: usize) -> String {
    let mut out = String::new();
    let mut col = 0;
    for g in text.graphemes(true) {
        let (start, end) = (col, col + usize::from(g.cell_width()));
        col = end;
        if end <= skip || start == end {
            continue;
        }
        if start >= skip + room {
            break;
        }
        if start < skip || end > skip + room {
            let visible = end.min(skip + room) - start.max(skip);
            out.extend(std::iter::repeat_n(' ', visible));
        } else {
            out.push_str(g);
        }
    }
    out
}

#[cfg(test)]
mod tests;
