//! `examples:` on a criterion and on a rubric: written out (`[{submission, verdict |
//! verdicts, reason}]`) or drawn from labels (`{from: labels, annotator, n, balance,
//! seed, dataset}`). Every verdict is checked against its criterion's kind, as a label or
//! a ground-truth verdict is, and every problem is located.

use std::collections::BTreeMap;

use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::{Node, NodeValue};
use crate::model::{
    Balance, Criterion, DrawSource, Example, Examples, LabelDraw, RubricExample, Verdict,
    parse_verdict_text,
};

const DRAW_FIELDS: &[&str] = &["from", "annotator", "n", "balance", "seed", "dataset"];

/// A criterion's `examples` (its kind already read).
pub(super) fn read_criterion_examples(
    ctx: &mut Ctx<'_>,
    node: &Node,
    c: &Criterion,
) -> Option<Examples<Example>> {
    read_examples(ctx, node, |ctx, mut f, item| {
        let verdict_node = f.take("verdict");
        let submission = submission(ctx, &mut f, item);
        let reason = f.string(ctx, "reason");
        let from = f.string(ctx, "item");
        f.finish(ctx, &["submission", "verdict", "reason", "item"]);
        let Some(v) = verdict_node else {
            ctx.err(
                item.pos,
                format!("an example of criterion '{}' needs a `verdict`", c.id),
            );
            return None;
        };
        Some(Example {
            submission: submission?,
            verdict: verdict_of(ctx, v, c)?,
            reason,
            item: from,
        })
    })
}

/// The rubric's `examples` (its criteria already read).
pub(super) fn read_rubric_examples(
    ctx: &mut Ctx<'_>,
    node: &Node,
    criteria: &[Criterion],
) -> Option<Examples<RubricExample>> {
    read_examples(ctx, node, |ctx, mut f, item| {
        let verdicts_node = f.take("verdicts");
        let submission = submission(ctx, &mut f, item);
        let reason = f.string(ctx, "reason");
        let from = f.string(ctx, "item");
        f.finish(ctx, &["submission", "verdicts", "reason", "item"]);
        let Some(vn) = verdicts_node else {
            ctx.err(
                item.pos,
                "a rubric's example needs `verdicts`: {criterion id: verdict, …}",
            );
            return None;
        };
        let NodeValue::Map(entries) = &vn.value else {
            ctx.wrong_type(vn, "`verdicts`", "a mapping of criterion id to verdict");
            return None;
        };
        let mut verdicts = BTreeMap::new();
        for (key, v) in entries {
            match criteria.iter().find(|c| c.id == key.text) {
                Some(c) => {
                    if let Some(verdict) = verdict_of(ctx, v, c) {
                        verdicts.insert(key.text.clone(), verdict);
                    }
                }
                None => ctx.err(
                    key.pos,
                    format!(
                        "an example gives a verdict for '{}', which is not a criterion of this rubric",
                        key.text
                    ),
                ),
            }
        }
        Some(RubricExample {
            submission: submission?,
            verdicts,
            reason,
            item: from,
        })
    })
}

/// A list of examples (each read by `one`), or a draw from labels.
fn read_examples<E>(
    ctx: &mut Ctx<'_>,
    node: &Node,
    mut one: impl FnMut(&mut Ctx<'_>, Fields<'_>, &Node) -> Option<E>,
) -> Option<Examples<E>> {
    match &node.value {
        NodeValue::Seq(items) => {
            let mut out = Vec::new();
            for item in items {
                let Some(f) = Fields::of(ctx, item, "an example") else {
                    continue;
                };
                out.extend(one(ctx, f, item));
            }
            Some(Examples::Written(out))
        }
        NodeValue::Map(_) => read_draw(ctx, node).map(Examples::FromLabels),
        _ => {
            ctx.wrong_type(
                node,
                "`examples`",
                "a list of examples or {from: labels, annotator, n, balance, seed}",
            );
            None
        }
    }
}

fn submission(ctx: &mut Ctx<'_>, f: &mut Fields<'_>, item: &Node) -> Option<String> {
    match f.string(ctx, "submission") {
        Some(s) if !s.trim().is_empty() => Some(s),
        Some(_) => {
            ctx.err(
                item.pos,
                "an example's `submission` is empty; give the text that was judged",
            );
            None
        }
        None => {
            ctx.err(item.pos, "an example needs a `submission`");
            None
        }
    }
}

/// A verdict written for criterion `c`: its words, a level, an option label or a number.
fn verdict_of(ctx: &mut Ctx<'_>, node: &Node, c: &Criterion) -> Option<Verdict> {
    let text = match &node.value {
        NodeValue::Str(_) | NodeValue::Int(_) | NodeValue::Float(_) => {
            string_of(ctx, node, "a verdict")?
        }
        _ => {
            ctx.wrong_type(node, "a verdict", "text or a number");
            return None;
        }
    };
    match parse_verdict_text(c, &text) {
        Ok(v) => Some(v),
        Err(e) => {
            ctx.err(
                node.pos,
                format!(
                    "example verdict '{text}' does not fit criterion '{}': {e}",
                    c.id
                ),
            );
            None
        }
    }
}

fn read_draw(ctx: &mut Ctx<'_>, node: &Node) -> Option<LabelDraw> {
    let mut f = Fields::of(ctx, node, "`examples`")?;
    let from = f.string(ctx, "from");
    let annotator = f.string(ctx, "annotator");
    let n = f.take("n");
    let balance = f.take("balance");
    let seed = f.take("seed");
    let dataset = f.string(ctx, "dataset");
    f.finish(ctx, DRAW_FIELDS);
    if from.as_deref() != Some("labels") {
        ctx.err(
            node.pos,
            "examples drawn from elsewhere are written `{from: labels, annotator: A, n: 4}`",
        );
        return None;
    }
    let Some(n) = n else {
        ctx.err(
            node.pos,
            "examples drawn from labels need `n`: how many per criterion",
        );
        return None;
    };
    let n = match n.value {
        NodeValue::Int(i) if (1..=100).contains(&i) => usize::try_from(i).ok()?,
        _ => {
            ctx.err(
                n.pos,
                "`n` must be a whole number of examples from 1 to 100",
            );
            return None;
        }
    };
    let balance = match balance {
        None => Balance::Verdict,
        Some(b) => match string_of(ctx, b, "`balance`").as_deref() {
            Some("verdict") => Balance::Verdict,
            Some("none") => Balance::None,
            Some(other) => {
                ctx.err(
                    b.pos,
                    format!(
                        "unknown balance '{other}'; use {}",
                        Balance::NAMES.join(", ")
                    ),
                );
                return None;
            }
            None => return None,
        },
    };
    let seed = match seed {
        None => 0,
        Some(s) => match s.value {
            NodeValue::Int(i) if i >= 0 => u64::try_from(i).ok()?,
            _ => {
                ctx.wrong_type(s, "`seed`", "a whole number ≥ 0");
                return None;
            }
        },
    };
    Some(LabelDraw {
        from: DrawSource::Labels,
        annotator,
        n,
        balance,
        seed,
        dataset,
    })
}
