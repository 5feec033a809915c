//! Making and revising artifacts from the Review pane: `n` a new one from a file (its path
//! asked first, then its type and name on the new-artifact line, `modal::NewArtifact`);
//! `e` revises the selected draft or needs-revision artifact in `$EDITOR`.

use super::ReviewPane;
use crate::store::artifacts::Status;
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::modal::{Modal, PathPrompt, PathPurpose};
use crate::tui::pane::{Outcome, confirm, refuse};
use crate::tui::shared::Shared;

impl ReviewPane {
    /// `n` in Review: a file's content as a new artifact (its path asked first).
    pub fn new_artifact_from_file() -> Outcome {
        Outcome::Modal(Modal::Path(PathPrompt {
            purpose: PathPurpose::Artifact,
            ..PathPrompt::default()
        }))
    }

    /// `e` in Review: the selected artifact's content in `$EDITOR`, saved as its revision.
    pub fn revise_artifact(&mut self, sh: &Shared) -> Outcome {
        let Some(a) = self.selected_artifact() else {
            return Outcome::none();
        };
        if !matches!(a.status, Status::Draft | Status::NeedsRevision) {
            let why = format!(
                "{} is {}; only a draft or one needing revision is revised",
                a.id,
                a.status.as_str()
            );
            return refuse(why);
        }
        let id = a.id.clone();
        let question = format!("open '{}' in $EDITOR to revise it?", a.name);
        if let Some(ask) = confirm(sh, Action::ReviseArtifact, question) {
            return ask;
        }
        Outcome::from(vec![Effect::EditArtifact { id }])
    }
}
