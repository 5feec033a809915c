//! Runs in the workspace: `grade --save` records one (manifest + cell journal), and
//! `rubricate runs list|show|resume|compare` read, finish and compare them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::grade::{report_record, stopped, usage_line};
use super::{CliError, exit};
use crate::engine::checks::plural;
use crate::model::Evaluation;
use crate::run::{self, Control, Env, Recording};
use crate::store::runs::{Manifest, list_runs};
use crate::store::{Workspace, WorkspaceError};

#[derive(Debug, clap::Subcommand)]
pub enum RunsAction {
    /// Every run: id, name, rubric, dataset, items, pass rate, finished or not.
    List,
    /// A run's results, one line per item (or JSONL with `--format jsonl`).
    Show {
        id: String,
        #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
        format: ShowFormat,
    },
    /// Grades exactly the cells a run's journal lacks (after a crash, a kill or a cost stop).
    Resume { id: String },
    /// Two runs side by side: per criterion, pass-rate deltas and changed verdicts; per
    /// item, score deltas, regressions first.
    Compare {
        a: String,
        b: String,
        /// Items listed (most changed first).
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Table,
    Jsonl,
}

impl From<crate::store::runs::RunError> for CliError {
    fn from(e: crate::store::runs::RunError) -> Self {
        CliError::input(e.to_string())
    }
}

impl From<WorkspaceError> for CliError {
    fn from(e: WorkspaceError) -> Self {
        CliError::input(e.to_string())
    }
}

pub fn workspace(flag: Option<&Path>) -> Result<Workspace, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let ws = Workspace::open(flag, &cwd)?;
    for w in &ws.warnings {
        eprintln!("warning: {w}");
    }
    Ok(ws)
}

pub fn run(action: &RunsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = workspace(ws_flag)?;
    let runs = ws.runs_dir();
    match action {
        RunsAction::List => {
            list(&runs);
            Ok(exit::OK)
        }
        RunsAction::Show { id, format } => show(&Recording::open(&runs, id)?, *format),
        RunsAction::Resume { id } => resume(&ws, id),
        RunsAction::Compare { a, b, top } => compare(
            &Recording::open(&runs, a)?,
            &Recording::open(&runs, b)?,
            *top,
        ),
    }
}

fn list(runs: &Path) {
    let all = list_runs(runs);
    if all.is_empty() {
        println!("no runs yet; `rubricate grade --save …` records one");
        return;
    }
    println!(
        "{:<22} {:<14} {:<24} {:>6} {:>7} {:>7}  STATE",
        "RUN", "NAME", "RUBRIC", "ITEMS", "PASSED", "MEAN"
    );
    for m in all {
        let m = match m {
            Ok(m) => m,
            Err(e) => {
                println!("(damaged) {e}");
                continue;
            }
        };
        let t = m.totals.unwrap_or_default();
        let rubric = format!("{}@{}", m.rubric_id, m.rubric_version);
        println!(
            "{:<22} {:<14} {:<24} {:>6} {:>7} {:>7}  {}",
            m.id,
            m.name.as_deref().unwrap_or("-"),
            rubric,
            t.items,
            t.passed,
            t.mean_score
                .map_or_else(|| "-".into(), |s| format!("{s:.3}")),
            if m.finished_at.is_some() {
                "finished"
            } else {
                "unfinished"
            }
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
    let outcome = super::grade::drive(session, &ws.config, |e| {
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
    Ok(super::grade::decide(&summary, None, Some(max_error_rate)))
}

fn show(run: &Recording, format: ShowFormat) -> Result<u8, CliError> {
    let m = &run.manifest;
    let mut lines = Vec::new();
    let replay = run.replay(|_, e| match format {
        ShowFormat::Jsonl => {
            lines.push(serde_json::to_string(&super::output::item_json(e)).unwrap_or_default());
        }
        ShowFormat::Table => {
            let score = e
                .score
                .map_or_else(|| "-".into(), |s| format!("{:.1}%", s * 100.0));
            let state = if e.incomplete {
                "INCOMPLETE"
            } else if e.passed {
                "PASS"
            } else {
                "FAIL"
            };
            lines.push(format!("{:<28} {:>7}  {state}", e.target_id, score));
        }
    })?;
    if format == ShowFormat::Table {
        println!(
            "run {}{} · {}@{} · {}",
            m.id,
            m.name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default(),
            m.rubric_id,
            m.rubric_version,
            m.dataset.path
        );
        println!(
            "started {} · {}",
            m.started_at,
            m.finished_at
                .as_deref()
                .map_or_else(|| "unfinished".to_owned(), |f| format!("finished {f}"))
        );
        println!("{:<28} {:>7}  RESULT", "ITEM", "SCORE");
    }
    for l in lines {
        println!("{l}");
    }
    if format == ShowFormat::Table {
        println!("\n{}", replay.summary.line());
    }
    Ok(exit::OK)
}

fn compare(a: &Recording, b: &Recording, top: usize) -> Result<u8, CliError> {
    let collect = |run: &Recording| -> Result<(Manifest, BTreeMap<String, Evaluation>), CliError> {
        let mut out = BTreeMap::new();
        run.replay(|_, e| {
            out.insert(e.target_id.clone(), e.clone());
        })?;
        Ok((run.manifest.clone(), out))
    };
    let (ma, ea) = collect(a)?;
    let (mb, eb) = collect(b)?;
    println!("{}", compare_report(&ma, &ea, &mb, &eb, top));
    Ok(exit::OK)
}

/// Per criterion: pass rates and changed verdicts; per item: score deltas, regressions
/// first, then the largest changes.
fn compare_report(
    ma: &Manifest,
    ea: &BTreeMap<String, Evaluation>,
    mb: &Manifest,
    eb: &BTreeMap<String, Evaluation>,
    top: usize,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A = {} ({}@{})\nB = {} ({}@{})",
        ma.id, ma.rubric_id, ma.rubric_version, mb.id, mb.rubric_id, mb.rubric_version
    );
    let common: Vec<&String> = ea.keys().filter(|k| eb.contains_key(*k)).collect();
    let _ = writeln!(
        out,
        "{} in both · {} only in A · {} only in B\n",
        plural(common.len(), "item"),
        ea.len() - common.len(),
        eb.len() - common.len()
    );
    // Per criterion: share of items whose value is full marks, and verdict changes.
    let mut criteria: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    for id in &common {
        let (Some(x), Some(y)) = (ea.get(*id), eb.get(*id)) else {
            continue;
        };
        for rx in &x.results {
            let Some(ry) = y.results.iter().find(|r| r.criterion_id == rx.criterion_id) else {
                continue;
            };
            let entry = criteria.entry(rx.criterion_id.clone()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(rx.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.2 += usize::from(ry.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.3 += usize::from(rx.verdict != ry.verdict);
        }
    }
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>8} {:>8} {:>8}",
        "CRITERION", "A FULL", "B FULL", "DELTA", "CHANGED"
    );
    for (id, (n, full_a, full_b, changed)) in &criteria {
        #[allow(clippy::cast_precision_loss)] // counts
        let (pa, pb) = (*full_a as f64 / *n as f64, *full_b as f64 / *n as f64);
        let _ = writeln!(
            out,
            "{id:<28} {:>7.1}% {:>7.1}% {:>+7.1}  {changed:>8}",
            pa * 100.0,
            pb * 100.0,
            (pb - pa) * 100.0
        );
    }
    let mut deltas: Vec<(&String, f64, bool)> = common
        .iter()
        .filter_map(|id| {
            let (x, y) = (ea.get(*id)?, eb.get(*id)?);
            let d = y.score.unwrap_or(0.0) - x.score.unwrap_or(0.0);
            let regression = x.passed && !y.passed;
            (d.abs() > 1e-12 || x.passed != y.passed).then_some((*id, d, regression))
        })
        .collect();
    deltas.sort_by(|p, q| {
        q.2.cmp(&p.2)
            .then(p.1.abs().total_cmp(&q.1.abs()).reverse())
    });
    let _ = writeln!(
        out,
        "\n{} changed; regressions (passed in A, not in B) first:",
        plural(deltas.len(), "item")
    );
    for (id, d, regression) in deltas.iter().take(top) {
        let _ = writeln!(
            out,
            "  {id:<28} {:>+7.1} points{}",
            d * 100.0,
            if *regression { "  REGRESSION" } else { "" }
        );
    }
    out
}

/// `rubricate` with no command and no terminal: grades the workspace's latest run again —
/// its rubric snapshot over its dataset — and writes JSONL to stdout (the demo's main job
/// when piped). `None` when the workspace has no run to repeat.
pub fn regrade_latest(ws_flag: Option<&Path>) -> Result<Option<u8>, CliError> {
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
        "grading {} with {}@{} (the workspace's latest run, {}); on a terminal, `rubricate` opens the UI",
        m.dataset.path, m.rubric_id, m.rubric_version, m.id
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
        },
        Env {
            config: &ws.config,
            cache_from: &ws.root,
        },
        &control,
    )?;
    let outcome = super::grade::drive(session, &ws.config, |e| {
        sink.write(e).map_err(|e| e.message)
    })?;
    let summary = sink.finish()?;
    eprintln!("{}", summary.line());
    if let Some(d) = &outcome.ended.input_error {
        return Err(CliError::input(d.to_string()));
    }
    Ok(Some(super::grade::decide(
        &summary,
        None,
        Some(max_error_rate),
    )))
}
