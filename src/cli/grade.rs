//! `rubricate grade`: the run engine over a dataset, results written in input order as a
//! table, JSON, JSONL, CSV or `JUnit` (and, with `--save`, the run recorded in the workspace).

use super::baseline::Scratch;
use super::gates::{Findings, set_gates};
use super::github::Github;
use super::output::{Sink, summary_line};
use super::progress::Progress;
use super::verdict::{decide, job_fails, say_findings, usage_line};
use super::{CliError, CommonArgs, JudgeArgs, OutputFormat, exit, style};
use crate::engine::checks::plural;
use crate::formats::dataset::{Dataset, open_dataset};
use crate::run::gates::{GateTally, SetGate};
use crate::run::{self, Control, Env, GradeSettings, NewRun, RunEvent, RunSettings, Stop};

pub(crate) fn run(
    common: &CommonArgs,
    judge_args: &JudgeArgs,
    opts: &GradeOptions,
    workspace: Option<&std::path::Path>,
) -> Result<u8, CliError> {
    if !(0.0..=1.0).contains(&opts.grade.max_error_rate) {
        return Err(CliError::input("--max-error-rate must be between 0 and 1"));
    }
    check_fail_under(common.fail_under)?;
    judge_args.one_setting()?;
    let config = workspace_config()?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let env = Env {
        config: &config,
        cache_from: &cwd,
    };
    let settings = RunSettings {
        judge: crate::run::JudgeSettings {
            batch: opts.batch,
            ..judge_args.settings()
        },
        grade: opts.grade.clone(),
        override_rubric: common.rubric.is_some(),
        max_item_mb: common.max_item_mb,
        subset: None,
    };
    let settings = match subset_choice(&opts.subset, judge_args.seed)? {
        Some(choice) => RunSettings {
            subset: Some(run::subset::choose(
                &common.dataset,
                settings.read_options(),
                &choice,
            )?),
            ..settings
        },
        None => settings,
    };
    let rubric = match &common.rubric {
        Some(spec) => Some(super::rubric_arg::load(spec, common.from, workspace)?),
        None => None,
    };
    // The flags' and the workspace's gates are checked against the rubric before anything
    // is graded (or paid for).
    let gate_rubric = if common.gate.is_empty() && config.gates.is_empty() {
        rubric.clone()
    } else {
        run::effective_rubric(rubric.clone(), &open(common)?)
    };
    run_gates(common, gate_rubric.as_ref().map(|r| &*r.rubric), &config)?;
    if let Some(r) = &rubric {
        warn_turns_without_conversation(&r.rubric, common);
    }
    if judge_args.dry_run {
        let dataset = open(common)?;
        let rubric = run::pairwise::expanded(
            run::effective_rubric(rubric, &dataset),
            &common.dataset,
            settings.read_options(),
        )?;
        let judges = run::judges::build(
            &settings.judge,
            rubric.as_ref(),
            &run::JudgeEnv {
                config: &config,
                concurrency: settings.grade.concurrency,
                cache_from: &cwd,
                gate: None,
                batch: None,
            },
        )?;
        return super::dry_run::run(
            dataset,
            rubric.as_ref(),
            settings.override_rubric,
            judges.as_ref(),
        );
    }
    // The baseline is found before anything is graded; a run not saved is kept for the
    // comparison only, in a folder removed at the end.
    if opts.batch && opts.baseline.baseline.is_some() {
        return Err(CliError::input(
            "--baseline compares a finished run; a --batch run finishes later: compare it then with `runs compare BASELINE RUN`",
        ));
    }
    let baseline = opts.baseline.source(workspace)?;
    let scratch = match baseline {
        Some(_) => Some(Scratch::new()?),
        None => None,
    };
    let record = match (&opts.save, &scratch) {
        (Some(save), _) => {
            let ws = super::workspace(workspace)?;
            Some((run::RunsHome::of(&ws), save.name.clone()))
        }
        (None, Some(scratch)) => Some((scratch.home(), Some("this run".to_owned()))),
        (None, None) => None,
    };
    let kept = opts.save.is_some();
    let control = Control::default();
    let session = run::start(
        NewRun {
            dataset: &common.dataset,
            rubric,
            settings,
            record,
            cell_events: false,
            copied: Vec::new(),
            only: None,
        },
        env,
        &control,
    )?;
    for w in &session.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(id) = session.run_id().filter(|_| kept) {
        eprintln!("run {id}: recording in the workspace's runs/{id}");
    }
    if opts.batch {
        let id = session.run_id().unwrap_or_default().to_owned();
        // Recorded, nothing graded: the run's first batch step grades what needs no
        // judge and sends the rest.
        drop(session);
        let ws = super::workspace(workspace)?;
        return super::runs::batch::batch_step(&ws, &id, false, None);
    }
    let main_rubric = session.rubric().cloned();
    let suite =
        super::output::suite_name(main_rubric.as_ref().map(|r| &*r.rubric), &common.dataset);
    let format = common.format.unwrap_or_else(default_format);
    let main = main_rubric.as_ref().map(|r| &*r.rubric);
    let mut sink = Sink::open(format, common.out.as_deref(), main, &suite)?;
    // The run's own rubric (a dataset's included) brings its gates; a rubric's gates name
    // its own criteria by construction (checked when it was read).
    let gates = set_gates(&common.gate, common.fail_under, main, &config.gates);
    let mut tally = GateTally::new(gates, main);
    let mut github = Github::from_env(format, &suite, main).map(|g| g.of_dataset(&common.dataset));
    let outcome = drive(session, &config, |index, origin, e| {
        tally.add(e);
        if let Some(g) = github.as_mut() {
            g.add(index, origin, e);
        }
        sink.write(e).map_err(|e| e.message)
    })?;
    let compared = match (baseline, &scratch, &outcome.run_id) {
        (Some(source), Some(scratch), Some(id)) => {
            let home = match &opts.save {
                Some(_) => run::RunsHome::of(&super::workspace(workspace)?),
                None => scratch.home(),
            };
            let current = run::Recording::open(&home.runs_dir, id)?;
            Some(super::baseline::compare(
                &opts.baseline,
                source,
                &current,
                &common.dataset,
                main_rubric.as_ref(),
                scratch,
            )?)
        }
        _ => None,
    };
    let findings = Findings {
        gates: tally.check(&sink.summary),
        baseline: compared,
    };
    let prints = sink.prints_summary();
    let summary = sink.finish(&findings)?;
    let color = style::color_enabled(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    if !prints {
        eprintln!("{}", summary_line(&summary, color));
        if let Some(tags) = summary.tags_line(1000) {
            eprintln!("{}", crate::core::text::visible(&tags));
        }
    }
    // An empty dataset is an error below; gates over no items would only be noise.
    if summary.items > 0 {
        say_findings(&findings, color);
    }
    if let Some(g) = github.filter(|_| summary.items > 0) {
        g.finish(
            &summary,
            &findings,
            job_fails(&summary, &findings, Some(opts.grade.max_error_rate)),
        )?;
    }
    if outcome.usage.requests + outcome.usage.cache_hits > 0 {
        eprintln!("{}", usage_line(&outcome.usage));
    }
    if kept {
        report_record(&outcome);
    }
    if let Some(d) = &outcome.ended.input_error {
        return Err(CliError::input(format!(
            "{d}\n(results cover the {} before this point)",
            plural(summary.items, "item")
        )));
    }
    if let Some(code) = stopped(outcome.ended.stop.as_ref(), summary.items) {
        return code;
    }
    if summary.items == 0 {
        return Err(CliError::input(format!(
            "{}: the dataset has no items; nothing was graded",
            common.dataset.display()
        )));
    }
    Ok(decide(&summary, &findings, Some(opts.grade.max_error_rate)))
}

/// The gates this run must hold (`--gate`, `--fail-under`, the rubric's, the workspace's),
/// each naming a criterion or tag the rubric has.
pub(crate) fn run_gates(
    common: &CommonArgs,
    rubric: Option<&crate::model::Rubric>,
    config: &crate::store::WorkspaceConfig,
) -> Result<Vec<SetGate>, CliError> {
    let gates = set_gates(&common.gate, common.fail_under, rubric, &config.gates);
    if let Some(r) = rubric {
        crate::run::gates::check_names(&gates, r).map_err(CliError::input)?;
    }
    Ok(gates)
}

/// Drives a session on a runtime of its own, with the progress line on a terminal, handing
/// each finished item (input order) to `on_item` with its position and where it was read.
pub(crate) fn drive(
    session: run::Session,
    config: &crate::store::WorkspaceConfig,
    mut on_item: impl FnMut(usize, &str, &crate::model::Evaluation) -> Result<(), String>,
) -> Result<run::Outcome, CliError> {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(config.judge.concurrency.unwrap_or(16)).max(1))
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    // Ctrl-C (or SIGTERM, SIGHUP) cancels the run: calls in flight finish and are kept,
    // the output and a temporary baseline are closed properly; a second one ends at once.
    super::signals::stop_on_signals(&runtime, session.control(), "the run");
    Ok(runtime.block_on(async {
        let meter = session.meter();
        let show = meter.is_some() && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let mut progress = Progress::new(show, meter.unwrap_or_default());
        let outcome = session
            .run(|ev| {
                let result = match ev {
                    RunEvent::Item {
                        index,
                        origin,
                        evaluation,
                    } => {
                        progress.item_done(&evaluation);
                        on_item(index, &origin, &evaluation)
                    }
                    RunEvent::Cell(_) => Ok(()),
                };
                std::future::ready(result)
            })
            .await;
        progress.finish();
        outcome
    }))
}

/// What happened to the saved run, on stderr.
pub(crate) fn report_record(outcome: &run::Outcome) {
    if let Some(e) = &outcome.record_error {
        eprintln!("error: the run's record could not be completed: {e}");
    }
    if let Some(id) = &outcome.run_id
        && !outcome.finished
    {
        eprintln!("run {id} is unfinished; `rubricate runs resume {id}` grades what is missing");
    }
}

/// The exit for a run that stopped early (`None`: it did not).
pub(crate) fn stopped(stop: Option<&Stop>, items: usize) -> Option<Result<u8, CliError>> {
    match stop? {
        Stop::Cost(why) => {
            eprintln!(
                "stopped: {why}; {} graded, the rest not started",
                plural(items, "item")
            );
            Some(Ok(exit::FAILURES))
        }
        Stop::Cancelled => {
            eprintln!("stopped: the run was cancelled");
            Some(Ok(exit::FAILURES))
        }
        Stop::Journal(e) => Some(Err(CliError::input(format!(
            "stopped: the run's journal could not be written ({e}); nothing more was graded. Free space or fix the folder, then `rubricate runs resume`"
        )))),
        Stop::Output(e) => Some(Err(CliError::input(e.clone()))),
    }
}

/// A run to record, with its name if it has one.
#[derive(Debug, Clone)]
pub(crate) struct SaveAs {
    pub(crate) name: Option<String>,
}

/// `grade`'s options beyond the dataset and the judge.
#[derive(Debug, Clone)]
pub(crate) struct GradeOptions {
    pub(crate) grade: GradeSettings,
    /// Record the run in the workspace.
    pub(crate) save: Option<SaveAs>,
    /// Send the judge calls to the providers' batch engines.
    pub(crate) batch: bool,
    /// Grade only these items (`--limit`, `--sample`, `--items`).
    pub(crate) subset: SubsetArgs,
    /// Compare with a baseline (`--baseline`, `--tolerance`, `--fail-on`).
    pub(crate) baseline: super::baseline::BaselineArgs,
}

/// `--limit N`, `--sample N`, `--items IDS|@FILE` as typed (clap keeps them apart).
#[derive(Debug, Clone, Default)]
pub(crate) struct SubsetArgs {
    pub(crate) limit: Option<usize>,
    pub(crate) sample: Option<usize>,
    pub(crate) items: Option<String>,
}

/// The subset `--limit`, `--sample` (seeded by `--seed`) or `--items` asks for (clap keeps
/// them apart).
fn subset_choice(
    args: &SubsetArgs,
    seed: Option<u64>,
) -> Result<Option<run::subset::Choice>, CliError> {
    use run::subset::Choice;
    Ok(match (args.limit, args.sample, args.items.as_deref()) {
        (Some(n), _, _) => Some(Choice::Limit(n)),
        (_, Some(n), _) => Some(Choice::Sample {
            n,
            seed: seed.unwrap_or(0),
        }),
        (_, _, Some(ids)) => Some(Choice::Items(run::subset::parse_items(ids)?)),
        _ => None,
    })
}

/// The workspace's `rubricate.yaml` (warnings go to stderr).
pub(crate) fn workspace_config() -> Result<crate::store::WorkspaceConfig, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let (config, warnings) = crate::store::load_config(&cwd)?;
    for w in warnings {
        eprintln!("warning: {}", crate::core::text::visible(&w.to_string()));
    }
    Ok(config)
}

pub(crate) fn check_fail_under(x: Option<f64>) -> Result<(), CliError> {
    match x {
        Some(x) if !x.is_finite() => Err(CliError::input("--fail-under must be a number")),
        _ => Ok(()),
    }
}

/// `--rubric` first, else the dataset's own rubric; `None` when items must bring theirs.
pub(crate) fn effective_rubric(
    common: &CommonArgs,
    dataset: &Dataset,
) -> Result<Option<crate::formats::LoadedRubric>, CliError> {
    let chosen = match &common.rubric {
        Some(spec) => Some(super::rubric_arg::load(spec, common.from, None)?),
        None => None,
    };
    Ok(crate::run::effective_rubric(chosen, dataset))
}

/// Says before grading when a criterion judges each assistant turn but the dataset's first
/// item holds no conversation: every such item would fail that criterion (what `lint`, which
/// reads no dataset, cannot say).
fn warn_turns_without_conversation(rubric: &crate::model::Rubric, common: &CommonArgs) {
    let turned: Vec<&str> = rubric
        .criteria
        .iter()
        .filter(|c| !c.scope.is_conversation())
        .map(|c| c.id.as_str())
        .collect();
    if turned.is_empty() {
        return;
    }
    let Ok(mut ds) = open(common) else { return };
    if let Some(Ok(item)) = ds.items.next()
        && item.conversation.is_none()
    {
        eprintln!(
            "warning: {} judge{} each assistant turn (`scope: turn`), but item '{}' ({}) holds no conversation (`messages`): such items fail {}",
            turned.join(", "),
            if turned.len() == 1 { "s" } else { "" },
            item.id,
            item.origin,
            if turned.len() == 1 { "it" } else { "them" }
        );
    }
}

pub(crate) fn open(common: &CommonArgs) -> Result<Dataset, CliError> {
    let opts = crate::formats::dataset::ReadOptions {
        max_item_bytes: common.max_item_mb.max(1) * 1024 * 1024,
        ..crate::formats::dataset::ReadOptions::default()
    };
    Ok(open_dataset(&common.dataset, opts)?)
}

pub(crate) fn default_format() -> OutputFormat {
    if style::stdout_is_terminal() {
        OutputFormat::Table
    } else {
        OutputFormat::Jsonl
    }
}
