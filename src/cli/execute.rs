//! The loop every grading command shares (`grade`, `runs resume`): items read on a thread
//! of their own, graded by the executor, handed back in input order; progress on stderr; the
//! run stopped when the cost budget is spent.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::progress::Progress;
use super::{CliError, FeedbackMode, JudgeArgs, judges};
use crate::engine::judge::{HOLISTIC_ID, Strategy};
use crate::engine::{CancelToken, EventKind, ExecOptions, Executor, InOrder, compile};
use crate::formats::dataset::Dataset;
use crate::formats::{Diagnostic, LoadedRubric};
use crate::llm;
use crate::model::{Evaluation, Item};
use crate::store::WorkspaceConfig;

/// What to grade and how.
pub struct Job<'a> {
    pub dataset: Dataset,
    /// The run's rubric; `None` when every item brings its own.
    pub rubric: Option<LoadedRubric>,
    /// `--rubric` was given: items' own rubrics are ignored.
    pub override_rubric: bool,
    pub judge_args: &'a JudgeArgs,
    pub concurrency: Option<usize>,
    pub allow_commands: bool,
    pub config: &'a WorkspaceConfig,
    /// Cells already graded (a resumed run): skipped, and items with none left not read
    /// into the executor at all.
    pub done: Option<Arc<HashSet<(usize, String)>>>,
}

/// How a job ended.
pub struct Ended {
    /// The dataset stopped being readable at this point (results cover what came before).
    pub input_error: Option<Diagnostic>,
    /// The cost budget ran out (why), and no new item was started.
    pub stopped_for_cost: Option<String>,
    pub meter: Arc<llm::Meter>,
}

/// Grades `job`, handing each finished item (its position and evaluation) to `on_item` in
/// input order (in finishing order when resuming); the first error from `on_item` is
/// returned after the run drains.
pub fn execute(
    job: Job<'_>,
    mut on_item: impl FnMut(usize, Evaluation) -> Result<(), CliError>,
) -> Result<Ended, CliError> {
    let compiled = job.rubric.as_ref().map(compile).transpose()?.map(Arc::new);
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let judges = judges::build(
        job.judge_args,
        job.rubric.as_ref(),
        job.concurrency,
        job.config,
    )?;
    let default_concurrency = if judges.is_some() {
        job.config.judge.concurrency.unwrap_or(16)
    } else {
        cores
    };
    let concurrency = job.concurrency.unwrap_or(default_concurrency).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(concurrency))
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    let meter = judges
        .as_ref()
        .map_or_else(|| Arc::new(llm::Meter::default()), |j| Arc::clone(&j.meter));
    let holistic = judges
        .as_ref()
        .is_some_and(|j| j.panel.strategy == Strategy::Holistic);
    let show_progress = judges.is_some() && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = Progress::new(show_progress, Arc::clone(&meter));
    let opts = ExecOptions {
        concurrency,
        allow_commands: job.allow_commands || job.config.allow_commands,
        judge: judges.map(|j| j.panel),
        llm_feedback: job.judge_args.feedback == FeedbackMode::Llm,
        done: job.done.clone(),
        ..ExecOptions::default()
    };
    let input_error: Arc<Mutex<Option<Diagnostic>>> = Arc::default();
    let mut stopped_for_cost = None;
    let file = job.dataset.file.clone();
    let resuming = job.done.is_some();
    let reader = Reader {
        override_rubric: job.override_rubric,
        has_default: compiled.is_some(),
        default_ids: job
            .rubric
            .as_ref()
            .map(|r| r.rubric.criteria.iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default(),
        holistic,
        done: job.done,
        error: Arc::clone(&input_error),
    };
    let item_error = runtime.block_on(async {
        let (item_tx, item_rx) = mpsc::channel(1024);
        let (event_tx, mut event_rx) = mpsc::channel(4096);
        let feeder = reader.spawn(job.dataset, item_tx);
        let executor = Executor::new(opts);
        let cancel = CancelToken::default();
        let stop = cancel.clone();
        let run =
            tokio::spawn(async move { executor.run(compiled, item_rx, event_tx, cancel).await });
        let mut order = InOrder::new();
        let mut item_error = None;
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
                // A resumed run skips finished items, so positions have gaps: its cells are
                // journalled as they come (order does not matter in a journal).
                let ready = if resuming {
                    vec![(ev.item, *evaluation)]
                } else {
                    order.push(ev.item, (ev.item, *evaluation))
                };
                for (index, e) in ready {
                    if item_error.is_none() {
                        item_error = on_item(index, e).err();
                    }
                }
            }
        }
        let _ = run.await;
        progress.finish();
        if feeder.join().is_err()
            && let Ok(mut slot) = input_error.lock()
        {
            slot.get_or_insert_with(|| {
                Diagnostic::whole(
                    &file,
                    "reading the dataset failed unexpectedly (a bug); results are incomplete",
                )
            });
        }
        item_error
    });
    if let Some(e) = item_error {
        return Err(e);
    }
    Ok(Ended {
        input_error: input_error.lock().ok().and_then(|mut g| g.take()),
        stopped_for_cost,
        meter,
    })
}

/// Reads items on a thread of its own (file I/O never blocks the executor) and sends them
/// tagged with their position. The first input problem stops reading and is kept.
struct Reader {
    override_rubric: bool,
    has_default: bool,
    /// The run rubric's criterion ids (to tell when a resumed item is complete).
    default_ids: Vec<String>,
    holistic: bool,
    done: Option<Arc<HashSet<(usize, String)>>>,
    error: Arc<Mutex<Option<Diagnostic>>>,
}

impl Reader {
    fn spawn(
        self,
        dataset: Dataset,
        tx: mpsc::Sender<(usize, Item)>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let file = dataset.file.clone();
            for (index, item) in dataset.items.enumerate() {
                let problem = match item {
                    Ok(mut item) => {
                        if self.override_rubric {
                            item.rubric = None;
                        }
                        if item.rubric.is_none() && !self.has_default {
                            Some(Diagnostic::whole(
                                &item.origin,
                                format!(
                                    "item '{}' has no rubric and {file} has none; pass --rubric FILE or NAME",
                                    item.id
                                ),
                            ))
                        } else if self.complete(index, &item) {
                            None
                        } else if tx.blocking_send((index, item)).is_err() {
                            return;
                        } else {
                            None
                        }
                    }
                    Err(d) => Some(d),
                };
                if let Some(d) = problem {
                    if let Ok(mut slot) = self.error.lock() {
                        *slot = Some(d);
                    }
                    return;
                }
            }
        })
    }

    /// Every cell of the item is in the journal already.
    fn complete(&self, index: usize, item: &Item) -> bool {
        let Some(done) = &self.done else {
            return false;
        };
        let has = |id: &str| done.contains(&(index, id.to_owned()));
        if self.holistic {
            return has(HOLISTIC_ID);
        }
        match &item.rubric {
            Some(r) => r.criteria.iter().all(|c| has(&c.id)),
            None => self.default_ids.iter().all(|id| has(id)),
        }
    }
}
