//! Batch runs: the run's judge calls go to the providers' batch engines (`OpenAI`'s Batch
//! API, Anthropic's Message Batches: about half the price, answered within a day) instead
//! of being sent one by one. A batch run is a saved run whose passes are driven by
//! [`step`]: send what is prepared, ask about what is in flight, download what ended, and
//! — when there is something new — grade a pass over the dataset in which every judge call
//! is answered from the downloaded results (journalled exactly as a live run journals it,
//! the cache included), waits for a batch in flight, or goes into a new batch. The run is
//! finished by the pass that finds every cell answered.
//!
//! A kill at any point loses nothing and sends nothing twice: every trip to the provider
//! is written to the ledger (the manifest's `batches`) before it starts and after it ends,
//! and a request's id (its cache key and attempt) is never written to a second batch.

pub mod desk;
mod results;
mod send;

use std::path::Path;
use std::sync::Arc;

pub use desk::{BatchProvider, Desk};

use super::{Control, Env, Error, Outcome, Recording};
use crate::llm::batch::BatchApi;
use crate::store::runs::{BatchRecord, BatchStage, RunDir};

/// How a step treats calls no batch holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepOptions {
    /// Send them live now (failed, expired or cancelled requests, and repairs) instead of
    /// in a new batch.
    pub live: bool,
}

/// What a step did and where the run stands.
pub struct Report {
    pub run_id: String,
    pub batches: Vec<BatchRecord>,
    /// Batches handed to the provider in this step.
    pub submitted: usize,
    /// Batches whose results were downloaded in this step.
    pub downloaded: usize,
    /// Requests written to new batches in this step.
    pub collected: usize,
    /// Judge calls of this step's pass answered from downloaded batches, and sent live.
    pub from_batches: u64,
    pub sent_live: u64,
    /// The pass graded in this step, if one was.
    pub outcome: Option<Outcome>,
    /// Every cell is in the journal.
    pub finished: bool,
}

impl Report {
    /// Batches sent and not yet downloaded.
    pub fn in_flight(&self) -> usize {
        self.batches.iter().filter(|b| b.in_flight()).count()
    }

    /// Requests in those batches.
    fn requests_in_flight(&self) -> usize {
        self.batches
            .iter()
            .filter(|b| b.in_flight())
            .map(|b| b.requests)
            .sum()
    }

    /// Nothing in flight, nothing finished: cells no batch will answer (e.g. a pass that
    /// could not write its batch). `runs resume --live` grades them.
    pub fn stuck(&self) -> bool {
        !self.finished && self.in_flight() == 0
    }

    /// The whole run's batches: requests answered and failed, tokens and cost at batch
    /// prices.
    pub fn totals_line(&self) -> String {
        use crate::engine::checks::plural;
        use std::fmt::Write as _;
        let sum = |f: fn(&BatchRecord) -> u64| self.batches.iter().map(f).sum::<u64>();
        let cost: f64 = self.batches.iter().map(|b| b.cost).sum();
        let mut line = format!(
            "batches: {}, {} requests answered by the provider, {} failed, {} tokens in, {} out",
            plural(self.batches.len(), "batch"),
            sum(|b| b.answered),
            sum(|b| b.failed),
            sum(|b| b.input_tokens),
            sum(|b| b.output_tokens),
        );
        if cost > 0.0 {
            let _ = write!(line, ", ${cost:.4} at batch prices");
        }
        if self.sent_live > 0 {
            let _ = write!(
                line,
                "; {} sent live",
                plural(self.sent_live as usize, "request")
            );
        }
        line
    }

    /// One line: batches, requests and how they stand.
    pub fn line(&self) -> String {
        use crate::engine::checks::plural;
        let answered: u64 = self.batches.iter().map(|b| b.answered).sum();
        let failed: u64 = self.batches.iter().map(|b| b.failed).sum();
        let total: usize = self.batches.iter().map(|b| b.requests).sum();
        format!(
            "{} ({} in flight: {} requests), {answered} of {total} requests answered, {failed} failed{}",
            plural(self.batches.len(), "batch"),
            self.in_flight(),
            self.requests_in_flight(),
            if self.finished { "; finished" } else { "" }
        )
    }
}

/// The ledger kept in the run's manifest (read again before each write: a pass rewrites
/// the manifest's totals in between).
struct ManifestLedger {
    run: RunDir,
}

impl send::Ledger for ManifestLedger {
    fn save(&mut self, batches: &[BatchRecord]) -> Result<(), Error> {
        let mut m = self.run.read_manifest()?;
        m.batches = batches.to_vec();
        self.run.write_manifest(&m)?;
        Ok(())
    }
}

/// One step of a batch run (see the module's comment). Fails when a provider cannot be
/// reached or refuses a batch; what was done before is kept and the next step goes on
/// from there.
pub async fn step(
    runs_dir: &Path,
    id: &str,
    env: Env<'_>,
    control: &Control,
    opts: StepOptions,
) -> Result<Report, Error> {
    let rec = Recording::open(runs_dir, id)?;
    let run_id = rec.id().to_owned();
    let settings = rec.settings()?;
    if !settings.judge.batch {
        return Err(Error::input(format!(
            "run {run_id} is graded live, not in batches; `rubricate runs resume {run_id}` finishes it"
        )));
    }
    let _lock = rec.run.batch_lock()?;
    let mut batches = rec.manifest.batches.clone();
    let mut ledger = ManifestLedger {
        run: rec.run.clone(),
    };
    if opts.live {
        // Batches never handed to the provider (nothing of them is there) are given up:
        // their requests go live in this step's pass.
        let (unsent, kept): (Vec<_>, Vec<_>) = batches
            .into_iter()
            .partition(|b| matches!(b.stage, BatchStage::Prepared | BatchStage::Uploaded));
        batches = kept;
        if !unsent.is_empty() {
            send::Ledger::save(&mut ledger, &batches)?;
            for b in &unsent {
                let _ = std::fs::remove_file(rec.run.batch_requests(&b.name));
                let _ = std::fs::remove_file(rec.run.batch_ids(&b.name));
            }
        }
    }
    let mut apis = Apis::new(env);
    let settle = env.config.judge.batch_create_settle();
    let mut submitted = 0;
    // A stop (Ctrl-C, SIGTERM, SIGHUP) is obeyed between trips: each trip is finished and
    // written to the ledger first.
    for at in 0..batches.len() {
        if control.is_cancelled() {
            break;
        }
        if matches!(
            batches[at].stage,
            BatchStage::Prepared | BatchStage::Uploaded | BatchStage::Creating
        ) {
            let api = apis.get(&batches[at].model)?;
            let trip = send::Trip {
                api: &api,
                run: &rec.run,
                run_id: &run_id,
                control,
            };
            let sent = send::submit(&trip, &mut batches, at, &mut ledger, settle).await?;
            submitted += usize::from(sent);
        }
    }
    let mut downloaded = 0;
    for at in 0..batches.len() {
        if control.is_cancelled() {
            break;
        }
        if batches[at].stage == BatchStage::Submitted {
            let model = batches[at].model.clone();
            let api = apis.get(&model)?;
            let price = env.config.batch_price(&model);
            let trip = send::Trip {
                api: &api,
                run: &rec.run,
                run_id: &run_id,
                control,
            };
            if send::poll(&trip, &mut batches, at, price, &mut ledger).await? {
                downloaded += 1;
            }
        }
    }
    let in_flight = batches.iter().any(BatchRecord::in_flight);
    let pass = (batches.is_empty() || downloaded > 0 || !in_flight || opts.live)
        && !control.is_cancelled();
    let mut report = Report {
        run_id: run_id.clone(),
        batches: Vec::new(),
        submitted,
        downloaded,
        collected: 0,
        from_batches: 0,
        sent_live: 0,
        outcome: None,
        finished: rec.manifest.finished_at.is_some(),
    };
    if pass && !report.finished {
        sweep_strays(&rec.run, &batches);
        let desk = Arc::new(Desk::load(
            &rec.run,
            &batches,
            opts.live,
            env.config.judge.batch_limits(),
        )?);
        let session = super::reopen_batched(runs_dir, &run_id, env, control, Arc::clone(&desk))?;
        let outcome = session.run(|_| std::future::ready(Ok(()))).await;
        report.collected = desk.collected();
        report.from_batches = desk.from_batches();
        report.sent_live = desk.sent_live();
        let new = desk.finish().map_err(Error::input)?;
        report.finished = outcome.finished;
        let first_new = batches.len();
        batches.extend(new);
        send::Ledger::save(&mut ledger, &batches)?;
        report.outcome = Some(outcome);
        for at in first_new..batches.len() {
            if control.is_cancelled() {
                break;
            }
            let api = apis.get(&batches[at].model)?;
            let trip = send::Trip {
                api: &api,
                run: &rec.run,
                run_id: &run_id,
                control,
            };
            let sent = send::submit(&trip, &mut batches, at, &mut ledger, settle).await?;
            report.submitted += usize::from(sent);
        }
    }
    report.batches = batches;
    Ok(report)
}

/// Files in `batches/` that no batch of the ledger names: what a pass killed before it
/// recorded its batches wrote (they are written again).
fn sweep_strays(run: &RunDir, batches: &[BatchRecord]) {
    let Ok(entries) = std::fs::read_dir(run.batches_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap_or_default();
        if !batches.iter().any(|b| b.name == stem) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The batch API of each judge model, resolved (keys from the environment) once a step.
struct Apis<'a> {
    env: Env<'a>,
    made: std::collections::HashMap<String, BatchApi>,
}

impl<'a> Apis<'a> {
    fn new(env: Env<'a>) -> Self {
        Self {
            env,
            made: std::collections::HashMap::new(),
        }
    }

    fn get(&mut self, model: &str) -> Result<BatchApi, Error> {
        if let Some(api) = self.made.get(model) {
            return Ok(api.clone());
        }
        let api = api_for(self.env.config, model)?;
        self.made.insert(model.to_owned(), api.clone());
        Ok(api)
    }
}

/// The batch API of a judge model.
fn api_for(config: &crate::store::WorkspaceConfig, model: &str) -> Result<BatchApi, Error> {
    let spec = config
        .resolve_model(model, &|k| std::env::var(k).ok())
        .map_err(Error::from)?;
    BatchApi::new(
        &spec,
        config
            .judge
            .max_reply_bytes
            .unwrap_or(crate::llm::DEFAULT_MAX_REPLY_BYTES),
    )
    .map_err(Error::from)
}
