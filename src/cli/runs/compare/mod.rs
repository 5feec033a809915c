//! `rubricate runs compare A B` and the comparisons of `grade --baseline` and `report A B`:
//! the comparison itself is `run::compare`'s; here, its exit code and its formats.

mod render;
#[cfg(test)]
mod tests;

pub(crate) use crate::run::compare::{FailOn, GateOptions};
pub(crate) use render::CompareFormat;

use crate::cli::CliError;
use crate::run::Recording;
use crate::run::compare::{Comparison, Gate};

/// Compares B with A, prints the report in `options.format`, and returns the gate's exit
/// code: 1 when B regresses A (as `--fail-on` counts), else 0.
pub(super) fn compare(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
    format: CompareFormat,
) -> Result<u8, CliError> {
    let (comparison, gate) = compared(a, b, options)?;
    out!(
        "{}",
        render::render(&comparison, &gate, &a.manifest, &b.manifest, format)
    );
    Ok(if gate.fails() {
        crate::cli::exit::BELOW
    } else {
        crate::cli::exit::OK
    })
}

/// B compared with A, and what the gate makes of it.
fn compared(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
) -> Result<(Comparison, Gate), CliError> {
    Ok(crate::run::compare::compare(a, b, options)?)
}

/// `report A B`: B compared with A as `runs compare --format json` gives it, with up to
/// `top` changed items (regressions first), for the page.
pub(crate) fn comparison_json(
    a: &Recording,
    b: &Recording,
    top: usize,
) -> Result<serde_json::Value, CliError> {
    let options = GateOptions {
        top,
        tolerance: 0.0,
        fail_on: FailOn::Any,
    };
    let (comparison, gate) = compared(a, b, &options)?;
    let text = render::render(
        &comparison,
        &gate,
        &a.manifest,
        &b.manifest,
        CompareFormat::Json,
    );
    serde_json::from_str(&text).map_err(|e| CliError::input(format!("the comparison: {e}")))
}

/// `grade --baseline`: the run `b` just graded against its baseline `a`, as every output of
/// `grade` shows it (Markdown, JSON, a line for stderr) and whether it regressed.
pub(crate) fn against_baseline(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
) -> Result<crate::cli::gates::Baseline, CliError> {
    let (comparison, gate) = compared(a, b, options)?;
    let render = |format| render::render(&comparison, &gate, &a.manifest, &b.manifest, format);
    // A section of grade's report: its headings one level down.
    let md = render(CompareFormat::Md)
        .lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("#{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect::<String>()
        .replacen("### rubricate runs compare", "### Against the baseline", 1);
    Ok(crate::cli::gates::Baseline {
        md,
        json: serde_json::from_str(&render(CompareFormat::Json)).unwrap_or_default(),
        text: format!("baseline: {}", render::verdict(&gate)),
        regressed: gate.fails(),
        items: comparison
            .ranked_items()
            .into_iter()
            .filter(|c| c.regression)
            .map(|c| (c.id.clone(), c.a, c.b))
            .collect(),
    })
}
