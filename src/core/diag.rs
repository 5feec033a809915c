//! Located problems: `file:line:column: message`.

use std::fmt;

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
}

impl Pos {
    /// The position at `line` and `col` (both 1-based).
    pub fn new(line: usize, col: usize) -> Self {
        Self { line, col }
    }
}

/// One problem in one file, at a place when we know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as the user named it.
    pub file: String,
    /// Where in the file, when known (`None`: the file as a whole).
    pub pos: Option<Pos>,
    /// What is wrong, and what to do about it.
    pub message: String,
}

impl Diagnostic {
    /// A problem at `pos` in `file`.
    pub fn at(file: &str, pos: Pos, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            pos: Some(pos),
            message: message.into(),
        }
    }
    /// A problem with `file` as a whole (no place in it).
    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            pos: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{}:{}: {}", self.file, p.line, p.col, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Every problem found in one load, in document order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Just `d`.
    pub fn one(d: Diagnostic) -> Self {
        Self(vec![d])
    }
    /// In file and position order, as the user reads them.
    #[must_use]
    pub fn sorted(mut self) -> Self {
        self.0
            .sort_by(|a, b| (&a.file, a.pos).cmp(&(&b.file, b.pos)));
        self
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Maps byte offsets of a text to line and column.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// The last (offset, line, column) found: positions asked for in increasing order on one
    /// long line (minified JSON) count characters from there, not from the line's start.
    last: std::cell::Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`'s line starts once, for many lookups.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self {
            text,
            starts,
            last: std::cell::Cell::new((0, 0, 0)),
        }
    }

    /// The position of a 1-based line and 1-based *byte* column (as `serde_json` reports).
    pub fn pos_of_byte_col(&self, line: usize, byte_col: usize) -> Pos {
        let start = self
            .starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        self.pos(start + byte_col.saturating_sub(1))
    }

    /// The line and column of a byte offset into the text.
    pub fn pos(&self, offset: usize) -> Pos {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let (last_offset, last_line, last_col) = self.last.get();
        let (from, base) = if last_line == line && last_offset <= offset {
            (last_offset, last_col)
        } else {
            (self.starts[line], 0)
        };
        let col = base
            + self
                .text
                .get(from..offset)
                .map_or(offset - from, |s| s.chars().count());
        self.last.set((offset, line, col));
        Pos::new(line + 1, col + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_characters() {
        let idx = LineIndex::new("ab\nçd\n\nx");
        assert_eq!(idx.pos(0), Pos::new(1, 1));
        assert_eq!(idx.pos(3), Pos::new(2, 1));
        assert_eq!(idx.pos(5), Pos::new(2, 2));
        assert_eq!(idx.pos(7), Pos::new(3, 1));
        assert_eq!(idx.pos(8), Pos::new(4, 1));
        assert_eq!(
            idx.pos(4),
            Pos::new(2, 1),
            "inside a character rounds down to its start"
        );
        assert_eq!(idx.pos(999), Pos::new(4, 2));
    }

    #[test]
    fn display_is_file_line_col() {
        let d = Diagnostic::at("r.yaml", Pos::new(3, 7), "bad");
        assert_eq!(d.to_string(), "r.yaml:3:7: bad");
        assert_eq!(
            Diagnostic::whole("r.yaml", "gone").to_string(),
            "r.yaml: gone"
        );
    }
}
