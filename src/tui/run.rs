//! Grading from the terminal UI: a run journalled in the workspace exactly as `grade --save`
//! journals one (so `rubricate runs resume` can finish it), its events streamed to the UI,
//! with pause (no new item starts), cancel, and retry of chosen cells in the same journal.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::app::Msg;
use super::data::DatasetInfo;
use crate::cli::JudgeArgs;
use crate::engine::judge::Strategy;
use crate::engine::{CancelToken, EventKind, ExecOptions, Executor, compile};
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::llm::estimate_input_tokens;
use crate::model::{Criterion, Item, Method};
use crate::store::Workspace;
use crate::store::runs::{
    DatasetRef, Manifest, RunDir, RunWriter, Totals, file_hash, new_run_id, text_hash,
};

/// What a running (or finished) run needs for pause, cancel and retry.
pub struct RunControl {
    cancel: CancelToken,
    paused: Arc<AtomicBool>,
    dataset: DatasetInfo,
    rubric: LoadedRubric,
    judge: JudgeArgs,
    run: RunDir,
    manifest: Manifest,
}

/// The judge settings of a UI run: the chosen model (or the rubric's / workspace's), streamed.
pub(super) fn judge_args(judge: Option<&str>, strategy: Option<Strategy>) -> JudgeArgs {
    use clap::Parser as _;
    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        judge: JudgeArgs,
    }
    let mut args = Wrap::parse_from(["rubricate"]).judge;
    // Several models separated by commas or spaces make an ensemble.
    args.judge = judge
        .into_iter()
        .flat_map(|j| j.split([',', ' ']))
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect();
    args.strategy = strategy;
    args.stream = true;
    args
}

/// The dry-run estimate as one line.
pub fn estimate(
    ws: &Workspace,
    d: &DatasetInfo,
    rubric: &Path,
    judge: Option<&str>,
    strategy: Option<Strategy>,
) -> Result<String, String> {
    let loaded =
        crate::formats::load_rubric(&rubric.display().to_string()).map_err(|e| e.to_string())?;
    let judges = crate::cli::judges::build(
        &judge_args(judge, strategy),
        Some(&loaded),
        None,
        &ws.config,
    )
    .map_err(|e| e.message)?;
    let Some(judges) = judges else {
        return Ok(
            "no criterion is judged by an LLM (or no judge is set): the run costs nothing".into(),
        );
    };
    let by_llm: Vec<&Criterion> = loaded
        .rubric
        .criteria
        .iter()
        .filter(|c| matches!(c.method, Method::Judge(_)))
        .collect();
    let (mut calls, mut cached, mut tokens, mut cost) = (0u64, 0u64, 0u64, 0.0);
    let items = open_dataset(&d.path, ReadOptions::default())
        .map_err(|e| e.to_string())?
        .items;
    for item in items.flatten() {
        for (judge, req) in judges.panel.plan(&loaded.rubric, &by_llm, &item) {
            calls += 1;
            if judge.client.is_cached(&req) {
                cached += 1;
                continue;
            }
            let t = estimate_input_tokens(&req);
            tokens += t + 100;
            if let Some(p) = judge.client.price() {
                cost += p.cost(t, 100);
            }
        }
    }
    Ok(format!(
        "{calls} judge calls ({cached} cached → {} to send) · ≈{tokens} tokens · ≈${cost:.4}",
        calls - cached
    ))
}

/// What a UI run grades with.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec<'a> {
    pub rubric: &'a Path,
    pub judge: Option<&'a str>,
    pub strategy: Option<Strategy>,
    /// Only the criteria changed since the last run of this rubric.
    pub changed_only: bool,
}

/// Starts a run: manifest and journal in the workspace, then the executor on the runtime,
/// its events sent to the UI tagged `tag`.
pub fn start(
    ws: &Workspace,
    tag: u64,
    d: &DatasetInfo,
    spec: &RunSpec<'_>,
    tx: mpsc::Sender<Msg>,
) -> Result<RunControl, String> {
    let RunSpec {
        rubric,
        judge,
        strategy,
        changed_only,
    } = *spec;
    let loaded =
        crate::formats::load_rubric(&rubric.display().to_string()).map_err(|e| e.to_string())?;
    let args = judge_args(judge, strategy);
    let snapshot = crate::formats::native::rubric_to_json(&loaded.rubric);
    // Re-grading what changed: the cells of unchanged criteria come from the last run.
    let reuse = if changed_only {
        Some(unchanged_cells(ws, d, &snapshot, &args)?)
    } else {
        None
    };
    let id = new_run_id();
    let root = std::fs::canonicalize(&ws.root).unwrap_or_else(|_| ws.root.clone());
    let abs = std::fs::canonicalize(&d.path).unwrap_or_else(|_| d.path.clone());
    let manifest = Manifest {
        id: id.clone(),
        name: Some("ui".into()),
        rubric_id: loaded.rubric.id.clone(),
        rubric_version: loaded.rubric.version.clone(),
        rubric_hash: text_hash(&snapshot.to_string()),
        rubric: snapshot,
        dataset: DatasetRef {
            path: abs
                .strip_prefix(&root)
                .map_or_else(|_| abs.clone(), Path::to_path_buf)
                .display()
                .to_string(),
            hash: file_hash(&d.path).map_err(|e| e.to_string())?,
        },
        settings: serde_json::json!({
            "judge": args,
            "grade": {"concurrency": null, "allow_commands": false, "max_error_rate": 0.0},
            "override_rubric": true,
            "max_item_mb": 16,
        }),
        started_at: jiff::Timestamp::now().to_string(),
        finished_at: None,
        totals: None,
    };
    let run = RunDir::new(&ws.runs_dir(), &id);
    run.write_manifest(&manifest).map_err(|e| e.to_string())?;
    let items = crate::formats::dataset::index::LineIndex::open_or_build(&d.index, &d.path)
        .ok()
        .map(|ix| ix.len());
    let criteria = loaded
        .rubric
        .criteria
        .iter()
        .map(|c| (c.id.clone(), c.weight < 0.0))
        .collect();
    let _ = tx.blocking_send(Msg::RunStarted {
        tag,
        run_id: id,
        criteria,
        items,
    });
    let mut done = None;
    if let Some((from, cells)) = reuse {
        // The copied cells go into the new journal first (and onto the grid).
        let mut writer = RunWriter::create(&run, &manifest).map_err(|e| e.to_string())?;
        let mut set = HashSet::new();
        let mut by_item: std::collections::BTreeMap<
            usize,
            (String, Vec<crate::model::CriterionResult>),
        > = std::collections::BTreeMap::new();
        for c in cells {
            set.insert((c.item, c.result.criterion_id.clone()));
            let index = loaded
                .rubric
                .criteria
                .iter()
                .position(|x| x.id == c.result.criterion_id);
            let _ = tx.blocking_send(Msg::Grade {
                tag,
                event: Box::new(crate::engine::GradeEvent {
                    run: tag,
                    item: c.item,
                    criterion: index,
                    kind: EventKind::Scored(Box::new(c.result.clone())),
                }),
            });
            by_item
                .entry(c.item)
                .or_insert_with(|| (c.item_id.clone(), Vec::new()))
                .1
                .push(c.result);
        }
        for (item, (item_id, results)) in &by_item {
            writer
                .append(*item, item_id, results)
                .map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())?;
        let _ = tx.blocking_send(Msg::Info(format!(
            "{} cells of unchanged criteria copied from run {from}; grading only the changed ones",
            set.len()
        )));
        done = Some(set);
    }
    let control = RunControl {
        cancel: CancelToken::default(),
        paused: Arc::new(AtomicBool::new(false)),
        dataset: d.clone(),
        rubric: loaded,
        judge: args,
        run,
        manifest,
    };
    let only = done.map(|d| (None, d));
    launch(ws, tag, &control, only, tx)?;
    Ok(control)
}

/// The last run of this dataset with this rubric (any version), and its cells whose
/// criterion — text, weight, kind, method, template — is unchanged, judged by the same
/// judge with the same guidelines; those need no new call.
fn unchanged_cells(
    ws: &Workspace,
    d: &DatasetInfo,
    snapshot: &serde_json::Value,
    args: &JudgeArgs,
) -> Result<(String, Vec<crate::store::runs::Cell>), String> {
    let id = snapshot
        .get("id")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let prev = super::data::runs_of(ws, &d.path)
        .into_iter()
        .rev()
        .find(|m| m.rubric_id == id)
        .ok_or_else(|| format!("no earlier run of '{id}' on this dataset: grade it all (enter)"))?;
    if file_hash(&d.path).map_err(|e| e.to_string())? != prev.dataset.hash {
        return Err("the dataset changed since the last run: grade it all (enter)".into());
    }
    let same = |k: &str| snapshot.get(k) == prev.rubric.get(k);
    let same_judge = prev.settings.get("judge").and_then(|j| j.get("judge"))
        == serde_json::to_value(args)
            .ok()
            .as_ref()
            .and_then(|j| j.get("judge"));
    let by_id = |v: &serde_json::Value| -> std::collections::HashMap<String, serde_json::Value> {
        v.get("criteria")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c.get("id")?.as_str()?.to_owned(), c.clone())))
            .collect()
    };
    let (old, new) = (by_id(&prev.rubric), by_id(snapshot));
    let unchanged: HashSet<&String> = if same("guidelines") && same("judge") && same_judge {
        new.iter()
            .filter(|(k, v)| old.get(*k) == Some(*v))
            .map(|(k, _)| k)
            .collect()
    } else {
        HashSet::new()
    };
    let run = RunDir::new(&ws.runs_dir(), &prev.id);
    let (cells, _) = run.read_cells(&prev).map_err(|e| e.to_string())?;
    let keep = cells
        .into_values()
        .filter(|c| c.result.failure.is_none() && unchanged.contains(&c.result.criterion_id))
        .collect();
    Ok((prev.id, keep))
}

/// Continues an unfinished run of the workspace (a crash, a quit, a cancel): its rubric
/// snapshot, judge settings and journal; the cells already there are shown, the rest graded.
pub fn resume(
    ws: &Workspace,
    tag: u64,
    d: &DatasetInfo,
    run_id: &str,
    tx: mpsc::Sender<Msg>,
) -> Result<RunControl, String> {
    let run = RunDir::new(&ws.runs_dir(), run_id);
    let manifest = run.read_manifest().map_err(|e| e.to_string())?;
    if file_hash(&d.path).map_err(|e| e.to_string())? != manifest.dataset.hash {
        return Err(format!(
            "the dataset changed since run {run_id} started; start a new run"
        ));
    }
    let text = manifest.rubric.to_string();
    if text_hash(&text) != manifest.rubric_hash {
        return Err(format!(
            "run {run_id}: the rubric snapshot does not match its hash"
        ));
    }
    let file = format!("{}#rubric", run.manifest_path().display());
    let loaded =
        crate::formats::parse_rubric_text(&file, &text, &manifest.rubric_id, &run.dir, None)
            .map_err(|e| e.to_string())?;
    let mut judge: JudgeArgs = manifest
        .settings
        .get("judge")
        .cloned()
        .and_then(|j| serde_json::from_value(j).ok())
        .unwrap_or_else(|| judge_args(None, None));
    judge.stream = true;
    let (cells, _) = run.read_cells(&manifest).map_err(|e| e.to_string())?;
    let items = crate::formats::dataset::index::LineIndex::open_or_build(&d.index, &d.path)
        .ok()
        .map(|ix| ix.len());
    let criteria = loaded
        .rubric
        .criteria
        .iter()
        .map(|c| (c.id.clone(), c.weight < 0.0))
        .collect();
    let _ = tx.blocking_send(Msg::RunStarted {
        tag,
        run_id: run_id.to_owned(),
        criteria,
        items,
    });
    let mut done = HashSet::new();
    for ((item, criterion), cell) in &cells {
        done.insert((*item, criterion.clone()));
        let index = loaded
            .rubric
            .criteria
            .iter()
            .position(|c| &c.id == criterion);
        let kind = match &cell.result.failure {
            Some(f) => EventKind::Failed(f.clone()),
            None => EventKind::Scored(Box::new(cell.result.clone())),
        };
        let _ = tx.blocking_send(Msg::Grade {
            tag,
            event: Box::new(crate::engine::GradeEvent {
                run: tag,
                item: *item,
                criterion: index,
                kind,
            }),
        });
    }
    let _ = tx.blocking_send(Msg::Info(format!(
        "run {run_id} continues: {} cells already in its journal",
        done.len()
    )));
    let control = RunControl {
        cancel: CancelToken::default(),
        paused: Arc::new(AtomicBool::new(false)),
        dataset: d.clone(),
        rubric: loaded,
        judge,
        run,
        manifest,
    };
    launch(ws, tag, &control, Some((None, done)), tx)?;
    Ok(control)
}

/// Grades again exactly `cells` of a run (every other cell of those items is skipped).
pub fn retry(
    ws: &Workspace,
    tag: u64,
    control: &RunControl,
    cells: &[(usize, String)],
    tx: mpsc::Sender<Msg>,
) -> Result<(), String> {
    let wanted: HashSet<usize> = cells.iter().map(|(i, _)| *i).collect();
    let wanted = Some(wanted);
    let retried: HashSet<(usize, String)> = cells.iter().cloned().collect();
    let mut done = HashSet::new();
    for &i in wanted.iter().flatten() {
        for c in &control.rubric.rubric.criteria {
            if !retried.contains(&(i, c.id.clone())) {
                done.insert((i, c.id.clone()));
            }
        }
    }
    launch(ws, tag, control, Some((wanted, done)), tx)
}

/// The items to grade (`None`: all), and the cells to skip (already in the journal).
type Only = (Option<HashSet<usize>>, HashSet<(usize, String)>);

/// Runs the executor over the dataset (or only `only`'s items, skipping its done cells),
/// journalling every finished item and forwarding every event.
fn launch(
    ws: &Workspace,
    tag: u64,
    control: &RunControl,
    only: Option<Only>,
    tx: mpsc::Sender<Msg>,
) -> Result<(), String> {
    let compiled = Arc::new(compile(&control.rubric).map_err(|e| e.to_string())?);
    let judges = crate::cli::judges::build(&control.judge, Some(&control.rubric), None, &ws.config)
        .map_err(|e| e.message)?;
    let meter = judges.as_ref().map(|j| Arc::clone(&j.meter));
    let reopen = only.is_some();
    let (wanted, done) = match only {
        Some((w, d)) => (w, Some(Arc::new(d))),
        None => (None, None),
    };
    let opts = ExecOptions {
        concurrency: ws.config.judge.concurrency.unwrap_or(16),
        allow_commands: ws.config.allow_commands,
        cell_events: true,
        judge: judges.map(|j| j.panel),
        done,
        ..ExecOptions::default()
    };
    let mut writer = if reopen {
        let (_, valid) = control
            .run
            .read_cells(&control.manifest)
            .map_err(|e| e.to_string())?;
        RunWriter::reopen(&control.run, &control.manifest, valid)
    } else {
        RunWriter::create(&control.run, &control.manifest)
    }
    .map_err(|e| e.to_string())?;
    let path = control.dataset.path.clone();
    let cancel = control.cancel.clone();
    let paused = Arc::clone(&control.paused);
    let (item_tx, item_rx) = mpsc::channel::<(usize, Item)>(256);
    // Items are read on a thread of their own; while paused, none is handed over.
    let feed_cancel = cancel.clone();
    std::thread::spawn(move || {
        let Ok(dataset) = open_dataset(&path, ReadOptions::default()) else {
            return;
        };
        for (i, item) in dataset.items.enumerate() {
            while paused.load(Ordering::SeqCst) && !feed_cancel.is_cancelled() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            if feed_cancel.is_cancelled() {
                return;
            }
            if wanted.as_ref().is_some_and(|w| !w.contains(&i)) {
                continue;
            }
            let Ok(item) = item else { continue };
            if item_tx.blocking_send((i, item)).is_err() {
                return;
            }
        }
    });
    let mut manifest = control.manifest.clone();
    let run_dir = control.run.clone();
    let handle =
        tokio::runtime::Handle::try_current().map_err(|_| "no runtime to grade on".to_owned())?;
    handle.spawn(async move {
        let (event_tx, mut event_rx) = mpsc::channel(1024);
        let executor = Executor::new(opts);
        let exec_cancel = cancel.clone();
        let job = tokio::spawn(async move {
            executor
                .run(Some(compiled), item_rx, event_tx, exec_cancel)
                .await;
        });
        let mut summary = crate::cli::output::Summary::default();
        while let Some(ev) = event_rx.recv().await {
            if let EventKind::ItemDone(e) = &ev.kind {
                summary.add(e);
                let _ = writer.append(ev.item, &e.target_id, &e.results);
            }
            if tx
                .send(Msg::Grade {
                    tag,
                    event: Box::new(ev),
                })
                .await
                .is_err()
            {
                cancel.cancel();
            }
        }
        let _ = job.await;
        let _ = writer.finish();
        let usage = meter.map(|m| m.snapshot()).unwrap_or_default();
        if !cancel.is_cancelled() {
            manifest.finished_at = Some(jiff::Timestamp::now().to_string());
        }
        let old = manifest.totals.unwrap_or_default();
        manifest.totals = Some(Totals {
            items: summary.items.max(old.items),
            passed: summary.passed,
            incomplete: summary.incomplete,
            cells: summary.cells,
            failed_cells: summary.failed_cells,
            mean_score: summary.mean_score(),
            input_tokens: old.input_tokens + usage.input_tokens,
            output_tokens: old.output_tokens + usage.output_tokens,
            cost: old.cost + usage.cost,
        });
        let _ = run_dir.write_manifest(&manifest);
        let _ = tx
            .send(Msg::GradeFinished {
                tag,
                summary: format!("run {}: {}", manifest.id, summary.line(false)),
                tokens: usage.input_tokens + usage.output_tokens,
                cost: usage.cost,
            })
            .await;
    });
    Ok(())
}

/// The runs the UI started, by tag.
#[derive(Default)]
pub struct Runs {
    runs: Mutex<HashMap<u64, RunControl>>,
}

impl Runs {
    pub fn insert(&self, tag: u64, control: RunControl) {
        if let Ok(mut m) = self.runs.lock() {
            m.insert(tag, control);
        }
    }

    pub fn pause(&self, tag: u64, paused: bool) {
        if let Ok(m) = self.runs.lock()
            && let Some(c) = m.get(&tag)
        {
            c.paused.store(paused, Ordering::SeqCst);
        }
    }

    pub fn cancel(&self, tag: u64) {
        if let Ok(m) = self.runs.lock()
            && let Some(c) = m.get(&tag)
        {
            c.cancel.cancel();
            c.paused.store(false, Ordering::SeqCst);
        }
    }

    /// Retries cells of a run with a fresh cancel token.
    pub fn retry(
        &self,
        ws: &Workspace,
        tag: u64,
        cells: &[(usize, String)],
        tx: mpsc::Sender<Msg>,
    ) -> Result<(), String> {
        let mut m = self.runs.lock().map_err(|_| "the run is unavailable")?;
        let c = m.get_mut(&tag).ok_or("that run is no longer open here")?;
        c.cancel = CancelToken::default();
        retry(ws, tag, c, cells, tx)
    }
}
