//! The Results pane's Align view: the newest `rubricate align` report of the open dataset
//! (`l` in Results) or of a rubric (`l` in Rubrics) — each weak criterion's candidates
//! ranked on dev, the selected one's requirement against the original, the result on the
//! test items — and adopting its winner as the rubric's next version. The report is read
//! and adopted in the background (`Effect::ReadAlign`, `Effect::AdoptAlign`).

use std::sync::Arc;

use super::ResultsPane;
use crate::run::align_report::Found;
use crate::tui::effect::{AlignSource, Effect};
use crate::tui::keymap::Action;
use crate::tui::pane::{Outcome, confirm, refuse};
use crate::tui::shared::{PAGE, Shared};

/// The Align view while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignView {
    /// Whose report it shows.
    pub source: AlignSource,
    /// The report (or why there is none); `None` until it is read.
    pub found: Option<Result<Arc<Found>, String>>,
    /// The candidate selected (its place in the report's list).
    pub cursor: usize,
    /// An adoption asked for and not answered yet.
    pub adopting: bool,
}

impl AlignView {
    fn new(source: AlignSource) -> Self {
        Self {
            source,
            found: None,
            cursor: 0,
            adopting: false,
        }
    }

    fn candidates(&self) -> usize {
        match &self.found {
            Some(Ok(f)) => f.report.candidates.len(),
            _ => 0,
        }
    }
}

/// What the view says while it is open.
const HINT: &str = "align: ↑/↓ a candidate and its diff · A adopts the winner · l or esc closes";

impl ResultsPane {
    /// `l` in Results: opens the open dataset's newest align report (or closes the view).
    pub fn toggle_align(&mut self, sh: &mut Shared) -> Vec<Effect> {
        if self.align.take().is_some() {
            return Vec::new();
        }
        let Some(b) = &sh.browse else {
            sh.message = Some(
                "open a dataset first (D) to see its align report, or press l on a rubric in Rubrics (B)"
                    .into(),
            );
            return Vec::new();
        };
        self.show_align(sh, AlignSource::Dataset(b.dataset))
    }

    /// Opens the Align view on `source`'s newest report (read in the background).
    pub fn show_align(&mut self, sh: &mut Shared, source: AlignSource) -> Vec<Effect> {
        self.start_again_if_reopened(sh);
        self.align = Some(AlignView::new(source.clone()));
        sh.message = Some(HINT.into());
        vec![Effect::ReadAlign(source)]
    }

    /// The report arrived (dropped when the view was closed or moved to another since).
    pub fn align_read(
        &mut self,
        source: &AlignSource,
        found: Result<Arc<Found>, String>,
    ) -> Vec<Effect> {
        if let Some(view) = self.align.as_mut().filter(|v| v.source == *source) {
            view.found = Some(found);
            view.cursor = view.cursor.min(view.candidates().saturating_sub(1));
        }
        Vec::new()
    }

    /// An adoption was answered: said, and the report read again (it now names the version).
    pub fn align_adopted(
        &mut self,
        sh: &mut Shared,
        adopted: Result<String, String>,
    ) -> Vec<Effect> {
        sh.message = Some(match adopted {
            Ok(v) => format!("adopted: the winner is {v} (its note holds the test figures)"),
            Err(e) => format!("nothing adopted: {e}"),
        });
        match self.align.as_mut() {
            Some(view) => {
                view.adopting = false;
                vec![Effect::ReadAlign(view.source.clone())]
            }
            None => Vec::new(),
        }
    }

    /// Keys while the Align view is open (`None`: not the view's; Results handles it).
    pub fn align_action(&mut self, sh: &mut Shared, action: Action) -> Option<Outcome> {
        let view = self.align.as_mut()?;
        let last = view.candidates().saturating_sub(1);
        match action {
            Action::Up => view.cursor = view.cursor.saturating_sub(1),
            Action::Down => view.cursor = (view.cursor + 1).min(last),
            Action::PageUp => view.cursor = view.cursor.saturating_sub(PAGE),
            Action::PageDown => view.cursor = (view.cursor + PAGE).min(last),
            Action::Top => view.cursor = 0,
            Action::Bottom => view.cursor = last,
            Action::Back | Action::Align => self.align = None,
            Action::Adopt => return Some(adopt(view, sh)),
            // Every other key of Results belongs to the views under it: not while this shows.
            _ => return Some(Outcome::Ignored),
        }
        Some(Outcome::none())
    }
}

/// `A`: the report's winner as the rubric's next minor version, after `y` at the question;
/// refused when there is no winner or it was adopted already.
fn adopt(view: &mut AlignView, sh: &mut Shared) -> Outcome {
    let found = match &view.found {
        Some(Ok(f)) => f,
        Some(Err(_)) => return refuse("there is no align report to adopt from".into()),
        None => {
            sh.message = Some("the report is still being read".into());
            return Outcome::none();
        }
    };
    let r = &found.report;
    if let Some(done) = &r.adopted {
        return refuse(format!(
            "this report's winner was adopted already, as {done}"
        ));
    }
    if r.winner.is_none() {
        return refuse(
            "this report has no winner: no candidate beat the original on dev, so there is nothing to adopt"
                .into(),
        );
    }
    if view.adopting {
        sh.message = Some("adopting…".into());
        return Outcome::none();
    }
    let question = format!(
        "adopt the winner as {}'s next minor version (after {})?",
        r.rubric, r.rubric_version
    );
    if let Some(ask) = confirm(sh, Action::Adopt, question) {
        return ask;
    }
    view.adopting = true;
    sh.message = Some(format!("adopting the winner into {}…", r.rubric));
    Outcome::from(vec![Effect::AdoptAlign {
        path: found.path.clone(),
    }])
}
