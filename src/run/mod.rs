//! THE run engine, shared by every front end: `rubricate grade` (saved or not), `runs
//! resume`, the TUI's Grade pane (start, continue, retry, re-grade what changed) and
//! artifact reviews all start here. A run is opened (rubric compiled, judges built, the run
//! recorded — nothing is written before everything validated), then driven by one loop
//! (`grading`) that owns the journal writer, the budget, pause and cancel, and finished
//! (totals replayed from the journal, the manifest marked finished only when no cell is
//! missing). Front ends only render its events.

pub mod agreement;
pub mod align;
pub mod align_report;
pub mod batch;
pub mod calibration;
pub mod compare;
pub mod control;
mod error;
pub mod estimate;
pub mod examples;
pub mod gates;
pub mod grading;
pub mod import;
mod in_flight;
pub mod join_pairs;
pub mod judges;
pub mod label_next;
pub mod pairwise;
pub mod people;
pub mod record;
pub mod regrade;
mod reopen;
pub mod report;
pub mod review;
pub mod settings;
pub mod subset;
mod summary;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

pub use control::Control;
pub use error::{Error, ErrorKind};
pub use grading::{CellSet, Ended, Job, RunEvent, Stop};
pub use judges::{JudgeEnv, RunJudges};
pub use record::{Evaluations, Recording, Replay, RunsHome};
use reopen::reopen_batched;
pub use reopen::{reopen, reopen_with_cost_limit};
pub use settings::{FeedbackMode, GradeSettings, JudgeSettings, RunSettings};
pub use summary::{Summary, TagScore, Tone, tag_scores, tags_text};

use crate::engine::compile;
use crate::formats::LoadedRubric;
use crate::formats::dataset::{Dataset, open_dataset};
use crate::llm::RunUsage;
use crate::store::WorkspaceConfig;
use crate::store::runs::Cell;

/// Where a run finds its configuration and its response cache.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    pub config: &'a WorkspaceConfig,
    /// The folder the response cache is looked for from (the workspace or the current one).
    pub cache_from: &'a Path,
}

/// A new run.
pub struct NewRun<'a> {
    pub dataset: &'a Path,
    /// The run's rubric; `None`: the dataset's own, else each item's.
    pub rubric: Option<LoadedRubric>,
    pub settings: RunSettings,
    /// Record it in the workspace, with this name.
    pub record: Option<(RunsHome, Option<String>)>,
    /// Per-cell events for a front end that draws cells.
    pub cell_events: bool,
    /// Cells taken over from an earlier run (re-grading only what changed): journalled
    /// first, not graded again.
    pub copied: Vec<Cell>,
    /// Grade only the items at these positions (`calibrate`: the labelled ones); `None`:
    /// every item.
    pub only: Option<std::collections::HashSet<usize>>,
}

/// An opened run, ready to drive.
pub struct Session {
    job: Job,
    recording: Option<Recording>,
    rubric: Option<LoadedRubric>,
    /// Rubric criteria as (id, is a penalty), for front ends that draw columns.
    pub criteria: Vec<(String, bool)>,
    /// Cells already in the journal when this pass began (continue, copied), less those
    /// graded again (a retry): the cells this pass skips.
    pub prior: Arc<CellSet>,
    /// Copied cells of a run that is not recorded (a recorded run has them in its journal).
    unrecorded: Vec<Cell>,
    /// Settings that work but probably not as meant.
    pub warnings: Vec<String>,
    /// Whether the whole dataset is graded (not only chosen cells).
    whole: bool,
    /// Items in the run's subset (`grade --limit|--sample|--items`); `None`: every item.
    subset_len: Option<usize>,
}

/// The positions of the run's subset, when it has one.
fn subset_items(settings: &RunSettings) -> Option<HashSet<usize>> {
    settings
        .subset
        .as_ref()
        .map(|s| s.positions.iter().copied().collect())
}

/// How a run's pass ended.
pub struct Outcome {
    pub ended: Ended,
    pub usage: RunUsage,
    /// The saved run's id.
    pub run_id: Option<String>,
    /// The whole run's totals, replayed from its journal (a saved run).
    pub totals: Option<Summary>,
    /// The saved run is complete and marked finished.
    pub finished: bool,
    /// Finishing the journal or writing the manifest failed.
    pub record_error: Option<String>,
}

impl Outcome {
    /// The totals to show: the whole run's when it is saved, else this pass's.
    pub fn summary(&self) -> &Summary {
        self.totals.as_ref().unwrap_or(&self.ended.summary)
    }
}

/// The rubric a dataset is graded with: the one chosen, else the dataset's own (an
/// autorubric file's, a rubric in its header); `None` when each item brings its own. Every
/// front end asks this (`grade`, its `--dry-run`, `score`, the TUI's estimate and run).
pub fn effective_rubric(chosen: Option<LoadedRubric>, dataset: &Dataset) -> Option<LoadedRubric> {
    chosen.or_else(|| dataset.header.rubric.clone())
}

/// Opens a new run: loads the dataset, compiles the rubric and builds the judges, and only
/// then records the run (so a rubric that does not compile leaves nothing behind).
pub fn start(new: NewRun<'_>, env: Env<'_>, control: &Control) -> Result<Session, Error> {
    let settings = new.settings;
    let dataset = open_dataset(new.dataset, settings.read_options())?;
    let rubric = pairwise::expanded(
        effective_rubric(new.rubric, &dataset),
        new.dataset,
        settings.read_options(),
    )?;
    let only = new.only.or_else(|| subset_items(&settings));
    let rubric = match rubric {
        Some(r) => Some(examples::resolve(
            r,
            &examples::Graded {
                dataset: new.dataset,
                opts: settings.read_options(),
                only: only.as_ref(),
            },
            env.config
                .path
                .as_deref()
                .and_then(Path::parent)
                .map(|root| root.join("labels"))
                .as_deref(),
        )?),
        None => None,
    };
    let override_rubric = settings.override_rubric && rubric.is_some();
    let compiled = rubric.as_ref().map(compile).transpose()?.map(Arc::new);
    if settings.judge.batch {
        check_batch(&settings, new.record.is_some())?;
    }
    let judges = run_judges(&settings, rubric.as_ref(), env, control, None)?;
    pairwise::check_strategy(rubric.as_ref(), judges.as_ref().map(|j| j.panel.strategy))?;
    let mut prior = CellSet::new();
    let (recording, journal) = match &new.record {
        Some((home, name)) => {
            let (rec, mut writer) =
                Recording::create(home, name.as_deref(), rubric.as_ref(), new.dataset, &{
                    let mut s = settings.clone();
                    s.override_rubric = override_rubric;
                    s
                })?;
            write_copied(&mut writer, &new.copied)?;
            (Some(rec), Some(writer))
        }
        None => (None, None),
    };
    for c in &new.copied {
        prior.insert(c.item, &c.result.criterion_id);
    }
    let skip = Arc::new(prior);
    let unrecorded = if recording.is_some() {
        Vec::new()
    } else {
        new.copied
    };
    let job = job(JobParts {
        dataset,
        compiled,
        override_rubric,
        judges,
        settings: &settings,
        config: env.config,
        cell_events: new.cell_events,
        items: only,
        skip: (!skip.is_empty()).then(|| Arc::clone(&skip)),
        journal,
        control,
    });
    Ok(Session {
        criteria: criteria_of(rubric.as_ref()),
        rubric,
        warnings: job
            .judges
            .as_ref()
            .map(|j| j.warnings.clone())
            .unwrap_or_default(),
        job,
        recording,
        prior: skip,
        unrecorded,
        whole: true,
        subset_len: settings.subset.as_ref().map(|s| s.positions.len()),
    })
}

impl Session {
    /// What stops or pauses the run (a front end's Ctrl-C cancels it here).
    pub fn control(&self) -> &Control {
        &self.job.control
    }

    pub fn run_id(&self) -> Option<&str> {
        self.recording.as_ref().map(Recording::id)
    }

    /// The run's rubric (`None`: each item's own).
    pub fn rubric(&self) -> Option<&LoadedRubric> {
        self.rubric.as_ref()
    }

    /// The judges' meter (`None`: nothing is judged).
    pub fn meter(&self) -> Option<Arc<crate::llm::Meter>> {
        self.job.judges.as_ref().map(|j| Arc::clone(&j.meter))
    }

    /// Hands the cells this pass skips (`prior`) to `each`, in chunks of at most `chunk`
    /// cells, in (item, criterion id) order — read back from the journal, never all held.
    pub fn prior_cells(&self, chunk: usize, mut each: impl FnMut(Vec<Cell>)) -> Result<(), Error> {
        let chunk = chunk.max(1);
        let Some(rec) = &self.recording else {
            for part in self.unrecorded.chunks(chunk) {
                each(part.to_vec());
            }
            return Ok(());
        };
        if self.prior.is_empty() {
            return Ok(());
        }
        let mut part = Vec::with_capacity(chunk);
        for group in rec.stream()? {
            for c in group?.cells {
                if self.prior.contains(c.item, &c.result.criterion_id) {
                    part.push(c);
                    if part.len() == chunk {
                        each(std::mem::replace(&mut part, Vec::with_capacity(chunk)));
                    }
                }
            }
        }
        if !part.is_empty() {
            each(part);
        }
        Ok(())
    }

    /// Grades, then finishes the record: totals replayed from the journal, the manifest
    /// marked finished only when the run stopped for nothing and no cell is missing.
    pub async fn run<F, Fut>(self, on_event: F) -> Outcome
    where
        F: FnMut(RunEvent) -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        // A fresh run that nothing stopped holds exactly the items this pass delivered: its
        // totals are this pass's, and the journal need not be read again.
        let fresh = self.prior.is_empty() && self.whole;
        let Session {
            job,
            recording,
            whole,
            subset_len,
            ..
        } = self;
        let mut ended = grading::drive(job, on_event).await;
        let usage = ended.meter.snapshot();
        let Some(mut rec) = recording else {
            return Outcome {
                ended,
                usage,
                run_id: None,
                totals: None,
                finished: false,
                record_error: None,
            };
        };
        let mut record_error = ended
            .journal
            .take()
            .and_then(|w| w.finish().err())
            .map(|e| e.to_string());
        let clean = ended.stop.is_none()
            && ended.input_error.is_none()
            && record_error.is_none()
            && ended.unsent_cells == 0;
        let replay = if fresh && clean {
            Ok(Replay {
                summary: ended.summary.clone(),
                ..Replay::default()
            })
        } else {
            rec.replay(|_, _| {})
        };
        let replay = match replay {
            Ok(r) => Some(r),
            Err(e) => {
                record_error.get_or_insert(e.to_string());
                None
            }
        };
        let old = rec.manifest.totals.unwrap_or_default();
        let complete = ended.stop.is_none()
            && ended.input_error.is_none()
            && record_error.is_none()
            && replay.as_ref().is_some_and(|r| {
                r.partial_items == 0
                    && (!whole
                        || r.summary.items + r.without_rubric
                            >= subset_len.unwrap_or(ended.items_read))
            });
        if let Some(r) = &replay {
            rec.manifest.totals = Some(r.summary.totals(
                old.input_tokens + usage.input_tokens,
                old.output_tokens + usage.output_tokens,
                old.cost + usage.cost,
            ));
        }
        // A retry of chosen cells keeps the run's state (finished stays finished).
        if complete && (whole || rec.manifest.finished_at.is_some()) {
            rec.manifest
                .finished_at
                .get_or_insert_with(|| jiff::Timestamp::now().to_string());
        } else if !complete {
            rec.manifest.finished_at = None;
        }
        if let Err(e) = rec.run.write_manifest(&rec.manifest) {
            record_error.get_or_insert(e.to_string());
        }
        Outcome {
            usage,
            run_id: Some(rec.manifest.id.clone()),
            totals: replay.map(|r| r.summary),
            finished: rec.manifest.finished_at.is_some() && record_error.is_none(),
            record_error,
            ended,
        }
    }
}

struct JobParts<'a> {
    dataset: crate::formats::dataset::Dataset,
    compiled: Option<Arc<crate::engine::CompiledRubric>>,
    override_rubric: bool,
    judges: Option<RunJudges>,
    settings: &'a RunSettings,
    config: &'a WorkspaceConfig,
    cell_events: bool,
    items: Option<HashSet<usize>>,
    skip: Option<Arc<CellSet>>,
    journal: Option<crate::store::runs::RunWriter>,
    control: &'a Control,
}

fn job(p: JobParts<'_>) -> Job {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    // Judge calls are capped per endpoint by the client; items at once follow the same
    // number (an item waits on its calls), or the cores when nothing is judged.
    let default = if p.judges.is_some() {
        p.config.judge.concurrency.unwrap_or(16)
    } else {
        cores
    };
    let concurrency = p.settings.grade.concurrency.unwrap_or(default).max(1);
    // With judges, the concurrency is calls in flight: items enough to want twice that
    // many calls (an item waiting on one slow call leaves the others flowing), and no
    // more — each item in flight holds its prompts and replies.
    let items = match &p.judges {
        Some(j) => {
            let calls = calls_per_item(
                &j.panel,
                p.compiled
                    .as_deref()
                    .map(crate::engine::CompiledRubric::rubric),
            );
            (concurrency * 2).div_ceil(calls).clamp(1, concurrency)
        }
        None => concurrency,
    };
    Job {
        dataset: p.dataset,
        rubric: p.compiled,
        override_rubric: p.override_rubric,
        concurrency: items,
        allow_commands: p.settings.grade.allow_commands || p.config.allow_commands,
        llm_feedback: p.settings.judge.feedback == FeedbackMode::Llm,
        judges: p.judges,
        cell_events: p.cell_events,
        items: p.items,
        skip: p.skip,
        journal: p.journal,
        control: p.control.clone(),
    }
}

/// Judge calls one item of `rubric` sends at once (1 when items bring their own rubrics).
fn calls_per_item(
    panel: &crate::engine::judge::Panel,
    rubric: Option<&crate::model::Rubric>,
) -> usize {
    use crate::engine::judge::Strategy;
    let judged = rubric.map_or(1, |r| {
        r.criteria
            .iter()
            .filter(|c| matches!(c.method, crate::model::Method::Judge(_)))
            .count()
    });
    let per_judge = match panel.strategy {
        Strategy::PerCriterion => judged,
        Strategy::DoublePass => 2,
        Strategy::OneShot | Strategy::Holistic => 1,
    };
    let voters = panel.judges.len().max(1);
    (per_judge * voters * panel.samples.max(1) as usize).max(1)
}

/// The judges of a run, waiting at its gate.
fn run_judges(
    settings: &RunSettings,
    rubric: Option<&LoadedRubric>,
    env: Env<'_>,
    control: &Control,
    batch: Option<Arc<batch::Desk>>,
) -> Result<Option<RunJudges>, Error> {
    judges::build(
        &settings.judge,
        rubric,
        &JudgeEnv {
            config: env.config,
            concurrency: settings.grade.concurrency,
            cache_from: env.cache_from,
            gate: Some(control.gate().clone()),
            batch,
        },
    )
}

/// What a batch run cannot do, said before anything is recorded.
fn check_batch(settings: &RunSettings, recorded: bool) -> Result<(), Error> {
    if !recorded {
        return Err(Error::input(
            "a batch run is answered within a day, so it is saved in the workspace: run it inside one (or pass --workspace DIR)",
        ));
    }
    if settings.judge.feedback == FeedbackMode::Llm {
        return Err(Error::input(
            "LLM feedback is written after an item's verdicts, one call at a time; a batch run cannot: use --feedback deterministic",
        ));
    }
    if settings.judge.max_cost.is_some() {
        return Err(Error::input(
            "--max-cost stops live calls as they are paid; a batch is paid as a whole: see its cost with --dry-run first",
        ));
    }
    Ok(())
}

fn criteria_of(rubric: Option<&LoadedRubric>) -> Vec<(String, bool)> {
    rubric
        .map(|r| {
            r.rubric
                .criteria
                .iter()
                .map(|c| (c.id.clone(), c.weight < 0.0))
                .collect()
        })
        .unwrap_or_default()
}

/// Journals copied cells, one item at a time, in item order.
fn write_copied(writer: &mut crate::store::runs::RunWriter, cells: &[Cell]) -> Result<(), Error> {
    let mut by_item: std::collections::BTreeMap<usize, (&str, Vec<crate::model::CriterionResult>)> =
        std::collections::BTreeMap::new();
    for c in cells {
        by_item
            .entry(c.item)
            .or_insert_with(|| (c.item_id.as_str(), Vec::new()))
            .1
            .push(c.result.clone());
    }
    for (item, (id, results)) in by_item {
        writer.append(item, id, &results)?;
    }
    Ok(())
}
