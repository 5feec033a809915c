//! The runtime's reading of saved runs for the panes: the run before the latest (to compare
//! with), the details of the items on screen, a run joined with the labels, the items a
//! Results filter keeps, two runs compared; and a run exported. Each streams the run's
//! journal (`run_scan`, `reads`, `export`); nothing here holds a run whole.

use crate::tui::msg::FailureKind;
use std::sync::Arc;

use super::reads;
use super::{Runtime, Topic, export, failed, misrouted};
use crate::tui::effect::Effect;
use crate::tui::msg::Msg;
use crate::tui::run_scan;

/// Why a saved-run effect failed, worded once for the UI (reads answer their own message
/// with the reader's error in it).
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("not exported: {0}")]
    Export(String),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        FailureKind::Other
    }
}

impl Runtime {
    /// Carries out a saved-run effect (`Topic::SavedRuns`).
    pub(super) fn handle_saved_runs(&self, effect: Effect) -> Option<Msg> {
        let runs_dir = self.ws.runs_dir();
        Some(match effect {
            Effect::LoadEarlierRun { dataset, back, b } => {
                let d = &self.dataset(dataset)?;
                Msg::EarlierRun {
                    back,
                    run: reads::earlier_run(&self.ws, &d.path, back).map(Arc::new),
                    b,
                }
            }
            Effect::LoadRunDetails { run_id, positions } => Msg::RunDetails {
                items: reads::run_details(&runs_dir, &run_id, &positions)
                    .map_err(|e| e.to_string()),
                run_id,
                positions,
            },
            Effect::JoinLabels {
                run_id,
                labels,
                labels_gen,
            } => Msg::LabelsJoined {
                join: run_scan::join_labels(&runs_dir, &run_id, &labels, labels_gen)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
                run_id,
                labels_gen,
            },
            Effect::FilterRunItems { tag, run_id, query } => Msg::RunItemsFiltered {
                tag,
                positions: run_scan::filter_items(&runs_dir, &run_id, &query)
                    .map_err(|e| e.to_string()),
            },
            Effect::CompareRuns { a, b } => Msg::Compared {
                result: run_scan::compare(&runs_dir, &a, &b)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
                a,
                b,
            },
            Effect::ExportRun {
                run_id,
                format,
                only,
            } => match export::export(&self.ws, &run_id, format, only.as_deref()) {
                Ok(said) => Msg::Info(said),
                Err(e) => failed(&Failure::Export(e)),
            },
            other => misrouted(Topic::SavedRuns, &other),
        })
    }
}
