//! Runs in the workspace: `grade --save` records one (manifest + cell journal), and
//! `rubricate runs list|show|resume|compare` read, finish and compare them.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use super::execute::{Job, execute};
use super::grade::{GradeOptions, usage_line};
use super::output::Summary;
use super::{CliError, CommonArgs, JudgeArgs, exit};
use crate::engine::checks::plural;
use crate::engine::executor::{build_evaluation, holistic_evaluation};
use crate::engine::judge::{HOLISTIC_ID, HolisticOutcome};
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::formats::{LoadedRubric, parse_rubric_text};
use crate::llm::RunUsage;
use crate::model::{Evaluation, Item, Rubric};
use crate::store::runs::{
    Cell, DatasetRef, Manifest, RunDir, RunError, RunWriter, Totals, file_hash, list_runs,
    new_run_id, text_hash,
};
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

/// What a saved run keeps besides the rubric snapshot: enough to resume it the same way.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Settings {
    judge: JudgeArgs,
    grade: GradeOptions,
    /// `--rubric` was given (items' own rubrics were ignored).
    override_rubric: bool,
    max_item_mb: usize,
}

impl From<RunError> for CliError {
    fn from(e: RunError) -> Self {
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

/// A run being recorded by `grade --save`.
pub struct SavedRun {
    run: RunDir,
    manifest: Manifest,
    writer: RunWriter,
}

impl SavedRun {
    pub fn start(
        ws_flag: Option<&Path>,
        name: Option<&str>,
        common: &CommonArgs,
        rubric: Option<&LoadedRubric>,
        judge: &JudgeArgs,
        grade: &GradeOptions,
    ) -> Result<Self, CliError> {
        let ws = workspace(ws_flag)?;
        let snapshot = rubric.map_or(serde_json::Value::Null, |r| {
            crate::formats::native::rubric_to_json(&r.rubric)
        });
        let dataset =
            std::fs::canonicalize(&common.dataset).unwrap_or_else(|_| common.dataset.clone());
        // A dataset inside the workspace is recorded relative to it (the workspace moves
        // as a whole); one outside by its absolute path.
        let root = std::fs::canonicalize(&ws.root).unwrap_or_else(|_| ws.root.clone());
        let recorded = dataset
            .strip_prefix(&root)
            .map_or_else(|_| dataset.clone(), Path::to_path_buf);
        let settings = Settings {
            judge: judge.clone(),
            grade: grade.clone(),
            override_rubric: common.rubric.is_some(),
            max_item_mb: common.max_item_mb,
        };
        let id = new_run_id();
        let manifest = Manifest {
            id: id.clone(),
            name: name.map(str::to_owned),
            rubric_id: rubric
                .map_or_else(|| "(each item's own)".to_owned(), |r| r.rubric.id.clone()),
            rubric_version: rubric.map(|r| r.rubric.version.clone()).unwrap_or_default(),
            rubric_hash: text_hash(&snapshot.to_string()),
            rubric: snapshot,
            dataset: DatasetRef {
                path: recorded.display().to_string(),
                hash: file_hash(&dataset)?,
            },
            settings: serde_json::to_value(&settings)
                .map_err(|e| CliError::input(format!("cannot record the run settings: {e}")))?,
            started_at: jiff::Timestamp::now().to_string(),
            finished_at: None,
            totals: None,
        };
        let run = RunDir::new(&ws.runs_dir(), &id);
        run.write_manifest(&manifest)?;
        let writer = RunWriter::create(&run, &manifest)?;
        eprintln!("run {id}: recording in {}", run.dir.display());
        Ok(Self {
            run,
            manifest,
            writer,
        })
    }

    pub fn append(&mut self, index: usize, e: &Evaluation) -> Result<(), CliError> {
        Ok(self.writer.append(index, &e.target_id, &e.results)?)
    }

    /// Syncs the journal and records the totals; a run that stopped early stays unfinished
    /// (resumable).
    pub fn finish(
        mut self,
        summary: &Summary,
        usage: &RunUsage,
        complete: bool,
    ) -> Result<(), CliError> {
        self.writer.finish()?;
        self.manifest.totals = Some(totals(summary, usage));
        if complete {
            self.manifest.finished_at = Some(jiff::Timestamp::now().to_string());
        } else {
            eprintln!(
                "run {} is unfinished; `rubricate runs resume {}` grades what is missing",
                self.manifest.id, self.manifest.id
            );
        }
        self.run.write_manifest(&self.manifest)?;
        Ok(())
    }
}

fn totals(s: &Summary, u: &RunUsage) -> Totals {
    Totals {
        items: s.items,
        passed: s.passed,
        incomplete: s.incomplete,
        cells: s.cells,
        failed_cells: s.failed_cells,
        mean_score: s.mean_score(),
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cost: u.cost,
    }
}

pub fn run(action: &RunsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = workspace(ws_flag)?;
    let runs = ws.runs_dir();
    match action {
        RunsAction::List => {
            list(&runs);
            Ok(exit::OK)
        }
        RunsAction::Show { id, format } => show(&RunDir::find(&runs, id)?, *format),
        RunsAction::Resume { id } => resume(&ws, &RunDir::find(&runs, id)?),
        RunsAction::Compare { a, b, top } => {
            compare(&RunDir::find(&runs, a)?, &RunDir::find(&runs, b)?, *top)
        }
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

/// The run's rubric snapshot, checked against its hash.
fn snapshot(run: &RunDir, m: &Manifest) -> Result<Option<LoadedRubric>, CliError> {
    if m.rubric.is_null() {
        return Ok(None);
    }
    let text = m.rubric.to_string();
    if text_hash(&text) != m.rubric_hash {
        return Err(CliError::input(format!(
            "{}: the rubric snapshot does not match its hash; the manifest was edited or damaged",
            run.manifest_path().display()
        )));
    }
    let file = format!("{}#rubric", run.manifest_path().display());
    Ok(Some(parse_rubric_text(
        &file,
        &text,
        &m.rubric_id,
        &run.dir,
        None,
    )?))
}

fn settings(run: &RunDir, m: &Manifest) -> Result<Settings, CliError> {
    serde_json::from_value(m.settings.clone()).map_err(|e| {
        CliError::input(format!(
            "{}: the run's settings cannot be read ({e})",
            run.manifest_path().display()
        ))
    })
}

fn resume(ws: &Workspace, run: &RunDir) -> Result<u8, CliError> {
    let mut manifest = run.read_manifest()?;
    let rubric = snapshot(run, &manifest)?;
    let settings = settings(run, &manifest)?;
    let path = &dataset_path(run, &manifest);
    if file_hash(path)? != manifest.dataset.hash {
        return Err(CliError::input(format!(
            "{}: the dataset changed since run {} started; resuming would mix two datasets (start a new run)",
            path.display(),
            manifest.id
        )));
    }
    let (cells, valid) = run.read_cells(&manifest)?;
    let done: HashSet<(usize, String)> = cells.keys().cloned().collect();
    let mut writer = RunWriter::reopen(run, &manifest, valid)?;
    let dataset = open_dataset(path, read_options(&settings))?;
    let before = cells.len();
    let mut added = 0usize;
    let ended = execute(
        Job {
            dataset,
            rubric: rubric.clone(),
            override_rubric: settings.override_rubric,
            judge_args: &settings.judge,
            concurrency: settings.grade.concurrency,
            allow_commands: settings.grade.allow_commands,
            config: &ws.config,
            done: Some(Arc::new(done)),
        },
        |index, e| {
            added += e.results.len();
            Ok(writer.append(index, &e.target_id, &e.results)?)
        },
    )?;
    writer.finish()?;
    let (summary, _) = evaluations(run, &manifest, rubric.as_ref(), &settings, |_| {})?;
    let usage = ended.meter.snapshot();
    let mut totals = totals(&summary, &usage);
    if let Some(old) = manifest.totals {
        totals.input_tokens += old.input_tokens;
        totals.output_tokens += old.output_tokens;
        totals.cost += old.cost;
    }
    manifest.totals = Some(totals);
    let complete = ended.input_error.is_none() && ended.stopped_for_cost.is_none();
    if complete {
        manifest.finished_at = Some(jiff::Timestamp::now().to_string());
    }
    run.write_manifest(&manifest)?;
    eprintln!(
        "run {}: {} already in the journal, {} graded now; {}",
        manifest.id,
        plural(before, "cell"),
        plural(added, "cell"),
        summary.line(false)
    );
    if usage.requests + usage.cache_hits > 0 {
        eprintln!("{}", usage_line(&usage));
    }
    if let Some(d) = ended.input_error {
        return Err(CliError::input(d.to_string()));
    }
    if let Some(why) = ended.stopped_for_cost {
        eprintln!("stopped: {why}; the run is still unfinished");
        return Ok(exit::FAILURES);
    }
    Ok(super::grade::decide(
        &summary,
        None,
        Some(settings.grade.max_error_rate),
    ))
}

/// The run's dataset: a relative path is inside the workspace (`runs/<id>/../..`).
fn dataset_path(run: &RunDir, m: &Manifest) -> std::path::PathBuf {
    let p = Path::new(&m.dataset.path);
    match run.dir.parent().and_then(Path::parent) {
        Some(root) if p.is_relative() => root.join(p),
        _ => p.to_path_buf(),
    }
}

fn read_options(s: &Settings) -> ReadOptions {
    ReadOptions {
        max_item_bytes: s.max_item_mb.max(1) * 1024 * 1024,
        ..ReadOptions::default()
    }
}

/// Rebuilds every item's evaluation from the journal (items in dataset order), handing
/// each to `each`; returns the summary. The run's rubric snapshot scores them; items with
/// their own rubric (no snapshot) are read from the dataset.
fn evaluations(
    run: &RunDir,
    m: &Manifest,
    rubric: Option<&LoadedRubric>,
    settings: &Settings,
    mut each: impl FnMut(&Evaluation),
) -> Result<(Summary, usize), CliError> {
    let (cells, _) = run.read_cells(m)?;
    let mut by_item: BTreeMap<usize, Vec<Cell>> = BTreeMap::new();
    for ((item, _), cell) in cells {
        by_item.entry(item).or_default().push(cell);
    }
    let mut own: BTreeMap<usize, Arc<Rubric>> = BTreeMap::new();
    if (rubric.is_none() || !settings.override_rubric)
        && let Ok(dataset) = open_dataset(&dataset_path(run, m), read_options(settings))
    {
        for (i, item) in dataset.items.enumerate() {
            if let Ok(Item {
                rubric: Some(r), ..
            }) = item
                && by_item.contains_key(&i)
            {
                own.insert(i, r);
            }
        }
    }
    let mut summary = Summary::default();
    let mut missing = 0;
    for (index, cells) in by_item {
        let Some(r) = own
            .get(&index)
            .cloned()
            .or_else(|| rubric.map(|r| Arc::clone(&r.rubric)))
        else {
            missing += 1;
            continue;
        };
        let item = Item {
            id: cells.first().map(|c| c.item_id.clone()).unwrap_or_default(),
            ..Item::default()
        };
        let mut results: Vec<_> = cells.into_iter().map(|c| c.result).collect();
        let e = if results.len() == 1 && results[0].criterion_id == HOLISTIC_ID {
            let result = results.remove(0);
            let score = match &result.verdict {
                Some(crate::model::Verdict::Score(x)) => Some(*x),
                _ => None,
            };
            holistic_evaluation(&r, &item, HolisticOutcome { score, result }, "rubricate")
        } else {
            // Journal order is by criterion id; the rubric's order reads better.
            results.sort_by_key(|res| r.criteria.iter().position(|c| c.id == res.criterion_id));
            build_evaluation(&r, &item, results, "rubricate")
        };
        summary.add(&e);
        each(&e);
    }
    Ok((summary, missing))
}

fn show(run: &RunDir, format: ShowFormat) -> Result<u8, CliError> {
    let m = run.read_manifest()?;
    let rubric = snapshot(run, &m)?;
    let settings = settings(run, &m)?;
    let mut lines = Vec::new();
    let (summary, _) = evaluations(run, &m, rubric.as_ref(), &settings, |e| match format {
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
        println!("\n{}", summary.line(false));
    }
    Ok(exit::OK)
}

fn compare(a: &RunDir, b: &RunDir, top: usize) -> Result<u8, CliError> {
    let collect = |run: &RunDir| -> Result<(Manifest, BTreeMap<String, Evaluation>), CliError> {
        let m = run.read_manifest()?;
        let rubric = snapshot(run, &m)?;
        let settings = settings(run, &m)?;
        let mut out = BTreeMap::new();
        evaluations(run, &m, rubric.as_ref(), &settings, |e| {
            out.insert(e.target_id.clone(), e.clone());
        })?;
        Ok((m, out))
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
    let run = RunDir::new(&ws.runs_dir(), &m.id);
    let rubric = snapshot(&run, &m)?;
    let settings = settings(&run, &m)?;
    let dataset = open_dataset(&dataset_path(&run, &m), read_options(&settings))?;
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
    let ended = execute(
        Job {
            dataset,
            rubric,
            override_rubric: settings.override_rubric,
            judge_args: &settings.judge,
            concurrency: settings.grade.concurrency,
            allow_commands: settings.grade.allow_commands,
            config: &ws.config,
            done: None,
        },
        |_, e| sink.write(&e),
    )?;
    let summary = sink.finish()?;
    eprintln!("{}", summary.line(false));
    if let Some(d) = ended.input_error {
        return Err(CliError::input(d.to_string()));
    }
    Ok(Some(super::grade::decide(
        &summary,
        None,
        Some(settings.grade.max_error_rate),
    )))
}
