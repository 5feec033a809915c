//! rubricate's own rubric format (YAML or JSON): reading with located validation, writing,
//! and the published JSON Schema.

pub(crate) mod criterion;
mod examples;
mod knobs;
mod read;
mod write;

pub use read::{Dialect, read_rubric, read_rubric_lenient};
pub use write::{criterion_to_json, rubric_to_json, rubric_to_yaml};

/// The JSON Schema of the native rubric format (`rubricate schema`).
pub const RUBRIC_SCHEMA: &str = include_str!("../../../assets/rubric.schema.json");
