//! Adjudication in the Label pane: labelling as `adjudicated` (its own journal) with every
//! annotator's label shown, to settle where they differ; `A` toggles it.

use super::app::{App, Effect};
use crate::store::labels::ADJUDICATED;

impl App {
    /// Labels go to the adjudicated journal, each annotator's shown beside them.
    pub fn adjudicating(&self) -> bool {
        self.shared.annotator == ADJUDICATED
    }

    /// Into adjudication (labelling as `adjudicated`), or back to who was labelling before.
    pub(super) fn toggle_adjudication(&mut self) -> Vec<Effect> {
        let next = if self.adjudicating() {
            let back = self.label.adjudicating_from.take().or_else(|| {
                self.shared.annotators
                    .iter()
                    .find(|a| a.as_str() != ADJUDICATED)
                    .cloned()
            });
            let Some(back) = back else {
                self.shared.message = Some("nobody else labels this dataset yet".into());
                return Vec::new();
            };
            self.shared.message = Some(format!("adjudication closed: labelling as {back}"));
            back
        } else {
            let people = self
                .shared.annotators
                .iter()
                .filter(|a| a.as_str() != ADJUDICATED && **a != self.shared.annotator)
                .count()
                + 1;
            self.label.adjudicating_from = Some(self.shared.annotator.clone());
            self.shared.message = Some(if people < 2 {
                "adjudicating, though only one annotator has labels: nothing differs yet (A: back)"
                    .into()
            } else {
                "adjudicating: each annotator's label is shown; yours settle them (o: disagreements first · A: back)"
                    .into()
            });
            ADJUDICATED.to_owned()
        };
        self.shared.annotator.clone_from(&next);
        self.label.refocus_on_open = true;
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.shared.browse.as_ref().map(|b| b.dataset),
        }]
    }

    /// Whether the annotators disagree on a cell (adjudication's queue).
    pub(super) fn peers_differ(&self, item: &str, criterion: &str) -> bool {
        let key = (item.to_owned(), criterion.to_owned());
        let mut said = self.shared.peers.values().filter_map(|l| l.get(&key));
        let Some(first) = said.next() else {
            return false;
        };
        said.any(|v| v != first)
    }
}
