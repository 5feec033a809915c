//! rubricate: rubric-based evaluation of LLM (and human) outputs — the scoring engine, file
//! formats and command line behind the `rubricate` binary.
//!
//! Dependencies point one way: `model` ← `formats` ← `engine` ← `cli` (and `tui`).

pub mod cli;
pub mod engine;
pub mod formats;
pub mod llm;
pub mod metrics;
pub mod model;
pub mod store;
#[cfg(feature = "tui")]
pub mod tui;
