//! The open dataset's "labels next" plan (the Label pane's queue walks it, Results shows
//! its people against people): `rubricate labels next`'s order and stop rule (and
//! people against people), worked out in the background while Label or Results is shown,
//! again whenever the labels change, one computation at a time; and the queue that walks it.

use super::effect::Effect;
use super::shared::Shared;
use crate::run::label_next::{CriterionProgress, LabelPlan};

/// A "labels next" plan and what it was worked out for.
#[derive(Debug, Clone)]
pub struct PlanShown {
    pub dataset: usize,
    pub annotator: String,
    /// The labels' generation it counts (older than the app's: a newer one is due).
    pub labels_gen: u64,
    /// Planned between the two runs that agree best with the labels (their labels, to say
    /// so), not over every run.
    pub between_top_two: Option<[String; 2]>,
    pub plan: Result<std::sync::Arc<LabelPlan>, String>,
    /// People against people (with two annotators or more).
    pub people: Option<std::sync::Arc<crate::run::people::PeopleReport>>,
}

impl Shared {
    /// Asks for the "labels next" plan again while Label or Results is shown and the one
    /// held is for other labels, another dataset or annotator (one at a time).
    pub fn want_label_plan(&mut self, shown: bool) -> Vec<Effect> {
        // After the runs' joins with the labels: two passes at once would hold both.
        if !shown || self.planning || self.stats.joining() {
            return Vec::new();
        }
        let Some(b) = self.browse.as_ref().filter(|b| b.run.is_some()) else {
            return Vec::new();
        };
        let current = self.plan.as_ref().is_some_and(|p| {
            p.dataset == b.dataset
                && p.annotator == self.annotator
                && p.labels_gen == self.labels_gen
                && p.between_top_two.is_some() == self.plan_between_top_two
        });
        if current {
            return Vec::new();
        }
        self.planning = true;
        vec![Effect::PlanLabels {
            dataset: b.dataset,
            annotator: self.annotator.clone(),
            labels_gen: self.labels_gen,
            between_top_two: self.plan_between_top_two,
        }]
    }

    /// The plan for the open dataset and the annotator (perhaps a few labels behind).
    pub fn label_plan(&self) -> Option<&LabelPlan> {
        let b = self.browse.as_ref()?;
        let shown = self.plan.as_ref()?;
        (shown.dataset == b.dataset && shown.annotator == self.annotator)
            .then_some(shown.plan.as_ref().ok()?.as_ref())
    }

    /// The two runs the plan held was made between (their names), when it was.
    pub fn plan_between(&self) -> Option<&[String; 2]> {
        self.plan
            .as_ref()?
            .between_top_two
            .as_ref()
            .filter(|[a, _]| !a.is_empty())
    }

    /// People against people for the open dataset, when two annotators have labels.
    pub fn people(&self) -> Option<&crate::run::people::PeopleReport> {
        let b = self.browse.as_ref()?;
        let shown = self.plan.as_ref()?;
        (shown.dataset == b.dataset).then_some(shown.people.as_deref()?)
    }

    /// A criterion's stop rule in the plan.
    pub fn stop_rule(&self, criterion: &str) -> Option<&CriterionProgress> {
        self.label_plan()?
            .criteria
            .iter()
            .find(|c| c.criterion == criterion)
    }

    /// A criterion's stop rule as the pane says it: κ and its interval's half-width over the
    /// labels so far, and about how many more reach the target.
    pub fn stop_rule_text(&self, criterion: &str) -> String {
        let Some(plan) = self.label_plan() else {
            return if self.planning {
                "agreement: working it out…".into()
            } else {
                "agreement: no run to compare with yet".into()
            };
        };
        let Some(c) = self.stop_rule(criterion) else {
            return "agreement: not graded in any run".into();
        };
        let target = plan.target_half_width;
        match (c.kappa, c.half_width, c.more_needed) {
            (Some(k), Some(w), Some(0)) => {
                format!(
                    "κ {k:.2} ±{w:.2} over {} labels · ±{target} reached",
                    c.labelled
                )
            }
            // Every label agrees so far: the resamples cannot vary, the interval says nothing yet.
            (Some(k), Some(w), Some(m)) if w < 1e-9 => format!(
                "κ {k:.2} over {} labels, none disagreeing yet · about {m} more to ±{target}",
                c.labelled
            ),
            (Some(k), Some(w), Some(m)) => format!(
                "κ {k:.2} ±{w:.2} over {} labels · about {m} more to ±{target}",
                c.labelled
            ),
            (Some(k), _, _) => format!("κ {k:.2} over {} labels · no interval yet", c.labelled),
            _ => format!(
                "κ not yet defined over {} labels (both verdicts needed)",
                c.labelled
            ),
        }
    }
}
