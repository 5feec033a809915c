//! Batch runs in the Grade pane: `b` switches the next run between live calls and the
//! providers' batch engines; a batch run is watched (asked about now and then every
//! `judge.batch_poll` seconds) and its state shown in the set-up; `c` asks now.

use super::{BatchShown, GradePane};
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;

/// The last word on a watched batch run.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchStatus {
    pub run_id: String,
    pub shown: Result<BatchShown, String>,
}

impl GradePane {
    /// What a step of a watched batch run said.
    pub fn batch_stepped(
        &mut self,
        sh: &mut Shared,
        dataset: usize,
        run_id: String,
        result: Result<BatchShown, String>,
    ) -> Vec<Effect> {
        // A provider's error text is shown as text, never as terminal control.
        let result = result.map_err(|e| crate::core::text::visible(&e).into_owned());
        sh.message = Some(match &result {
            Ok(s) if s.finished => format!("run {run_id} is finished: its results are in Results"),
            Ok(s) if s.stuck => format!(
                "run {run_id}: no batch is in flight but cells are missing; `rubricate runs resume {run_id} --live` grades them live"
            ),
            Ok(s) => format!("run {run_id}: {}", s.line),
            Err(e) => format!("run {run_id}: {e} (c asks again)"),
        });
        self.batch_status = Some(BatchStatus {
            run_id,
            shown: result,
        });
        // The dataset's latest run is read again (its new cells, its state).
        if sh.browse.as_ref().is_some_and(|b| b.dataset == dataset) {
            vec![Effect::Open { dataset }]
        } else {
            Vec::new()
        }
    }

    /// The open dataset's latest run, when it is an unfinished batch run.
    pub fn unfinished_batch_run(&self, sh: &Shared) -> Option<String> {
        sh.browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .filter(|r| r.manifest.finished_at.is_none())
            .filter(|r| crate::run::RunSettings::of(&r.manifest).is_ok_and(|s| s.judge.batch))
            .map(|r| r.manifest.id.clone())
    }
}
