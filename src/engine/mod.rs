//! Scoring: aggregation math, deterministic checks, JSON Schema, the executor that turns
//! rubric × item into events and evaluations, feedback and lint.

pub mod aggregate;
pub mod checks;
pub mod compile;
pub mod done;
pub mod executor;
pub mod feedback;
mod in_order;
pub mod judge;
pub mod length_penalty;
pub mod lint;
pub mod pysum;
pub mod schema;
pub mod scoring;
pub mod template;
mod turns;

pub use compile::{CompiledMethod, CompiledRubric, compile};
pub use done::CellSet;
pub use executor::{CancelToken, EventKind, ExecOptions, Executor, GradeEvent};
pub use in_order::InOrder;
