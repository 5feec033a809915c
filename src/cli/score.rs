//! `rubricate score`: score items from their ground-truth verdicts through the one
//! aggregation, with feedback — no judge, no checks.

use super::gates::Findings;
use super::grade::{check_fail_under, default_format, effective_rubric, open};
use super::output::Sink;
use super::verdict::{decide, job_fails, say_findings};
use super::{CliError, CommonArgs, style};
use crate::engine::scoring::score_ground_truth;
use crate::run::gates::GateTally;

pub(crate) fn run(common: &CommonArgs) -> Result<u8, CliError> {
    check_fail_under(common.fail_under)?;
    let dataset = open(common)?;
    let rubric = effective_rubric(common, &dataset)?;
    let config = super::grade::workspace_config()?;
    let main = rubric.as_ref().map(|r| &*r.rubric);
    let mut tally = GateTally::new(super::grade::run_gates(common, main, &config)?, main);
    let suite = rubric
        .as_ref()
        .map_or_else(|| dataset.file.clone(), |r| r.rubric.id.clone());
    let format = common.format.unwrap_or_else(default_format);
    let mut github = super::github::Github::from_env(format, &suite, main);
    let mut sink = Sink::open(
        format,
        common.out.as_deref(),
        rubric.as_ref().map(|r| &*r.rubric),
        &suite,
    )?;
    let file = dataset.file.clone();
    let mut skipped = 0usize;
    for (index, item) in dataset.items.enumerate() {
        let item = item.map_err(|d| CliError::input(d.to_string()))?;
        if item.ground_truth.is_none() {
            skipped += 1;
            continue;
        }
        let own = if common.rubric.is_some() {
            None
        } else {
            item.rubric.clone()
        };
        let Some(r) = own.or_else(|| rubric.as_ref().map(|r| std::sync::Arc::clone(&r.rubric)))
        else {
            return Err(CliError::input(format!(
                "{}: item '{}' has no rubric and {file} has none; pass --rubric FILE or NAME",
                item.origin, item.id
            )));
        };
        let evaluation = score_ground_truth(&r, &item, "ground_truth")
            .map_err(|m| CliError::input(format!("{}: {m}", item.origin)))?;
        tally.add(&evaluation);
        if let Some(g) = github.as_mut() {
            g.add(index, &item.origin, &evaluation);
        }
        sink.write(&evaluation)?;
    }
    let findings = Findings {
        gates: tally.check(&sink.summary),
        baseline: None,
    };
    let prints = sink.prints_summary();
    let summary = sink.finish(&findings)?;
    let color = style::color_enabled(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if !prints {
        eprintln!("{}", super::output::summary_line(&summary, color));
        if let Some(tags) = summary.tags_line(1000) {
            eprintln!("{}", crate::core::text::visible(&tags));
        }
    }
    say_findings(&findings, color);
    if let Some(g) = github {
        g.finish(&summary, &findings, job_fails(&summary, &findings, None))?;
    }
    if skipped > 0 {
        eprintln!("skipped {skipped} items without ground_truth");
    }
    if summary.items == 0 {
        return Err(CliError::input(format!(
            "{file}: no item has ground_truth to score"
        )));
    }
    Ok(decide(&summary, &findings, None))
}
