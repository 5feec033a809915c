//! `rubricate grade`: stream a dataset through the executor and write results in order.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::output::Sink;
use super::progress::Progress;
use super::{CliError, CommonArgs, FeedbackMode, JudgeArgs, OutputFormat, exit, judges, style};
use crate::engine::checks::plural;
use crate::engine::{CancelToken, EventKind, ExecOptions, Executor, InOrder, compile};
use crate::formats::dataset::{Dataset, ReadOptions, open_dataset};
use crate::formats::{Diagnostic, LoadedRubric, load_rubric_as};
use crate::llm;

pub fn run(
    common: &CommonArgs,
    judge_args: &JudgeArgs,
    concurrency: Option<usize>,
    allow_commands: bool,
    max_error_rate: f64,
) -> Result<u8, CliError> {
    if !(0.0..=1.0).contains(&max_error_rate) {
        return Err(CliError::input("--max-error-rate must be between 0 and 1"));
    }
    check_fail_under(common.fail_under)?;
    let config = workspace_config()?;
    let dataset = open(common)?;
    let rubric = effective_rubric(common, &dataset)?;
    let compiled = rubric.as_ref().map(compile).transpose()?.map(Arc::new);
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let judges = judges::build(judge_args, rubric.as_ref(), concurrency, &config)?;
    let override_rubric = common.rubric.is_some();
    if judge_args.dry_run {
        return super::dry_run::run(dataset, rubric.as_ref(), override_rubric, judges.as_ref());
    }
    let default_concurrency = if judges.is_some() {
        config.judge.concurrency.unwrap_or(16)
    } else {
        cores
    };
    let concurrency = concurrency.unwrap_or(default_concurrency).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(concurrency))
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
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
    let has_default = compiled.is_some();
    let allow_commands = allow_commands || config.allow_commands;
    let meter = judges
        .as_ref()
        .map_or_else(|| Arc::new(llm::Meter::default()), |j| Arc::clone(&j.meter));
    let show_progress = judges.is_some() && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = Progress::new(show_progress, Arc::clone(&meter));
    let opts = ExecOptions {
        concurrency,
        allow_commands,
        judge: judges.map(|j| j.panel),
        llm_feedback: judge_args.feedback == FeedbackMode::Llm,
        ..ExecOptions::default()
    };

    let input_error: Arc<Mutex<Option<Diagnostic>>> = Arc::default();
    let mut stopped_for_cost = None;
    let write_error = runtime.block_on(async {
        let (item_tx, item_rx) = mpsc::channel(1024);
        let (event_tx, mut event_rx) = mpsc::channel(4096);
        let reader = feed(
            dataset,
            item_tx,
            override_rubric,
            has_default,
            Arc::clone(&input_error),
        );
        let input_error = Arc::clone(&input_error);
        let executor = Executor::new(opts);
        let cancel = CancelToken::default();
        let stop = cancel.clone();
        let run =
            tokio::spawn(async move { executor.run(compiled, item_rx, event_tx, cancel).await });
        let mut order = InOrder::new();
        let mut write_error = None;
        while let Some(ev) = event_rx.recv().await {
            if let EventKind::ItemDone(evaluation) = ev.kind {
                progress.item_done(&evaluation);
                // The budget is spent: no new item starts; those in flight finish.
                if stopped_for_cost.is_none()
                    && let Some(why) = meter.over_budget()
                {
                    stop.cancel();
                    stopped_for_cost = Some(why);
                }
                for e in order.push(ev.item, evaluation) {
                    if write_error.is_none() {
                        write_error = sink.write(&e).err();
                    }
                }
            }
        }
        let _ = run.await;
        progress.finish();
        if reader.join().is_err()
            && let Ok(mut slot) = input_error.lock()
        {
            slot.get_or_insert_with(|| {
                Diagnostic::whole(
                    &common.dataset.display().to_string(),
                    "reading the dataset failed unexpectedly (a bug); results are incomplete",
                )
            });
        }
        write_error
    });
    if let Some(e) = write_error {
        return Err(e);
    }
    let prints = sink.prints_summary();
    let summary = sink.finish()?;
    let color = style::color_enabled(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if !prints {
        eprintln!("{}", summary.line(color));
    }
    let usage = meter.snapshot();
    if usage.requests + usage.cache_hits > 0 {
        eprintln!("{}", usage_line(&usage));
    }
    if let Some(d) = input_error.lock().ok().and_then(|mut g| g.take()) {
        return Err(CliError::input(format!(
            "{d}\n(results cover the {} before this point)",
            plural(summary.items, "item")
        )));
    }
    if let Some(why) = stopped_for_cost {
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
    Ok(decide(&summary, common.fail_under, Some(max_error_rate)))
}

/// `judge: 2,500 calls (1,200 cached), 812,000 tokens in, 130,000 out, $0.2000`
fn usage_line(u: &llm::RunUsage) -> String {
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

/// Reads items on a thread of its own (file I/O never blocks the executor) and sends them
/// tagged with their position. The first input problem stops reading and is kept.
fn feed(
    dataset: Dataset,
    tx: mpsc::Sender<(usize, crate::model::Item)>,
    override_rubric: bool,
    has_default: bool,
    error: Arc<Mutex<Option<Diagnostic>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let file = dataset.file.clone();
        for (index, item) in dataset.items.enumerate() {
            let problem = match item {
                Ok(mut item) => {
                    if override_rubric {
                        item.rubric = None;
                    }
                    if item.rubric.is_none() && !has_default {
                        Some(Diagnostic::whole(
                            &item.origin,
                            format!(
                                "item '{}' has no rubric and {file} has none; pass --rubric FILE or NAME",
                                item.id
                            ),
                        ))
                    } else if tx.blocking_send((index, item)).is_err() {
                        return;
                    } else {
                        None
                    }
                }
                Err(d) => Some(d),
            };
            if let Some(d) = problem {
                if let Ok(mut slot) = error.lock() {
                    *slot = Some(d);
                }
                return;
            }
        }
    })
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
