//! What a run has used: calls, cache hits, tokens, cost, failures, shared by every judge of
//! the run. The cost budget (`--max-cost`) is checked here before each call is sent.

use std::sync::Mutex;

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Price {
    /// Dollars per million input tokens.
    pub input: f64,
    /// Dollars per million output tokens.
    pub output: f64,
}

impl Price {
    /// Dollars for this many tokens.
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^52
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input + output_tokens as f64 * self.output) / 1_000_000.0
    }
}

/// Totals so far.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Usage {
    /// Requests sent (retries included).
    pub requests: u64,
    /// Calls answered from the cache or by an identical call in flight.
    pub cache_hits: u64,
    /// Prompt tokens the providers counted.
    pub input_tokens: u64,
    /// Reply tokens the providers counted (reasoning tokens included).
    pub output_tokens: u64,
    /// Of those, tokens reasoning judges spent thinking, where the provider says.
    pub reasoning_tokens: u64,
    /// Dollars, for models with a price.
    pub cost: f64,
    /// Calls that ended in an error after their retries.
    pub failed_calls: u64,
    /// 429 answers seen.
    pub rate_limited: u64,
}

/// A run's usage, counted by every judge call of the run, with its cost budget.
#[derive(Debug, Default)]
pub struct Meter {
    totals: Mutex<Usage>,
    max_cost: Option<f64>,
}

impl Meter {
    /// A meter that refuses new calls once `max_cost` dollars are spent (no limit: `None`).
    pub fn new(max_cost: Option<f64>) -> Self {
        Self {
            totals: Mutex::new(Usage::default()),
            max_cost,
        }
    }

    /// The totals now.
    pub fn snapshot(&self) -> Usage {
        self.totals.lock().map(|t| *t).unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut Usage)) {
        if let Ok(mut t) = self.totals.lock() {
            f(&mut t);
        }
    }

    /// `Some(message)` once the budget is spent: no new call may be sent.
    pub fn over_budget(&self) -> Option<String> {
        let max = self.max_cost?;
        let spent = self.snapshot().cost;
        (spent >= max).then(|| format!("the cost limit (${max}) was reached (${spent:.4} spent)"))
    }

    /// A request was sent.
    pub fn sent(&self) {
        self.update(|t| t.requests += 1);
    }

    /// A reply arrived (costed at `price`; its reasoning tokens are part of its output
    /// tokens, so they are paid at the output price).
    pub fn answered(&self, response: &super::ChatResponse, price: Option<Price>) {
        self.update(|t| {
            t.input_tokens += response.input_tokens;
            t.output_tokens += response.output_tokens;
            t.reasoning_tokens += response.reasoning_tokens;
            if let Some(p) = price {
                t.cost += p.cost(response.input_tokens, response.output_tokens);
            }
        });
    }

    /// A call was answered without a request.
    pub fn cache_hit(&self) {
        self.update(|t| t.cache_hits += 1);
    }

    /// A call failed after its retries.
    pub fn failed(&self) {
        self.update(|t| t.failed_calls += 1);
    }

    /// A 429 came back.
    pub fn rate_limited(&self) {
        self.update(|t| t.rate_limited += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_and_budget() {
        let price = Price {
            input: 0.15,
            output: 0.60,
        };
        assert!((price.cost(1_000_000, 500_000) - 0.45).abs() < 1e-12);
        let m = Meter::new(Some(0.001));
        let reply = crate::llm::ChatResponse {
            input_tokens: 2_000,
            output_tokens: 1_000,
            reasoning_tokens: 600,
            ..Default::default()
        };
        m.answered(&reply, Some(price));
        assert!(m.over_budget().is_none());
        m.answered(&reply, Some(price));
        assert_eq!(m.snapshot().reasoning_tokens, 1_200);
        let why = m.over_budget().unwrap();
        assert!(why.contains("cost limit ($0.001)"), "{why}");
        assert_eq!(m.snapshot().input_tokens, 4_000);
    }
}
