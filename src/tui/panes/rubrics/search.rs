//! Search in the Rubrics pane (`/`): in an open rubric, the tree's lines and each
//! criterion's requirement; on the list, the file names. The selection jumps to the first
//! match from where the search began as it is typed; `ctrl-n` / `↓` the next, `ctrl-p` /
//! `↑` the previous; `enter` keeps the line, `esc` goes back to where it was.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::RubricsPane;
use super::tree;
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput};

/// A search being typed: the text, and the line (or file) it started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RubricSearch {
    pub query: LineInput,
    pub from: usize,
}

impl RubricsPane {
    /// What each selectable line is searched by, in order.
    fn searchable(&self, sh: &Shared) -> Vec<String> {
        match self.view.as_ref() {
            Some(v) => v.rubric.as_ref().map_or_else(Vec::new, |r| {
                tree(r)
                    .into_iter()
                    .map(|(i, line)| {
                        // A criterion's first line also finds it by its requirement.
                        let first =
                            i.is_some_and(|i| line.contains(&format!("├ {} ", r.criteria[i].id)));
                        match i.and_then(|i| r.criteria.get(i)) {
                            Some(c) if first => format!("{line} {}", c.requirement),
                            _ => line,
                        }
                    })
                    .collect()
            }),
            None => sh
                .rubric_files
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                })
                .collect(),
        }
    }

    fn selection(&mut self) -> &mut usize {
        if self.view.is_some() {
            &mut self.line
        } else {
            &mut self.file
        }
    }

    pub fn start_rubric_search(&mut self) -> Vec<Effect> {
        let from = *self.selection();
        self.search = Some(RubricSearch {
            query: LineInput::default(),
            from,
        });
        Vec::new()
    }

    /// The matching line nearest `start` going `forward` (wrapping), if any.
    fn find_line(&self, sh: &Shared, query: &str, start: usize, forward: bool) -> Option<usize> {
        let needle = query.to_lowercase();
        let lines = self.searchable(sh);
        let n = lines.len();
        if n == 0 || needle.is_empty() {
            return None;
        }
        (0..n)
            .map(|k| {
                if forward {
                    (start + k) % n
                } else {
                    (start + n - k % n) % n
                }
            })
            .find(|&i| lines[i].to_lowercase().contains(&needle))
    }

    pub fn rubric_search_key(&mut self, sh: &mut Shared, k: &KeyEvent) -> Vec<Effect> {
        let Some(search) = self.search.as_mut() else {
            return Vec::new();
        };
        let from = search.from;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        // ↓/↑ (ctrl-n/ctrl-p) find the next or previous line; what is typed finds from where
        // the search began.
        let (start, forward) = match k.code {
            KeyCode::Down => (*self.selection() + 1, true),
            KeyCode::Char('n') if ctrl => (*self.selection() + 1, true),
            KeyCode::Up => (self.selection().wrapping_sub(1), false),
            KeyCode::Char('p') if ctrl => (self.selection().wrapping_sub(1), false),
            _ => match search.query.handle_key(k) {
                Edit::Cancel => {
                    *self.selection() = from;
                    self.search = None;
                    return Vec::new();
                }
                Edit::Submit => {
                    self.search = None;
                    return Vec::new();
                }
                Edit::Changed => (from, true),
                Edit::Moved | Edit::Ignored => return Vec::new(),
            },
        };
        self.find(sh, start, forward);
        Vec::new()
    }

    /// Text pasted into the search line: found as if typed.
    pub fn rubric_search_paste(&mut self, sh: &mut Shared, text: &str) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        search.query.paste(text);
        let from = search.from;
        self.find(sh, from, true);
    }

    /// Selects the first line from `start` (going forward or back) that has the query.
    fn find(&mut self, sh: &mut Shared, start: usize, forward: bool) {
        let Some(search) = &self.search else {
            return;
        };
        let (query, from) = (search.query.text().to_owned(), search.from);
        let n = self.searchable(sh).len().max(1);
        let start = if start == usize::MAX {
            n - 1
        } else {
            start % n
        };
        match self.find_line(sh, &query, start, forward) {
            Some(line) => {
                *self.selection() = line;
                sh.message = None;
            }
            None if query.is_empty() => *self.selection() = from,
            None => sh.message = Some(format!("no line has '{query}'")),
        }
    }
}
