//! What a pane is to the app: it takes the actions the keymap gives while it is in front,
//! the runtime's answers meant for it, and draws itself. It owns its state and reads and
//! changes only `Shared` besides: moving to another pane, or opening a question or a
//! prompt, is a value it returns (`Outcome`), which only `app.rs` applies.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::effect::Effect;
use super::keymap::Action;
use super::modal::Modal;
use super::msg::Msg;
pub use super::nav::{Nav, PaneId};
use super::run_details::RunRows;
use super::shared::Shared;
use super::widgets::{LineInput, Typing};

/// What handling an action or a message asks of the app.
#[derive(Debug)]
pub enum Outcome {
    /// Work for the runtime (none: handled, nothing to do).
    Effects(Vec<Effect>),
    /// Show another pane.
    Nav(Nav),
    /// Put a question, a refusal or a prompt on top of everything.
    Modal(Modal),
    /// Not the pane's to handle.
    Ignored,
}

impl Outcome {
    pub fn none() -> Self {
        Outcome::Effects(Vec::new())
    }
}

impl From<Vec<Effect>> for Outcome {
    fn from(effects: Vec<Effect>) -> Self {
        Outcome::Effects(effects)
    }
}

/// Asks `question` before `action` runs, unless `y` was just pressed at it: `None` means
/// go ahead, `Some` is the question to return.
pub fn confirm(sh: &Shared, action: Action, question: String) -> Option<Outcome> {
    (!sh.confirming).then_some(Outcome::Modal(Modal::Confirm { question, action }))
}

/// Refuses an action: said in a box that takes every key until esc or enter.
pub fn refuse(why: String) -> Outcome {
    Outcome::Modal(Modal::Refused(why))
}

/// A pane of the UI.
pub trait Pane {
    /// A key before the keymap sees it, for what the pane has being typed (a note, a name,
    /// a search); `None` leaves the key to the keymap.
    fn key(&mut self, _k: &KeyEvent, _sh: &mut Shared) -> Option<Outcome> {
        None
    }

    /// A mouse click (or drag) on the pane at screen row `row`.
    fn click(&mut self, _row: u16, _drag: bool, _sh: &mut Shared) -> Outcome {
        Outcome::Ignored
    }

    /// An action of the keymap while the pane is in front.
    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome;

    /// An answer of the runtime for this pane (`Msg::pane` says which pane one is for).
    fn on_msg(&mut self, _msg: Msg, _sh: &mut Shared) -> Outcome {
        Outcome::Ignored
    }

    /// Requests the pane needs after any change (a window of rows to read, figures to
    /// work out again); empty when it has what it shows.
    fn wants(&mut self, _sh: &mut Shared) -> Vec<Effect> {
        Vec::new()
    }

    /// The run items the pane shows, so that their reasons and verdicts are read (`None`:
    /// it shows none).
    fn run_rows(&self, _sh: &Shared) -> Option<RunRows> {
        None
    }

    /// The actions the status bar offers now, in order.
    fn hints(&self, sh: &Shared) -> &'static [Action];

    /// The status line while the pane has a line being typed there (it replaces the
    /// hints).
    fn typing<'a>(&'a self, _sh: &'a Shared) -> Option<Typing<'a>> {
        None
    }

    /// The line the pane has being typed, wherever it is drawn.
    fn field<'a>(&'a self, _sh: &'a Shared) -> Option<&'a LineInput> {
        None
    }

    /// Text pasted while the pane is in front: into its line being typed (`None`: it has
    /// none, and the paste goes nowhere — a paste is never a burst of commands).
    fn paste(&mut self, _text: &str, _sh: &mut Shared) -> Option<Outcome> {
        None
    }

    /// Writes the pane sent that the disk has not confirmed yet.
    fn unsaved(&self) -> usize {
        0
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect);
}
