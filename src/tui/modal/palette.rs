//! The command palette (`:` or `ctrl-p`): every action of the keymap by name, this pane's
//! first, found by typing words of its name, description or pane; `enter` runs it (in its
//! pane, switching there first).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Answer, Then};
use crate::tui::keymap::{Action, Context, Keymap};
use crate::tui::nav::PaneId as Pane;
use crate::tui::widgets::{Edit, LineInput};

/// The palette while it is open: what is typed and which match is selected.
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    pub query: LineInput,
    pub selected: usize,
    /// Where it was opened: that pane's actions come first.
    pub here: Context,
}

/// One line of the palette: an action where it works, and its keys there.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub context: Context,
    pub action: Action,
    pub keys: Vec<String>,
}

impl Entry {
    /// The pane the action works in (`None`: everywhere).
    pub fn pane(&self) -> Option<Pane> {
        pane_of(self.context)
    }

    /// What the palette shows, and what typing is matched against.
    pub fn text(&self) -> String {
        format!(
            "{} {} {}",
            self.pane().map_or("everywhere", Pane::title),
            self.action.name(),
            self.action.describe()
        )
    }
}

fn pane_of(context: Context) -> Option<Pane> {
    match context {
        Context::Global => None,
        Context::List => Some(Pane::Datasets),
        Context::Label => Some(Pane::Label),
        Context::Grade => Some(Pane::Grade),
        Context::Results => Some(Pane::Results),
        Context::Review => Some(Pane::Review),
        Context::Rubrics => Some(Pane::Rubrics),
    }
}

/// Every bound action, once per context, with its keys: `here` first, then the global
/// ones, then the other panes'. The palette lists them, and so does the help.
pub fn entries(keymap: &Keymap, here: Context) -> Vec<Entry> {
    let mut contexts: Vec<Context> = keymap.bindings.keys().copied().collect();
    contexts.sort_by_key(|c| (*c != here, *c != Context::Global, *c));
    let mut out = Vec::new();
    for context in contexts {
        let Some(keys) = keymap.bindings.get(&context) else {
            continue;
        };
        let mut actions: Vec<Action> = keys.values().copied().collect();
        actions.sort();
        actions.dedup();
        for action in actions {
            let mut names: Vec<String> = keys
                .iter()
                .filter(|(_, a)| **a == action)
                .map(|(k, _)| k.name())
                .collect();
            names.sort_by_key(|k| (k.chars().count(), k.clone()));
            out.push(Entry {
                context,
                action,
                keys: names,
            });
        }
    }
    out
}

/// The entries every word of `query` is found in (case ignored), in the palette's order.
pub fn matches(entries: &[Entry], query: &str) -> Vec<Entry> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    entries
        .iter()
        // The palette does not list itself.
        .filter(|e| e.action != Action::Palette)
        .filter(|e| {
            let text = e.text().to_lowercase();
            words.iter().all(|w| text.contains(w.as_str()))
        })
        .cloned()
        .collect()
}

impl Palette {
    pub fn new(here: Context) -> Self {
        Self {
            query: LineInput::default(),
            selected: 0,
            here,
        }
    }

    /// What the palette lists now.
    pub fn matches(&self, keymap: &Keymap) -> Vec<Entry> {
        matches(&entries(keymap, self.here), self.query.text())
    }

    /// A key while the palette is open: typing filters, arrows choose, enter runs (in its
    /// pane, switched to first), esc closes.
    pub fn key(&mut self, k: &KeyEvent, keymap: &Keymap) -> Answer {
        let found = self.matches(keymap);
        let n = found.len();
        let last = n.saturating_sub(1);
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Down => self.selected = (self.selected + 1).min(last),
            KeyCode::Char('n') if ctrl => self.selected = (self.selected + 1).min(last),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            _ => match self.query.handle_key(k) {
                Edit::Cancel => return Answer::Close(Then::Nothing),
                Edit::Submit => {
                    return Answer::Close(match found.get(self.selected) {
                        Some(entry) => Then::Act {
                            action: entry.action,
                            pane: entry.pane(),
                            confirmed: false,
                        },
                        None => Then::Nothing,
                    });
                }
                Edit::Changed => self.selected = 0,
                Edit::Moved | Edit::Ignored => {}
            },
        }
        Answer::Stay(Vec::new())
    }
}
