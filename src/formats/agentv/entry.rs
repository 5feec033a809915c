//! One agentv rubric entry → a criterion: a plain string (binary, weight 1, required), or
//! `{id, expected_outcome|outcome, weight, required, min_score, required_min_score,
//! score_ranges, operator}`. `score_ranges` make a 0–10 scale criterion.

use crate::formats::fields::{Ctx, Fields, number_of, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::model::{Anchor, Criterion, Kind, Method, Scale};

const FIELDS: &[&str] = &[
    "id",
    "expected_outcome",
    "outcome",
    "description",
    "weight",
    "required",
    "min_score",
    "required_min_score",
    "score_ranges",
    "operator",
    "metric",
];

/// The scale every agentv score range lives on.
pub const TOP: f64 = 10.0;

/// Reads one entry; `number` is its 1-based position in the rubric (for `rubric-N` ids),
/// `fallback` the text used when an entry has ranges but no outcome (the case's outcome).
pub fn read_entry(
    ctx: &mut Ctx<'_>,
    node: &Node,
    number: usize,
    fallback: Option<&str>,
) -> Option<Criterion> {
    if let NodeValue::Str(text) = &node.value {
        if text.trim().is_empty() {
            ctx.err(
                node.pos,
                "an agentv rubric string is empty; say what the output must do",
            );
            return None;
        }
        let mut c = Criterion::binary(format!("rubric-{number}"), text.trim_end(), 1.0);
        c.required = true;
        return Some(c);
    }
    let mut f = Fields::of(
        ctx,
        node,
        "an agentv rubric (a string or {id, outcome, weight, …})",
    )?;
    let id = f
        .string(ctx, "id")
        .unwrap_or_else(|| format!("rubric-{number}"));
    let outcome = f
        .take_alias(&["expected_outcome", "outcome", "description"])
        .and_then(|(k, n)| string_of(ctx, n, &format!("`{k}`")));
    let operator = f.string(ctx, "operator");
    f.take("metric");
    let weight = f.number(ctx, "weight").unwrap_or(1.0);
    let required = f.boolean(ctx, "required");
    let min_score = f.number(ctx, "min_score");
    let required_min = f.take("required_min_score");
    let ranges = f.take("score_ranges");
    f.finish(ctx, FIELDS);

    let kind = match ranges {
        Some(r) => Kind::Scale(Scale {
            min: 0.0,
            max: TOP,
            anchors: read_ranges(ctx, r, &id),
        }),
        None => Kind::Binary,
    };
    let requirement = match (outcome, &kind) {
        (Some(o), _) => o,
        (None, Kind::Scale(_)) => fallback.map_or_else(|| id.clone(), str::to_owned),
        (None, _) => {
            ctx.err(
                node.pos,
                format!("agentv rubric '{id}' needs `outcome` (or `expected_outcome`): what the output must do"),
            );
            return None;
        }
    };
    let requirement = match operator.as_deref() {
        None | Some("correctness") => requirement,
        Some("contradiction") => format!("Does not contradict: {requirement}"),
        Some(other) => {
            let at = node.get("operator").map_or(node.pos, |n| n.pos);
            ctx.err(
                at,
                format!(
                    "unknown agentv rubric operator '{other}'; use correctness or contradiction"
                ),
            );
            requirement
        }
    };
    let mut c = Criterion::binary(id, requirement.trim_end(), weight);
    // As agentv's parseRubricItems: an entry without score ranges is required unless it
    // says otherwise; one with ranges only when it says so. `min_score` (0–1) or the older
    // `required_min_score` (0–10) is the gate's threshold; which entries it gates depends
    // on the grader's mode, settled once all its entries are read (`settle_gates`).
    c.required = required.unwrap_or(matches!(kind, Kind::Binary));
    c.kind = kind;
    if let Some(ms) = min_score {
        if !(ms > 0.0 && ms <= 1.0) {
            let at = node.get("min_score").map_or(node.pos, |n| n.pos);
            ctx.err(at, format!("agentv min_score is in (0, 1]; found {ms}"));
        }
        c.min_score = Some(ms);
    } else if let Some(n) = required_min
        && let Some(x) = number_of(ctx, n, "`required_min_score`")
    {
        if !(0.0..=TOP).contains(&x) || x.fract() != 0.0 {
            ctx.err(
                n.pos,
                format!("agentv required_min_score is an integer on the 0..10 scale; found {x}"),
            );
            return Some(c);
        }
        c.min_score = Some(x / TOP);
    }
    Some(c)
}

/// agentv's gates for one grader's criteria. Without score ranges anywhere (its checklist
/// grader) a required criterion must be met and `min_score` plays no part; with them (its
/// score-range grader) a criterion is gated at its `min_score` whether required or not, and
/// a required one without a `min_score` needs full marks (10/10).
pub fn settle_gates(criteria: &mut [Criterion]) {
    // Score ranges are a judged entry's; a trajectory check's 0..1 scale is not one.
    let ranges = criteria
        .iter()
        .any(|c| matches!(c.kind, Kind::Scale(_)) && matches!(c.method, Method::Judge(_)));
    for c in criteria {
        if ranges {
            let gate = c.min_score.or(c.required.then_some(1.0));
            c.required = gate.is_some();
            c.min_score = gate;
        } else {
            c.min_score = None;
        }
    }
}

/// `{0: text, 3: text, …}` (lower bounds; the last runs to 10) or
/// `[{score_range: [a, b], outcome}]`; integers in 0..10, no overlap, covering 0..10.
/// Returns the ranges as anchors at their lower bounds.
fn read_ranges(ctx: &mut Ctx<'_>, node: &Node, id: &str) -> Vec<Anchor> {
    let mut ranges: Vec<(i64, i64, String, crate::core::diag::Pos)> = Vec::new();
    // A range already reported as malformed would only add a knock-on "missing" message.
    let mut broken = false;
    match &node.value {
        NodeValue::Map(entries) => {
            let mut lows = Vec::new();
            for (k, v) in entries {
                match k.text.trim().parse::<i64>() {
                    Ok(x) if (0..=10).contains(&x) => {
                        lows.push((
                            x,
                            string_of(ctx, v, "a score range description").unwrap_or_default(),
                            k.pos,
                        ));
                    }
                    _ => {
                        ctx.err(
                            k.pos,
                            format!(
                                "agentv score_ranges keys are whole scores 0..10; found '{}'",
                                k.text
                            ),
                        );
                        broken = true;
                    }
                }
            }
            lows.sort_by_key(|l| l.0);
            for (i, (lo, text, pos)) in lows.iter().enumerate() {
                let hi = lows.get(i + 1).map_or(10, |n| n.0 - 1);
                ranges.push((*lo, hi, text.clone(), *pos));
            }
        }
        NodeValue::Seq(items) => {
            for item in items {
                let Some(mut f) = Fields::of(ctx, item, "an agentv score range") else {
                    continue;
                };
                let bounds = f.take("score_range");
                let text = f
                    .take_alias(&["expected_outcome", "outcome", "description"])
                    .and_then(|(k, n)| string_of(ctx, n, &format!("`{k}`")))
                    .unwrap_or_default();
                f.finish(
                    ctx,
                    &["score_range", "expected_outcome", "outcome", "description"],
                );
                let Some(b) = bounds else {
                    ctx.err(
                        item.pos,
                        "an agentv score range needs `score_range: [low, high]`",
                    );
                    continue;
                };
                let items = b.as_seq().unwrap_or_default();
                let shown = b.to_json().to_string().replace(',', ", ");
                let bad = |why: String| format!("score_range {shown} of '{id}' {why}");
                let pair: Vec<Option<i64>> = items.iter().map(whole).collect();
                match pair.as_slice() {
                    [Some(lo), Some(hi)]
                        if (0..=10).contains(lo) && (0..=10).contains(hi) && lo <= hi =>
                    {
                        ranges.push((*lo, *hi, text, b.pos));
                    }
                    [Some(lo), Some(hi)] if lo > hi => {
                        ctx.err(b.pos, bad(format!("runs backwards; write [{hi}, {lo}]")));
                        broken = true;
                    }
                    [Some(_), Some(_)] => {
                        ctx.err(
                            b.pos,
                            bad(
                                "goes outside 0..10; agentv scores are whole numbers from 0 to 10"
                                    .into(),
                            ),
                        );
                        broken = true;
                    }
                    [_, _] => {
                        let odd = items
                            .iter()
                            .find(|n| whole(n).is_none())
                            .map_or_else(String::new, |n| n.to_json().to_string());
                        ctx.err(
                            b.pos,
                            bad(format!("has {odd}; bounds are whole numbers from 0 to 10")),
                        );
                        broken = true;
                    }
                    _ => {
                        ctx.err(b.pos, bad("must be two numbers [low, high]".into()));
                        broken = true;
                    }
                }
            }
            ranges.sort_by_key(|r| r.0);
        }
        _ => {
            ctx.wrong_type(
                node,
                "`score_ranges`",
                "a map {0: text, 5: text, …} or a list of {score_range: [a, b], outcome}",
            );
            return Vec::new();
        }
    }
    if !broken {
        check_cover(ctx, node, id, &ranges);
    }
    ranges
        .into_iter()
        .map(|(lo, _, text, _)| Anchor {
            value: lo as f64,
            text,
        })
        .collect()
}

fn whole(n: &Node) -> Option<i64> {
    match n.value {
        NodeValue::Int(i) => Some(i),
        NodeValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e9 => Some(f as i64),
        _ => None,
    }
}

/// The ranges (sorted by low bound) must tile 0..10 exactly.
fn check_cover(
    ctx: &mut Ctx<'_>,
    node: &Node,
    id: &str,
    ranges: &[(i64, i64, String, crate::core::diag::Pos)],
) {
    if ranges.is_empty() {
        ctx.err(
            node.pos,
            format!("agentv score_ranges of '{id}' are empty; they must cover 0..10"),
        );
        return;
    }
    let mut next = 0;
    for (lo, hi, _, pos) in ranges {
        if *lo > next {
            ctx.err(
                *pos,
                format!(
                    "agentv score_ranges must cover 0..10; '{id}' is missing {}",
                    span(next, lo - 1)
                ),
            );
        } else if *lo < next {
            ctx.err(
                *pos,
                format!(
                    "agentv score_ranges must not overlap; '{id}' has {} twice",
                    span(*lo, (next - 1).min(*hi))
                ),
            );
        }
        next = next.max(hi + 1);
    }
    if next <= 10 {
        ctx.err(
            node.pos,
            format!(
                "agentv score_ranges must cover 0..10; '{id}' is missing {}",
                span(next, 10)
            ),
        );
    }
}

fn span(a: i64, b: i64) -> String {
    if a == b {
        format!("{a}")
    } else {
        format!("{a}..{b}")
    }
}
