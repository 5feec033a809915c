//! How input reaches the app: a key goes to quitting's esc, then the modal on top, then what
//! the pane in front has being typed, then the keymap; a paste only into a line being typed;
//! a click on a tab switches pane, elsewhere it goes to the pane in front.

use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};

use super::{App, TAB_BAR_START};
use crate::tui::effect::Effect;
use crate::tui::keymap::{Action, Key};
use crate::tui::modal::Answer;
use crate::tui::nav::PaneId;
use crate::tui::widgets::LineInput;

impl App {
    /// A key: quitting's esc, then the top modal, then what the pane in front has being
    /// typed, then the keymap.
    pub(super) fn key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        if self.quitting && k.code == KeyCode::Esc {
            self.quitting = false;
            self.shared.message = Some("not quitting; the writes go on".into());
            return Vec::new();
        }
        if let Some(top) = self.modals.last_mut() {
            return match top.key(k, &mut self.shared) {
                Answer::Stay(effects) => effects,
                Answer::Close(then) => {
                    self.modals.pop();
                    self.then(then)
                }
            };
        }
        let front = self.shared.front;
        if let Some(outcome) = self.panes.get_mut(front).key(k, &mut self.shared) {
            return self.outcome(outcome);
        }
        let Some(action) = self
            .shared
            .keymap
            .action(self.context(), Key::from_event(k))
        else {
            return Vec::new();
        };
        self.act(action)
    }

    /// Text pasted: into the line being typed in the modal on top, else in the pane in
    /// front; with no line being typed it goes nowhere (a paste is never a burst of
    /// commands: a pasted `q` does not quit).
    pub(super) fn paste(&mut self, text: &str) -> Vec<Effect> {
        if let Some(top) = self.modals.last_mut() {
            top.paste(text);
            return Vec::new();
        }
        let front = self.shared.front;
        match self.panes.get_mut(front).paste(text, &mut self.shared) {
            Some(outcome) => self.outcome(outcome),
            None => Vec::new(),
        }
    }

    /// The line being typed now (in the modal on top, else in the pane in front), if any.
    pub fn field(&self) -> Option<&LineInput> {
        match self.modals.last() {
            Some(modal) => modal.field(),
            None => self.panes.get(self.shared.front).field(&self.shared),
        }
    }

    pub(super) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if m.row == 0
            && matches!(m.kind, MouseEventKind::Down(_))
            && let Some(p) = self.tab_at(m.column)
        {
            return self.switch(p);
        }
        let front = self.shared.front;
        let outcome = match m.kind {
            MouseEventKind::ScrollDown => return self.act(Action::Down),
            MouseEventKind::ScrollUp => return self.act(Action::Up),
            MouseEventKind::Drag(_) => {
                self.panes
                    .get_mut(front)
                    .click(m.row, true, &mut self.shared)
            }
            MouseEventKind::Down(_) => {
                self.panes
                    .get_mut(front)
                    .click(m.row, false, &mut self.shared)
            }
            _ => return Vec::new(),
        };
        self.outcome(outcome)
    }

    /// The pane whose tab is at `column` of the tab bar (laid out as the view draws it:
    /// the name `rubricate`, then each tab with a space either side).
    pub fn tab_at(&self, column: u16) -> Option<PaneId> {
        let mut x = TAB_BAR_START;
        let column = usize::from(column);
        for p in PaneId::ALL {
            let width = self.shared.tab_label(p).chars().count() + 2;
            if (x..x + width).contains(&column) {
                return Some(p);
            }
            x += width;
        }
        None
    }
}
