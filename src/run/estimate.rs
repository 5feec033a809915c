//! What a run would cost before it starts: the judge calls each strategy would send (the
//! exact first requests), how many the cache already answers, input tokens, output tokens
//! (typical and at most) and cost where prices are known. The walk is streamed, reports its
//! progress, can be stopped at any item, and can stop after a sample of items and scale up
//! (saying so). `grade --dry-run` prints it; the TUI shows it and asks before a large run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Error, RunJudges};
use crate::formats::LoadedRubric;
use crate::formats::dataset::Dataset;
use crate::llm::{Price, estimate_input_tokens};
use crate::model::{Criterion, Method};

/// A judge reply is a reason of a sentence or two and a verdict: about this many tokens.
pub const TYPICAL_REPLY_TOKENS: u64 = 100;

/// One judge model's share of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerModel {
    pub calls: u64,
    pub cached: u64,
    pub input: u64,
    pub output: u64,
    pub output_max: u64,
    pub price: Option<Price>,
}

/// The estimate of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// Items walked.
    pub items: u64,
    pub models: BTreeMap<String, PerModel>,
    /// The walk covered a sample of `items` out of this many, and the figures were scaled
    /// up to the whole.
    pub scaled_from: Option<u64>,
    /// The walk was stopped before the end (the figures cover what was walked).
    pub stopped: bool,
    /// Calls that cannot be made (a judge template that does not render…), and why the
    /// first could not.
    pub cannot: u64,
    pub first_cannot: Option<String>,
}

impl Estimate {
    pub fn calls(&self) -> u64 {
        self.models.values().map(|m| m.calls).sum()
    }

    pub fn cached(&self) -> u64 {
        self.models.values().map(|m| m.cached).sum()
    }

    pub fn to_send(&self) -> u64 {
        self.calls() - self.cached()
    }

    /// Typical cost; `None` when a model has no price.
    pub fn cost(&self) -> Option<f64> {
        self.models
            .values()
            .map(|m| m.price.map(|p| p.cost(m.input, m.output)))
            .sum()
    }

    /// Cost if every reply used its most tokens; `None` when a model has no price.
    pub fn cost_max(&self) -> Option<f64> {
        self.models
            .values()
            .map(|m| m.price.map(|p| p.cost(m.input, m.output_max)))
            .sum()
    }

    /// `1,200 judge calls (200 cached → 1,000 to send) · ≈412,000 tokens · ≈$0.0412` (or
    /// `no prices set`), with how it was estimated.
    pub fn line(&self) -> String {
        if self.models.is_empty() {
            return "no criterion is judged by an LLM (or no judge is set): the run costs nothing"
                .into();
        }
        let tokens: u64 = self.models.values().map(|m| m.input + m.output).sum();
        let cost = match self.cost() {
            Some(c) => format!("≈${c:.4}"),
            None => "cost unknown: no prices set (prices: in rubricate.yaml)".into(),
        };
        let mut line = format!(
            "{} judge calls ({} cached → {} to send) · ≈{} tokens · {cost}",
            group(self.calls()),
            group(self.cached()),
            group(self.to_send()),
            group(tokens)
        );
        if let Some(total) = self.scaled_from {
            let _ = write!(
                line,
                " · scaled up from the first {} of {} items",
                group(self.items),
                group(total)
            );
        } else if self.stopped {
            let _ = write!(line, " · first {} items only (stopped)", group(self.items));
        }
        if let Some(why) = &self.first_cannot {
            let _ = write!(
                line,
                " · {} calls cannot be made ({why})",
                group(self.cannot)
            );
        }
        line
    }

    /// Every figure × `factor` (a sample scaled up to the whole).
    fn scale(&mut self, walked: u64, total: u64) {
        if walked == 0 || total <= walked {
            return;
        }
        let f = total as f64 / walked as f64;
        let up = |n: u64| (n as f64 * f).round() as u64;
        for m in self.models.values_mut() {
            m.calls = up(m.calls);
            m.cached = up(m.cached).min(m.calls);
            m.input = up(m.input);
            m.output = up(m.output);
            m.output_max = up(m.output_max);
        }
        self.cannot = up(self.cannot);
        self.scaled_from = Some(total);
    }
}

/// How far to walk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk<'a> {
    /// Walk only this many items, then scale to `total` (when known).
    pub sample: Option<u64>,
    pub total: Option<u64>,
    /// Set from elsewhere to stop the walk (a quit).
    pub stop: Option<&'a AtomicBool>,
}

/// Walks the dataset (streamed), calling `progress` with the items walked every 1,000.
pub fn estimate(
    dataset: Dataset,
    rubric: Option<&LoadedRubric>,
    override_rubric: bool,
    judges: Option<&RunJudges>,
    walk: Walk<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Estimate, Error> {
    let file = dataset.file.clone();
    let mut out = Estimate::default();
    for item in dataset.items {
        if walk.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            out.stopped = true;
            break;
        }
        if walk.sample.is_some_and(|n| out.items >= n) {
            if let Some(total) = walk.total {
                out.scale(out.items, total);
            } else {
                out.stopped = true;
            }
            break;
        }
        let mut item = item?;
        out.items += 1;
        if out.items.is_multiple_of(1000) {
            progress(out.items);
        }
        if override_rubric {
            item.rubric = None;
        }
        let Some(r) = item
            .rubric
            .clone()
            .or_else(|| rubric.map(|r| r.rubric.clone()))
        else {
            return Err(Error::input(format!(
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
        let (planned, cannot) = judges.panel.plan(&r, &by_llm, &item);
        out.cannot += cannot.len() as u64;
        if out.first_cannot.is_none() {
            out.first_cannot = cannot
                .into_iter()
                .next()
                .map(|why| format!("item {}: {why}", item.id));
        }
        for (judge, request) in planned {
            let m = out.models.entry(judge.client.id.clone()).or_default();
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
    Ok(out)
}

/// 1234567 → "1,234,567".
pub fn group(n: u64) -> String {
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
    fn lines_say_when_prices_are_missing_and_when_a_sample_was_scaled() {
        let mut e = Estimate {
            items: 10,
            ..Estimate::default()
        };
        e.models.insert(
            "openai/m".into(),
            PerModel {
                calls: 20,
                cached: 5,
                input: 1000,
                output: 300,
                output_max: 900,
                price: None,
            },
        );
        assert_eq!(
            e.line(),
            "20 judge calls (5 cached → 15 to send) · ≈1,300 tokens · cost unknown: no prices set (prices: in rubricate.yaml)"
        );
        e.scale(10, 1_000_000);
        assert_eq!(e.calls(), 2_000_000);
        assert!(
            e.line()
                .ends_with("scaled up from the first 10 of 1,000,000 items")
        );
        e.models.get_mut("openai/m").unwrap().price = Some(Price {
            input: 1.0,
            output: 2.0,
        });
        assert!(e.cost().is_some());
        assert!(e.line().contains("≈$"), "{}", e.line());
    }
}
