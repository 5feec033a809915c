//! The Grade pane's actions that spend money from one letter — `c` continue, `u` re-grade
//! what changed, `r`/`A` retry — are refused in a box that takes every key, or asked about
//! first (`ask.rs`): a stray burst of letters never starts judge calls.

use super::GradePane;
use crate::tui::keymap::Action;
use crate::tui::pane::{Outcome, confirm, refuse};
use crate::tui::shared::Shared;

impl GradePane {
    /// The dataset's latest run when it is unfinished and graded live (a batch run's `c`
    /// only asks the provider about it, which costs nothing).
    pub fn unfinished_live_run(&self, sh: &Shared) -> Option<String> {
        sh.browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .filter(|r| r.manifest.finished_at.is_none())
            .map(|r| r.manifest.id.clone())
            .filter(|_| self.unfinished_batch_run(sh).is_none())
    }

    /// `Some`: what the action comes to now — refused, or asked about (it runs once `y`
    /// answers); `None`: it goes ahead.
    pub fn grade_guard(&self, sh: &Shared, action: Action) -> Option<Outcome> {
        let limit = self
            .max_cost
            .map_or_else(|| "no cost limit".into(), |c| format!("cost limit ${c:.2}"));
        let question = match (&self.run, action) {
            (None, Action::Continue) if self.unfinished_batch_run(sh).is_none() => {
                let Some(id) = self.unfinished_live_run(sh) else {
                    return Some(refuse(
                        "the latest run of this dataset is finished: nothing to continue".into(),
                    ));
                };
                format!("continue run {id}, sending its missing judge calls ({limit})?")
            }
            (None, Action::RegradeChanged) if self.estimating.is_none() => {
                format!("re-grade the criteria changed since the last run ({limit})?")
            }
            (Some(run), Action::Retry) if run.finished || run.cancelled => {
                if run.selected_failed().is_none() {
                    return Some(refuse("the selected cell did not fail".into()));
                }
                format!("retry the selected failed cell with a new judge call ({limit})?")
            }
            (Some(run), Action::RetryAll) if run.finished || run.cancelled => {
                let n = run.failed_cells().len();
                if n == 0 {
                    return Some(refuse("no failed cells".into()));
                }
                format!("retry the {n} failed cell(s) with new judge calls ({limit})?")
            }
            _ => return None,
        };
        confirm(sh, action, question)
    }
}
