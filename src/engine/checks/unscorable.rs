//! `unscorable`: a criterion its home system cannot score, which errors on every item with
//! the reason given — as dataknobs does for a criterion whose scoring method lacks its
//! field (a `schema_ref` it never reads, a `deterministic` method without `function_ref`).
//! An error is never a verdict: the rubric's `errors` knob decides what it counts.

use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError};

#[derive(Debug)]
struct Unscorable {
    reason: String,
}

pub fn compile(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    Ok(Box::new(Unscorable {
        reason: args.required_string("reason")?,
    }))
}

impl Check for Unscorable {
    fn run(&self, _input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        Err(CheckError::Unscorable(self.reason.clone()))
    }
}
