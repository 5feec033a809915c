//! Grading from the terminal UI: sessions of the run engine (`crate::run`), exactly the
//! runs `grade --save` records (so `rubricate runs resume` can finish them), with their
//! events sent to the UI tagged. Pause, cancel, continue and retry go through the engine's
//! `Control`; this file only translates between the engine and the UI's messages (the
//! effects that start them are `runs.rs`'s and `batch.rs`'s).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use tokio::sync::mpsc;

use crate::engine::judge::Strategy;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::run::estimate::{Walk, estimate as walk_estimate};
use crate::run::{self, Control, Env, JudgeSettings, NewRun, RunEvent, RunSettings, RunsHome};
use crate::store::Workspace;
use crate::tui::data::DatasetInfo;
use crate::tui::msg::{Msg, RunEnd};

/// Items an estimate walks before it scales up to the whole dataset.
const ESTIMATE_SAMPLE: u64 = 2_000;

/// The judge settings of a UI run: the chosen model(s) (else the rubric's / workspace's),
/// the strategy, streamed, and the cost limit.
pub fn judge_settings(
    judge: Option<&str>,
    strategy: Option<Strategy>,
    max_cost: Option<f64>,
) -> JudgeSettings {
    JudgeSettings {
        strategy,
        stream: true,
        max_cost,
        ..JudgeSettings::default()
    }
    .with_models(judge)
}

fn env(ws: &Workspace) -> Env<'_> {
    Env {
        config: &ws.config,
        cache_from: &ws.root,
    }
}

/// What a UI run grades with.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec<'a> {
    /// The rubric file; `None`: each item's own rubric.
    pub rubric: Option<&'a Path>,
    pub judge: Option<&'a str>,
    pub strategy: Option<Strategy>,
    pub max_cost: Option<f64>,
    /// Only the criteria changed since the last run of this rubric.
    pub changed_only: bool,
    /// The run's name in the workspace (`ui` when none was typed).
    pub name: Option<&'a str>,
}

impl<'a> RunSpec<'a> {
    /// Grading everything with what the set-up chose, under the default name.
    pub fn chosen(
        rubric: Option<&'a Path>,
        judge: Option<&'a str>,
        strategy: Option<Strategy>,
        max_cost: Option<f64>,
    ) -> Self {
        RunSpec {
            rubric,
            judge,
            strategy,
            max_cost,
            changed_only: false,
            name: None,
        }
    }
}

/// How many items the dataset holds: its line index for JSONL and CSV, else the count
/// taken when it was registered (a YAML eval's lines are not its cases).
fn item_count(d: &DatasetInfo) -> Option<usize> {
    if crate::store::datasets::indexable(&d.path) {
        crate::formats::dataset::index::LineIndex::open_or_build(&d.index, &d.path)
            .ok()
            .map(|ix| ix.len())
            .or(d.items)
    } else {
        d.items
    }
}

/// The chosen rubric file, read; `None` when each item brings its own.
fn load(rubric: Option<&Path>) -> Result<Option<crate::formats::LoadedRubric>, String> {
    rubric
        .map(|p| crate::formats::load_rubric(&p.display().to_string()).map_err(|e| e.to_string()))
        .transpose()
}

/// The estimate of a run: the first items walked exactly, the rest scaled from them;
/// `progress` hears how far it got; `stop` ends it early (a quit).
pub fn estimate(
    ws: &Workspace,
    d: &DatasetInfo,
    spec: &RunSpec<'_>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<run::estimate::Estimate, String> {
    let dataset = open_dataset(&d.path, ReadOptions::default()).map_err(|e| e.to_string())?;
    // A chosen rubric replaces the items' own; without one, the dataset's own (an
    // autorubric file's), else each item brings its own — as the run will grade it.
    let override_rubric = spec.rubric.is_some();
    // A pairwise rubric is expanded as the run will expand it: both orders of every pair.
    let loaded = run::pairwise::expanded(
        run::effective_rubric(load(spec.rubric)?, &dataset),
        &d.path,
        ReadOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    if let Some(l) = &loaded {
        crate::engine::compile(l).map_err(|e| e.to_string())?;
    }
    let judges = run::judges::build(
        &judge_settings(spec.judge, spec.strategy, spec.max_cost),
        loaded.as_ref(),
        &run::JudgeEnv {
            config: &ws.config,
            concurrency: None,
            cache_from: &ws.root,
            gate: None,
            batch: None,
        },
    )
    .map_err(|e| e.to_string())?;
    let total = item_count(d).map(|n| n as u64);
    walk_estimate(
        dataset,
        loaded.as_ref(),
        override_rubric,
        judges.as_ref(),
        Walk {
            sample: Some(ESTIMATE_SAMPLE),
            total,
            stop: Some(stop),
        },
        progress,
    )
    .map_err(|e| e.to_string())
}

/// Starts a run (after everything validated: a rubric that does not compile starts
/// nothing and leaves no run behind) and drives it on the runtime.
pub fn start(
    ws: &Workspace,
    tag: u64,
    d: &DatasetInfo,
    spec: &RunSpec<'_>,
    tx: mpsc::Sender<Msg>,
) -> Result<(Control, String), String> {
    let loaded = load(spec.rubric)?;
    if spec.changed_only && loaded.is_none() {
        return Err(
            "re-grading what changed compares one rubric's versions: choose a rubric file (or grade it all with enter)"
                .into(),
        );
    }
    let judge = judge_settings(spec.judge, spec.strategy, spec.max_cost);
    // Re-grading what changed: the cells of unchanged criteria come from the last run.
    let copied = if let (true, Some(loaded)) = (spec.changed_only, &loaded) {
        let earlier = super::reads::runs_of(ws, &d.path)
            .into_iter()
            .rev()
            .find(|m| m.rubric_id == loaded.rubric.id)
            .ok_or_else(|| {
                format!(
                    "no earlier run of '{}' on this dataset: grade it all (enter)",
                    loaded.rubric.id
                )
            })?;
        let (from, cells) =
            run::regrade::unchanged_cells(&ws.runs_dir(), &earlier, &d.path, loaded, &judge)
                .map_err(|e| e.to_string())?;
        let _ = tx.blocking_send(Msg::Info(format!(
            "{} cells of unchanged criteria copied from run {from}; grading only the changed ones",
            cells.len()
        )));
        cells
    } else {
        Vec::new()
    };
    let control = Control::default();
    let session = run::start(
        NewRun {
            dataset: &d.path,
            rubric: loaded,
            settings: RunSettings {
                judge,
                // As `grade` does: a chosen rubric replaces the items' own; without one,
                // an item's own rubric wins over the dataset's.
                override_rubric: spec.rubric.is_some(),
                ..RunSettings::default()
            },
            record: Some((RunsHome::of(ws), Some(run_name(ws, spec.name)))),
            cell_events: true,
            copied,
            only: None,
        },
        env(ws),
        &control,
    )
    .map_err(|e| e.to_string())?;
    let id = launch(session, tag, d, tx)?;
    Ok((control, id))
}

/// Continues a saved run (after a crash, a quit or a cancel: every cell its journal lacks),
/// or grades chosen cells of it again (`redo`: a retry), spending within `max_cost` — the
/// limit the set-up shows now, not the one the run started with.
pub fn reopen(
    ws: &Workspace,
    tag: u64,
    d: &DatasetInfo,
    run_id: &str,
    redo: &[(usize, String)],
    max_cost: Option<f64>,
    tx: mpsc::Sender<Msg>,
) -> Result<Control, String> {
    let control = Control::default();
    // The cells graded again (`redo`) are not among the session's prior cells: they show
    // as queued, not as their old failure.
    let runs = ws.runs_dir();
    let session =
        run::reopen_with_cost_limit(&runs, run_id, redo, env(ws), &control, true, max_cost)
            .map_err(|e| e.to_string())?;
    if redo.is_empty() {
        let limit =
            max_cost.map_or_else(|| "no cost limit".into(), |c| format!("cost limit ${c:.2}"));
        let _ = tx.blocking_send(Msg::Info(format!(
            "run {run_id} continues ({limit}): {} cells already in its journal",
            session.prior.len()
        )));
    }
    launch(session, tag, d, tx)?;
    Ok(control)
}

/// Tells the UI the run started (its journalled cells first), then drives it on the
/// runtime, forwarding its events; the end says whether the run is finished.
fn launch(
    session: run::Session,
    tag: u64,
    d: &DatasetInfo,
    tx: mpsc::Sender<Msg>,
) -> Result<String, String> {
    let handle =
        tokio::runtime::Handle::try_current().map_err(|_| "no runtime to grade on".to_owned())?;
    let run_id = session.run_id().unwrap_or_default().to_owned();
    let items = item_count(d);
    let _ = tx.blocking_send(Msg::RunStarted {
        tag,
        run_id: run_id.clone(),
        criteria: session.criteria.clone(),
        items,
    });
    session
        .prior_cells(1024, |cells| {
            let _ = tx.blocking_send(Msg::Preload { tag, cells });
        })
        .map_err(|e| e.to_string())?;
    for w in &session.warnings {
        let _ = tx.blocking_send(Msg::Info(format!("warning: {w}")));
    }
    let id = run_id.clone();
    handle.spawn(async move {
        let outcome = session
            .run(|ev| {
                let events = tx.clone();
                let event = match ev {
                    RunEvent::Cell(e) => e,
                    RunEvent::Item {
                        index, evaluation, ..
                    } => crate::engine::GradeEvent {
                        run: tag,
                        item: index,
                        criterion: None,
                        kind: crate::engine::EventKind::ItemDone(evaluation),
                    },
                };
                async move {
                    events
                        .send(Msg::Grade {
                            tag,
                            event: Box::new(event),
                        })
                        .await
                        .map_err(|_| "the UI closed".to_owned())
                }
            })
            .await;
        let summary = outcome.summary().line();
        let end = if outcome.finished {
            RunEnd::Finished
        } else {
            let why = outcome
                .record_error
                .clone()
                .or_else(|| outcome.ended.stop.as_ref().map(ToString::to_string))
                .or_else(|| outcome.ended.input_error.as_ref().map(ToString::to_string))
                .unwrap_or_else(|| "cells are missing".into());
            RunEnd::Unfinished(why)
        };
        let _ = tx
            .send(Msg::GradeFinished {
                tag,
                summary: format!("run {id}: {summary}"),
                end,
                tokens: outcome.usage.input_tokens + outcome.usage.output_tokens,
                cost: outcome.usage.cost,
            })
            .await;
    });
    Ok(run_id)
}

/// The runs the UI started, by tag: their control and their id in the workspace.
#[derive(Default)]
pub struct Runs {
    runs: Mutex<HashMap<u64, Started>>,
}

/// A run the UI started: its control, its id in the workspace, its dataset.
struct Started {
    control: Control,
    run_id: String,
    dataset: DatasetInfo,
}

impl Runs {
    pub fn insert(&self, tag: u64, control: Control, run_id: String, dataset: DatasetInfo) {
        if let Ok(mut m) = self.runs.lock() {
            m.insert(
                tag,
                Started {
                    control,
                    run_id,
                    dataset,
                },
            );
        }
    }

    fn control(&self, tag: u64) -> Option<Control> {
        self.runs
            .lock()
            .ok()
            .and_then(|m| m.get(&tag).map(|s| s.control.clone()))
    }

    /// Pauses (no new judge call starts; those in flight finish) or resumes a run; while
    /// pausing, the calls still in flight are reported until none is left.
    pub fn pause(&self, tag: u64, paused: bool, tx: Option<mpsc::Sender<Msg>>) {
        let Some(control) = self.control(tag) else {
            return;
        };
        if !paused {
            control.resume();
            return;
        }
        control.pause();
        let (Some(tx), Ok(handle)) = (tx, tokio::runtime::Handle::try_current()) else {
            return;
        };
        handle.spawn(async move {
            let mut last = usize::MAX;
            while control.is_paused() && !control.is_cancelled() {
                let n = control.in_flight();
                if n != last {
                    last = n;
                    if tx.send(Msg::InFlight { tag, calls: n }).await.is_err() || n == 0 {
                        return;
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        });
    }

    pub fn cancel(&self, tag: u64) {
        if let Some(c) = self.control(tag) {
            c.cancel();
        }
    }

    /// Stops every run (the UI is quitting): their journals keep what was graded.
    pub fn cancel_all(&self) {
        if let Ok(m) = self.runs.lock() {
            for s in m.values() {
                s.control.cancel();
            }
        }
    }

    /// Grades chosen cells of a run again, in its journal, with a fresh control.
    pub fn retry(
        &self,
        ws: &Workspace,
        tag: u64,
        cells: &[(usize, String)],
        max_cost: Option<f64>,
        tx: mpsc::Sender<Msg>,
    ) -> Result<(), String> {
        let (run_id, d) = self
            .runs
            .lock()
            .ok()
            .and_then(|m| m.get(&tag).map(|s| (s.run_id.clone(), s.dataset.clone())))
            .ok_or("that run is no longer open here")?;
        let control = reopen(ws, tag, &d, &run_id, cells, max_cost, tx)?;
        self.insert(tag, control, run_id, d);
        Ok(())
    }
}

/// Records a batch run (after everything validated) and grades nothing yet: its steps
/// (`run::batch::step`) send, ask and collect. Its id.
pub fn start_batch(
    ws: &Workspace,
    d: &DatasetInfo,
    spec: &RunSpec<'_>,
) -> Result<String, run::Error> {
    if spec.changed_only {
        return Err(run::Error::input(
            "re-grading only what changed is a live run: switch batches off (b) for it",
        ));
    }
    let judge = JudgeSettings {
        batch: true,
        stream: false,
        ..judge_settings(spec.judge, spec.strategy, spec.max_cost)
    };
    let session = run::start(
        NewRun {
            dataset: &d.path,
            rubric: load(spec.rubric).map_err(run::Error::input)?,
            settings: RunSettings {
                judge,
                // As `grade` does: a chosen rubric replaces the items' own; without one,
                // an item's own rubric wins over the dataset's.
                override_rubric: spec.rubric.is_some(),
                ..RunSettings::default()
            },
            record: Some((RunsHome::of(ws), Some(run_name(ws, spec.name)))),
            cell_events: false,
            copied: Vec::new(),
            only: None,
        },
        env(ws),
        &Control::default(),
    )?;
    Ok(session.run_id().unwrap_or_default().to_owned())
}

/// One step of a batch run (on the runtime, from a blocking thread).
pub fn step_batch(ws: &Workspace, run_id: &str) -> Result<run::batch::Report, run::Error> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| run::Error::input("no runtime to ask on"))?;
    handle.block_on(run::batch::step(
        &ws.runs_dir(),
        run_id,
        env(ws),
        &Control::default(),
        run::batch::StepOptions::default(),
    ))
}

/// A new run's name: the one typed in the set-up, else `ui` — or, as names are unique and
/// the set-up keeps its name from run to run (a re-grade, a retry), the first of `NAME (2)`,
/// `NAME (3)`… no run has.
pub(super) fn run_name(ws: &Workspace, typed: Option<&str>) -> String {
    crate::store::runs::RunDir::unused_name(&ws.runs_dir(), typed.unwrap_or("ui"))
}
