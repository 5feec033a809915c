//! Widgets the panes and modals share (ARCHITECTURE.md "TUI": `widgets/`): pieces that
//! hold a little state of their own and know nothing of `App`.

pub mod line_input;

pub use line_input::{Edit, LineInput, Shown};
