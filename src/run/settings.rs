//! How a run grades, without any front end's notion of flags: the judge settings, the
//! grading options, and what a saved run's manifest keeps so that `runs resume`, the TUI's
//! continue and a retry grade exactly as the run began. The CLI fills these from its flags,
//! the TUI from its set-up; both hand them to the run engine.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::engine::judge::{Rule, Strategy, ValueRule};

/// Who judges `method: judge` criteria, and how. `None`s fall back to the rubric's
/// `judge:` block, then the workspace's `judge:` defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeSettings {
    /// Judge models (`openai/MODEL`, `NAME/MODEL`, `MODEL=WEIGHT`); several make an ensemble.
    pub judge: Vec<String>,
    pub strategy: Option<Strategy>,
    /// Answers per judge for each call.
    pub samples: u32,
    pub ensemble: Rule,
    pub combine: ValueRule,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    /// How hard an OpenAI-compatible reasoning judge thinks (`--reasoning-effort`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<crate::model::ReasoningEffort>,
    /// Anthropic's extended thinking budget in tokens (`--thinking-budget`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// A file whose text replaces the judge's system prompt.
    pub system_prompt: Option<PathBuf>,
    pub stream: bool,
    pub rpm: Option<u32>,
    pub tpm: Option<u32>,
    /// Seconds a judge request may take.
    pub timeout: Option<f64>,
    pub max_retries: Option<u32>,
    /// Stop sending judge calls once this many dollars are spent.
    pub max_cost: Option<f64>,
    /// Neither read nor write the response cache.
    pub no_cache: bool,
    pub feedback: FeedbackMode,
    /// Ask OpenAI-compatible judges for log-probabilities: each verdict records the
    /// judge's confidence (what `labels next` orders uncertain items by).
    pub logprobs: bool,
    /// Judge calls go to the providers' batch engines (`run::batch`), not one by one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
}

impl Default for JudgeSettings {
    fn default() -> Self {
        Self {
            judge: Vec::new(),
            strategy: None,
            samples: 1,
            ensemble: Rule::default(),
            combine: ValueRule::default(),
            temperature: None,
            max_tokens: None,
            seed: None,
            reasoning_effort: None,
            thinking_budget: None,
            system_prompt: None,
            stream: false,
            rpm: None,
            tpm: None,
            timeout: None,
            max_retries: None,
            max_cost: None,
            no_cache: false,
            feedback: FeedbackMode::default(),
            logprobs: false,
            batch: false,
        }
    }
}

impl JudgeSettings {
    /// Models typed as one line (the TUI's set-up): separated by commas or spaces.
    #[must_use]
    pub fn with_models(mut self, line: Option<&str>) -> Self {
        self.judge = line
            .into_iter()
            .flat_map(|j| j.split([',', ' ']))
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
            .collect();
        self
    }
}

/// Who writes an item's feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackMode {
    /// The deterministic summary (SCORING.md).
    #[default]
    Deterministic,
    /// 3–5 sentences by the (first) judge; the summary on any failure.
    Llm,
}

crate::choice_enum!(FeedbackMode, "feedback mode", {
    FeedbackMode::Deterministic => "deterministic",
    FeedbackMode::Llm => "llm",
});

/// Grading options beyond the judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GradeSettings {
    /// Judge calls in flight (or items at once when nothing is judged); `None`: the
    /// workspace's, else 16 calls / the number of cores.
    pub concurrency: Option<usize>,
    /// Lets `command` checks run programs.
    pub allow_commands: bool,
    /// Largest share of failed cells tolerated before a run counts as failing.
    pub max_error_rate: f64,
}

impl Default for GradeSettings {
    fn default() -> Self {
        Self {
            concurrency: None,
            allow_commands: false,
            max_error_rate: 0.0,
        }
    }
}

/// What a saved run's manifest keeps besides the rubric snapshot (`settings`): enough to
/// resume it the same way, from any front end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    pub judge: JudgeSettings,
    pub grade: GradeSettings,
    /// The run's rubric replaced items' own rubrics.
    pub override_rubric: bool,
    /// Largest single item read, in MiB.
    pub max_item_mb: usize,
    /// The items graded, when not all (`grade --limit|--sample|--items`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset: Option<super::subset::Subset>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            judge: JudgeSettings::default(),
            grade: GradeSettings::default(),
            override_rubric: true,
            max_item_mb: 16,
            subset: None,
        }
    }
}

impl RunSettings {
    /// The settings recorded in a manifest.
    pub fn of(manifest: &crate::store::runs::Manifest) -> Result<Self, super::Error> {
        serde_json::from_value(manifest.settings.clone()).map_err(|e| {
            super::Error::input(format!(
                "run {}: its settings in the manifest cannot be read ({e}); the manifest was edited or damaged",
                manifest.id
            ))
        })
    }

    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub fn read_options(&self) -> crate::formats::dataset::ReadOptions {
        crate::formats::dataset::ReadOptions {
            max_item_bytes: self.max_item_mb.max(1) * 1024 * 1024,
            ..crate::formats::dataset::ReadOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_of_older_manifests_still_read() {
        // What `grade --save` wrote before the engine moved (clap's JudgeArgs, dry_run
        // included): unknown fields are ignored, missing ones take their defaults.
        let old = serde_json::json!({
            "judge": {"judge": ["openai/m"], "strategy": "one_shot", "samples": 1,
                      "ensemble": "majority", "combine": "mean", "stream": true,
                      "dry_run": false, "no_cache": false, "feedback": "deterministic"},
            "grade": {"concurrency": null, "allow_commands": false, "max_error_rate": 0.0},
            "override_rubric": true,
            "max_item_mb": 16
        });
        let s: RunSettings = serde_json::from_value(old).unwrap();
        assert_eq!(s.judge.judge, vec!["openai/m".to_owned()]);
        assert_eq!(s.judge.strategy, Some(Strategy::OneShot));
        assert!(s.judge.stream);
        let back: RunSettings = serde_json::from_value(s.to_value()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn typed_models_split_on_commas_and_spaces() {
        let s = JudgeSettings::default().with_models(Some("openai/a, openai/b  x/c"));
        assert_eq!(s.judge, ["openai/a", "openai/b", "x/c"]);
    }
}
