//! Making and revising artifacts from the UI: a new artifact from the selected dataset item
//! (`A` in Datasets) or from a file (`n` in Review, a path prompt), its type (one of
//! `artifact_types:` in rubricate.yaml, `tab` cycles) and name asked on one line; `e` in
//! Review revises the selected draft or needs-revision artifact in `$EDITOR`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Effect};
use super::path_prompt::{PathPrompt, PathPurpose};
use crate::store::artifacts::Status;

/// The new-artifact line while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct NewArtifact {
    /// Where the content came from, as the line says it (`item q03 of support-answers`).
    pub from: String,
    pub content: serde_json::Value,
    /// Which of the workspace's artifact types (their order in `App::artifact_types`).
    pub kind: usize,
    pub name: String,
}

impl App {
    /// `A` in Datasets: the selected item's submission as a new artifact.
    pub(super) fn new_artifact_from_item(&mut self) -> Vec<Effect> {
        let Some(b) = &self.shared.browse else {
            self.shared.message = Some("open a dataset and select an item first".into());
            return Vec::new();
        };
        let Some(item) = b.current() else {
            return Vec::new();
        };
        let dataset = self
            .shared.datasets
            .get(b.dataset)
            .map_or_else(String::new, |d| d.name.clone());
        let from = format!("item {} of {dataset}", item.id);
        let (content, name) = (
            serde_json::Value::String(item.submission.clone()),
            item.id.clone(),
        );
        self.ask_new_artifact(from, content, name)
    }

    /// `n` in Review: a file's content as a new artifact (its path asked first).
    pub(super) fn new_artifact_from_file(&mut self) -> Vec<Effect> {
        self.path_prompt = Some(PathPrompt {
            purpose: PathPurpose::Artifact,
            ..PathPrompt::default()
        });
        Vec::new()
    }

    /// Opens the type-and-name line for content from `from` (or says what is missing).
    pub(super) fn ask_new_artifact(
        &mut self,
        from: String,
        content: serde_json::Value,
        name: String,
    ) -> Vec<Effect> {
        if self.shared.artifact_types.is_empty() {
            self.shared.message = Some(
                "no artifact types: add `artifact_types:` to rubricate.yaml (a type and the rubrics its review evaluates)"
                    .into(),
            );
            return Vec::new();
        }
        self.review.new = Some(NewArtifact {
            from,
            content,
            kind: 0,
            name,
        });
        Vec::new()
    }

    /// Keys of the new-artifact line: `tab` the next type, text the name, `enter` creates.
    pub(super) fn new_artifact_key(&mut self, k: &KeyEvent) -> Option<Vec<Effect>> {
        let n = self.shared.artifact_types.len().max(1);
        let new = self.review.new.as_mut()?;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Esc => {
                self.review.new = None;
                self.shared.message = Some("no artifact made".into());
            }
            KeyCode::Tab => new.kind = (new.kind + 1) % n,
            KeyCode::BackTab => new.kind = (new.kind + n - 1) % n,
            KeyCode::Backspace => {
                new.name.pop();
            }
            KeyCode::Char('u') if ctrl => new.name.clear(),
            KeyCode::Char(c) if !ctrl => new.name.push(c),
            KeyCode::Enter => {
                let name = new.name.trim().to_owned();
                if name.is_empty() {
                    self.shared.message = Some("type a name for the artifact".into());
                    return Some(Vec::new());
                }
                let new = self.review.new.take()?;
                let (kind, rubrics) = self.shared.artifact_types.get(new.kind)?.clone();
                self.shared.message = Some(format!("making the {kind} artifact '{name}'…"));
                return Some(vec![Effect::CreateArtifact {
                    kind,
                    name,
                    content: new.content,
                    rubrics,
                }]);
            }
            _ => {}
        }
        Some(Vec::new())
    }

    /// `e` in Review: the selected artifact's content in `$EDITOR`, saved as its revision.
    pub(super) fn revise_artifact(&mut self) -> Vec<Effect> {
        let Some(a) = self.selected_artifact() else {
            return Vec::new();
        };
        if !matches!(a.status, Status::Draft | Status::NeedsRevision) {
            let why = format!(
                "{} is {}; only a draft or one needing revision is revised",
                a.id,
                a.status.as_str()
            );
            return self.refuse(why);
        }
        let id = a.id.clone();
        let question = format!("open '{}' in $EDITOR to revise it?", a.name);
        if !self.confirmed(super::keymap::Action::ReviseArtifact, question) {
            return Vec::new();
        }
        vec![Effect::EditArtifact { id }]
    }
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl App {
    /// A file's content read for a new artifact: its name offered from the file's.
    pub(super) fn artifact_content(
        &mut self,
        from: String,
        content: serde_json::Value,
    ) -> Vec<Effect> {
        let name = from
            .rsplit('/')
            .next()
            .and_then(|f| f.split('.').next())
            .unwrap_or_default()
            .to_owned();
        self.ask_new_artifact(from, content, name)
    }
}
