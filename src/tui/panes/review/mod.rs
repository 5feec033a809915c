//! The Review pane: the workspace's artifacts by status; submit one for review (its
//! required rubrics are evaluated in the background); approve, request a revision or reject
//! with a note; its history and reviews.

mod artifact_new;
mod update;
pub mod view;

use crate::store::artifacts::{Artifact, Status};
use crate::tui::widgets::LineInput;

#[derive(Debug, Clone, Default)]
pub struct ReviewPane {
    /// Every artifact, grouped by status in the view.
    pub artifacts: Vec<Artifact>,
    pub selected: usize,
    pub loaded: bool,
    /// A reviewer's decision whose note is being typed.
    pub note: Option<(Status, LineInput)>,
    /// An artifact is being evaluated.
    pub busy: Option<String>,
    /// Rows the selected artifact's panel is scrolled by (its history and reviews grow
    /// past the screen); back to the top when another artifact is selected.
    pub detail_scroll: u16,
}

/// Artifacts in the order the pane lists them: by status along the flow, then by id.
pub fn ordered(artifacts: &[Artifact]) -> Vec<&Artifact> {
    let rank = |s: Status| match s {
        Status::PendingReview => 0,
        Status::InReview => 1,
        Status::NeedsRevision => 2,
        Status::Draft => 3,
        Status::Approved => 4,
        Status::Rejected => 5,
    };
    let mut v: Vec<&Artifact> = artifacts.iter().collect();
    v.sort_by(|a, b| rank(a.status).cmp(&rank(b.status)).then(a.id.cmp(&b.id)));
    v
}

impl ReviewPane {
    pub fn selected_artifact(&self) -> Option<&Artifact> {
        ordered(&self.artifacts).get(self.selected).copied()
    }
}
