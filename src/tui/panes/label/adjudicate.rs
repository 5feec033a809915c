//! Adjudication in the Label pane: labelling as `adjudicated` (its own journal) with every
//! annotator's label shown, to settle where they differ; `A` toggles it.

use super::LabelPane;
use crate::store::labels::ADJUDICATED;
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;

impl LabelPane {
    /// Into adjudication (labelling as `adjudicated`), or back to who was labelling before.
    pub fn toggle_adjudication(&mut self, sh: &mut Shared) -> Vec<Effect> {
        let next = if sh.adjudicating() {
            let back = self.adjudicating_from.take().or_else(|| {
                sh.annotators
                    .iter()
                    .find(|a| a.as_str() != ADJUDICATED)
                    .cloned()
            });
            let Some(back) = back else {
                sh.message = Some("nobody else labels this dataset yet".into());
                return Vec::new();
            };
            sh.message = Some(format!("adjudication closed: labelling as {back}"));
            back
        } else {
            let people = sh
                .annotators
                .iter()
                .filter(|a| a.as_str() != ADJUDICATED && **a != sh.annotator)
                .count()
                + 1;
            self.adjudicating_from = Some(sh.annotator.clone());
            sh.message = Some(if people < 2 {
                "adjudicating, though only one annotator has labels: nothing differs yet (A: back)"
                    .into()
            } else {
                "adjudicating: each annotator's label is shown; yours settle them (o: disagreements first · A: back)"
                    .into()
            });
            ADJUDICATED.to_owned()
        };
        sh.annotator.clone_from(&next);
        self.refocus_on_open = true;
        vec![Effect::SetAnnotator {
            name: next,
            dataset: sh.browse.as_ref().map(|b| b.dataset),
        }]
    }

    /// Whether the annotators disagree on a cell (adjudication's queue).
    pub fn peers_differ(&self, sh: &Shared, item: &str, criterion: &str) -> bool {
        let key = (item.to_owned(), criterion.to_owned());
        let mut said = sh.peers.values().filter_map(|l| l.get(&key));
        let Some(first) = said.next() else {
            return false;
        };
        said.any(|v| v != first)
    }
}
