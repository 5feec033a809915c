//! Questions and refusals that take every key until they are answered (the top of the
//! modal stack, ahead of the palette and the panes), so keys typed after a refused action,
//! or after one letter that would spend money, submit an artifact or open an editor, never
//! act anywhere else.
//!
//! The rule: an action that spends (continue a run, retry cells, re-grade what changed),
//! submits (an artifact for review) or hands the terminal to `$EDITOR` runs only after `y`
//! pressed at its question; any other key drops it and does nothing else. When such an
//! action, or a review decision, is refused, the refusal stays on screen and swallows every
//! key until esc or enter closes it (a note typed after a refused `x` goes nowhere).

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::keymap::Action;

/// What takes every key until it is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// An action was refused, and why.
    Refused(String),
    /// `y` runs the action (in the pane it was asked in); any other key drops it.
    Confirm { question: String, action: Action },
}

impl App {
    /// Whether `action` runs now: `y` was just pressed at its question. Otherwise the
    /// question is asked and the action waits.
    pub(super) fn confirmed(&mut self, action: Action, question: String) -> bool {
        if self.shared.confirming {
            return true;
        }
        self.ask = Some(Ask::Confirm { question, action });
        false
    }

    /// Refuses an action: said in a box that takes every key until esc or enter.
    pub(super) fn refuse(&mut self, why: String) -> Vec<Effect> {
        self.shared.message = Some(why.clone());
        self.ask = Some(Ask::Refused(why));
        Vec::new()
    }

    /// A key while something is asked: the answer, or nothing at all.
    pub(super) fn ask_key(&mut self, ask: Ask, k: &KeyEvent) -> Vec<Effect> {
        match ask {
            Ask::Refused(why) => {
                if !matches!(k.code, KeyCode::Esc | KeyCode::Enter) {
                    self.ask = Some(Ask::Refused(why));
                }
                Vec::new()
            }
            Ask::Confirm { action, .. } if k.code == KeyCode::Char('y') => {
                self.shared.confirming = true;
                let out = self.act(action);
                self.shared.confirming = false;
                out
            }
            Ask::Confirm { .. } => {
                self.shared.message = Some("not done (only y goes ahead)".into());
                Vec::new()
            }
        }
    }
}
