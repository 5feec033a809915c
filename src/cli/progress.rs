//! The progress line on stderr while a judged run goes (only when stderr is a terminal):
//! items done, calls per second, tokens, cost and errors, redrawn a few times a second.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::llm::Meter;
use crate::model::Evaluation;

pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    meter: Arc<Meter>,
    start: Instant,
    items: u64,
    failures: u64,
}

impl Progress {
    /// A progress line when `show`, else a silent counter.
    pub(crate) fn new(show: bool, meter: Arc<Meter>) -> Self {
        let bar = show.then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Self {
            bar,
            meter,
            start: Instant::now(),
            items: 0,
            failures: 0,
        }
    }

    pub(crate) fn item_done(&mut self, evaluation: &Evaluation) {
        self.items += 1;
        self.failures += evaluation.failures as u64;
        if let Some(bar) = &self.bar {
            bar.set_message(self.line());
        }
    }

    /// `12 items · 3.4 calls/s · 1,234 tokens · $0.0012 · 0 errors`
    pub(crate) fn line(&self) -> String {
        let u = self.meter.snapshot();
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        #[allow(clippy::cast_precision_loss)] // display only
        let rate = u.requests as f64 / secs;
        let mut line = format!(
            "{} items · {rate:.1} calls/s · {} tokens",
            self.items,
            u.input_tokens + u.output_tokens
        );
        if u.cost > 0.0 {
            let _ = write!(line, " · ${:.4}", u.cost);
        }
        if u.cache_hits > 0 {
            let _ = write!(line, " · {} cached", u.cache_hits);
        }
        let _ = write!(line, " · {} errors", self.failures);
        if u.rate_limited > 0 {
            let _ = write!(line, " · {} rate-limited", u.rate_limited);
        }
        line
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
