//! rubricate: rubric-based evaluation of LLM (and human) outputs — the scoring engine, file
//! formats, workspace store, run engine, command line and terminal UI behind the
//! `rubricate` binary.
//!
//! Dependencies point one way: `core` ← `model` ← `formats` ← `engine` (+`llm`) ← `store`
//! ← `metrics` ← `run` ← `cli`, `tui`. Nothing below `cli`/`tui` uses clap, ratatui or
//! crossterm (`cargo check --no-default-features` builds the library without them), and
//! `tui` never imports `cli`.

// The command line is the binary's: only what `main.rs` calls is public, and
// `unreachable_pub` keeps the rest `pub(crate)`.
#[cfg(feature = "cli")]
#[warn(unreachable_pub)]
pub mod cli;
// Every public item below `run` says what it is (`missing_docs`, denied by clippy -D warnings
// in CI): these layers are the library other programs use.
#[warn(missing_docs)]
pub mod core;
#[warn(missing_docs)]
pub mod engine;
#[warn(missing_docs)]
pub mod formats;
#[warn(missing_docs)]
pub mod llm;
#[warn(missing_docs)]
pub mod metrics;
#[warn(missing_docs)]
pub mod model;
pub mod run;
#[warn(missing_docs)]
pub mod store;
#[cfg(feature = "tui")]
pub mod tui;
