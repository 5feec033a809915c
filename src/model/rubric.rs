use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Criterion;

/// A rubric: weighted criteria, a pass threshold and the knobs that turn verdicts into a score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rubric {
    /// Names the rubric in the registry, results and runs.
    pub id: String,
    /// The title people see.
    pub name: String,
    /// What the rubric is for.
    #[serde(default)]
    pub description: String,
    /// A semantic version; the registry keeps every version saved.
    pub version: String,
    /// What kind of output it grades (free text, for people and reports).
    #[serde(default)]
    pub target_type: String,
    /// Instructions the judge reads before every criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidelines: Option<String>,
    /// The score an evaluation must reach to pass.
    pub pass_threshold: f64,
    /// How verdicts become a score.
    #[serde(default)]
    pub scoring: Scoring,
    /// The judge this rubric asks for, over the workspace's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSettings>,
    /// One answer at a time, or answers compared (`mode: pairwise`).
    #[serde(default, skip_serializing_if = "is_single")]
    pub mode: super::pair::Mode,
    /// A pairwise run's candidates (their ids, in the order its cells number them); empty
    /// in a rubric as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub systems: Vec<String>,
    /// What the rubric checks, in order.
    pub criteria: Vec<Criterion>,
    /// Groups of criteria scored apart and averaged (agentv's graders); empty: the
    /// criteria are scored as one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graders: Vec<Grader>,
    /// What a run graded against it must reach for a CI job to pass (`pass_rate>=0.9`…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<super::RunGate>,
    /// Labelled submissions with verdicts per criterion, shown to the judge (few-shot); a
    /// draw from labels gives each judged criterion without examples of its own a draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<super::Examples<super::RubricExample>>,
    /// Fields of the source file that rubricate does not read, kept for writing it back.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// One grader of a rubric scored by graders (agentv's test): its criteria are aggregated
/// under the rubric's `scoring` into the grader's score; the rubric's score is the mean of
/// its graders' scores weighted by `weight`, and 0 when a `required` grader scores below
/// its `min_score` (the pass threshold when it has none). The criteria's own gates decide
/// only the grader's verdict, as in agentv, never the rubric's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grader {
    /// The grader's id (as agentv names it).
    pub id: String,
    /// Its share of the rubric's score.
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// The rubric scores 0 when this grader scores below its `min_score`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// The score a required grader must reach; `None`: the pass threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    /// The ids of its criteria; every criterion of the rubric is in exactly one grader.
    pub criteria: Vec<String>,
}

fn default_weight() -> f64 {
    1.0
}

impl Rubric {
    /// The version of a rubric whose file gives none.
    pub const DEFAULT_VERSION: &'static str = "1.0.0";
    /// The pass threshold of a rubric whose file gives none.
    pub const DEFAULT_PASS_THRESHOLD: f64 = 0.7;

    /// A rubric with defaults everywhere but the given id and criteria.
    pub fn new(id: impl Into<String>, criteria: Vec<Criterion>) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            description: String::new(),
            version: Self::DEFAULT_VERSION.to_owned(),
            target_type: String::new(),
            guidelines: None,
            pass_threshold: Self::DEFAULT_PASS_THRESHOLD,
            scoring: Scoring::default(),
            judge: None,
            mode: super::pair::Mode::Single,
            systems: Vec::new(),
            criteria,
            graders: Vec::new(),
            gates: Vec::new(),
            examples: None,
            metadata: Map::new(),
        }
    }

    /// The criterion with this id.
    pub fn criterion(&self, id: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.id == id)
    }

    /// Each criterion's position by id: one pass, so matching many results to criteria
    /// stays linear in the number of criteria.
    pub fn positions(&self) -> std::collections::HashMap<&str, usize> {
        self.criteria
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect()
    }

    /// Section names in first-appearance order; empty when the rubric has no sections.
    pub fn section_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for c in &self.criteria {
            if let Some(s) = c.section.as_deref()
                && !names.contains(&s)
            {
                names.push(s);
            }
        }
        names
    }
}

/// How criterion values become one score (SCORING.md "Aggregation").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scoring {
    /// How criterion values are combined.
    #[serde(default)]
    pub aggregate: AggregateMode,
    /// What an abstention (`CANNOT_ASSESS`) counts as.
    #[serde(default)]
    pub abstain: AbstainPolicy,
    /// The value `abstain: partial` gives an abstention.
    #[serde(default = "default_partial_credit")]
    pub partial_credit: f64,
    /// What a failed criterion counts as.
    #[serde(default)]
    pub errors: ErrorPolicy,
    /// Keep the score in [0, 1] (`points`); off, the raw sum is the score.
    #[serde(default = "default_true")]
    pub normalize: bool,
    /// How a score is compared with `pass_threshold`.
    #[serde(default)]
    pub threshold: ThresholdRule,
    /// Which `required` criteria gate a pass.
    #[serde(default)]
    pub gates: GateRule,
    /// Whose words the deterministic feedback uses.
    #[serde(default)]
    pub feedback: FeedbackStyle,
    /// A penalty for long submissions, subtracted from the score (autorubric's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_penalty: Option<LengthPenalty>,
    /// How the totals are added up: in order, or as Python 3.12+'s `sum()` does.
    #[serde(default, skip_serializing_if = "Summation::is_sequential")]
    pub summation: Summation,
}

/// How a rubric's totals are added up. Another system's library sums with Python's `sum()`,
/// which `CPython` 3.12 made compensated (Neumaier): the same weights can total differently
/// on 3.11 and 3.12+, in the last bit — enough to flip a pass at an exact threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Summation {
    /// Left to right, each addition rounded (rubricate's own; Python 3.11 and earlier).
    #[default]
    Sequential,
    /// As `CPython` 3.12+'s `sum()` of floats, for the totals the home library takes with
    /// `sum()`: with `points`, Σ w·v and the positive and negative weight; with
    /// `weighted_mean`, Σ w (its Σ w·v is a loop, added in order).
    Compensated,
}

impl Summation {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["sequential", "compensated"];

    /// serde's `skip_serializing_if` (which passes a reference): the default is not written.
    pub fn is_sequential(&self) -> bool {
        *self == Self::Sequential
    }
}

/// Scores within this distance of the threshold count as reaching it (the tolerant rule).
pub const THRESHOLD_TOLERANCE: f64 = 1e-9;

impl Scoring {
    /// `score ≥ threshold` as the `threshold` rule says: within 1e-9, or exactly.
    pub fn reaches(&self, score: f64, threshold: f64) -> bool {
        match self.threshold {
            ThresholdRule::Tolerant => score + THRESHOLD_TOLERANCE >= threshold,
            ThresholdRule::Exact => score >= threshold,
        }
    }
}

/// autorubric's `LengthPenalty`: nothing up to `free_budget` words, `penalty_at_cap` from
/// `max_cap` on, and `penalty_at_cap · ((n − free_budget) / (max_cap − free_budget))^exponent`
/// between; subtracted from the score (never below 0 when scores are normalised).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LengthPenalty {
    /// Words that cost nothing.
    pub free_budget: u64,
    /// From this many words on, the full penalty.
    pub max_cap: u64,
    /// The penalty at `max_cap` words and beyond.
    pub penalty_at_cap: f64,
    /// The curve's exponent between the two.
    pub exponent: f64,
    /// Which part of the submission is counted.
    #[serde(default)]
    pub count: PenaltyCount,
}

impl Default for LengthPenalty {
    /// autorubric's defaults.
    fn default() -> Self {
        Self {
            free_budget: 6000,
            max_cap: 8000,
            penalty_at_cap: 0.5,
            exponent: 1.6,
            count: PenaltyCount::All,
        }
    }
}

/// Which words a length penalty counts: a submission may hold `<thinking>…</thinking>` and
/// `<output>…</output>` sections (any case), else it is all output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PenaltyCount {
    /// Every word.
    #[default]
    All,
    /// Words inside `<output>` (or outside any section).
    Output,
    /// Words inside `<thinking>`.
    Thinking,
}

impl PenaltyCount {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["all", "output", "thinking"];
}

fn default_partial_credit() -> f64 {
    0.5
}

fn default_true() -> bool {
    true
}

impl Default for Scoring {
    fn default() -> Self {
        Self {
            aggregate: AggregateMode::default(),
            abstain: AbstainPolicy::default(),
            partial_credit: default_partial_credit(),
            errors: ErrorPolicy::default(),
            normalize: true,
            threshold: ThresholdRule::default(),
            gates: GateRule::default(),
            feedback: FeedbackStyle::default(),
            length_penalty: None,
            summation: Summation::default(),
        }
    }
}

/// How criterion values become one score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateMode {
    /// Σ w·v, normalised by the positive (or, for all-negative rubrics, negative) weight.
    #[default]
    Points,
    /// Plain mean of counted values (weights ignored, penalties inverted).
    Mean,
    /// The smallest counted value (gate on the weakest dimension).
    Min,
    /// Σ w·v / Σ w over the counted criteria, signed weights, never clamped; 0 when the
    /// weights sum to 0 (dataknobs' `weighted_score`).
    WeightedMean,
}

/// How a score is compared with the pass threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdRule {
    /// `score ≥ threshold` within 1e-9 (0.7999999999999999 passes 0.8).
    #[default]
    Tolerant,
    /// `score ≥ threshold` exactly, as dataknobs compares.
    Exact,
}

/// Which `required` criteria must reach their `min_score` for an evaluation to pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateRule {
    /// Every one: an abstention or a failure does not reach the gate.
    #[default]
    All,
    /// Those that were answered; one the judge left out is not gated (agentv).
    Answered,
    /// None: `required` is read and never enforced (dataknobs).
    Off,
}

/// Whose words the deterministic feedback summary uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackStyle {
    /// rubricate's summary (SCORING.md).
    #[default]
    Rubricate,
    /// dataknobs' `generate_deterministic_summary`, word for word.
    Dataknobs,
}

/// What an abstention counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbstainPolicy {
    /// Left out entirely.
    #[default]
    Skip,
    /// Counted with value 0.
    Zero,
    /// Counted with `partial_credit` for positive weights, 0 for penalties.
    Partial,
    /// Counted with the worst value for the criterion's sign.
    Worst,
}

/// What a criterion that failed (no verdict) counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorPolicy {
    /// A failed criterion is treated as an abstention (then `abstain` applies).
    #[default]
    Abstain,
    /// A failed criterion counts 0.
    Zero,
    /// A failed criterion counts the worst value for its sign.
    Worst,
}

impl AggregateMode {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["points", "mean", "min", "weighted_mean"];
}
impl AbstainPolicy {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["skip", "zero", "partial", "worst"];
}
impl ErrorPolicy {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["abstain", "zero", "worst"];
}
impl ThresholdRule {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["tolerant", "exact"];
}
impl GateRule {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["all", "answered", "off"];
}
impl FeedbackStyle {
    /// The names rubric files use, in declaration order.
    pub const NAMES: &'static [&'static str] = &["rubricate", "dataknobs"];
}

/// Default judge settings of a rubric; the LLM layer fills in what is missing from config.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JudgeSettings {
    /// The judge model id (`openai/gpt-4o-mini`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How the judge is asked: one call per criterion or one for all (`per_criterion`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens a reply may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// A sampling seed, where the provider honours one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The judge's system prompt, replacing rubricate's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// How hard an OpenAI-compatible reasoning model thinks (`reasoning_effort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<super::ReasoningEffort>,
    /// Anthropic's extended thinking: tokens the judge may think with before it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Fields added to every request body as written (`top_p`, a provider's own switches);
    /// never a field the client writes itself ([`super::CLIENT_OWNED_FIELDS`]).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_single(mode: &super::pair::Mode) -> bool {
    !mode.is_pairwise()
}
