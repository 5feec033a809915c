//! `rubricate grade`: stream a dataset through the executor and write results in order
//! (and, with `--save`, journal them as a run in the workspace).

use std::fmt::Write as _;

use super::execute::{Job, execute};
use super::output::Sink;
use super::{CliError, CommonArgs, JudgeArgs, OutputFormat, exit, judges, style};
use crate::engine::checks::plural;
use crate::formats::dataset::{Dataset, ReadOptions, open_dataset};
use crate::formats::{LoadedRubric, load_rubric_as};
use crate::llm;

pub fn run(
    common: &CommonArgs,
    judge_args: &JudgeArgs,
    opts: &GradeOptions,
    workspace: Option<&std::path::Path>,
) -> Result<u8, CliError> {
    if !(0.0..=1.0).contains(&opts.max_error_rate) {
        return Err(CliError::input("--max-error-rate must be between 0 and 1"));
    }
    check_fail_under(common.fail_under)?;
    let config = workspace_config()?;
    let dataset = open(common)?;
    let rubric = effective_rubric(common, &dataset)?;
    let override_rubric = common.rubric.is_some();
    if judge_args.dry_run {
        let judges = judges::build(judge_args, rubric.as_ref(), opts.concurrency, &config)?;
        return super::dry_run::run(dataset, rubric.as_ref(), override_rubric, judges.as_ref());
    }
    let suite = rubric
        .as_ref()
        .map_or_else(|| dataset.file.clone(), |r| r.rubric.id.clone());
    let format = common.format.unwrap_or_else(default_format);
    let mut sink = Sink::open(
        format,
        common.out.as_deref(),
        rubric.as_ref().map(|r| &*r.rubric),
        &suite,
    )?;
    let mut saved = match &opts.save {
        Some(save) => Some(super::runs::SavedRun::start(
            workspace,
            save.name.as_deref(),
            common,
            rubric.as_ref(),
            judge_args,
            opts,
        )?),
        None => None,
    };
    let ended = execute(
        Job {
            dataset,
            rubric,
            override_rubric,
            judge_args,
            concurrency: opts.concurrency,
            allow_commands: opts.allow_commands,
            config: &config,
            done: None,
        },
        |index, e| {
            if let Some(run) = &mut saved {
                run.append(index, &e)?;
            }
            sink.write(&e)
        },
    )?;
    let prints = sink.prints_summary();
    let summary = sink.finish()?;
    let color = style::color_enabled(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if !prints {
        eprintln!("{}", summary.line(color));
    }
    let usage = ended.meter.snapshot();
    if usage.requests + usage.cache_hits > 0 {
        eprintln!("{}", usage_line(&usage));
    }
    if let Some(run) = saved {
        run.finish(
            &summary,
            &usage,
            ended.input_error.is_none() && ended.stopped_for_cost.is_none(),
        )?;
    }
    if let Some(d) = ended.input_error {
        return Err(CliError::input(format!(
            "{d}\n(results cover the {} before this point)",
            plural(summary.items, "item")
        )));
    }
    if let Some(why) = ended.stopped_for_cost {
        eprintln!(
            "stopped: {why}; {} graded, the rest not started",
            plural(summary.items, "item")
        );
        return Ok(exit::FAILURES);
    }
    if summary.items == 0 {
        return Err(CliError::input(format!(
            "{}: the dataset has no items; nothing was graded",
            common.dataset.display()
        )));
    }
    Ok(decide(
        &summary,
        common.fail_under,
        Some(opts.max_error_rate),
    ))
}

/// A run to record, with its name if it has one.
#[derive(Debug, Clone)]
pub struct SaveAs {
    pub name: Option<String>,
}

/// `grade`'s options beyond the dataset and the judge (kept in a saved run's manifest).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GradeOptions {
    pub concurrency: Option<usize>,
    pub allow_commands: bool,
    pub max_error_rate: f64,
    /// Record the run in the workspace.
    #[serde(skip)]
    pub save: Option<SaveAs>,
}

/// `judge: 2,500 calls (1,200 cached), 812,000 tokens in, 130,000 out, $0.2000`
pub fn usage_line(u: &llm::RunUsage) -> String {
    let mut line = format!(
        "judge: {} requests sent, {} answered from the cache, {} tokens in, {} out",
        u.requests, u.cache_hits, u.input_tokens, u.output_tokens
    );
    if u.cost > 0.0 {
        let _ = write!(line, ", ${:.4}", u.cost);
    }
    if u.rate_limited > 0 {
        let _ = write!(line, ", {} rate-limited answers", u.rate_limited);
    }
    line
}

/// The workspace's `rubricate.yaml` (warnings go to stderr).
fn workspace_config() -> Result<crate::store::WorkspaceConfig, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let (config, warnings) = crate::store::load_config(&cwd)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    Ok(config)
}

pub fn check_fail_under(x: Option<f64>) -> Result<(), CliError> {
    match x {
        Some(x) if !x.is_finite() => Err(CliError::input("--fail-under must be a number")),
        _ => Ok(()),
    }
}

pub fn open(common: &CommonArgs) -> Result<Dataset, CliError> {
    let opts = ReadOptions {
        max_item_bytes: common.max_item_mb.max(1) * 1024 * 1024,
        ..ReadOptions::default()
    };
    Ok(open_dataset(&common.dataset, opts)?)
}

/// `--rubric` first, else the dataset's own rubric; `None` when items must bring theirs.
pub fn effective_rubric(
    common: &CommonArgs,
    dataset: &Dataset,
) -> Result<Option<LoadedRubric>, CliError> {
    match &common.rubric {
        Some(spec) => Ok(Some(load_rubric_as(spec, common.from)?)),
        None => Ok(dataset.header.rubric.clone()),
    }
}

pub fn default_format() -> OutputFormat {
    if style::stdout_is_terminal() {
        OutputFormat::Table
    } else {
        OutputFormat::Jsonl
    }
}

/// The exit code for a finished run.
pub fn decide(
    summary: &super::output::Summary,
    fail_under: Option<f64>,
    max_error_rate: Option<f64>,
) -> u8 {
    if max_error_rate.is_some_and(|max| summary.error_rate() > max + 1e-12) {
        return exit::FAILURES;
    }
    let below = match fail_under {
        Some(x) => summary
            .mean_score()
            .is_none_or(|m| !crate::engine::aggregate::reaches(m, x)),
        None => summary.passed < summary.items,
    };
    if below { exit::BELOW } else { exit::OK }
}
