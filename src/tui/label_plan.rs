//! The Label pane's "labels next" plan: `rubricate labels next`'s order and stop rule (and
//! people against people), worked out in the background while Label or Results is shown,
//! again whenever the labels change, one computation at a time; and the queue that walks it.

use super::app::{App, Effect, Pane};
use crate::run::label_next::{CriterionProgress, LabelPlan};

/// A "labels next" plan and what it was worked out for.
#[derive(Debug, Clone)]
pub struct PlanShown {
    pub dataset: usize,
    pub annotator: String,
    /// The labels' generation it counts (older than the app's: a newer one is due).
    pub labels_gen: u64,
    pub plan: Result<std::sync::Arc<LabelPlan>, String>,
    /// People against people (with two annotators or more).
    pub people: Option<std::sync::Arc<crate::run::people::PeopleReport>>,
}

impl App {
    /// Asks for the "labels next" plan again while Label or Results is shown and the one
    /// held is for other labels, another dataset or annotator (one at a time).
    pub(super) fn want_label_plan(&mut self) -> Vec<Effect> {
        // After the runs' joins with the labels: two passes at once would hold both.
        if self.label.planning
            || self.results.stats.joining()
            || !matches!(self.pane, Pane::Label | Pane::Results)
        {
            return Vec::new();
        }
        let Some(b) = self.shared.browse.as_ref().filter(|b| b.run.is_some()) else {
            return Vec::new();
        };
        let current = self.label.plan.as_ref().is_some_and(|p| {
            p.dataset == b.dataset
                && p.annotator == self.shared.annotator
                && p.labels_gen == self.shared.labels_gen
        });
        if current {
            return Vec::new();
        }
        self.label.planning = true;
        vec![Effect::PlanLabels {
            dataset: b.dataset,
            annotator: self.shared.annotator.clone(),
            labels_gen: self.shared.labels_gen,
        }]
    }

    /// The plan for the open dataset and the annotator (perhaps a few labels behind).
    pub fn label_plan(&self) -> Option<&LabelPlan> {
        let b = self.shared.browse.as_ref()?;
        let shown = self.label.plan.as_ref()?;
        (shown.dataset == b.dataset && shown.annotator == self.shared.annotator)
            .then_some(shown.plan.as_ref().ok()?.as_ref())
    }

    /// People against people for the open dataset, when two annotators have labels.
    pub fn people(&self) -> Option<&crate::run::people::PeopleReport> {
        let b = self.shared.browse.as_ref()?;
        let shown = self.label.plan.as_ref()?;
        (shown.dataset == b.dataset).then_some(shown.people.as_deref()?)
    }

    /// A criterion's stop rule in the plan.
    pub fn stop_rule(&self, criterion: &str) -> Option<&CriterionProgress> {
        self.label_plan()?
            .criteria
            .iter()
            .find(|c| c.criterion == criterion)
    }

    /// The next item of the "labels next" plan that still has a criterion without a label
    /// (and is shown: a search or filter may hide it), other than the current one.
    pub(super) fn planned_row(&self) -> Option<usize> {
        let b = self.shared.browse.as_ref()?;
        let plan = self.label_plan()?;
        let current = b.position(b.cursor);
        plan.next.iter().find_map(|n| {
            let rubric = self.item_rubric(Some(n.position));
            let criteria = rubric.as_ref().map_or(&[][..], |r| &r.criteria[..]);
            if Some(n.position) == current || criteria.iter().all(|c| self.answered(&n.item, &c.id))
            {
                return None;
            }
            match &b.rows {
                Some(rows) => rows.iter().position(|p| *p == n.position),
                None => b.total.filter(|t| n.position < *t).map(|_| n.position),
            }
        })
    }
}
