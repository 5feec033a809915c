//! `grade --batch` and `runs resume` of a batch run: one step of the run (send, ask,
//! download, journal, send again), or steps until it is finished with `--wait`.

use std::time::Duration;

use super::super::{CliError, exit};
use crate::engine::checks::plural;
use crate::run::batch::{Report, StepOptions, step};
use crate::run::{Control, Env};
use crate::store::Workspace;

/// Steps the batch run `id`: once, or until it is finished (`wait`: the pause between
/// asks). Exit: the verdict once finished, else [`exit::PENDING`] (0 right after
/// `grade --batch` sent it).
pub(crate) fn batch_step(
    ws: &Workspace,
    id: &str,
    live: bool,
    wait: Option<Duration>,
) -> Result<u8, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    let env = Env {
        config: &ws.config,
        cache_from: &ws.root,
    };
    let runs = ws.runs_dir();
    let control = Control::default();
    let opts = StepOptions { live };
    let max_error_rate = crate::run::Recording::open(&runs, id)?
        .settings()?
        .grade
        .max_error_rate;
    super::super::signals::stop_on_signals(
        &runtime,
        &control,
        "the trip to the provider in flight is finished and recorded first",
    );
    tell_creating(&runs, id, env.config.judge.batch_create_settle());
    let mut first = true;
    loop {
        let report = runtime.block_on(step(&runs, id, env, &control, opts))?;
        tell(&report, first);
        first = false;
        if control.is_cancelled() && !report.finished {
            eprintln!(
                "stopped; nothing is lost and nothing is sent twice: `rubricate runs resume {} --wait` goes on",
                report.run_id
            );
            return Ok(exit::PENDING);
        }
        if report.finished {
            return Ok(verdict(&report, max_error_rate));
        }
        if report.stuck() {
            return Err(CliError::input(format!(
                "run {}: no batch is in flight but cells are missing (see above); `rubricate runs resume {} --live` grades them live",
                report.run_id, report.run_id
            )));
        }
        let Some(pause) = wait else {
            eprintln!(
                "`rubricate runs resume {} --wait` collects the answers (batches take up to 24 hours)",
                report.run_id
            );
            return Ok(
                if report.outcome.is_some() && report.downloaded == 0 && report.submitted > 0 {
                    exit::OK
                } else {
                    exit::PENDING
                },
            );
        };
        let stop = control.cancel_token();
        let interrupted = runtime.block_on(async {
            tokio::select! {
                () = tokio::time::sleep(pause) => false,
                () = stop.cancelled() => true,
            }
        });
        if interrupted {
            eprintln!(
                "stopped waiting; the batches go on at the provider: `rubricate runs resume {}` later",
                report.run_id
            );
            return Ok(exit::PENDING);
        }
    }
}

/// Says so when a batch was being created as the run stopped: the step looks for it at
/// the provider (for up to `settle`) before making it again.
fn tell_creating(runs: &std::path::Path, id: &str, settle: Duration) {
    let Ok(rec) = crate::run::Recording::open(runs, id) else {
        return;
    };
    for b in &rec.manifest.batches {
        if b.stage == crate::store::runs::BatchStage::Creating {
            eprintln!(
                "batch {} was being created when the run stopped: looking for it at the provider (up to {} s after its create began) before making it again",
                b.name,
                settle.as_secs()
            );
        }
    }
}

/// What the step did, on stderr.
fn tell(r: &Report, first: bool) {
    let mut did = Vec::new();
    if let Some(o) = &r.outcome {
        if let Some(e) = &o.record_error {
            eprintln!("error: the run's record could not be completed: {e}");
        }
        if let Some(d) = &o.ended.input_error {
            eprintln!("error: {d}");
        }
        if let Some(t) = &o.totals {
            did.push(format!("{} in the journal", plural(t.cells, "cell")));
        }
    }
    if r.downloaded > 0 {
        did.push(format!("{} downloaded", plural(r.downloaded, "batch")));
    }
    if r.collected > 0 || r.submitted > 0 {
        did.push(format!(
            "{} sent ({} requests)",
            plural(r.submitted, "batch"),
            r.collected
        ));
    }
    if did.is_empty() && !first {
        return;
    }
    let did = if did.is_empty() {
        String::new()
    } else {
        format!("{}; ", did.join(", "))
    };
    eprintln!("run {}: {did}{}", r.run_id, r.line());
}

/// The finished run's exit code, by the same rules as `grade`.
fn verdict(r: &Report, max_error_rate: f64) -> u8 {
    let Some(o) = &r.outcome else {
        // Finished by an earlier step.
        eprintln!(
            "run {}: finished; `rubricate runs show {}` lists its results",
            r.run_id, r.run_id
        );
        return exit::OK;
    };
    let summary = o.summary();
    eprintln!("run {}: {}", r.run_id, summary.line());
    // The whole run's batches, not this pass's calls (most were answered from disk).
    eprintln!("{}", r.totals_line());
    super::super::verdict::decide(
        summary,
        &crate::cli::gates::Findings::default(),
        Some(max_error_rate),
    )
}
