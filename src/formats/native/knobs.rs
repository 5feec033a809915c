//! Rubric-wide settings: scoring knobs and judge defaults.

use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::model::{
    AbstainPolicy, AggregateMode, ErrorPolicy, FeedbackStyle, GateRule, Grader, JudgeSettings,
    LengthPenalty, PenaltyCount, Scoring, Summation, ThresholdRule,
};

pub(super) fn read_scoring(ctx: &mut Ctx<'_>, node: &Node) -> Scoring {
    let mut s = Scoring::default();
    let Some(mut f) = Fields::of(ctx, node, "`scoring`") else {
        return s;
    };
    if let Some(v) = choice(ctx, &mut f, "aggregate", AggregateMode::NAMES) {
        s.aggregate = match v {
            "mean" => AggregateMode::Mean,
            "min" => AggregateMode::Min,
            "weighted_mean" => AggregateMode::WeightedMean,
            _ => AggregateMode::Points,
        };
    }
    if let Some(v) = choice(ctx, &mut f, "abstain", AbstainPolicy::NAMES) {
        s.abstain = match v {
            "zero" => AbstainPolicy::Zero,
            "partial" => AbstainPolicy::Partial,
            "worst" => AbstainPolicy::Worst,
            _ => AbstainPolicy::Skip,
        };
    }
    if let Some(v) = choice(ctx, &mut f, "errors", ErrorPolicy::NAMES) {
        s.errors = match v {
            "zero" => ErrorPolicy::Zero,
            "worst" => ErrorPolicy::Worst,
            _ => ErrorPolicy::Abstain,
        };
    }
    if let Some(p) = f.number(ctx, "partial_credit") {
        s.partial_credit = p;
    }
    if let Some(n) = f.boolean(ctx, "normalize") {
        s.normalize = n;
    }
    if let Some(v) = choice(ctx, &mut f, "threshold", ThresholdRule::NAMES) {
        s.threshold = if v == "exact" {
            ThresholdRule::Exact
        } else {
            ThresholdRule::Tolerant
        };
    }
    if let Some(v) = choice(ctx, &mut f, "gates", GateRule::NAMES) {
        s.gates = match v {
            "answered" => GateRule::Answered,
            "off" => GateRule::Off,
            _ => GateRule::All,
        };
    }
    if let Some(node) = f.take("length_penalty") {
        s.length_penalty = read_length_penalty(ctx, node);
    }
    if let Some(v) = choice(ctx, &mut f, "feedback", FeedbackStyle::NAMES) {
        s.feedback = if v == "dataknobs" {
            FeedbackStyle::Dataknobs
        } else {
            FeedbackStyle::Rubricate
        };
    }
    if let Some(v) = choice(ctx, &mut f, "summation", Summation::NAMES) {
        s.summation = if v == "compensated" {
            Summation::Compensated
        } else {
            Summation::Sequential
        };
    }
    f.finish(
        ctx,
        &[
            "summation",
            "aggregate",
            "abstain",
            "partial_credit",
            "errors",
            "normalize",
            "threshold",
            "gates",
            "feedback",
            "length_penalty",
        ],
    );
    s
}

/// A length penalty: `{free_budget, max_cap, penalty_at_cap, exponent, count}` (native) or
/// autorubric's `{…, penalty_type: ALL|OUTPUT_ONLY|THINKING_ONLY}`; what is left out takes
/// autorubric's defaults.
pub(crate) fn read_length_penalty(ctx: &mut Ctx<'_>, node: &Node) -> Option<LengthPenalty> {
    let mut f = Fields::of(ctx, node, "`length_penalty`")?;
    let mut p = LengthPenalty::default();
    let whole = |f: &mut Fields<'_>, ctx: &mut Ctx<'_>, key: &str, into: &mut u64| {
        if let Some(x) = f.number(ctx, key) {
            if x >= 0.0 && x.fract() == 0.0 && x <= 1e15 {
                *into = x as u64;
            } else {
                let at = node.get(key).map_or(node.pos, |n| n.pos);
                ctx.err(at, format!("`{key}` is a whole number of words; found {x}"));
            }
        }
    };
    whole(&mut f, ctx, "free_budget", &mut p.free_budget);
    whole(&mut f, ctx, "max_cap", &mut p.max_cap);
    if let Some(x) = f.number(ctx, "penalty_at_cap") {
        p.penalty_at_cap = x;
    }
    if let Some(x) = f.number(ctx, "exponent") {
        p.exponent = x;
    }
    if let Some(v) = choice(ctx, &mut f, "count", PenaltyCount::NAMES) {
        p.count = match v {
            "output" => PenaltyCount::Output,
            "thinking" => PenaltyCount::Thinking,
            _ => PenaltyCount::All,
        };
    }
    if let Some(v) = choice(
        ctx,
        &mut f,
        "penalty_type",
        &["ALL", "OUTPUT_ONLY", "THINKING_ONLY"],
    ) {
        p.count = match v {
            "OUTPUT_ONLY" => PenaltyCount::Output,
            "THINKING_ONLY" => PenaltyCount::Thinking,
            _ => PenaltyCount::All,
        };
    }
    f.finish(
        ctx,
        &[
            "free_budget",
            "max_cap",
            "penalty_at_cap",
            "exponent",
            "count",
            "penalty_type",
        ],
    );
    if p.max_cap <= p.free_budget {
        ctx.err(
            node.pos,
            format!(
                "`max_cap` ({}) must be above `free_budget` ({})",
                p.max_cap, p.free_budget
            ),
        );
        return None;
    }
    if !(p.penalty_at_cap.is_finite()
        && p.penalty_at_cap >= 0.0
        && p.exponent.is_finite()
        && p.exponent > 0.0)
    {
        ctx.err(
            node.pos,
            "`penalty_at_cap` must be 0 or more and `exponent` above 0",
        );
        return None;
    }
    Some(p)
}

fn choice(
    ctx: &mut Ctx<'_>,
    f: &mut Fields<'_>,
    key: &str,
    names: &'static [&'static str],
) -> Option<&'static str> {
    let node = f.take(key)?;
    let text = string_of(ctx, node, &format!("`{key}`"))?;
    let found = names.iter().find(|n| **n == text).copied();
    if found.is_none() {
        ctx.err(
            node.pos,
            format!("unknown {key} '{text}'; use {}", names.join(", ")),
        );
    }
    found
}

pub(super) fn read_judge(ctx: &mut Ctx<'_>, node: &Node) -> Option<JudgeSettings> {
    let mut f = Fields::of(ctx, node, "`judge`")?;
    let mut j = JudgeSettings {
        model: f.string(ctx, "model"),
        strategy: f.string(ctx, "strategy"),
        temperature: f.number(ctx, "temperature"),
        system_prompt: f.string(ctx, "system_prompt"),
        ..JudgeSettings::default()
    };
    if let Some(n) = f.take("max_tokens") {
        j.max_tokens = whole(ctx, n, "`max_tokens`").and_then(|v| u32::try_from(v).ok());
    }
    if let Some(n) = f.take("seed") {
        j.seed = whole(ctx, n, "`seed`");
    }
    let reasoning = crate::formats::reasoning::read(ctx, &mut f);
    j.reasoning_effort = reasoning.effort;
    j.thinking_budget = reasoning.thinking_budget;
    j.extra = reasoning.extra;
    let known = [
        "model",
        "strategy",
        "temperature",
        "max_tokens",
        "seed",
        "system_prompt",
    ];
    let known: Vec<&str> = known
        .into_iter()
        .chain(crate::formats::reasoning::FIELDS.iter().copied())
        .collect();
    f.finish(ctx, &known);
    Some(j)
}

fn whole(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<u64> {
    match node.value {
        NodeValue::Int(i) if i >= 0 => u64::try_from(i).ok(),
        _ => {
            ctx.wrong_type(node, what, "a whole number ≥ 0");
            None
        }
    }
}

pub(super) fn string_list(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Vec<String> {
    if let Some(items) = node.as_seq() {
        items
            .iter()
            .filter_map(|n| string_of(ctx, n, what))
            .collect()
    } else {
        ctx.wrong_type(node, what, "a list of text");
        Vec::new()
    }
}

/// `graders: [{id, weight, required, min_score, criteria: [criterion ids]}]`: criteria
/// scored apart and averaged (agentv's tests). Whether the ids fit the criteria is the
/// rubric's validation.
pub(super) fn read_graders(ctx: &mut Ctx<'_>, node: &Node) -> Vec<Grader> {
    let Some(items) = node.as_seq() else {
        ctx.wrong_type(
            node,
            "`graders`",
            "a list of {id, weight, required, min_score, criteria}",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(mut f) = Fields::of(ctx, item, "a grader") else {
            continue;
        };
        let id = f
            .string(ctx, "id")
            .unwrap_or_else(|| format!("grader-{}", i + 1));
        let weight = f.number(ctx, "weight").unwrap_or(1.0);
        let required = f.boolean(ctx, "required").unwrap_or(false);
        let min_score = f.number(ctx, "min_score");
        let criteria = if let Some(n) = f.take("criteria") {
            string_list(ctx, n, "a grader's `criteria`")
        } else {
            ctx.err(
                item.pos,
                format!("grader '{id}' has no `criteria`; list the ids of its criteria"),
            );
            Vec::new()
        };
        f.finish(ctx, &["id", "weight", "required", "min_score", "criteria"]);
        out.push(Grader {
            id,
            weight,
            required,
            min_score,
            criteria,
        });
    }
    out
}
