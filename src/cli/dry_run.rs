//! `rubricate grade --dry-run`: the judge calls a run would make, their estimated tokens and
//! cost, and how many the cache already answers. Nothing is sent.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::CliError;
use super::judges::RunJudges;
use crate::engine::checks::plural;
use crate::formats::dataset::Dataset;
use crate::formats::{Diagnostic, LoadedRubric};
use crate::llm::{Price, estimate_input_tokens};
use crate::model::{Criterion, Method};

/// A judge reply is a reason of a sentence or two and a verdict: about this many tokens.
const TYPICAL_REPLY_TOKENS: u64 = 100;

#[derive(Debug, Default)]
struct PerModel {
    calls: u64,
    cached: u64,
    input: u64,
    output: u64,
    output_max: u64,
    price: Option<Price>,
}

/// Walks the dataset (streamed) and prints the estimate to stdout.
pub fn run(
    dataset: Dataset,
    rubric: Option<&LoadedRubric>,
    override_rubric: bool,
    judges: Option<&RunJudges>,
) -> Result<u8, CliError> {
    let file = dataset.file.clone();
    let mut items = 0u64;
    let mut models: BTreeMap<String, PerModel> = BTreeMap::new();
    for item in dataset.items {
        let mut item = item.map_err(|d: Diagnostic| CliError::input(d.to_string()))?;
        items += 1;
        if override_rubric {
            item.rubric = None;
        }
        let Some(r) = item
            .rubric
            .clone()
            .or_else(|| rubric.map(|r| r.rubric.clone()))
        else {
            return Err(CliError::input(format!(
                "item '{}' has no rubric and {file} has none; pass --rubric FILE or NAME",
                item.id
            )));
        };
        let Some(judges) = judges else { continue };
        let by_llm: Vec<&Criterion> = r
            .criteria
            .iter()
            .filter(|c| matches!(c.method, Method::Judge(_)))
            .collect();
        for (judge, request) in judges.panel.plan(&r, &by_llm, &item) {
            let m = models.entry(judge.client.id.clone()).or_default();
            m.price = judge.client.price();
            m.calls += 1;
            if judge.client.is_cached(&request) {
                m.cached += 1;
                continue;
            }
            m.input += estimate_input_tokens(&request);
            m.output += TYPICAL_REPLY_TOKENS.min(u64::from(request.max_tokens));
            m.output_max += u64::from(request.max_tokens);
        }
    }
    println!("{}", report(items, &models));
    Ok(super::exit::OK)
}

fn report(items: u64, models: &BTreeMap<String, PerModel>) -> String {
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
        out.push_str("no criterion is judged by an LLM: the run costs nothing\n");
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

/// 1234567 → "1,234,567".
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let text = report(2, &models);
        assert!(
            text.starts_with("dry run: 2 items, 10 judge calls (4 already cached → 6 to send)"),
            "{text}"
        );
        assert!(text.contains("≈ $0.1504 (at most $0.1537)"), "{text}");
    }
}
