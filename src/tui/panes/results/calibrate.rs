//! The Results pane's Calibrate view: every run of one rubric over the open dataset ranked
//! by its agreement with the annotator's labels (`rubricate calibrate`'s table, through
//! `run::calibration`), a candidate's agreement per criterion, and adopting its judge.
//! Worked out in the background, again when the labels change while it is shown.

use std::sync::Arc;

use super::ResultsPane;
use crate::run::calibration::Calibration;
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::shared::Shared;

/// The Calibrate view while it is open.
#[derive(Debug, Clone, Default)]
pub struct CalibrateView {
    /// The ranking (or why there is none); `None` until the first one arrives.
    pub ranked: Option<Result<Arc<Calibration>, String>>,
    /// The labels' generation the ranking counts, and whether one is being worked out.
    pub labels_gen: Option<u64>,
    pub working: bool,
    /// The candidate selected.
    pub cursor: usize,
}

impl ResultsPane {
    /// `K` in Results: opens (or closes) the Calibrate view.
    pub fn toggle_calibrate(&mut self, sh: &mut Shared) -> Vec<Effect> {
        if self.calibrate.take().is_some() {
            return Vec::new();
        }
        self.calibrate = Some(CalibrateView::default());
        sh.message = Some(
            "calibrate: every run of this dataset against your labels · ↑/↓ a candidate · A adopt its judge · K or esc closes"
                .into(),
        );
        self.want_calibration(sh)
    }

    /// Ranks again while the view is open and the labels changed since (one at a time).
    pub fn want_calibration(&mut self, sh: &mut Shared) -> Vec<Effect> {
        let Some(view) = &mut self.calibrate else {
            return Vec::new();
        };
        let Some(b) = &sh.browse else {
            return Vec::new();
        };
        if view.working || view.labels_gen == Some(sh.labels_gen) {
            return Vec::new();
        }
        view.working = true;
        vec![Effect::Calibrate {
            dataset: b.dataset,
            annotator: sh.annotator.clone(),
            labels_gen: sh.labels_gen,
        }]
    }

    pub fn calibrated(
        &mut self,
        labels_gen: u64,
        ranked: Result<Arc<Calibration>, String>,
    ) -> Vec<Effect> {
        if let Some(view) = &mut self.calibrate {
            view.working = false;
            view.labels_gen = Some(labels_gen);
            let n = ranked.as_ref().map_or(0, |c| c.candidates.len());
            view.cursor = view.cursor.min(n.saturating_sub(1));
            view.ranked = Some(ranked);
        }
        Vec::new()
    }

    /// Keys while the Calibrate view is open (`None`: not the view's; Results handles it).
    pub fn calibrate_action(&mut self, sh: &mut Shared, action: Action) -> Option<Vec<Effect>> {
        let view = self.calibrate.as_mut()?;
        let n = match &view.ranked {
            Some(Ok(c)) => c.candidates.len(),
            _ => 0,
        };
        match action {
            Action::Up => view.cursor = view.cursor.saturating_sub(1),
            Action::Down => view.cursor = (view.cursor + 1).min(n.saturating_sub(1)),
            Action::Back | Action::Calibrate => self.calibrate = None,
            Action::Adopt => {
                let Some(Ok(cal)) = &view.ranked else {
                    sh.message = Some("nothing ranked yet".into());
                    return Some(Vec::new());
                };
                let Some(c) = cal.candidates.get(view.cursor) else {
                    return Some(Vec::new());
                };
                let run_id = c.agreement.manifest.id.clone();
                sh.message = Some(format!("adopting the judge of {}…", c.label));
                let dataset = sh.browse.as_ref()?.dataset;
                return Some(vec![Effect::Adopt {
                    dataset,
                    annotator: sh.annotator.clone(),
                    run_id,
                }]);
            }
            _ => return None,
        }
        Some(Vec::new())
    }
}
