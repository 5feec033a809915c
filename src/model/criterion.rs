use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Verdict;
use super::errors::{VerdictError, quoted_list};

/// One thing a rubric checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    /// Unique within the rubric; names the criterion in results, labels and journals.
    pub id: String,
    /// The short name people see.
    pub name: String,
    /// What must hold, as the judge is asked it.
    pub requirement: String,
    /// Its share of the score; negative for a penalty (a fault that costs when present).
    pub weight: f64,
    /// The evaluation fails unless this criterion reaches its gate (see [`Criterion::gate`]).
    #[serde(default)]
    pub required: bool,
    /// The value a required criterion must reach; `None`: the kind's default gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    /// What answers it takes and what each is worth.
    pub kind: Kind,
    /// Who answers it: a judge, a check or a schema.
    pub method: Method,
    /// The section this criterion was written under, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Tags (`axis:accuracy`, `theme:emergency`, as `HealthBench` writes them): grading
    /// reports a score per tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Labelled submissions the judge is shown before the one it grades (few-shot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<super::Examples<super::Example>>,
    /// What it judges of a conversation: the whole (default) or each assistant turn.
    #[serde(default, skip_serializing_if = "super::Scope::is_conversation")]
    pub scope: super::Scope,
}

impl Criterion {
    /// A positive binary criterion judged by an LLM, weight 1.
    pub fn binary(id: impl Into<String>, requirement: impl Into<String>, weight: f64) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            requirement: requirement.into(),
            weight,
            required: false,
            min_score: None,
            kind: Kind::Binary,
            method: Method::Judge(JudgeMethod::default()),
            section: None,
            tags: Vec::new(),
            examples: None,
            scope: super::Scope::Conversation,
        }
    }

    /// The `min_score` a required criterion must reach: MET for binary criteria, else
    /// any value above zero, unless the rubric says otherwise.
    pub fn gate(&self) -> Gate {
        match self.min_score {
            Some(m) => Gate::AtLeast(m),
            None if matches!(self.kind, Kind::Binary) => Gate::AtLeast(1.0),
            None => Gate::AboveZero,
        }
    }

    /// The value in [0,1] a verdict contributes; `Ok(None)` for an abstention.
    /// An error names what does not fit this criterion.
    pub fn value_of(&self, verdict: &Verdict) -> Result<Option<f64>, VerdictError> {
        match (&self.kind, verdict) {
            (_, Verdict::CannotAssess) => Ok(None),
            (Kind::Binary, Verdict::Met) => Ok(Some(1.0)),
            (Kind::Binary, Verdict::Unmet) => Ok(Some(0.0)),
            (Kind::Levels(levels), Verdict::Level(id)) => levels
                .iter()
                .find(|l| l.id == *id)
                .map(|l| Some(l.score))
                .ok_or_else(|| VerdictError::UnknownLevel {
                    given: id.clone(),
                    expected: quoted_list(levels.iter().map(|l| l.id.as_str())),
                }),
            (Kind::Levels(levels), Verdict::Met) => Ok(levels.last().map(|l| l.score)),
            (Kind::Levels(levels), Verdict::Unmet) => Ok(levels.first().map(|l| l.score)),
            (Kind::Options { options, .. }, Verdict::Choice(label)) => {
                match find_option(options, label) {
                    Some(o) if o.na => Ok(None),
                    Some(o) => Ok(Some(o.value)),
                    None => Err(VerdictError::UnknownOption {
                        given: label.clone(),
                        expected: quoted_list(options.iter().map(|o| o.label.as_str())),
                    }),
                }
            }
            (Kind::Scale(scale), Verdict::Score(x)) => {
                if x.is_finite() {
                    Ok(Some(scale.normalize(*x)))
                } else {
                    Err(VerdictError::NotFinite(*x))
                }
            }
            (kind, v) => Err(VerdictError::WrongKind {
                verdict: v.to_string(),
                kind: kind.name(),
            }),
        }
    }

    /// The worst value this criterion can take for its sign: the lowest scored value, or
    /// the highest for a penalty (what `abstain: worst` and `errors: worst` charge).
    pub fn worst_value(&self) -> f64 {
        let (lo, hi) = self.value_range();
        if self.weight < 0.0 { hi } else { lo }
    }

    /// The best and worst values this criterion can contribute, `(lowest, highest)`.
    pub fn value_range(&self) -> (f64, f64) {
        match &self.kind {
            Kind::Binary | Kind::Scale(_) => (0.0, 1.0),
            Kind::Levels(levels) => {
                let lo = levels.iter().map(|l| l.score).fold(f64::INFINITY, f64::min);
                let hi = levels
                    .iter()
                    .map(|l| l.score)
                    .fold(f64::NEG_INFINITY, f64::max);
                if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) }
            }
            Kind::Options { options, .. } => {
                let vals = options.iter().filter(|o| !o.na).map(|o| o.value);
                let lo = vals.clone().fold(f64::INFINITY, f64::min);
                let hi = vals.fold(f64::NEG_INFINITY, f64::max);
                if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) }
            }
        }
    }

    /// Every value a verdict can give this criterion (for reachability analysis).
    pub fn possible_values(&self) -> Vec<f64> {
        match &self.kind {
            Kind::Binary | Kind::Scale(_) => vec![0.0, 1.0],
            Kind::Levels(levels) => levels.iter().map(|l| l.score).collect(),
            Kind::Options { options, .. } => {
                options.iter().filter(|o| !o.na).map(|o| o.value).collect()
            }
        }
    }
}

/// What a required criterion must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate {
    /// The value must reach this (within 1e-9).
    AtLeast(f64),
    /// Any value above zero.
    AboveZero,
}

impl Gate {
    /// Whether `value` passes the gate.
    pub fn admits(self, value: f64) -> bool {
        match self {
            Gate::AtLeast(m) => value + 1e-9 >= m,
            Gate::AboveZero => value > 0.0,
        }
    }
}

/// Finds an option by label as autorubric matches one (`label.strip().lower()`): any
/// Unicode case, and trimmed of what Python counts as whitespace — Unicode's, plus the
/// separators U+001C–U+001F.
pub fn find_option<'a>(options: &'a [OptionChoice], label: &str) -> Option<&'a OptionChoice> {
    let fold = |s: &str| {
        s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
            .to_lowercase()
    };
    let wanted = fold(label);
    options.iter().find(|o| fold(&o.label) == wanted)
}

/// What kind of answer a criterion takes, and what each answer is worth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Kind {
    /// MET = 1, UNMET = 0, `CANNOT_ASSESS` = abstain.
    Binary,
    /// Named levels ordered from lowest to highest score.
    Levels(Vec<Level>),
    /// Multiple choice; an `na` option abstains.
    Options {
        /// The choices, in the order the judge sees them.
        options: Vec<OptionChoice>,
        /// Whether the choices are ordered (agreement weighs near misses) or not.
        scale: OptionScale,
    },
    /// A number in `[min, max]`.
    Scale(Scale),
}

impl Kind {
    /// The kind's name as rubric files write it (`binary`, `levels`, `options`, `scale`).
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Levels(_) => "levels",
            Kind::Options { .. } => "options",
            Kind::Scale(_) => "scale",
        }
    }
}

/// One level of a `levels` criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// What verdicts name it by.
    pub id: String,
    /// The short name people see.
    pub label: String,
    /// What an answer at this level looks like.
    #[serde(default)]
    pub description: String,
    /// What an answer at this level is worth.
    pub score: f64,
    /// Signs of this level, listed for the judge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indicators: Vec<String>,
}

/// One choice of an `options` criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionChoice {
    /// What verdicts name it by (matched ignoring case and surrounding space).
    pub label: String,
    /// What choosing it is worth.
    pub value: f64,
    /// "Not applicable": choosing it abstains.
    #[serde(default)]
    pub na: bool,
}

/// Whether an `options` criterion's choices are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionScale {
    /// Ordered from worst to best (agreement is quadratic-weighted κ).
    #[default]
    Ordinal,
    /// Unordered categories (agreement is unweighted κ).
    Nominal,
}

/// A numeric `scale` criterion's range, normalised to [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// The lowest score (worth 0).
    pub min: f64,
    /// The highest score (worth 1).
    pub max: f64,
    /// What some scores mean, shown to the judge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<Anchor>,
}

impl Scale {
    /// `(clamp(x) − min) / (max − min)`.
    pub fn normalize(&self, x: f64) -> f64 {
        let span = self.max - self.min;
        // Also refuses NaN bounds (only a rubric that skipped validation can have them).
        if !(span > 0.0 && span.is_finite()) {
            return 0.0;
        }
        (x.clamp(self.min, self.max) - self.min) / span
    }
}

/// What one score on a scale means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// The score.
    pub value: f64,
    /// What it means.
    pub text: String,
}

/// How a criterion is evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// An LLM judge.
    Judge(JudgeMethod),
    /// A deterministic built-in check (or an opted-in command).
    Check(CheckSpec),
    /// JSON Schema validation of the submission.
    Schema(SchemaSource),
}

impl Method {
    /// Which of the three methods this is, without its settings.
    pub fn kind(&self) -> MethodKind {
        match self {
            Method::Judge(_) => MethodKind::Judge,
            Method::Check(_) => MethodKind::Check,
            Method::Schema(_) => MethodKind::Schema,
        }
    }
}

/// Which method answered a criterion (written in results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    /// An LLM judge.
    Judge,
    /// A deterministic check.
    Check,
    /// JSON Schema validation.
    Schema,
}

impl MethodKind {
    /// The name results write (`judge`, `check`, `schema`).
    pub fn as_str(self) -> &'static str {
        match self {
            MethodKind::Judge => "judge",
            MethodKind::Check => "check",
            MethodKind::Schema => "schema",
        }
    }
}

/// How an LLM judge answers a criterion, beyond the rubric's judge settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JudgeMethod {
    /// A minijinja template rendered with the item (level decode); `None` uses ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A model for this criterion alone, over the rubric's judge settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// In a pairwise run's expanded rubric: the written criterion and the order of the
    /// two candidates this cell shows (see `model::pair`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<super::pair::PairOrder>,
}

impl JudgeMethod {
    /// Whether this criterion is always judged in a call of its own, whatever the
    /// strategy: its prompt is its own (a template), or it compares two answers in one
    /// order (a pairwise run's cell).
    pub fn judged_alone(&self) -> bool {
        self.template.is_some() || self.pair.is_some()
    }
}

/// A built-in check (or an opted-in command) and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckSpec {
    /// The check's name in the registry (`contains`, `regex`, `command`, …).
    pub name: String,
    /// Its arguments, as the rubric file gives them.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub args: Map<String, Value>,
}

/// Where a `schema` criterion's JSON Schema comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaSource {
    /// The schema itself.
    Inline(Value),
    /// A path, relative to the rubric file.
    File(String),
}

/// Whether a criterion's value is what the rubric wants: full marks, or for a penalty (a
/// negative weight) not applied. What "met" means in reports, comparisons and gates.
pub fn met_as_wanted(value: f64, penalty: bool) -> bool {
    if penalty {
        value <= 1e-9
    } else {
        value >= 1.0 - 1e-9
    }
}
