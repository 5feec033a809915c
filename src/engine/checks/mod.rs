//! Deterministic checks: a registry of built-ins referenced by name with arguments.
//!
//! A check says whether its requirement holds (MET/UNMET), or names a level, option or
//! number, with evidence. Some checks also measure a number (length, count, similarity)
//! that `map_levels` turns into a level.

mod args;
pub mod command;
mod json_checks;
mod map_levels;
pub mod meta;
mod similarity;
mod text;
mod tools;
mod trajectory;
mod unscorable;

use std::sync::OnceLock;

use serde_json::Value;

pub use crate::model::checks::{NAMES, canonical_name};
use crate::model::{CheckSpec, Criterion, Item, Verdict};
pub use args::Args;
pub use command::CommandCheck;
pub use text::plural;

/// What a check found.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOutput {
    /// The check's verdict.
    pub verdict: Verdict,
    /// A number the check measured, for `map_levels`.
    pub measure: Option<f64>,
    /// What it saw, for the result's evidence.
    pub evidence: Vec<String>,
}

impl CheckOutput {
    /// MET when `met`, else UNMET, with one line of evidence.
    pub fn binary(met: bool, measure: Option<f64>, evidence: impl Into<String>) -> Self {
        Self {
            verdict: if met { Verdict::Met } else { Verdict::Unmet },
            measure,
            evidence: vec![evidence.into()],
        }
    }
}

/// What a check may look at: the item, and its submission parsed as JSON (parsed once,
/// shared by every criterion of the item).
pub struct CheckInput<'a> {
    /// The item being graded.
    pub item: &'a Item,
    parsed: OnceLock<Result<Value, String>>,
}

impl<'a> CheckInput<'a> {
    /// The input for `item` (its JSON parsed on first use).
    pub fn new(item: &'a Item) -> Self {
        Self {
            item,
            parsed: OnceLock::new(),
        }
    }

    /// The submission's text; for one turn of a conversation (`scope: turn`), that
    /// turn's own text.
    pub fn text(&self) -> &str {
        match self.item.conversation.as_deref() {
            Some(c) if c.judged_turn.is_some() => c.last_assistant(),
            _ => &self.item.submission,
        }
    }

    /// The submission as JSON, or why it is not JSON (with line and column).
    pub fn json(&self) -> Result<&Value, &str> {
        self.parsed
            .get_or_init(|| {
                serde_json::from_str(&self.item.submission)
                    .map_err(|e| format!("the submission is not JSON: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// A compiled deterministic check.
pub trait Check: Send + Sync + std::fmt::Debug {
    /// Runs the check. An `Err` is a check failure (never a verdict).
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError>;
}

/// Why a check could not reach a verdict on an item (a failure, never a verdict).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("check '{check}' measured no number to map to a level")]
    /// `map_levels` needs a number the check did not measure.
    NoMeasure {
        /// The check's name.
        check: String,
    },
    #[error("cannot start `{program}`: {source}")]
    /// The program could not be started.
    Start {
        /// The program.
        program: String,
        /// Why, as the OS said.
        #[source]
        source: std::io::Error,
    },
    #[error("talking to `{program}` failed: {source}")]
    /// Writing the submission to the program, or reading its output, failed.
    Pipe {
        /// The program.
        program: String,
        /// Why, as the OS said.
        #[source]
        source: std::io::Error,
    },
    #[error("`{program}` did not finish within {after:?}; it was stopped")]
    /// The program ran past its timeout and was stopped.
    TimedOut {
        /// The program.
        program: String,
        /// Its timeout.
        after: std::time::Duration,
    },
    #[error("`{program}` exited with {status}: {stderr_tail}")]
    /// The program failed.
    Exited {
        /// The program.
        program: String,
        /// How it exited.
        status: std::process::ExitStatus,
        /// The end of what it wrote to stderr.
        stderr_tail: String,
    },
    #[error("`{program}` printed no verdict")]
    /// The program's output holds no verdict.
    NoVerdict {
        /// The program.
        program: String,
    },
    /// `similarity` was given nothing to compare with.
    #[error("similarity has no reference: give `reference` in args or a `reference` on the item")]
    NoReference,
    /// The submission should be a rubric (meta checks) and is not.
    #[error("the submission is not a rubric: {0}")]
    NotARubric(#[source] crate::formats::Diagnostics),
    /// A tool check on an item that holds no conversation.
    #[error(
        "this item is no conversation, so it has no tool calls to check; give the item `messages` (chat messages with tool_calls)"
    )]
    NoConversation,
    /// The rubric in the submission cannot be scored, and why.
    #[error("{0}")]
    Unscorable(String),
}

/// What a check name compiles to.
#[derive(Debug)]
pub enum Compiled {
    /// A check run in process.
    Sync(Box<dyn Check>),
    /// A program run on the submission (only when commands are allowed).
    Command(CommandCheck),
}

/// A problem with a check's configuration: the field under `method` and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The field under `method` (`args.pattern`).
    pub field: String,
    /// What is wrong, and what would be right.
    pub message: String,
}

impl SpecError {
    /// A problem with `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Compiles a check for a criterion. `inner` is true inside `map_levels`, where a check
/// may only measure.
pub fn compile(
    spec: &CheckSpec,
    criterion: &Criterion,
    inner: bool,
) -> Result<Compiled, SpecError> {
    let name = canonical_name(&spec.name);
    let mut args = Args::new(&spec.args);
    let check: Box<dyn Check> = match name.as_str() {
        "contains" => text::contains(&mut args, false)?,
        "not_contains" => text::contains(&mut args, true)?,
        "regex" => text::regex(&mut args)?,
        "equals" => text::equals(&mut args)?,
        "starts_with" => text::affix(&mut args, true)?,
        "ends_with" => text::affix(&mut args, false)?,
        "length" => text::bounds(&mut args, text::Unit::Chars, inner)?,
        "word_count" => text::bounds(&mut args, text::Unit::Words, inner)?,
        "max_sentences" => text::max_sentences(&mut args)?,
        "count" => text::count(&mut args, inner)?,
        "is_json" => json_checks::is_json(),
        "json_path" => json_checks::json_path(&mut args)?,
        "similarity" => similarity::similarity(&mut args, inner)?,
        "map_levels" if !inner => map_levels::compile(&mut args, criterion)?,
        "command" if !inner => return Ok(Compiled::Command(command::compile(&mut args)?)),
        "rubric_coverage" => meta::compile(meta::MetaCheck::Coverage),
        "rubric_independence" => meta::compile(meta::MetaCheck::Independence),
        "rubric_weights" => meta::compile(meta::MetaCheck::Weights),
        "rubric_threshold" => meta::compile(meta::MetaCheck::Threshold),
        "rubric_level_order" => meta::compile(meta::MetaCheck::LevelOrder),
        "unscorable" => unscorable::compile(&mut args)?,
        "tool_called" => tools::tool_called(&mut args)?,
        "tool_not_called" => tools::tool_not_called(&mut args)?,
        "tool_args" => tools::tool_args(&mut args)?,
        "tool_trajectory" => trajectory::tool_trajectory(&mut args, criterion)?,
        "map_levels" | "command" => {
            return Err(SpecError::new(
                "check",
                format!("`{name}` cannot be used inside map_levels"),
            ));
        }
        _ => {
            let hint = crate::formats::fields::nearest(&name, NAMES)
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            return Err(SpecError::new(
                "check",
                format!(
                    "unknown check '{}'; {hint}built-in checks: {}",
                    spec.name,
                    NAMES.join(", ")
                ),
            ));
        }
    };
    args.finish()?;
    Ok(Compiled::Sync(check))
}

/// Quotes text for evidence, shortened to a readable length.
pub fn quote(text: &str) -> String {
    const MAX: usize = 80;
    let mut out: String = text.chars().take(MAX).collect();
    if text.chars().count() > MAX {
        out.push('…');
    }
    format!("{out:?}")
}

/// Line and column (1-based, characters) of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
