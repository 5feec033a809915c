//! The Review pane's part of `App::update`: keys, actions and the runtime's answers.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{ReviewPane, ordered};
use crate::store::artifacts::{Artifact, Status};
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::msg::Msg;
use crate::tui::pane::{Outcome, Pane, confirm, refuse};
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput, Typing};

impl Pane for ReviewPane {
    /// The note line of a review decision takes typed keys first.
    fn key(&mut self, k: &KeyEvent, _sh: &mut Shared) -> Option<Outcome> {
        let (to, note) = self.note.as_mut()?;
        match note.handle_key(k) {
            Edit::Cancel => self.note = None,
            Edit::Submit => {
                let (to, note) = (*to, note.text().to_owned());
                self.note = None;
                if let Some(a) = self.selected_artifact() {
                    return Some(Outcome::from(vec![Effect::DecideArtifact {
                        id: a.id.clone(),
                        to,
                        note,
                    }]));
                }
            }
            Edit::Changed | Edit::Moved | Edit::Ignored => {}
        }
        Some(Outcome::none())
    }

    fn paste(&mut self, text: &str, _sh: &mut Shared) -> Option<Outcome> {
        self.note.as_mut()?.1.paste(text);
        Some(Outcome::none())
    }

    fn field<'a>(&'a self, _sh: &'a Shared) -> Option<&'a LineInput> {
        self.note.as_ref().map(|(_, note)| note)
    }

    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        let n = self.artifacts.len();
        let page = sh.size.1.saturating_sub(6).max(1);
        match action {
            Action::Up => {
                self.selected = self.selected.saturating_sub(1);
                self.detail_scroll = 0;
            }
            Action::Down if n > 0 => {
                self.selected = (self.selected + 1).min(n - 1);
                self.detail_scroll = 0;
            }
            // The panel scrolls a page at a time, never past its last row.
            Action::PageDown => {
                let end = self
                    .selected_artifact()
                    .map_or(0, |a| super::view::detail_scroll_end(sh, a));
                self.detail_scroll = (self.detail_scroll + page).min(end);
            }
            Action::PageUp => {
                self.detail_scroll = self.detail_scroll.saturating_sub(page);
            }
            Action::Submit => return self.submit(sh),
            Action::NewArtifact => return Self::new_artifact_from_file(),
            Action::ReviseArtifact => return self.revise_artifact(sh),
            Action::Approve | Action::RequestRevision | Action::Reject => {
                let Some(a) = self.selected_artifact() else {
                    return Outcome::none();
                };
                if !matches!(a.status, Status::PendingReview | Status::InReview) {
                    // Said in a box that takes every key: the note typed next goes nowhere.
                    return refuse(format!(
                        "{} is {}; decide on an artifact in review",
                        a.id,
                        a.status.as_str()
                    ));
                }
                let to = match action {
                    Action::Approve => Status::Approved,
                    Action::RequestRevision => Status::NeedsRevision,
                    _ => Status::Rejected,
                };
                self.note = Some((to, LineInput::default()));
            }
            _ => return Outcome::Ignored,
        }
        Outcome::none()
    }

    fn on_msg(&mut self, msg: Msg, sh: &mut Shared) -> Outcome {
        match msg {
            Msg::Artifacts { artifacts, message } => {
                self.artifacts_read(sh, artifacts, message).into()
            }
            _ => Outcome::Ignored,
        }
    }

    fn hints(&self, _sh: &Shared) -> &'static [Action] {
        &[
            Action::NewArtifact,
            Action::ReviseArtifact,
            Action::Submit,
            Action::Approve,
            Action::RequestRevision,
            Action::Reject,
            Action::PageDown,
        ]
    }

    fn typing<'a>(&'a self, _sh: &'a Shared) -> Option<Typing<'a>> {
        let (to, note) = self.note.as_ref()?;
        Some(Typing::new(
            format!("note for {}: ", to.as_str()),
            note,
            " (enter decides, esc drops)",
        ))
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        super::view::draw(self, sh, f, area);
    }
}

impl ReviewPane {
    /// `s`: the selected artifact submitted for review, once confirmed.
    fn submit(&mut self, sh: &mut Shared) -> Outcome {
        let Some(a) = self.selected_artifact() else {
            return Outcome::none();
        };
        if !matches!(
            a.status,
            Status::Draft | Status::NeedsRevision | Status::InReview
        ) {
            return refuse(format!(
                "{} is {}; only a draft or one needing revision is submitted",
                a.id,
                a.status.as_str()
            ));
        }
        // Asked for changes: only new content answers it (the store's rule).
        if let Err(e) = a.check_submit() {
            return refuse(e.to_string());
        }
        let id = a.id.clone();
        let question = format!(
            "submit '{}' for review? its rubrics are evaluated (judge calls may cost money)",
            a.name
        );
        if let Some(ask) = confirm(sh, Action::Submit, question) {
            return ask;
        }
        self.busy = Some(id.clone());
        sh.message = Some(format!(
            "evaluating {id} against its rubrics (watch it live in the Grade pane: G)…"
        ));
        let tag = sh.new_tag();
        Outcome::from(vec![Effect::SubmitArtifact { id, tag }])
    }

    /// The workspace's artifacts, read again (after a load, a review or a decision).
    pub fn artifacts_read(
        &mut self,
        sh: &mut Shared,
        artifacts: Vec<Artifact>,
        message: Option<String>,
    ) -> Vec<Effect> {
        // The selection follows its artifact when the order changes.
        let keep = self.selected_artifact().map(|a| a.id.clone());
        self.artifacts = artifacts;
        self.loaded = true;
        self.busy = None;
        let ordered = ordered(&self.artifacts);
        let n = ordered.len();
        self.selected = keep
            .and_then(|id| ordered.iter().position(|a| a.id == id))
            .unwrap_or(self.selected)
            .min(n.saturating_sub(1));
        if message.is_some() {
            sh.message = message;
        }
        Vec::new()
    }
}
