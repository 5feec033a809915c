//! The grading loop every run goes through, whatever started it: items read on a thread
//! of their own, graded by the executor, each finished item's cells appended to the run's
//! journal (the one writer) in input order and only then handed to the front end; the cost
//! budget, pause and cancel enforced here. A journal write error stops the run. At most
//! [`in_flight_items`] items are between the reader and the front end at once
//! ([`InFlight`]): a slow journal or front end slows reading, never grows memory.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::Summary;
use super::control::Control;
use super::in_flight::InFlight;
use super::judges::RunJudges;
use crate::engine::judge::{HOLISTIC_ID, Strategy};
use crate::engine::{CompiledRubric, EventKind, ExecOptions, Executor, GradeEvent};
use crate::formats::Diagnostic;
use crate::formats::dataset::Dataset;
use crate::llm;
use crate::model::{CriterionResult, Evaluation, Failure, Item};
use crate::store::runs::RunWriter;

pub use crate::engine::CellSet;

/// What one pass over a dataset grades, and where it goes.
pub struct Job {
    pub dataset: Dataset,
    /// The run's rubric, compiled; `None` when every item brings its own.
    pub rubric: Option<Arc<CompiledRubric>>,
    /// The run's rubric replaces items' own.
    pub override_rubric: bool,
    pub judges: Option<RunJudges>,
    /// Items graded at once.
    pub concurrency: usize,
    pub allow_commands: bool,
    pub llm_feedback: bool,
    /// Per-cell events for a front end that draws cells.
    pub cell_events: bool,
    /// Only these item positions (`None`: every item).
    pub items: Option<HashSet<usize>>,
    /// Cells not graded (already in the journal).
    pub skip: Option<Arc<CellSet>>,
    /// The run's journal; `None` for a run that is not recorded.
    pub journal: Option<RunWriter>,
    pub control: Control,
}

/// What the loop tells its front end.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// A cell's progress (only with `cell_events`).
    Cell(GradeEvent),
    /// An item finished, its new cells already in the journal (input order).
    Item {
        index: usize,
        /// Where the item was read: `file:line`, or `file item N`.
        origin: String,
        evaluation: Box<Evaluation>,
    },
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The cost budget was spent (why).
    Cost(String),
    /// Cancelled by the user.
    Cancelled,
    /// The journal could not be written: the run must not go on.
    Journal(String),
    /// The front end could not take a result (its output failed).
    Output(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Cost(why) => write!(f, "{why}"),
            Stop::Cancelled => f.write_str("the run was cancelled"),
            Stop::Journal(e) => write!(f, "the run's journal could not be written: {e}"),
            Stop::Output(e) => write!(f, "{e}"),
        }
    }
}

/// How a pass ended.
pub struct Ended {
    /// The dataset stopped being readable here (results cover what came before).
    pub input_error: Option<Diagnostic>,
    pub stop: Option<Stop>,
    pub meter: Arc<llm::Meter>,
    /// The items finished in this pass.
    pub summary: Summary,
    /// Items the reader went through (graded now, skipped as done, or not selected).
    pub items_read: usize,
    /// The journal, to be finished by the caller.
    pub journal: Option<RunWriter>,
    /// Cells left ungraded because their call was never sent (a stop, or a batch run's
    /// call still in a batch): not journalled.
    pub unsent_cells: usize,
}

/// Items a run holds at once between reading and delivering them: four times the items
/// graded at once, so one slow item (the one the rest wait for, to keep input order) does
/// not idle the others, and at least 16 quick batches, so grading never waits on the window.
fn in_flight_items(concurrency: usize) -> usize {
    (concurrency.max(1) * 4).max(crate::engine::executor::QUICK_BATCH * 16)
}

/// Grades `job`, handing events to `on_event` (items in input order). An error from
/// `on_event` stops the run (no new call starts) and is reported as [`Stop::Output`].
pub async fn drive<F, Fut>(job: Job, on_event: F) -> Ended
where
    F: FnMut(RunEvent) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let window = Arc::new(InFlight::new(in_flight_items(job.concurrency)));
    drive_within(job, window, on_event).await
}

/// [`drive`] with its window of items in flight given (a test watches it).
async fn drive_within<F, Fut>(mut job: Job, window: Arc<InFlight>, mut on_event: F) -> Ended
where
    F: FnMut(RunEvent) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let meter = job
        .judges
        .as_ref()
        .map_or_else(|| Arc::new(llm::Meter::default()), |j| Arc::clone(&j.meter));
    let holistic = job
        .judges
        .as_ref()
        .is_some_and(|j| j.panel.strategy == Strategy::Holistic);
    let opts = ExecOptions {
        concurrency: job.concurrency.max(1),
        allow_commands: job.allow_commands,
        cell_events: job.cell_events,
        judge: job.judges.as_ref().map(|j| Arc::clone(&j.panel)),
        llm_feedback: job.llm_feedback,
        done: job.skip.clone(),
        gate: Some(job.control.gate().clone()),
        ..ExecOptions::default()
    };
    let order = Arc::new(Mutex::new(VecDeque::new()));
    let input_error: Arc<Mutex<Option<Diagnostic>>> = Arc::default();
    let read = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = Reader {
        override_rubric: job.override_rubric,
        default_ids: job
            .rubric
            .as_ref()
            .map(|r| r.rubric().criteria.iter().map(|c| c.id.clone()).collect()),
        systems: job
            .rubric
            .as_ref()
            .map(|r| r.rubric().systems.clone())
            .unwrap_or_default(),
        holistic,
        items: job.items.take(),
        skip: job.skip.clone(),
        order: Arc::clone(&order),
        error: Arc::clone(&input_error),
        read: Arc::clone(&read),
        control: job.control.clone(),
        window: Arc::clone(&window),
    };
    let file = job.dataset.file.clone();
    let (item_tx, item_rx) = mpsc::channel(64);
    let (event_tx, mut event_rx) = mpsc::channel(4096);
    let feeder = reader.spawn(job.dataset, item_tx);
    let executor = Executor::new(opts);
    let cancel = job.control.cancel_token();
    let rubric = job.rubric.clone();
    let run = tokio::spawn(async move { executor.run(rubric, item_rx, event_tx, cancel).await });
    let mut reorder = Reorder {
        order,
        ready: HashMap::new(),
    };
    let mut out = Outbox {
        journal: job.journal.take(),
        summary: Summary::default(),
        stop: None,
        control: job.control.clone(),
        unsent_cells: 0,
        window: Arc::clone(&window),
    };
    // Events are taken as many as are waiting at a time (one wake-up for a batch).
    let mut arrived = Vec::with_capacity(256);
    let mut released = Vec::with_capacity(256);
    while event_rx.recv_many(&mut arrived, 256).await > 0 {
        for ev in arrived.drain(..) {
            let done = match ev.kind {
                EventKind::ItemDone(evaluation) => vec![(ev.item, *evaluation)],
                EventKind::ItemsDone(batch) => batch,
                _ => {
                    // Cells keep arriving after a cost stop or a cancel (calls in flight
                    // finish); only a front end that failed hears nothing more.
                    if job.cell_events
                        && !matches!(out.stop, Some(Stop::Output(_)))
                        && let Err(e) = on_event(RunEvent::Cell(ev)).await
                    {
                        out.stop_with(Stop::Output(e));
                    }
                    continue;
                }
            };
            // The budget is spent: no new call starts; calls in flight finish.
            if out.stop.is_none()
                && let Some(why) = meter.over_budget()
            {
                out.stop_with(Stop::Cost(why));
            }
            for (item, evaluation) in done {
                reorder.push(item, evaluation, &mut released);
                for (index, origin, evaluation) in released.drain(..) {
                    out.deliver(index, origin, evaluation, &mut on_event).await;
                }
            }
        }
    }
    let _ = run.await;
    for (index, origin, evaluation) in reorder.flush() {
        out.deliver(index, origin, evaluation, &mut on_event).await;
    }
    // Items the executor never finished (a stopped run) keep their places: the reader,
    // perhaps waiting for one, stops here.
    window.close();
    let Outbox {
        journal,
        summary,
        mut stop,
        unsent_cells,
        ..
    } = out;
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
    if stop.is_none() && job.control.is_cancelled() {
        stop = Some(Stop::Cancelled);
    }
    Ended {
        input_error: input_error.lock().ok().and_then(|mut g| g.take()),
        stop,
        meter,
        summary,
        items_read: read.load(std::sync::atomic::Ordering::SeqCst),
        journal,
        unsent_cells,
    }
}

/// Where finished items go: the journal first, then the front end.
struct Outbox {
    journal: Option<RunWriter>,
    summary: Summary,
    stop: Option<Stop>,
    control: Control,
    unsent_cells: usize,
    /// Each item delivered (or dropped after a stop) gives its place back.
    window: Arc<InFlight>,
}

impl Outbox {
    /// Stops the run (no new call starts); the first reason is kept.
    fn stop_with(&mut self, why: Stop) {
        self.control.cancel();
        self.stop.get_or_insert(why);
    }

    /// Journals an item's graded cells (never those the run stopped before sending), then
    /// hands it on. Once the journal or the front end failed, nothing more goes anywhere.
    async fn deliver<F, Fut>(
        &mut self,
        index: usize,
        origin: String,
        evaluation: Evaluation,
        on_event: &mut F,
    ) where
        F: FnMut(RunEvent) -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        self.deliver_one(index, origin, evaluation, on_event).await;
        self.window.leave();
    }

    async fn deliver_one<F, Fut>(
        &mut self,
        index: usize,
        origin: String,
        evaluation: Evaluation,
        on_event: &mut F,
    ) where
        F: FnMut(RunEvent) -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        if matches!(self.stop, Some(Stop::Journal(_) | Stop::Output(_))) {
            return;
        }
        let unsent = |r: &CriterionResult| r.failure.as_ref().is_some_and(Failure::unsent);
        self.unsent_cells += evaluation.results.iter().filter(|r| unsent(r)).count();
        if let Some(writer) = self.journal.as_mut() {
            // Copies only in the rare item with cells the run never sent.
            let graded: std::borrow::Cow<'_, [CriterionResult]> =
                if evaluation.results.iter().any(unsent) {
                    evaluation
                        .results
                        .iter()
                        .filter(|r| !unsent(r))
                        .cloned()
                        .collect()
                } else {
                    std::borrow::Cow::Borrowed(&evaluation.results)
                };
            if !graded.is_empty()
                && let Err(e) = writer.append(index, &evaluation.target_id, &graded)
            {
                self.stop_with(Stop::Journal(e.to_string()));
                return;
            }
        }
        self.summary.add(&evaluation);
        if let Err(e) = on_event(RunEvent::Item {
            index,
            origin,
            evaluation: Box::new(evaluation),
        })
        .await
        {
            self.stop_with(Stop::Output(e));
        }
    }
}

/// Positions in the order the reader sent them, each with where its item was read.
type Order = Arc<Mutex<VecDeque<(usize, String)>>>;

/// Restores input order: positions in the order the reader sent them, released as soon as
/// every earlier one is done.
struct Reorder {
    order: Order,
    ready: HashMap<usize, Evaluation>,
}

impl Reorder {
    /// Takes a finished item; adds to `out` the items now released, in order. The item
    /// everyone waits for (the front) is never among those held, so an item that is not
    /// the front releases nothing, and one that is goes out without being held.
    fn push(&mut self, index: usize, e: Evaluation, out: &mut Vec<(usize, String, Evaluation)>) {
        let Ok(mut order) = self.order.lock() else {
            return;
        };
        if order.front().map(|(i, _)| *i) != Some(index) {
            self.ready.insert(index, e);
            return;
        }
        if let Some((_, origin)) = order.pop_front() {
            out.push((index, origin, e));
        }
        while !self.ready.is_empty()
            && let Some(front) = order.front().map(|(i, _)| *i)
        {
            let Some(e) = self.ready.remove(&front) else {
                break;
            };
            if let Some((_, origin)) = order.pop_front() {
                out.push((front, origin, e));
            }
        }
    }

    /// The rest, in order, once the executor is done (items it never finished — a stopped
    /// run — are passed over).
    fn flush(&mut self) -> Vec<(usize, String, Evaluation)> {
        let Ok(mut order) = self.order.lock() else {
            return Vec::new();
        };
        order
            .drain(..)
            .filter_map(|(i, origin)| self.ready.remove(&i).map(|e| (i, origin, e)))
            .collect()
    }
}

/// Reads items on a thread of its own (file I/O never blocks the executor) and sends them
/// tagged with their position. The first input problem stops reading and is kept.
struct Reader {
    override_rubric: bool,
    /// The run rubric's criterion ids (to tell when a resumed item is complete).
    default_ids: Option<Vec<String>>,
    /// A pairwise run's candidates (empty: items of one answer).
    systems: Vec<String>,
    holistic: bool,
    items: Option<HashSet<usize>>,
    skip: Option<Arc<CellSet>>,
    order: Order,
    error: Arc<Mutex<Option<Diagnostic>>>,
    read: Arc<std::sync::atomic::AtomicUsize>,
    control: Control,
    /// A place is taken before an item enters the run (blocking while the window is full).
    window: Arc<InFlight>,
}

impl Reader {
    fn spawn(
        self,
        dataset: Dataset,
        tx: mpsc::Sender<(usize, Item)>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let file = dataset.file.clone();
            // A subset's last position ends the reading: `--limit 10` of a million items
            // reads ten.
            let last = self.items.as_ref().map(|w| w.iter().max().copied());
            for (index, item) in dataset.items.enumerate() {
                if self.control.is_cancelled() || last.is_some_and(|l| l.is_none_or(|l| index > l))
                {
                    return;
                }
                self.read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let problem = match item {
                    Ok(mut item) => {
                        if self.override_rubric {
                            item.rubric = None;
                        }
                        let systems: &[String] = match &item.rubric {
                            Some(_) => &[],
                            None => &self.systems,
                        };
                        if let Err(why) = super::pairwise::fit(&mut item, systems) {
                            Some(Diagnostic::whole(&item.origin, why))
                        } else if item.rubric.is_none() && self.default_ids.is_none() {
                            Some(Diagnostic::whole(
                                &item.origin,
                                format!(
                                    "item '{}' has no rubric and {file} has none; pass --rubric FILE or NAME",
                                    item.id
                                ),
                            ))
                        } else if self.items.as_ref().is_some_and(|w| !w.contains(&index))
                            || self.complete(index, &item)
                        {
                            None
                        } else {
                            if !self.window.enter() {
                                return;
                            }
                            if let Ok(mut order) = self.order.lock() {
                                order.push_back((index, item.origin.clone()));
                            }
                            if tx.blocking_send((index, item)).is_err() {
                                return;
                            }
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

    /// Every cell of the item is done already.
    fn complete(&self, index: usize, item: &Item) -> bool {
        let Some(done) = &self.skip else {
            return false;
        };
        let has = |id: &str| done.contains(index, id);
        if self.holistic {
            return has(HOLISTIC_ID);
        }
        match (&item.rubric, &self.default_ids) {
            (Some(r), _) => r.criteria.iter().all(|c| has(&c.id)),
            (None, Some(ids)) => ids.iter().all(|id| has(id)),
            (None, None) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::formats::dataset::{ReadOptions, open_dataset};

    const RUBRIC: &str = "id: r\nname: R\nversion: 1.0.0\ncriteria:\n  - id: hi\n    requirement: Says hi\n    method: { check: contains, args: { text: hi } }\n";

    /// A front end that stops taking results (a stalled pipe, a slow disk) must stop the
    /// reader once the window is full: items read never run ahead of items delivered by
    /// more than the window, whatever the dataset's size.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stalled_consumer_holds_at_most_the_window_of_items() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.jsonl");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&data).unwrap());
        let items = 20_000;
        for i in 0..items {
            writeln!(f, r#"{{"id": "i{i}", "submission": "hi {i}"}}"#).unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let rubric =
            crate::formats::parse_rubric_text("r.yaml", RUBRIC, "r", dir.path(), None).unwrap();
        let job = Job {
            dataset: open_dataset(&data, ReadOptions::default()).unwrap(),
            rubric: Some(Arc::new(crate::engine::compile(&rubric).unwrap())),
            override_rubric: false,
            judges: None,
            concurrency: 4,
            allow_commands: false,
            llm_feedback: false,
            cell_events: false,
            items: None,
            skip: None,
            journal: None,
            control: Control::default(),
        };
        let window = Arc::new(InFlight::new(in_flight_items(job.concurrency)));
        let capacity = in_flight_items(job.concurrency);
        assert!(capacity * 4 < items, "the dataset must dwarf the window");
        let delivered = Arc::new(AtomicUsize::new(0));
        let saw_full = Arc::new(AtomicBool::new(false));
        let ended = {
            let (window, delivered, saw_full) = (
                Arc::clone(&window),
                Arc::clone(&delivered),
                Arc::clone(&saw_full),
            );
            drive_within(job, Arc::clone(&window), move |event| {
                let (window, delivered, saw_full) = (
                    Arc::clone(&window),
                    Arc::clone(&delivered),
                    Arc::clone(&saw_full),
                );
                async move {
                    if let RunEvent::Item { .. } = event {
                        // The first item stalls until the reader is blocked on a full
                        // window; every later one goes at once.
                        if delivered.fetch_add(1, Ordering::SeqCst) == 0 {
                            let deadline = Instant::now() + Duration::from_secs(60);
                            while !window.reader_waits() {
                                if Instant::now() > deadline {
                                    return Err("the reader never waited".into());
                                }
                                tokio::task::yield_now().await;
                            }
                            saw_full.store(true, Ordering::SeqCst);
                        }
                    }
                    Ok(())
                }
            })
            .await
        };
        assert!(ended.stop.is_none(), "{:?}", ended.stop);
        assert!(saw_full.load(Ordering::SeqCst));
        assert_eq!(ended.summary.items, items);
        assert_eq!(delivered.load(Ordering::SeqCst), items);
        assert!(
            window.peak() <= capacity,
            "{} items held at once, window {capacity}",
            window.peak()
        );
    }
}
