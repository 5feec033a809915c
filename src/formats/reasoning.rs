//! The reasoning settings a `judge:` block may hold, read the same way in a rubric and in
//! `rubricate.yaml`: `reasoning_effort`, `thinking_budget` and `extra`.

use serde_json::{Map, Value};

use super::fields::{Ctx, Fields, string_of};
use crate::model::{ReasoningEffort, owned_extra_field, thinking_budget_problem};

/// The field names [`read`] takes.
pub const FIELDS: &[&str] = &["reasoning_effort", "thinking_budget", "extra"];

/// What a `judge:` block says about reasoning.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reasoning {
    /// `reasoning_effort`.
    pub effort: Option<ReasoningEffort>,
    /// `thinking_budget`, checked against Anthropic's minimum.
    pub thinking_budget: Option<u32>,
    /// `extra`, with no field the client writes itself.
    pub extra: Map<String, Value>,
}

/// Takes the reasoning fields of a `judge:` block; each problem is located.
pub fn read(ctx: &mut Ctx<'_>, f: &mut Fields<'_>) -> Reasoning {
    let mut out = Reasoning::default();
    if let Some(n) = f.take("reasoning_effort")
        && let Some(text) = string_of(ctx, n, "`reasoning_effort`")
    {
        out.effort = ReasoningEffort::parse(&text);
        if out.effort.is_none() {
            ctx.err(
                n.pos,
                format!(
                    "unknown reasoning_effort '{text}'; use {}",
                    ReasoningEffort::NAMES.join(", ")
                ),
            );
        }
    }
    if let Some(n) = f.take("thinking_budget") {
        match n
            .as_f64()
            .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= f64::from(u32::MAX))
        {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            Some(x) => {
                let budget = x as u32;
                match thinking_budget_problem(budget) {
                    Some(why) => ctx.err(n.pos, format!("`thinking_budget`: {why}")),
                    None => out.thinking_budget = Some(budget),
                }
            }
            None => ctx.wrong_type(n, "`thinking_budget`", "a whole number of tokens"),
        }
    }
    if let Some(n) = f.take("extra") {
        match n.to_json() {
            Value::Object(map) => match owned_extra_field(&map) {
                Some(why) => ctx.err(n.pos, why),
                None => out.extra = map,
            },
            _ => ctx.wrong_type(n, "`extra`", "a mapping of request fields"),
        }
    }
    out
}
