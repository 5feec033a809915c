//! The runtime (ARCHITECTURE.md "TUI"): carries out the app's effects off the UI loop (on
//! blocking worker threads) and answers with messages. `handle` only routes: each effect
//! belongs to one topic, and that topic's file carries it out and words its failures in one
//! place — labels, runs (live grading), saved runs (reading and exporting them), batch,
//! datasets, rubrics, artifacts, align reports. `dispatch` holds the threads effects run on, among them
//! the one ordered writer of the files people own.

mod align;
mod artifacts;
mod batch;
mod datasets;
mod dispatch;
mod export;
mod labels;
pub mod reads;
mod rubrics;
mod runs;
mod saved_runs;
mod sessions;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

pub(super) use dispatch::Dispatch;

use super::data::DatasetInfo;
use super::effect::Effect;
use super::msg::{Failure, FailureKind, Msg};
use crate::formats::dataset::index::LineIndex;
use crate::store::Workspace;
use crate::store::labels::Journal;

pub struct Runtime {
    pub ws: Workspace,
    /// The datasets, by the position the UI knows them at (new ones are only appended).
    datasets: RwLock<Vec<DatasetInfo>>,
    annotator: Mutex<String>,
    /// The open label journal (its lock held while labelling one dataset).
    journal: Mutex<Option<(usize, Journal)>>,
    /// Indexes read so far, by dataset.
    indexes: Mutex<BTreeMap<usize, Arc<LineIndex>>>,
    latest_scan: AtomicU64,
    /// Where runs send their events (set by `Dispatch::start`).
    tx: Mutex<Option<tokio::sync::mpsc::Sender<Msg>>>,
    runs: sessions::Runs,
    /// Set when the UI quits: long walks (estimates) stop at once.
    quitting: AtomicBool,
    /// When the last "labels next" plan finished and how long it took (plans are spaced
    /// so that, labelling a large dataset fast, planning takes at most a quarter of a core).
    plan_cost: Mutex<(Option<Instant>, Duration)>,
    /// Batch runs being watched, each with its "ask now" flag.
    batch_watch: Mutex<std::collections::HashMap<String, Arc<AtomicBool>>>,
}

/// The part of the runtime an effect belongs to: one file of `runtime/` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// Labels, undo, the annotator, an opened dataset's labels, the plan, calibration.
    Labels,
    /// Live grading: estimate, start, continue, pause, cancel, retry.
    Runs,
    /// Saved runs read for the panes (an earlier run, details, joins, filters,
    /// comparisons) and exported.
    SavedRuns,
    /// Batch runs: start one, watch it.
    Batch,
    /// The dataset list, a dataset added by path, path completion, windows, searches.
    Datasets,
    /// Rubric files: new, load, drafts, save as a version, diff.
    Rubrics,
    /// Artifacts: list, create, revise, submit, decide.
    Artifacts,
    /// `rubricate align` reports: the newest read, a winner adopted.
    Align,
}

impl Effect {
    /// The topic that carries this effect out. Every variant is named (no catch-all), so a
    /// new effect cannot compile until it has a topic.
    pub fn topic(&self) -> Topic {
        match self {
            Effect::SaveLabel { .. }
            | Effect::Undo { .. }
            | Effect::SetAnnotator { .. }
            | Effect::Open { .. }
            | Effect::PlanLabels { .. }
            | Effect::Calibrate { .. }
            | Effect::Adopt { .. } => Topic::Labels,
            Effect::Estimate { .. }
            | Effect::StartRun { .. }
            | Effect::ResumeRun { .. }
            | Effect::PauseRun { .. }
            | Effect::CancelRun { .. }
            | Effect::RetryCells { .. } => Topic::Runs,
            Effect::LoadEarlierRun { .. }
            | Effect::LoadRunDetails { .. }
            | Effect::JoinLabels { .. }
            | Effect::FilterRunItems { .. }
            | Effect::CompareRuns { .. }
            | Effect::ExportRun { .. } => Topic::SavedRuns,
            Effect::StartBatch { .. } | Effect::WatchBatch { .. } => Topic::Batch,
            Effect::FindDatasets
            | Effect::AddDataset(_)
            | Effect::CompletePath(_)
            | Effect::LoadWindow { .. }
            | Effect::Scan { .. } => Topic::Datasets,
            Effect::NewRubric { .. }
            | Effect::AddFirstCriterion { .. }
            | Effect::LoadRubric { .. }
            | Effect::EditRubric { .. }
            | Effect::SaveRubric { .. }
            | Effect::DiffRubric { .. }
            | Effect::WriteDraft { .. } => Topic::Rubrics,
            Effect::LoadArtifacts
            | Effect::ReadArtifactFile(_)
            | Effect::CreateArtifact { .. }
            | Effect::EditArtifact { .. }
            | Effect::ReviseArtifact { .. }
            | Effect::SubmitArtifact { .. }
            | Effect::DecideArtifact { .. } => Topic::Artifacts,
            Effect::ReadAlign(_) | Effect::AdoptAlign { .. } => Topic::Align,
        }
    }
}

impl Runtime {
    pub fn new(ws: Workspace, datasets: Vec<DatasetInfo>, annotator: String) -> Self {
        Self {
            ws,
            datasets: RwLock::new(datasets),
            annotator: Mutex::new(annotator),
            journal: Mutex::new(None),
            indexes: Mutex::new(BTreeMap::new()),
            latest_scan: AtomicU64::new(0),
            tx: Mutex::new(None),
            runs: sessions::Runs::default(),
            quitting: AtomicBool::new(false),
            plan_cost: Mutex::new((None, Duration::ZERO)),
            batch_watch: Mutex::default(),
        }
    }

    /// The UI is quitting: runs stop sending (their journals keep what was graded; they
    /// can be continued), and estimates stop walking.
    pub fn quit(&self) {
        self.quitting.store(true, Ordering::SeqCst);
        self.runs.cancel_all();
    }

    fn ui(&self) -> Option<tokio::sync::mpsc::Sender<Msg>> {
        self.tx.lock().ok()?.clone()
    }

    /// The dataset at `i` (as the UI numbers them).
    fn dataset(&self, i: usize) -> Option<DatasetInfo> {
        self.datasets.read().ok()?.get(i).cloned()
    }

    fn annotator(&self) -> String {
        self.annotator.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// Marks a scan as the newest (older ones stop).
    pub fn note(&self, effect: &Effect) {
        if let Effect::Scan { tag, .. } = effect {
            self.latest_scan.fetch_max(*tag, Ordering::SeqCst);
        }
    }

    /// Carries out one effect (blocking) and returns its answer.
    pub fn handle(&self, effect: Effect) -> Option<Msg> {
        match effect.topic() {
            Topic::Labels => self.handle_labels(effect),
            Topic::Runs => self.handle_runs(effect),
            Topic::SavedRuns => self.handle_saved_runs(effect),
            Topic::Batch => self.handle_batch(effect),
            Topic::Datasets => self.handle_datasets(effect),
            Topic::Rubrics => self.handle_rubrics(effect),
            Topic::Artifacts => self.handle_artifacts(effect),
            Topic::Align => Some(self.handle_align(effect)),
        }
    }
}

/// A topic's failure: its words (`Display`), and its kind.
trait Failed: std::fmt::Display {
    fn kind(&self) -> FailureKind;
}

/// A failure as the UI's error message, kept typed: the one place the runtime makes
/// `Msg::Error` (each topic words its failures in its own `Failure`).
fn failed(failure: &impl Failed) -> Msg {
    Msg::Error(typed(failure))
}

/// A topic's failure as the UI keeps it.
fn typed(failure: &impl Failed) -> Failure {
    Failure::new(failure.kind(), failure)
}

/// The answer to an effect handed to a topic that is not its own. `Effect::topic` and the
/// topics' handlers name the same variants (`tests.rs` hands every variant to `handle`), so
/// this is a bug: said and logged, never silent.
fn misrouted(topic: Topic, effect: &Effect) -> Msg {
    let shown = format!("{effect:?}");
    let variant = shown.split([' ', '(', '{']).next().unwrap_or_default();
    tracing::error!("the {topic:?} runtime was handed {shown}, not one of its effects");
    Msg::Error(Failure::new(
        FailureKind::Other,
        format!("{MISROUTED} the {topic:?} runtime was handed {variant}; please report it"),
    ))
}

/// How a misrouted effect's message begins.
const MISROUTED: &str = "internal error:";

#[cfg(test)]
mod tests;
