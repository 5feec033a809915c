//! One batch's trips to its provider, each stage written to the ledger (the manifest)
//! before the next begins: upload, create (marked `creating` first, so a run killed while
//! the provider made the batch finds it again instead of making a second), poll, and
//! download (results written whole, then marked).

use std::collections::HashSet;

use super::super::Error;
use super::results;
use crate::llm::LlmError;
use crate::llm::batch::BatchApi;
use crate::store::runs::{BatchRecord, BatchStage, RunDir};

/// Saves the ledger: every stage change goes through here before the next call.
pub trait Ledger {
    fn save(&mut self, batches: &[BatchRecord]) -> Result<(), Error>;
}

/// Takes a batch from `Prepared`, `Uploaded` or `Creating` to `Submitted`.
pub async fn submit(
    api: &BatchApi,
    run: &RunDir,
    run_id: &str,
    batches: &mut [BatchRecord],
    at: usize,
    ledger: &mut dyn Ledger,
) -> Result<(), Error> {
    let fail = |name: &str, e: LlmError| batch_error(api, name, "could not be sent", &e);
    let name = batches[at].name.clone();
    let requests = run.batch_requests(&name);
    if batches[at].stage == BatchStage::Creating {
        let claimed: HashSet<String> = batches.iter().filter_map(|b| b.batch_id.clone()).collect();
        let b = &batches[at];
        let since = b.creating_at.clone().unwrap_or_default();
        let found = api
            .find(b.file_id.as_deref(), &since, b.requests, &claimed)
            .await
            .map_err(|e| fail(&name, e))?;
        if let Some(id) = found {
            return submitted(run, batches, at, id, ledger);
        }
        batches[at].stage = if batches[at].file_id.is_some() {
            BatchStage::Uploaded
        } else {
            BatchStage::Prepared
        };
    }
    if batches[at].stage == BatchStage::Prepared {
        api.check().await.map_err(|e| fail(&name, e))?;
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
    let label = format!("{run_id}/{name}");
    let id = api
        .create(&requests, batches[at].file_id.as_deref(), &label)
        .await
        .map_err(|e| fail(&name, e))?;
    submitted(run, batches, at, id, ledger)
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

/// Asks about a submitted batch; once it ended, downloads its answers. Whether it was
/// downloaded now.
pub async fn poll(
    api: &BatchApi,
    run: &RunDir,
    batches: &mut [BatchRecord],
    at: usize,
    price: Option<crate::llm::Price>,
    ledger: &mut dyn Ledger,
) -> Result<bool, Error> {
    let name = batches[at].name.clone();
    let Some(batch_id) = batches[at].batch_id.clone() else {
        return Ok(false);
    };
    let status = api
        .status(&batch_id)
        .await
        .map_err(|e| batch_error(api, &name, "could not be asked about", &e))?;
    let b = &mut batches[at];
    b.status = Some(status.state.clone());
    b.answered = status.answered;
    b.failed = status.failed;
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
    if let Some(why) = &status.failure {
        // The provider refused the whole batch: every request gets its reason (as a live
        // call refused for it would), and none is sent again as it is.
        let refused = Err(LlmError::Request {
            status: 400,
            message: why.clone(),
        });
        for id in &waiting {
            out.push(id, &refused).map_err(|e| write_error(&path, &e))?;
        }
        waiting.clear();
    } else {
        let mut keep = |id: &str, answer: crate::llm::batch::Answer| -> std::io::Result<()> {
            // Lines for requests it never had are ignored (and never trusted).
            if waiting.remove(id) {
                if let Ok(r) = &answer {
                    input += r.input_tokens;
                    output += r.output_tokens;
                }
                out.push(id, &answer)?;
            }
            Ok(())
        };
        api.results(&batch_id, &status, &mut keep)
            .await
            .map_err(|e| batch_error(api, &name, "results could not be downloaded", &e))?;
    }
    // What the batch left out is sent again like an expired request.
    let missing = Err(LlmError::Unanswered(format!(
        "batch {name} ended without answering it"
    )));
    for id in waiting {
        out.push(id, &missing).map_err(|e| write_error(&path, &e))?;
    }
    out.commit().map_err(|e| write_error(&path, &e))?;
    let b = &mut batches[at];
    b.stage = BatchStage::Downloaded;
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

/// A provider's error about a batch, with what to do about the usual ones.
fn batch_error(api: &BatchApi, name: &str, what: &str, e: &LlmError) -> Error {
    if let LlmError::Request { status: 404, .. } = e {
        return Error::input(format!(
            "batch {name} {what}: the server at {} has no batch API (HTTP 404); `rubricate runs resume ID --live` grades the run live",
            api.base_url()
        ));
    }
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
