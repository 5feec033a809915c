//! A batch run's ledger, kept in its manifest: every batch of requests handed to a
//! provider's batch engine, and how far it got. The requests, their ids and the results
//! live beside the manifest in `batches/` (one file of each per batch); the ledger is
//! written (atomically, with the manifest) before and after every step that talks to the
//! provider, so a run killed at any point knows what it sent and sends nothing twice.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::RunDir;

/// The folder of a run's batch files.
pub const BATCHES: &str = "batches";

/// Where one batch has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchStage {
    /// Its requests file is written; nothing sent yet.
    Prepared,
    /// Its requests file is uploaded (`OpenAI`: `file_id`); the batch is not created yet.
    Uploaded,
    /// The batch is being created: the provider may have it although we never heard back
    /// (a kill at this point). Resume looks for it before creating another.
    Creating,
    /// The provider has it (`batch_id`).
    Submitted,
    /// It ended and its results are on disk.
    Downloaded,
}

/// One batch of requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// Its files' name in `batches/` (`b0001`).
    pub name: String,
    /// The judge model, as the run names it (`openai/gpt-4o-mini`).
    pub model: String,
    /// Requests in it.
    pub requests: usize,
    /// Bytes of its requests file.
    pub bytes: u64,
    /// How far it has got.
    pub stage: BatchStage,
    /// The uploaded requests file (`OpenAI`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// The provider's batch id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// When creating began (to find a batch created by a run that was killed meanwhile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creating_at: Option<String>,
    /// When the provider took it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<String>,
    /// When the provider said it ended (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The provider's last word on it (`in_progress`, `completed`, `expired`, `ended`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Requests answered, and failed (errors, expired, cancelled), as last heard.
    #[serde(default)]
    pub answered: u64,
    /// Requests failed, as last heard.
    #[serde(default)]
    pub failed: u64,
    /// Polls in a row the provider said it has no such batch (its list can lag).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missing_polls: u32,
    /// Its create was cut short (the run stopped while the provider made it, and the batch
    /// was not found): the provider may yet show a second batch of the same requests,
    /// which is looked for while this one is in flight.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
    /// Other batches the provider made of the same requests (a create cut short, then
    /// made again), and what was done with each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherBatch>,
    /// Tokens and dollars (at batch prices) of its results.
    #[serde(default)]
    pub input_tokens: u64,
    /// Reply tokens of its results.
    #[serde(default)]
    pub output_tokens: u64,
    /// Dollars of its results, at batch prices.
    #[serde(default)]
    pub cost: f64,
}

impl BatchRecord {
    /// A batch prepared and not yet sent.
    pub fn new(name: String, model: String, requests: usize, bytes: u64) -> Self {
        Self {
            name,
            model,
            requests,
            bytes,
            stage: BatchStage::Prepared,
            file_id: None,
            batch_id: None,
            creating_at: None,
            submitted_at: None,
            ended_at: None,
            status: None,
            answered: 0,
            failed: 0,
            missing_polls: 0,
            recovered: false,
            others: Vec::new(),
            input_tokens: 0,
            output_tokens: 0,
            cost: 0.0,
        }
    }

    /// Sent and not yet back.
    pub fn in_flight(&self) -> bool {
        self.stage != BatchStage::Downloaded
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A second batch the provider made of one batch's requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherBatch {
    /// The provider's id for it.
    pub batch_id: String,
    /// When the provider made it, as it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// `cancelled` (the newer of two is cancelled at once), or why it could not be: the
    /// provider's error.
    pub fate: String,
}

/// A batch's files.
impl RunDir {
    /// The folder of the run's batch files.
    pub fn batches_dir(&self) -> PathBuf {
        self.dir.join(BATCHES)
    }

    /// The requests, one JSON line each, in the provider's batch format.
    pub fn batch_requests(&self, name: &str) -> PathBuf {
        self.batches_dir().join(format!("{name}.jsonl"))
    }

    /// The requests' ids, one a line (read to know what is in flight without reading the
    /// requests).
    pub fn batch_ids(&self, name: &str) -> PathBuf {
        self.batches_dir().join(format!("{name}.ids"))
    }

    /// The results, one JSON line each, as rubricate reads them (not the provider's own).
    pub fn batch_results(&self, name: &str) -> PathBuf {
        self.batches_dir().join(format!("{name}.results.jsonl"))
    }
}
