//! Few-shot examples: labelled submissions the judge is shown before the one it grades, on
//! a criterion (`examples: [{submission, verdict, reason}]`) or on a rubric (`{submission,
//! verdicts: {criterion: verdict}, reason}`), written out or drawn from people's labels
//! (`examples: {from: labels, annotator, n, balance: verdict, seed}`). A draw is resolved
//! once when a run starts (`run::examples`), so the run's rubric snapshot holds the
//! examples it was judged with.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Verdict;

/// One labelled submission for one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The example's submission (shown to the judge as data, fenced like a submission).
    pub submission: String,
    /// Its verdict, checked against the criterion's kind.
    pub verdict: Verdict,
    /// Why, in a person's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The labelled item it was drawn from (a draw from labels); never shown for itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

/// One labelled submission with verdicts for several criteria of a rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricExample {
    /// The example's submission.
    pub submission: String,
    /// Verdicts by criterion id (criteria not named are not shown for it).
    pub verdicts: BTreeMap<String, Verdict>,
    /// Why, in a person's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The labelled item it was drawn from; never shown for itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

/// Examples as a file gives them: written out, or drawn from labels when a run starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Examples<E> {
    /// The examples themselves.
    Written(Vec<E>),
    /// Drawn from people's labels of items that the run does not grade.
    FromLabels(LabelDraw),
}

impl<E> Examples<E> {
    /// The written examples (none for a draw not yet resolved).
    pub fn written(&self) -> &[E] {
        match self {
            Self::Written(list) => list,
            Self::FromLabels(_) => &[],
        }
    }
}

/// Where drawn examples come from: only `labels` for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawSource {
    /// People's labels in the workspace's `labels/`.
    Labels,
}

/// How examples are drawn from labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelDraw {
    /// Always `labels`.
    pub from: DrawSource,
    /// Whose labels (`None`: as `metrics` chooses: the adjudicated ones, else the only
    /// annotator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotator: Option<String>,
    /// How many examples per criterion.
    pub n: usize,
    /// Whether each verdict the labels hold gets an equal share.
    #[serde(default)]
    pub balance: Balance,
    /// The seed of the draw (the same seed, labels and items give the same examples).
    #[serde(default)]
    pub seed: u64,
    /// The dataset whose labels are drawn from (relative to the rubric's folder); `None`:
    /// the dataset being graded (its items graded by the run are never drawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
}

/// Whether a draw balances verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Balance {
    /// Each verdict in turn, so every verdict the labels hold is shown as often as it can
    /// be.
    #[default]
    Verdict,
    /// As drawn, whatever the verdicts.
    None,
}

impl Balance {
    /// The names rubric files use.
    pub const NAMES: &'static [&'static str] = &["verdict", "none"];
}
