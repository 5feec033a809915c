//! One batch's trips to its provider, each stage written to the ledger (the manifest)
//! before the next begins: upload, create (marked `creating` first, so a run killed while
//! the provider made the batch finds it again instead of making a second), poll, and
//! download (results written whole, then marked).

use std::collections::HashSet;

use std::time::Duration;

use super::super::{Control, Error};
use super::results;
use crate::llm::LlmError;
use crate::llm::batch::{BatchApi, Found};
use crate::store::runs::{BatchRecord, BatchStage, OtherBatch, RunDir};

/// Saves the ledger: every stage change goes through here before the next call.
pub trait Ledger {
    fn save(&mut self, batches: &[BatchRecord]) -> Result<(), Error>;
}

/// Where a step's trips go, and what stops them.
#[derive(Clone, Copy)]
pub struct Trip<'a> {
    pub api: &'a BatchApi,
    pub run: &'a RunDir,
    pub run_id: &'a str,
    pub control: &'a Control,
}

/// Takes a batch from `Prepared`, `Uploaded` or `Creating` to `Submitted`; whether it got
/// there (not when `control` stopped it while it looked for a batch a stopped run was
/// creating: it stays `Creating`, and the next step looks again).
///
/// A batch found `Creating` was being made when the run stopped: the provider may have
/// made it (the request reached it) or may still be making it (a provider can take
/// seconds to answer a create). It is looked for until `settle` after its create began,
/// and only then made again — marked `recovered`, so that a batch the provider shows
/// later is found by [`poll`] and the newer of the two cancelled.
pub async fn submit(
    trip: &Trip<'_>,
    batches: &mut [BatchRecord],
    at: usize,
    ledger: &mut dyn Ledger,
    settle: Duration,
) -> Result<bool, Error> {
    let Trip {
        api,
        run,
        run_id,
        control,
    } = *trip;
    let fail = |name: &str, e: LlmError| batch_error(name, "could not be sent", &e);
    let name = batches[at].name.clone();
    let label = format!("{run_id}/{name}");
    let requests = run.batch_requests(&name);
    if batches[at].stage == BatchStage::Creating {
        let since = batches[at].creating_at.clone().unwrap_or_default();
        let until = since
            .parse::<jiff::Timestamp>()
            .map_or_else(|_| jiff::Timestamp::now(), |t| t + settle_span(settle));
        loop {
            let found = candidates(api, batches, at, &label)
                .await
                .map_err(|e| fail(&name, e))?;
            if let Some((first, newer)) = found.split_first() {
                let others = cancel_all(api, newer).await;
                batches[at].others.extend(others);
                submitted(run, batches, at, first.id.clone(), ledger)?;
                return Ok(true);
            }
            let left = until.duration_since(jiff::Timestamp::now());
            if left.is_negative() || left.is_zero() {
                break;
            }
            let pause = left.unsigned_abs().min(Duration::from_secs(1));
            let cancel = control.cancel_token();
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = cancel.cancelled() => return Ok(false),
            }
        }
        let b = &mut batches[at];
        b.recovered = true;
        b.stage = if b.file_id.is_some() {
            BatchStage::Uploaded
        } else {
            BatchStage::Prepared
        };
    }
    if batches[at].stage == BatchStage::Prepared {
        api.check().await.map_err(|e| probe_error(api, &name, &e))?;
    }
    if batches[at].stage == BatchStage::Prepared
        && let Some(file) = api.upload(&requests).await.map_err(|e| fail(&name, e))?
    {
        batches[at].file_id = Some(file);
        batches[at].stage = BatchStage::Uploaded;
        ledger.save(batches)?;
    }
    batches[at].stage = BatchStage::Creating;
    batches[at].creating_at = Some(jiff::Timestamp::now().to_string());
    ledger.save(batches)?;
    let id = api
        .create(&requests, batches[at].file_id.as_deref(), &label)
        .await
        .map_err(|e| fail(&name, e))?;
    submitted(run, batches, at, id, ledger)?;
    Ok(true)
}

/// `settle` as a span of time (at most a day).
fn settle_span(settle: Duration) -> jiff::SignedDuration {
    jiff::SignedDuration::try_from(settle.min(Duration::from_secs(86_400)))
        .unwrap_or(jiff::SignedDuration::ZERO)
}

/// The provider's batches of batch `at`'s requests, oldest first (the other batches of the
/// run and the others already known are claimed: never taken for this one).
async fn candidates(
    api: &BatchApi,
    batches: &[BatchRecord],
    at: usize,
    label: &str,
) -> Result<Vec<Found>, LlmError> {
    let b = &batches[at];
    let claimed: HashSet<String> = batches
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .filter_map(|(_, o)| o.batch_id.clone())
        .chain(
            batches
                .iter()
                .flat_map(|o| o.others.iter().map(|x| x.batch_id.clone())),
        )
        .collect();
    let since = b.creating_at.clone().unwrap_or_default();
    api.candidates(label, b.file_id.as_deref(), &since, b.requests, &claimed)
        .await
}

/// Cancels batches of requests another batch already holds; each with what became of it.
async fn cancel_all(api: &BatchApi, extra: &[Found]) -> Vec<OtherBatch> {
    let mut out = Vec::new();
    for f in extra {
        let fate = match api.cancel(&f.id).await {
            Ok(()) => "cancelled".to_owned(),
            Err(e) => format!("could not be cancelled: {e}"),
        };
        tracing::warn!(batch = %f.id, %fate, "a second batch of the same requests");
        out.push(OtherBatch {
            batch_id: f.id.clone(),
            created_at: f.created_at.map(|t| t.to_string()),
            fate,
        });
    }
    out
}

/// For a `recovered` batch: a second batch of its requests the provider shows now (made
/// by the create that was cut short) is cancelled — the newer of the two, so the one
/// running longest is kept — and both are recorded. Whether the batch kept changed.
async fn reconcile(
    api: &BatchApi,
    run_id: &str,
    batches: &mut [BatchRecord],
    at: usize,
) -> Result<bool, LlmError> {
    let label = format!("{run_id}/{}", batches[at].name);
    let found = candidates(api, batches, at, &label).await?;
    let mine = batches[at].batch_id.clone().unwrap_or_default();
    if found.iter().all(|f| f.id == mine) {
        return Ok(false);
    }
    // An unlabelled batch (Anthropic's) is known by its size and time alone: only one
    // other of that size, and no other batch of the run of that size that could own it,
    // is taken for certain to be this one's.
    if !api.labels_batches() {
        let size = batches[at].requests;
        let rivals = batches
            .iter()
            .enumerate()
            .filter(|(i, b)| {
                *i != at
                    && b.requests == size
                    && (b.stage == BatchStage::Creating || (b.recovered && b.in_flight()))
            })
            .count();
        if rivals > 0 || found.iter().filter(|f| f.id != mine).count() > 1 {
            tracing::warn!(
                batch = %batches[at].name,
                "a second batch of the same size is listed, but which run's it is cannot be told: left alone"
            );
            return Ok(false);
        }
    }
    // The oldest is kept when the provider lists ours among them; else ours is.
    let keep = if found.iter().any(|f| f.id == mine) {
        found[0].id.clone()
    } else {
        mine.clone()
    };
    let mut extra: Vec<Found> = found.into_iter().filter(|f| f.id != keep).collect();
    if keep != mine && !extra.iter().any(|f| f.id == mine) {
        extra.push(Found {
            id: mine.clone(),
            created_at: None,
        });
    }
    let others = cancel_all(api, &extra).await;
    let b = &mut batches[at];
    b.others.extend(others);
    if keep == mine {
        return Ok(false);
    }
    b.batch_id = Some(keep);
    b.status = None;
    b.answered = 0;
    b.failed = 0;
    Ok(true)
}

fn submitted(
    run: &RunDir,
    batches: &mut [BatchRecord],
    at: usize,
    batch_id: String,
    ledger: &mut dyn Ledger,
) -> Result<(), Error> {
    let b = &mut batches[at];
    b.batch_id = Some(batch_id);
    b.stage = BatchStage::Submitted;
    b.submitted_at = Some(jiff::Timestamp::now().to_string());
    let name = b.name.clone();
    ledger.save(batches)?;
    // The provider has the requests now; their ids stay (to know what is in flight).
    let _ = std::fs::remove_file(run.batch_requests(&name));
    Ok(())
}

/// Polls in a row a provider may answer "no such batch" about a batch it made before
/// the run gives up on it (a provider's list can lag its create).
const NOT_FOUND_POLLS: u32 = 5;

/// Asks about a submitted batch; once it ended, downloads its answers. Whether it was
/// downloaded now. A `recovered` batch is first [reconciled](reconcile) with what the
/// provider lists.
pub async fn poll(
    trip: &Trip<'_>,
    batches: &mut [BatchRecord],
    at: usize,
    price: Option<crate::llm::Price>,
    ledger: &mut dyn Ledger,
) -> Result<bool, Error> {
    let Trip {
        api, run, run_id, ..
    } = *trip;
    let name = batches[at].name.clone();
    if batches[at].recovered {
        let others = batches[at].others.len();
        reconcile(api, run_id, batches, at)
            .await
            .map_err(|e| batch_error(&name, "could not be looked for", &e))?;
        if batches[at].others.len() != others {
            ledger.save(batches)?;
        }
    }
    let Some(batch_id) = batches[at].batch_id.clone() else {
        return Ok(false);
    };
    let status = match api.status(&batch_id).await {
        Ok(status) => status,
        Err(LlmError::Request { status: 404, .. })
            if batches[at].missing_polls + 1 < NOT_FOUND_POLLS =>
        {
            // The provider made it (it gave us its id): a 404 now is its lag, not the end.
            batches[at].missing_polls += 1;
            ledger.save(batches)?;
            return Ok(false);
        }
        Err(e) => return Err(batch_error(&name, "could not be asked about", &e)),
    };
    let b = &mut batches[at];
    b.missing_polls = 0;
    b.status = Some(status.state.clone());
    // The provider's counts, within the batch's own size (some count a request twice).
    let size = b.requests as u64;
    b.answered = status.answered.min(size);
    b.failed = status.failed.min(size - b.answered);
    if !status.ended {
        ledger.save(batches)?;
        return Ok(false);
    }
    let ids_path = run.batch_ids(&name);
    let ids = std::fs::read_to_string(&ids_path).map_err(|e| {
        Error::input(format!(
            "{}: cannot read batch {name}'s ids ({e})",
            ids_path.display()
        ))
    })?;
    let mut waiting: HashSet<&str> = ids.lines().collect();
    let path = run.batch_results(&name);
    let mut out = results::Writer::create(&path).map_err(|e| {
        Error::input(format!(
            "{}: cannot write batch {name}'s results ({e})",
            path.display()
        ))
    })?;
    let (mut input, mut output) = (0u64, 0u64);
    // Counted here, by distinct request: what the run really got.
    let (mut answered, mut failed) = (0u64, 0u64);
    if let Some(why) = &status.failure {
        // The provider refused the whole batch: every request gets its reason (as a live
        // call refused for it would), and none is sent again as it is.
        let refused = Err(LlmError::Request {
            status: 400,
            message: why.clone(),
        });
        for id in &waiting {
            out.push(id, &refused).map_err(|e| write_error(&path, &e))?;
            failed += 1;
        }
        waiting.clear();
    } else {
        let mut keep = |id: &str, answer: crate::llm::batch::Answer| -> std::io::Result<()> {
            // Lines for requests it never had are ignored (and never trusted).
            if waiting.remove(id) {
                if let Ok(r) = &answer {
                    input += r.input_tokens;
                    output += r.output_tokens;
                    answered += 1;
                } else {
                    failed += 1;
                }
                out.push(id, &answer)?;
            }
            Ok(())
        };
        api.results(&batch_id, &status, &mut keep)
            .await
            .map_err(|e| batch_error(&name, "results could not be downloaded", &e))?;
    }
    // What the batch left out is sent again like an expired request.
    let missing = Err(LlmError::Unanswered(format!(
        "batch {name} ended without answering it"
    )));
    for id in waiting {
        out.push(id, &missing).map_err(|e| write_error(&path, &e))?;
        failed += 1;
    }
    out.commit().map_err(|e| write_error(&path, &e))?;
    let b = &mut batches[at];
    b.stage = BatchStage::Downloaded;
    b.answered = answered;
    b.failed = failed;
    b.ended_at = Some(jiff::Timestamp::now().to_string());
    b.input_tokens = input;
    b.output_tokens = output;
    b.cost = price.map_or(0.0, |p| p.cost(input, output));
    ledger.save(batches)?;
    Ok(true)
}

fn write_error(path: &std::path::Path, e: &std::io::Error) -> Error {
    Error::input(format!(
        "{}: cannot write a batch's results ({e})",
        path.display()
    ))
}

/// The probe before a batch's first trip: a server without a batch API says so (404).
fn probe_error(api: &BatchApi, name: &str, e: &LlmError) -> Error {
    if let LlmError::Request { status: 404, .. } = e {
        return Error::input(format!(
            "batch {name} could not be sent: the server at {} has no batch API (HTTP 404); `rubricate runs resume ID --live` grades the run live",
            api.base_url()
        ));
    }
    batch_error(name, "could not be sent", e)
}

/// A provider's error about a batch, with what to do about the usual ones.
fn batch_error(name: &str, what: &str, e: &LlmError) -> Error {
    let hint = match e {
        LlmError::Transport(_)
        | LlmError::Timeout(_)
        | LlmError::Server { .. }
        | LlmError::RateLimited { .. } => {
            "; nothing is lost: `rubricate runs resume` tries again".to_owned()
        }
        _ => String::new(),
    };
    Error::input(format!("batch {name} {what}: {e}{hint}"))
}
