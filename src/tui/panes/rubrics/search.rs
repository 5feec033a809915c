//! Search in the Rubrics pane (`/`): in an open rubric, the tree's lines and each
//! criterion's requirement; on the list, the file names. The selection jumps to the first
//! match from where the search began as it is typed; `ctrl-n` / `↓` the next, `ctrl-p` /
//! `↑` the previous; `enter` keeps the line, `esc` goes back to where it was.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::RubricsPane;
use super::tree;
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;

/// A search being typed: the text, and the line (or file) it started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RubricSearch {
    pub query: String,
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
            query: String::new(),
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
        let Some(search) = self.search.clone() else {
            return Vec::new();
        };
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let (query, start, forward) = match k.code {
            KeyCode::Esc => {
                *self.selection() = search.from;
                self.search = None;
                return Vec::new();
            }
            KeyCode::Enter => {
                self.search = None;
                return Vec::new();
            }
            KeyCode::Down => (search.query, *self.selection() + 1, true),
            KeyCode::Char('n') if ctrl => (search.query, *self.selection() + 1, true),
            KeyCode::Up => (search.query, self.selection().wrapping_sub(1), false),
            KeyCode::Char('p') if ctrl => (search.query, self.selection().wrapping_sub(1), false),
            KeyCode::Char('u') if ctrl => (String::new(), search.from, true),
            KeyCode::Backspace => {
                let mut q = search.query;
                q.pop();
                (q, search.from, true)
            }
            KeyCode::Char(c) if !ctrl => (format!("{}{c}", search.query), search.from, true),
            _ => return Vec::new(),
        };
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
            None if query.is_empty() => *self.selection() = search.from,
            None => sh.message = Some(format!("no line has '{query}'")),
        }
        self.search = Some(RubricSearch {
            query,
            from: search.from,
        });
        Vec::new()
    }
}
