//! The command palette (`:` or `ctrl-p`): every action of the keymap by name, this pane's
//! first, found by typing words of its name, description or pane; `enter` runs it (in its
//! pane, switching there first).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Effect, Pane};
use super::keymap::{Action, Context, Keymap};

/// The palette while it is open: what is typed and which match is selected.
#[derive(Debug, Default, Clone)]
pub struct Palette {
    pub query: String,
    pub selected: usize,
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

impl App {
    /// What the open palette lists now.
    pub fn palette_matches(&self) -> Vec<Entry> {
        let query = self.palette.as_ref().map_or("", |p| p.query.as_str());
        matches(&entries(&self.shared.keymap, self.context()), query)
    }

    pub(super) fn open_palette(&mut self) -> Vec<Effect> {
        self.palette = Some(Palette::default());
        Vec::new()
    }

    /// A key while the palette is open: typing filters, arrows choose, enter runs, esc
    /// closes.
    pub(super) fn palette_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let found = self.palette_matches();
        let n = found.len();
        let Some(p) = &mut self.palette else {
            return Vec::new();
        };
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Esc => self.palette = None,
            KeyCode::Enter => {
                let chosen = found.get(p.selected).cloned();
                self.palette = None;
                if let Some(entry) = chosen {
                    return self.run_entry(&entry);
                }
            }
            KeyCode::Down => p.selected = (p.selected + 1).min(n.saturating_sub(1)),
            KeyCode::Char('n') if ctrl => p.selected = (p.selected + 1).min(n.saturating_sub(1)),
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => p.selected = p.selected.saturating_sub(1),
            KeyCode::PageDown => p.selected = (p.selected + 10).min(n.saturating_sub(1)),
            KeyCode::PageUp => p.selected = p.selected.saturating_sub(10),
            KeyCode::Char('u') if ctrl => {
                p.query.clear();
                p.selected = 0;
            }
            KeyCode::Backspace => {
                p.query.pop();
                p.selected = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                p.query.push(c);
                p.selected = 0;
            }
            _ => {}
        }
        Vec::new()
    }

    /// Runs a palette entry: in its pane (switched to first), as its key would.
    fn run_entry(&mut self, entry: &Entry) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(pane) = entry.pane()
            && pane != self.pane
        {
            effects = self.switch(pane);
        }
        effects.extend(self.act(entry.action));
        effects
    }
}
