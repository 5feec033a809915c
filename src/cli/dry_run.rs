//! `rubricate grade --dry-run`: the judge calls a run would make, their estimated tokens and
//! cost, and how many the cache already answers. Nothing is sent.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::CliError;
use crate::engine::checks::plural;
use crate::formats::LoadedRubric;
use crate::formats::dataset::Dataset;
use crate::run::RunJudges;
use crate::run::estimate::{PerModel, Walk, estimate, group};

/// Walks the dataset (streamed) and prints the estimate to stdout.
pub(crate) fn run(
    dataset: Dataset,
    rubric: Option<&LoadedRubric>,
    override_rubric: bool,
    judges: Option<&RunJudges>,
) -> Result<u8, CliError> {
    let e = estimate(
        dataset,
        rubric,
        override_rubric,
        judges,
        Walk::default(),
        &mut |_| {},
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    out!("{}", report(e.items, &e.models, e.cannot));
    if let Some(why) = &e.first_cannot {
        outln!(
            "{} judge calls cannot be made and would fail; the first: {}",
            group(e.cannot),
            crate::core::text::visible(why)
        );
    }
    Ok(super::exit::OK)
}

fn report(items: u64, models: &BTreeMap<String, PerModel>, cannot: u64) -> String {
    let mut out = String::new();
    let calls: u64 = models.values().map(|m| m.calls).sum();
    let cached: u64 = models.values().map(|m| m.cached).sum();
    let _ = writeln!(
        out,
        "dry run: {}, {} ({} already cached → {} to send); nothing was sent",
        plural(usize::try_from(items).unwrap_or(usize::MAX), "item"),
        count(calls, "judge call"),
        group(cached),
        group(calls - cached)
    );
    if models.is_empty() {
        if cannot == 0 {
            out.push_str("no criterion is judged by an LLM: the run costs nothing\n");
        }
        return out;
    }
    let (mut cost, mut cost_max, mut priced) = (0.0, 0.0, true);
    for (id, m) in models {
        let _ = write!(
            out,
            "  {id}: {} to send, input ≈ {} tokens, output ≈ {} tokens (at most {})",
            count(m.calls - m.cached, "call"),
            group(m.input),
            group(m.output),
            group(m.output_max)
        );
        if let Some(p) = m.price {
            let typical = p.cost(m.input, m.output);
            let most = p.cost(m.input, m.output_max);
            cost += typical;
            cost_max += most;
            let _ = writeln!(out, ", ≈ ${typical:.4} (at most ${most:.4})");
        } else {
            priced = false;
            out.push_str(", no price in rubricate.yaml\n");
        }
    }
    if priced {
        let _ = writeln!(
            out,
            "estimated cost ≈ ${cost:.4} (at most ${cost_max:.4}); repair requests and retries not included"
        );
    } else {
        out.push_str("estimated cost: unknown for models without a price (add `prices:` to rubricate.yaml)\n");
    }
    out
}

fn count(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{} {what}s", group(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Price;

    #[test]
    fn figures_are_grouped_and_priced() {
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(12), "12");
        let mut models = BTreeMap::new();
        models.insert(
            "openai/m".to_owned(),
            PerModel {
                calls: 10,
                cached: 4,
                input: 1_000_000,
                output: 600,
                output_max: 6_144,
                price: Some(Price {
                    input: 0.15,
                    output: 0.6,
                }),
            },
        );
        let text = report(2, &models, 0);
        assert!(
            text.starts_with("dry run: 2 items, 10 judge calls (4 already cached → 6 to send)"),
            "{text}"
        );
        assert!(text.contains("≈ $0.1504 (at most $0.1537)"), "{text}");
    }
}
