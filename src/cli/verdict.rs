//! What a finished run means to the person who ran it: its exit code, and the line that
//! says what the judges sent and cost.

use std::fmt::Write as _;

use super::exit;
use super::gates::Findings;
use crate::llm;
use crate::run;

/// The exit code for a finished run: 3 when too many cells failed; else, with gates or a
/// baseline, 1 when a gate failed or the run regressed; with neither, 1 when any item did
/// not pass.
pub(crate) fn decide(
    summary: &run::Summary,
    findings: &Findings,
    max_error_rate: Option<f64>,
) -> u8 {
    if max_error_rate.is_some_and(|max| summary.error_rate() > max + 1e-12) {
        return exit::FAILURES;
    }
    let below = if findings.gates.is_empty() && findings.baseline.is_none() {
        summary.passed < summary.items
    } else {
        findings.failed()
    };
    if below { exit::BELOW } else { exit::OK }
}

/// Whether the job fails for what its items, gates and baseline say (exit 1).
pub(crate) fn job_fails(
    summary: &run::Summary,
    findings: &Findings,
    max_error_rate: Option<f64>,
) -> bool {
    decide(summary, findings, max_error_rate) != exit::OK
}

/// The gates and the baseline's verdict, on stderr.
pub(crate) fn say_findings(findings: &Findings, color: bool) {
    for line in super::gates::gate_lines(&findings.gates, color) {
        eprintln!("{line}");
    }
    if let Some(b) = &findings.baseline {
        eprintln!("{}", crate::core::text::visible(&b.text));
    }
}

/// `judge: 2,500 calls (1,200 cached), 812,000 tokens in, 130,000 out, $0.2000`
pub(crate) fn usage_line(u: &llm::RunUsage) -> String {
    let mut line = format!(
        "judge: {} requests sent, {} answered from the cache, {} tokens in, {} out",
        u.requests, u.cache_hits, u.input_tokens, u.output_tokens
    );
    if u.reasoning_tokens > 0 {
        let _ = write!(line, " ({} of them reasoning)", u.reasoning_tokens);
    }
    if u.cost > 0.0 {
        let _ = write!(line, ", ${:.4}", u.cost);
    }
    if u.rate_limited > 0 {
        let _ = write!(line, ", {} rate-limited answers", u.rate_limited);
    }
    line
}
