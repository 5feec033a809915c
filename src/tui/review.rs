//! The Review pane's state and its part of `App::update`: the workspace's artifacts by
//! status; submit one for review (its required rubrics are evaluated in the background);
//! approve, request a revision or reject with a note; its history and reviews.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::keymap::Action;
use crate::store::artifacts::{Artifact, Status};

#[derive(Debug, Clone, Default)]
pub struct ReviewState {
    /// Every artifact, grouped by status in the view.
    pub artifacts: Vec<Artifact>,
    pub selected: usize,
    pub loaded: bool,
    /// A reviewer's decision whose note is being typed.
    pub note: Option<(Status, String)>,
    /// An artifact is being evaluated.
    pub busy: Option<String>,
    /// A new artifact's type and name being chosen.
    pub new: Option<super::artifact_new::NewArtifact>,
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

impl App {
    pub fn selected_artifact(&self) -> Option<&Artifact> {
        ordered(&self.review.artifacts)
            .get(self.review.selected)
            .copied()
    }

    /// The note line of a review decision takes typed keys first.
    pub(super) fn review_key(&mut self, k: &KeyEvent) -> Option<Vec<Effect>> {
        if self.review.new.is_some() {
            return self.new_artifact_key(k);
        }
        let (to, note) = self.review.note.as_mut()?;
        match k.code {
            KeyCode::Esc => self.review.note = None,
            KeyCode::Backspace => {
                note.pop();
            }
            KeyCode::Char(c) => note.push(c),
            KeyCode::Enter => {
                let (to, note) = (*to, note.clone());
                self.review.note = None;
                if let Some(a) = self.selected_artifact() {
                    return Some(vec![Effect::DecideArtifact {
                        id: a.id.clone(),
                        to,
                        note,
                    }]);
                }
            }
            _ => {}
        }
        Some(Vec::new())
    }

    pub(super) fn review_action(&mut self, action: Action) -> Vec<Effect> {
        let n = self.review.artifacts.len();
        let page = self.shared.size.1.saturating_sub(6).max(1);
        match action {
            Action::Up => {
                self.review.selected = self.review.selected.saturating_sub(1);
                self.review.detail_scroll = 0;
            }
            Action::Down if n > 0 => {
                self.review.selected = (self.review.selected + 1).min(n - 1);
                self.review.detail_scroll = 0;
            }
            // The panel scrolls a page at a time, never past its last row.
            Action::PageDown => {
                let end = self
                    .selected_artifact()
                    .map_or(0, |a| super::view::review::detail_scroll_end(self, a));
                self.review.detail_scroll = (self.review.detail_scroll + page).min(end);
            }
            Action::PageUp => {
                self.review.detail_scroll = self.review.detail_scroll.saturating_sub(page);
            }
            Action::Submit => {
                let Some(a) = self.selected_artifact() else {
                    return Vec::new();
                };
                if !matches!(
                    a.status,
                    Status::Draft | Status::NeedsRevision | Status::InReview
                ) {
                    let why = format!(
                        "{} is {}; only a draft or one needing revision is submitted",
                        a.id,
                        a.status.as_str()
                    );
                    return self.refuse(why);
                }
                // Asked for changes: only new content answers it (the store's rule).
                if let Err(e) = a.check_submit() {
                    return self.refuse(e.to_string());
                }
                let id = a.id.clone();
                let question = format!(
                    "submit '{}' for review? its rubrics are evaluated (judge calls may cost money)",
                    a.name
                );
                if !self.confirmed(action, question) {
                    return Vec::new();
                }
                self.review.busy = Some(id.clone());
                self.shared.message = Some(format!(
                    "evaluating {id} against its rubrics (watch it live in the Grade pane: G)…"
                ));
                let tag = self.new_tag();
                return vec![Effect::SubmitArtifact { id, tag }];
            }
            Action::NewArtifact => return self.new_artifact_from_file(),
            Action::ReviseArtifact => return self.revise_artifact(),
            Action::Approve | Action::RequestRevision | Action::Reject => {
                let Some(a) = self.selected_artifact() else {
                    return Vec::new();
                };
                if !matches!(a.status, Status::PendingReview | Status::InReview) {
                    // Said in a box that takes every key: the note typed next goes nowhere.
                    let why = format!(
                        "{} is {}; decide on an artifact in review",
                        a.id,
                        a.status.as_str()
                    );
                    return self.refuse(why);
                }
                let to = match action {
                    Action::Approve => Status::Approved,
                    Action::RequestRevision => Status::NeedsRevision,
                    _ => Status::Rejected,
                };
                self.review.note = Some((to, String::new()));
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl App {
    /// The workspace's artifacts, read again (after a load, a review or a decision).
    pub(super) fn artifacts_read(
        &mut self,
        artifacts: Vec<Artifact>,
        message: Option<String>,
    ) -> Vec<Effect> {
        // The selection follows its artifact when the order changes.
        let keep = self.selected_artifact().map(|a| a.id.clone());
        self.review.artifacts = artifacts;
        self.review.loaded = true;
        self.review.busy = None;
        let ordered = super::review::ordered(&self.review.artifacts);
        let n = ordered.len();
        self.review.selected = keep
            .and_then(|id| ordered.iter().position(|a| a.id == id))
            .unwrap_or(self.review.selected)
            .min(n.saturating_sub(1));
        if message.is_some() {
            self.shared.message = message;
        }
        Vec::new()
    }
}
