//! `rubricate labels next`: the items to label next, each with why, and each criterion's
//! stop rule (the plan is `run::label_next`'s).

use std::fmt::Write as _;

use super::{CliError, exit};
use crate::store::labels::dataset_key;

/// `labels next`: the order to label in, and each criterion's stop rule.
pub(crate) fn next(
    ws: &crate::store::Workspace,
    dataset: &std::path::Path,
    annotator: &str,
    n: usize,
    target: f64,
    between: &[String],
    format: super::metrics::MetricsFormat,
) -> Result<u8, CliError> {
    if !(target.is_finite() && target > 0.0 && target < 1.0) {
        return Err(CliError::input(
            "--target is a half-width between 0 and 1, like 0.05",
        ));
    }
    if between.len() == 1 {
        return Err(CliError::input(
            "--between takes two runs or more (the candidates to tell apart)",
        ));
    }
    // Runs by id, name or prefix.
    let between: Vec<String> = between
        .iter()
        .map(|r| {
            crate::store::runs::RunDir::find(&ws.runs_dir(), r)
                .and_then(|d| d.read_manifest())
                .map(|m| m.id)
                .map_err(|e| CliError::input(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let bootstrap = crate::metrics::Bootstrap::default();
    let plan =
        crate::run::label_next::plan(ws, dataset, annotator, n, target, &bootstrap, &between)
            .map_err(|e| CliError::input(e.to_string()))?;
    if plan.runs == 0 {
        return Err(CliError::input(format!(
            "no run over {} yet: grade it first (`rubricate grade --rubric R {} --save`); the order comes from the judges' verdicts",
            dataset.display(),
            dataset.display()
        )));
    }
    if format == super::metrics::MetricsFormat::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&plan).unwrap_or_default()
        );
        return Ok(exit::OK);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "next {} for {} in '{}' (from {}{}):",
        crate::engine::checks::plural(plan.next.len(), "item"),
        plan.annotator,
        dataset_key(dataset),
        crate::engine::checks::plural(plan.runs, "run"),
        plan.assigned
            .map(|n| format!("; of the {n} items assigned to them"))
            .unwrap_or_default()
    );
    for item in &plan.next {
        let why = if item.reasons.is_empty() {
            "the judges agree (coverage)".to_owned()
        } else {
            item.reasons.join("; ")
        };
        let _ = writeln!(
            out,
            "  {:<16} {}",
            crate::core::text::clipped(&item.item, 16),
            crate::core::text::visible(&why)
        );
    }
    if plan.next.is_empty() {
        let _ = writeln!(
            out,
            "  nothing: every graded item{} is labelled",
            if plan.assigned.is_some() {
                " assigned to them"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "\n{:<22} {:>8} {:>7} {:>10} {:>14}",
        "CRITERION",
        "LABELLED",
        "KAPPA",
        "CI ±",
        format!("MORE TO ±{target}")
    );
    for c in &plan.criteria {
        let _ = writeln!(
            out,
            "{:<22} {:>8} {:>7} {:>10} {:>14}",
            crate::core::text::clipped(&c.criterion, 22),
            c.labelled,
            c.kappa.map_or_else(|| "-".into(), |k| format!("{k:.3}")),
            c.half_width
                .map_or_else(|| "-".into(), |w| format!("{w:.3}")),
            match c.more_needed {
                Some(0) => "reached".to_owned(),
                Some(m) => format!("~{m}"),
                None => "no interval yet".to_owned(),
            }
        );
    }
    out!("{out}");
    Ok(exit::OK)
}
