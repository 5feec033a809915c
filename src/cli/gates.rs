//! The run's gates on the command line: which are set (`--gate`, `--fail-under`, the
//! rubric's and `rubricate.yaml`'s `gates:`), and what the output says about each; and
//! what the run's checks found beyond its items ([`Findings`]), which every output format
//! can show.

use crate::model::{GateMetric, GateOp, Rubric, RunGate};
use crate::run::gates::{GateCheck, GateSource, SetGate};

use super::style;

/// What a run's checks found beyond its items: its gates, and the comparison with a
/// baseline.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub(crate) gates: Vec<GateCheck>,
    pub(crate) baseline: Option<Baseline>,
}

/// The comparison with a baseline, as each output shows it.
#[derive(Debug)]
pub(crate) struct Baseline {
    /// The report as Markdown (regressions first).
    pub(crate) md: String,
    /// As JSON, for `--format json`.
    pub(crate) json: serde_json::Value,
    /// A line or two for stderr.
    pub(crate) text: String,
    /// The run regresses the baseline (as `--fail-on` counts).
    pub(crate) regressed: bool,
    /// The items that regressed, most first (at most the comparison's top): id, score in
    /// the baseline, score now.
    pub(crate) items: Vec<(String, f64, f64)>,
}

impl Findings {
    /// Some gate failed or the run regressed its baseline.
    pub(crate) fn failed(&self) -> bool {
        self.gates.iter().any(|g| !g.held) || self.baseline.as_ref().is_some_and(|b| b.regressed)
    }
}

/// Every gate the run must hold, flags first: `--gate`, then `--fail-under` (a gate on the
/// mean), the rubric's, the workspace's.
pub(crate) fn set_gates(
    flags: &[RunGate],
    fail_under: Option<f64>,
    rubric: Option<&Rubric>,
    config: &[RunGate],
) -> Vec<SetGate> {
    let set = |source| {
        move |gate: &RunGate| SetGate {
            gate: gate.clone(),
            source,
        }
    };
    let mut out: Vec<SetGate> = flags.iter().map(set(GateSource::Flag)).collect();
    if let Some(x) = fail_under {
        out.push(SetGate {
            gate: RunGate {
                metric: GateMetric::Mean,
                op: GateOp::AtLeast,
                threshold: x,
            },
            source: GateSource::Flag,
        });
    }
    if let Some(r) = rubric {
        out.extend(r.gates.iter().map(set(GateSource::Rubric)));
    }
    out.extend(config.iter().map(set(GateSource::Config)));
    out
}

/// `✓ pass_rate>=0.9  0.950  (19 of 20 items passed; --gate)`, one line per gate.
pub(crate) fn gate_lines(checks: &[GateCheck], color: bool) -> Vec<String> {
    checks
        .iter()
        .map(|c| {
            let mark = if c.held {
                style::green("✓ held  ", color)
            } else {
                style::red("✗ FAILED", color)
            };
            format!(
                "gate {mark} {}  {}  ({}; {})",
                c.gate,
                c.value.map_or_else(|| "n/a".into(), |v| format!("{v:.3}")),
                c.basis,
                c.source.label()
            )
        })
        .collect()
}

/// The gates as a Markdown table, failed ones first.
pub(crate) fn gates_md(checks: &[GateCheck]) -> String {
    use std::fmt::Write as _;
    if checks.is_empty() {
        return String::new();
    }
    let failed = checks.iter().filter(|c| !c.held).count();
    let mut out = format!(
        "\n### Gates: {}\n\n| | gate | value | over | set by |\n|---|---|---:|---|---|\n",
        if failed == 0 {
            format!("all {} held", checks.len())
        } else {
            format!("{failed} of {} failed", checks.len())
        }
    );
    let mut ordered: Vec<&GateCheck> = checks.iter().collect();
    ordered.sort_by_key(|c| c.held);
    for c in ordered {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} |",
            if c.held { "✅" } else { "❌" },
            c.gate.replace('|', "\\|").replace('`', "'"),
            c.value.map_or_else(|| "n/a".into(), |v| format!("{v:.3}")),
            c.basis,
            c.source.label()
        );
    }
    out
}
