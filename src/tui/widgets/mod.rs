//! Widgets the panes and modals share (ARCHITECTURE.md "TUI": `widgets/`): pieces that
//! hold a little state of their own and know nothing of `App`.

pub mod line_input;
pub mod transcript;

pub use line_input::{Edit, LineInput, Shown};

/// A line being typed as the status bar shows it: what it is for, the field, then hints.
#[derive(Debug)]
pub struct Typing<'a> {
    pub prefix: String,
    pub field: &'a LineInput,
    pub suffix: String,
}

impl<'a> Typing<'a> {
    pub fn new(prefix: impl Into<String>, field: &'a LineInput, suffix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            field,
            suffix: suffix.into(),
        }
    }
}
