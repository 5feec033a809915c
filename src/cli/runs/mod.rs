//! Runs in the workspace: `grade --save` records one (manifest + cell journal), and
//! `rubricate runs list|show|resume|compare` read, finish and compare them.

use std::path::Path;

pub(crate) mod batch;
pub(crate) mod compare;
mod import;
mod show;

use batch::batch_step;
use compare::{CompareFormat, FailOn, GateOptions};
use show::ShowFormat;

use super::grade::{report_record, stopped};
use super::verdict::usage_line;
use super::{CliError, exit, workspace};
use crate::core::text::cell;
use crate::engine::checks::plural;
use crate::run::{self, Control, Env, Recording};
use crate::store::Workspace;
use crate::store::runs::list_runs;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum RunsAction {
    /// Every run: id, name, rubric, dataset, items, pass rate, finished or not.
    List,
    /// A run (id, name or unique prefix) written from its journal as `grade` would have
    /// written it (table, json, jsonl, csv, junit, md), or as the page `rubricate report`
    /// writes (html). Items of an unfinished run still waiting for cells are incomplete,
    /// not failed. Exits 0 once written.
    Show {
        /// The run: its id, its name, or a unique prefix of its id.
        id: String,
        #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
        format: ShowFormat,
        /// Write to FILE (replaced atomically once whole) instead of stdout.
        #[arg(long, short, value_name = "FILE", visible_alias = "output")]
        out: Option<std::path::PathBuf>,
    },
    /// Grades exactly the cells a run's journal lacks (after a crash, a kill or a cost
    /// stop). A batch run (`grade --batch`): asks about its batches, downloads the
    /// answers of those that ended, journals them, sends what is left (failed, expired or
    /// cancelled requests) in new batches, and finishes the run once every cell is in.
    Resume {
        id: String,
        /// A batch run: keep asking until it is finished (Ctrl-C stops waiting; the
        /// batches go on at the provider).
        #[arg(long)]
        wait: bool,
        /// Seconds between asks with --wait (default: `judge.batch_poll`, else 60).
        #[arg(long, value_name = "SECS")]
        poll: Option<f64>,
        /// A batch run: send what no batch holds (failed, expired or cancelled requests)
        /// live now instead of in a new batch.
        #[arg(long)]
        live: bool,
    },
    /// Two runs side by side, and a regression gate: exits 1 when B regresses A, 0 when
    /// not, 2 on a usage error (a run id that names no run, a bad flag). A regression: an
    /// item that passed in A and fails in B or whose score dropped by more than
    /// --tolerance, a criterion whose pass rate dropped, fewer items passing, or the mean
    /// score dropped by more than --tolerance. Regressions are listed first, with the
    /// paired tests: exact McNemar per pass/fail criterion and for items passing, a paired
    /// bootstrap (1,000 resamples, seed 0) for the mean score.
    Compare {
        /// The baseline run (id, or a unique prefix of it).
        a: String,
        /// The run compared with it.
        b: String,
        /// Changed items listed (regressions first, then the most changed).
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// How far an item's score or the mean score (0 to 1) may drop before it counts
        /// as a regression.
        #[arg(long, default_value_t = 0.0, value_name = "SCORE")]
        tolerance: f64,
        /// What fails the job: any regression, or only one a paired test finds
        /// significant (p < 0.05; single items and graded criteria have no test).
        #[arg(long, value_enum, default_value_t = FailOn::Any)]
        fail_on: FailOn,
        #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
        format: CompareFormat,
    },
    /// Keeps another system's results as a run: agentv results JSONL, or an autorubric
    /// experiment folder; matched to the dataset's items (agentv by test id, autorubric
    /// by position) and their rubrics' criteria.
    Import {
        /// agentv results/baseline JSONL, or an autorubric experiment folder (or its
        /// manifest.json).
        results: std::path::PathBuf,
        /// The dataset the results graded (an agentv eval file, an autorubric dataset);
        /// an autorubric manifest that names its dataset needs none.
        #[arg(long, value_name = "FILE")]
        dataset: Option<std::path::PathBuf>,
        /// The run's name (default: "<system> import: <file>").
        #[arg(long)]
        name: Option<String>,
    },
}

pub(crate) fn run(action: &RunsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = workspace(ws_flag)?;
    let runs = ws.runs_dir();
    match action {
        RunsAction::List => {
            list(&runs);
            Ok(exit::OK)
        }
        RunsAction::Show { id, format, out } => show::show(&ws, id, *format, out.as_deref()),
        RunsAction::Resume {
            id,
            wait,
            poll,
            live,
        } => {
            if Recording::open(&runs, id)?.settings()?.judge.batch {
                let poll = poll.or(ws.config.judge.batch_poll).unwrap_or(60.0);
                if !(poll.is_finite() && poll >= 0.0) {
                    return Err(CliError::input("--poll must be a number of seconds"));
                }
                let wait = wait.then(|| std::time::Duration::from_secs_f64(poll.min(86_400.0)));
                batch_step(&ws, id, *live, wait)
            } else if *wait || *live || poll.is_some() {
                Err(CliError::input(format!(
                    "run {id} is graded live: --wait, --poll and --live are for batch runs (`grade --batch`)"
                )))
            } else {
                resume(&ws, id)
            }
        }
        RunsAction::Compare {
            a,
            b,
            top,
            tolerance,
            fail_on,
            format,
        } => compare::compare(
            &Recording::open(&runs, a)?,
            &Recording::open(&runs, b)?,
            &GateOptions {
                top: *top,
                tolerance: *tolerance,
                fail_on: *fail_on,
            },
            *format,
        ),
        RunsAction::Import {
            results,
            dataset,
            name,
        } => import::import(&ws, results, dataset.as_deref(), name.as_deref()),
    }
}

fn list(runs: &Path) {
    let all = list_runs(runs);
    if all.is_empty() {
        outln!("no runs yet; `rubricate grade --save …` records one");
        return;
    }
    outln!(
        "{:<22} {:<14} {:<24} {:>6} {:>7} {:>7}  STATE",
        "RUN",
        "NAME",
        "RUBRIC",
        "ITEMS",
        "PASSED",
        "MEAN"
    );
    for m in all {
        let m = match m {
            Ok(m) => m,
            Err(e) => {
                outln!("(damaged) {}", cell(&e.to_string()));
                continue;
            }
        };
        let t = m.totals.unwrap_or_default();
        let rubric = m.rubric_label();
        outln!(
            "{:<22} {:<14} {:<24} {:>6} {:>7} {:>7}  {}",
            cell(&m.id),
            crate::core::text::clipped(m.name.as_deref().unwrap_or("-"), 14),
            crate::core::text::clipped(&rubric, 24),
            t.items,
            t.passed,
            t.mean_score
                .map_or_else(|| "-".into(), |s| format!("{s:.3}")),
            m.state()
        );
    }
}

fn resume(ws: &Workspace, id: &str) -> Result<u8, CliError> {
    let control = Control::default();
    let session = run::reopen(
        &ws.runs_dir(),
        id,
        &[],
        Env {
            config: &ws.config,
            cache_from: &ws.root,
        },
        &control,
        false,
    )?;
    let before = session.prior.len();
    let run_id = session.run_id().unwrap_or(id).to_owned();
    let max_error_rate = Recording::open(&ws.runs_dir(), &run_id)?
        .settings()?
        .grade
        .max_error_rate;
    let mut added = 0usize;
    let outcome = super::grade::drive(session, &ws.config, |_, _, e| {
        added += e.results.len();
        Ok(())
    })?;
    let summary = outcome.summary().clone();
    eprintln!(
        "run {run_id}: {} already in the journal, {} graded now; {}",
        plural(before, "cell"),
        plural(added, "cell"),
        summary.line()
    );
    if outcome.usage.requests + outcome.usage.cache_hits > 0 {
        eprintln!("{}", usage_line(&outcome.usage));
    }
    report_record(&outcome);
    if let Some(d) = &outcome.ended.input_error {
        return Err(CliError::input(d.to_string()));
    }
    if let Some(code) = stopped(outcome.ended.stop.as_ref(), outcome.ended.summary.items) {
        return code;
    }
    Ok(super::verdict::decide(
        &summary,
        &crate::cli::gates::Findings::default(),
        Some(max_error_rate),
    ))
}

/// `rubricate` with no command and no terminal: grades the workspace's latest run again —
/// its rubric snapshot over its dataset — and writes JSONL to stdout (the demo's main job
/// when piped). `None` when the workspace has no run to repeat.
pub(crate) fn regrade_latest(ws_flag: Option<&Path>) -> Result<Option<u8>, CliError> {
    let ws = workspace(ws_flag)?;
    let Some(m) = list_runs(&ws.runs_dir())
        .into_iter()
        .filter_map(Result::ok)
        .next_back()
    else {
        return Ok(None);
    };
    let rec = Recording::open(&ws.runs_dir(), &m.id)?;
    let rubric = rec.rubric()?;
    let settings = rec.settings()?;
    let mut sink = super::output::Sink::open(
        super::OutputFormat::Jsonl,
        None,
        rubric.as_ref().map(|r| &*r.rubric),
        &m.rubric_id,
    )?;
    eprintln!(
        "grading {} with {} (the workspace's latest run, {}); on a terminal, `rubricate` opens the UI",
        m.dataset.path,
        m.rubric_label(),
        m.id
    );
    let max_error_rate = settings.grade.max_error_rate;
    let control = Control::default();
    let session = run::start(
        run::NewRun {
            dataset: &rec.dataset_path(),
            rubric,
            settings,
            record: None,
            cell_events: false,
            copied: Vec::new(),
            only: None,
        },
        Env {
            config: &ws.config,
            cache_from: &ws.root,
        },
        &control,
    )?;
    let outcome = super::grade::drive(session, &ws.config, |_, _, e| {
        sink.write(e).map_err(|e| e.message)
    })?;
    let none = crate::cli::gates::Findings::default();
    let summary = sink.finish(&none)?;
    eprintln!("{}", summary.line());
    if let Some(d) = &outcome.ended.input_error {
        return Err(CliError::input(d.to_string()));
    }
    Ok(Some(super::verdict::decide(
        &summary,
        &none,
        Some(max_error_rate),
    )))
}
