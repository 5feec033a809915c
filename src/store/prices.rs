//! `prices:` in `rubricate.yaml`: dollars per million tokens by model id, live and, under
//! `batch:`, through the provider's batch engine.

use std::collections::BTreeMap;

use crate::formats::fields::{Ctx, Fields};
use crate::formats::node::Node;
use crate::llm::Price;

const PRICE_KNOWN: &[&str] = &["input", "output", "batch"];
const BATCH_PRICE_KNOWN: &[&str] = &["input", "output"];

/// What the config does with a mapping's keys once read (unknown ones become warnings).
pub(super) type Finish<'f> = &'f mut dyn FnMut(&mut Ctx<'_>, Fields<'_>, &[&str]);

/// `{MODEL: {input, output, batch: {input, output}}}` → live prices, batch prices.
pub(super) fn prices(
    ctx: &mut Ctx<'_>,
    node: &Node,
    finish: Finish<'_>,
) -> (BTreeMap<String, Price>, BTreeMap<String, Price>) {
    let Some(entries) = node.as_map() else {
        ctx.wrong_type(node, "`prices`", "a mapping of model ids");
        return (BTreeMap::new(), BTreeMap::new());
    };
    let mut live = BTreeMap::new();
    let mut batch = BTreeMap::new();
    for (model, value) in entries {
        let what = format!("the price of '{}'", model.text);
        let Some(mut f) = Fields::of(ctx, value, &what) else {
            continue;
        };
        let batch_node = f.take("batch");
        if let Some(p) = price(ctx, f, value, &what, PRICE_KNOWN, finish) {
            live.insert(model.text.clone(), p);
        }
        if let Some(n) = batch_node {
            let what = format!("the batch price of '{}'", model.text);
            if let Some(f) = Fields::of(ctx, n, &what)
                && let Some(p) = price(ctx, f, n, &what, BATCH_PRICE_KNOWN, finish)
            {
                batch.insert(model.text.clone(), p);
            }
        }
    }
    (live, batch)
}

/// `{input, output}`, both required.
fn price(
    ctx: &mut Ctx<'_>,
    mut f: Fields<'_>,
    node: &Node,
    what: &str,
    known: &[&str],
    finish: Finish<'_>,
) -> Option<Price> {
    let mut read = |ctx: &mut Ctx<'_>, key: &str| {
        let n = f.take(key)?;
        let x = n.as_f64().filter(|x| x.is_finite() && *x >= 0.0);
        if x.is_none() {
            ctx.err(
                n.pos,
                format!("`{key}` is dollars per million tokens: a number of at least 0"),
            );
        }
        x
    };
    let before = ctx.diags.len();
    let input = read(ctx, "input");
    let output = read(ctx, "output");
    let invalid = ctx.diags.len() > before;
    finish(ctx, f, known);
    match (input, output) {
        (Some(input), Some(output)) => Some(Price { input, output }),
        _ if invalid => None,
        _ => {
            ctx.err(
                node.pos,
                format!("{what} needs `input` and `output` (dollars per million tokens)"),
            );
            None
        }
    }
}
