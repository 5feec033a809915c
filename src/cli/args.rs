//! The flags several commands share: what to grade (`CommonArgs`), who judges and how
//! (`JudgeArgs`, turned into the run engine's settings), and the output formats.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, choice};
use crate::formats::Format;

#[derive(Debug, Args)]
pub(crate) struct CommonArgs {
    /// The dataset: .json (autorubric shape), .jsonl, .csv, or an agentv eval .yaml.
    pub(crate) dataset: PathBuf,
    /// A rubric file (any format; FILE#ID picks one) or built-in name; overrides the
    /// dataset's and items' own rubrics.
    #[arg(help_heading = "Rubric", long, short)]
    pub(crate) rubric: Option<String>,
    /// Read the rubric as this format instead of detecting it.
    #[arg(help_heading = "Rubric", long, value_parser = Format::parse, value_name = "FORMAT")]
    pub(crate) from: Option<Format>,
    /// Output format (default: table on a terminal, else jsonl).
    #[arg(help_heading = "Output", long, value_enum)]
    pub(crate) format: Option<OutputFormat>,
    /// Write results to FILE (replaced atomically when done) instead of stdout.
    #[arg(help_heading = "Output", long, short)]
    pub(crate) out: Option<PathBuf>,
    /// Exit 1 when the mean score is below X (unscored items count as 0); the same as
    /// `--gate mean>=X`.
    #[arg(help_heading = "Gates", long, value_name = "X")]
    pub(crate) fail_under: Option<f64>,
    /// Exit 1 unless the run reaches this: `pass_rate>=0.9`, `mean>=0.75`,
    /// `criterion:ID>=1.0`, `tag:NAME>=0.8` (operators >=, >, <=, <; 0.9 or 90%). Repeat for
    /// several; the rubric's and rubricate.yaml's `gates:` apply too. With any gate the
    /// exit follows the gates, not every item's pass.
    #[arg(help_heading = "Gates", long, value_name = "GATE", value_parser = crate::model::RunGate::parse)]
    pub(crate) gate: Vec<crate::model::RunGate>,
    /// Largest single item (a JSONL line or CSV record) accepted, in MiB.
    #[arg(help_heading = "Limits", long, default_value_t = 16)]
    pub(crate) max_item_mb: usize,
}

/// The LLM judge for `method: judge` criteria (the run engine's `JudgeSettings`, kept in a
/// saved run's manifest so a resumed run is judged the same way).
#[derive(Debug, Clone, Args)]
pub(crate) struct JudgeArgs {
    /// A judge model: `openai/MODEL`, `anthropic/MODEL`, `ollama/MODEL` or `NAME/MODEL` for a
    /// provider named in rubricate.yaml; repeat for an ensemble, `MODEL=WEIGHT` for a
    /// weighted vote (default: the rubric's `judge.model`, else the workspace's). Keys come
    /// from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`; base URLs from `OPENAI_BASE_URL` /
    /// `ANTHROPIC_BASE_URL` / `OLLAMA_HOST`.
    #[arg(help_heading = "Judge", long, value_name = "MODEL")]
    pub(crate) judge: Vec<String>,
    /// How criteria are put to the judge (default: the rubric's `judge.strategy`, else
    /// per-criterion). `calibrate` takes several, each a candidate.
    #[arg(help_heading = "Judge", long, value_parser = choice::choice::<crate::engine::judge::Strategy>())]
    pub(crate) strategy: Vec<crate::engine::judge::Strategy>,
    /// Answers per judge for each call, combined like an ensemble (use a temperature above 0).
    #[arg(help_heading = "Judge", long, value_name = "N", default_value_t = 1)]
    pub(crate) samples: u32,
    /// How the votes of several judges or samples make a verdict.
    #[arg(help_heading = "Judge", long, value_parser = choice::choice::<crate::engine::judge::Rule>(), default_value = "majority")]
    pub(crate) ensemble: crate::engine::judge::Rule,
    /// How graded votes (options, levels, scales, holistic scores) combine.
    #[arg(help_heading = "Judge", long, value_parser = choice::choice::<crate::engine::judge::ValueRule>(), default_value = "mean")]
    pub(crate) combine: crate::engine::judge::ValueRule,
    /// Judge temperature (default: the rubric's, else 0).
    #[arg(help_heading = "Judge", long)]
    pub(crate) temperature: Option<f64>,
    /// Most tokens a judge reply may use (default: the rubric's, else 1024).
    #[arg(help_heading = "Judge", long, value_name = "N")]
    pub(crate) max_tokens: Option<u32>,
    /// Sampling seed sent to providers that take one.
    #[arg(help_heading = "Judge", long)]
    pub(crate) seed: Option<u64>,
    /// How hard an OpenAI-compatible reasoning judge thinks, sent as `reasoning_effort`
    /// (default: the rubric's `judge.reasoning_effort`, else rubricate.yaml's).
    #[arg(help_heading = "Judge", long, value_name = "LEVEL", value_parser = reasoning_effort)]
    pub(crate) reasoning_effort: Option<crate::model::ReasoningEffort>,
    /// Anthropic extended thinking: tokens the judge may think with before it answers
    /// (at least 1024; added to --max-tokens; the thinking is never read as the verdict).
    #[arg(help_heading = "Judge", long, value_name = "TOKENS")]
    pub(crate) thinking_budget: Option<u32>,
    /// A file whose text replaces the judge's system prompt. `calibrate` takes several,
    /// each a candidate.
    #[arg(help_heading = "Judge", long, value_name = "FILE")]
    pub(crate) system_prompt: Vec<PathBuf>,
    /// Stream judge replies (an idle stream is cut after 30 s instead of waiting for the
    /// whole timeout).
    #[arg(help_heading = "Judge", long)]
    pub(crate) stream: bool,
    /// Requests per minute to each provider endpoint.
    #[arg(help_heading = "Limits", long, value_name = "N")]
    pub(crate) rpm: Option<u32>,
    /// Tokens per minute to each provider endpoint (prompt estimated, plus max tokens).
    #[arg(help_heading = "Limits", long, value_name = "N")]
    pub(crate) tpm: Option<u32>,
    /// Seconds a judge request may take, first byte to last (default 120).
    #[arg(help_heading = "Limits", long, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// Retries of a judge call after a rate limit, server error or lost connection
    /// (default 4).
    #[arg(help_heading = "Limits", long, value_name = "N")]
    pub(crate) max_retries: Option<u32>,
    /// Stop sending judge calls once this many dollars are spent (needs `prices:` in
    /// rubricate.yaml for every judge model); calls in flight finish.
    #[arg(help_heading = "Limits", long, value_name = "DOLLARS")]
    pub(crate) max_cost: Option<f64>,
    /// Print the calls, estimated tokens and cost, and how many the cache already holds;
    /// send nothing.
    #[arg(help_heading = "Judge", long)]
    pub(crate) dry_run: bool,
    /// Neither read nor write the response cache (every call goes to the provider).
    #[arg(help_heading = "Judge", long)]
    pub(crate) no_cache: bool,
    /// Ask OpenAI-compatible judges for token log-probabilities: each judged verdict records
    /// the judge's confidence in it (`invocation.confidence`), and `labels next` puts the
    /// least certain first. A server that refuses them is asked again without.
    #[arg(help_heading = "Judge", long)]
    pub(crate) logprobs: bool,
    /// `llm`: feedback written by the (first) judge, 3–5 sentences; falls back to the
    /// deterministic summary on any failure.
    #[arg(help_heading = "Judge", long, value_parser = choice::choice::<FeedbackMode>(), default_value = "deterministic")]
    pub(crate) feedback: FeedbackMode,
}

impl JudgeArgs {
    /// Grading takes one strategy and one system prompt (`calibrate` compares several).
    pub(crate) fn one_setting(&self) -> Result<(), CliError> {
        if self.strategy.len() > 1 || self.system_prompt.len() > 1 {
            return Err(CliError::input(
                "give one --strategy and one --system-prompt; `rubricate calibrate` compares several",
            ));
        }
        Ok(())
    }

    /// The run engine's judge settings from these flags (the last strategy and system
    /// prompt given).
    pub(crate) fn settings(&self) -> crate::run::JudgeSettings {
        crate::run::JudgeSettings {
            judge: self.judge.clone(),
            strategy: self.strategy.last().copied(),
            samples: self.samples,
            ensemble: self.ensemble,
            combine: self.combine,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            seed: self.seed,
            reasoning_effort: self.reasoning_effort,
            thinking_budget: self.thinking_budget,
            system_prompt: self.system_prompt.last().cloned(),
            stream: self.stream,
            rpm: self.rpm,
            tpm: self.tpm,
            timeout: self.timeout,
            max_retries: self.max_retries,
            max_cost: self.max_cost,
            no_cache: self.no_cache,
            feedback: self.feedback,
            logprobs: self.logprobs,
            batch: false,
        }
    }
}

use crate::run::FeedbackMode;

/// `--reasoning-effort low|medium|high`.
fn reasoning_effort(text: &str) -> Result<crate::model::ReasoningEffort, String> {
    crate::model::ReasoningEffort::parse(text).ok_or_else(|| {
        format!(
            "'{text}' is not a reasoning effort; use {}",
            crate::model::ReasoningEffort::NAMES.join(", ")
        )
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    Table,
    Json,
    Jsonl,
    Csv,
    Junit,
    /// Markdown: a summary table and the worst items with their failing criteria and
    /// reasons (for a pull request comment or a job summary).
    Md,
    /// GitHub Actions: an `::error` annotation on the dataset's line for each failed item
    /// (the 50 lowest-scoring) and each failed gate, on stdout; the Markdown report appended
    /// to `$GITHUB_STEP_SUMMARY` (on stdout when that is not set).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LintFormat {
    Text,
    Json,
}
