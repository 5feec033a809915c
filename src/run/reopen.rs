//! Continuing a saved run: after a crash, a quit or a cancel, to grade chosen cells again,
//! or live what a batch run left; its rubric snapshot, settings and dataset checked first.

use std::path::Path;
use std::sync::Arc;

use super::{
    Control, Env, Error, JobParts, Recording, Session, batch, compile, criteria_of, job,
    open_dataset, run_judges, subset_items,
};

/// Opens a saved run again: after a crash, a quit or a cancel (`redo` empty: every cell
/// its journal lacks is graded), or to grade chosen cells again (`redo`: a retry of failed
/// cells; a later journal line for a cell wins). Its rubric snapshot, settings and dataset
/// are checked against their hashes first.
pub fn reopen(
    runs_dir: &Path,
    id: &str,
    redo: &[(usize, String)],
    env: Env<'_>,
    control: &Control,
    cell_events: bool,
) -> Result<Session, Error> {
    reopen_live(
        runs_dir,
        id,
        redo,
        env,
        control,
        cell_events,
        Limit::Recorded,
    )
}

/// [`reopen`] with the cost limit a person set now (the TUI's set-up shows it), in force
/// for this session instead of the one recorded when the run started (`None`: no limit).
pub fn reopen_with_cost_limit(
    runs_dir: &Path,
    id: &str,
    redo: &[(usize, String)],
    env: Env<'_>,
    control: &Control,
    cell_events: bool,
    max_cost: Option<f64>,
) -> Result<Session, Error> {
    let limit = Limit::Now(max_cost);
    reopen_live(runs_dir, id, redo, env, control, cell_events, limit)
}

/// Which cost limit a reopened run spends within.
#[derive(Debug, Clone, Copy)]
enum Limit {
    /// The one recorded when the run started.
    Recorded,
    /// The one set now.
    Now(Option<f64>),
}

fn reopen_live(
    runs_dir: &Path,
    id: &str,
    redo: &[(usize, String)],
    env: Env<'_>,
    control: &Control,
    cell_events: bool,
    limit: Limit,
) -> Result<Session, Error> {
    let recording = Recording::open(runs_dir, id)?;
    if recording.settings()?.judge.batch {
        return Err(Error::input(format!(
            "run {} is graded in provider batches: `rubricate runs resume {}` (or the Runs view) asks about them and finishes it",
            recording.id(),
            recording.id()
        )));
    }
    reopen_with(recording, redo, env, control, cell_events, None, limit)
}

/// A batch run's pass: every cell its journal lacks, its judge calls answered by `desk`.
pub(crate) fn reopen_batched(
    runs_dir: &Path,
    id: &str,
    env: Env<'_>,
    control: &Control,
    desk: Arc<batch::Desk>,
) -> Result<Session, Error> {
    let recording = Recording::open(runs_dir, id)?;
    reopen_with(
        recording,
        &[],
        env,
        control,
        false,
        Some(desk),
        Limit::Recorded,
    )
}

fn reopen_with(
    recording: Recording,
    redo: &[(usize, String)],
    env: Env<'_>,
    control: &Control,
    cell_events: bool,
    desk: Option<Arc<batch::Desk>>,
    limit: Limit,
) -> Result<Session, Error> {
    let rubric = recording.rubric()?;
    let mut settings = recording.settings()?;
    settings.judge.stream |= cell_events;
    if let Limit::Now(max_cost) = limit {
        settings.judge.max_cost = max_cost;
    }
    let path = recording.check_dataset()?;
    let compiled = rubric.as_ref().map(compile).transpose()?.map(Arc::new);
    let judges = run_judges(&settings, rubric.as_ref(), env, control, desk)?;
    let dataset = open_dataset(&path, settings.read_options())?;
    let (mut skip, writer) = recording.reopen()?;
    for (item, criterion) in redo {
        skip.remove(*item, criterion);
    }
    let skip = Arc::new(skip);
    // A retry grades the cells asked for; a resume, the run's subset (or every item).
    let items = if redo.is_empty() {
        subset_items(&settings)
    } else {
        Some(redo.iter().map(|(i, _)| *i).collect())
    };
    let job = job(JobParts {
        dataset,
        compiled,
        override_rubric: settings.override_rubric,
        judges,
        settings: &settings,
        config: env.config,
        cell_events,
        items,
        skip: Some(Arc::clone(&skip)),
        journal: Some(writer),
        control,
    });
    Ok(Session {
        criteria: criteria_of(rubric.as_ref()),
        rubric,
        warnings: Vec::new(),
        job,
        recording: Some(recording),
        prior: skip,
        unrecorded: Vec::new(),
        whole: redo.is_empty(),
        subset_len: settings.subset.as_ref().map(|s| s.positions.len()),
    })
}
