//! The runtime's work for the Align view: the newest `rubricate align` report of the open
//! dataset or of a rubric file read, and a report's winner adopted as the rubric's next
//! version (`run::align_report`), off the UI loop.

use std::sync::Arc;

use super::{Runtime, Topic, misrouted};
use crate::run::align_report::{self, Wanted};
use crate::tui::effect::{AlignSource, Effect};
use crate::tui::msg::Msg;

impl Runtime {
    /// Carries out an align effect (`Topic::Align`).
    pub(super) fn handle_align(&self, effect: Effect) -> Msg {
        match effect {
            Effect::ReadAlign(source) => {
                let found = self.newest_align(&source).map(Arc::new);
                Msg::AlignRead { source, found }
            }
            Effect::AdoptAlign { path } => {
                let adopted = align_report::adopt(&self.ws, &path);
                Msg::AlignAdopted { path, adopted }
            }
            other => misrouted(Topic::Align, &other),
        }
    }

    /// The newest report of the dataset at `source`, or of the rubric in its file.
    fn newest_align(&self, source: &AlignSource) -> Result<align_report::Found, String> {
        match source {
            AlignSource::Dataset(i) => {
                let d = self
                    .dataset(*i)
                    .ok_or("the dataset is no longer in the list")?;
                align_report::newest(&self.ws, Wanted::Dataset(&d.key))
            }
            AlignSource::Rubric(path) => {
                let loaded =
                    crate::formats::load_rubric(&path.display().to_string()).map_err(|e| {
                        format!(
                            "{} does not load, so its align reports cannot be found: {e}",
                            path.display()
                        )
                    })?;
                align_report::newest(&self.ws, Wanted::Rubric(&loaded.rubric.id))
            }
        }
    }
}
