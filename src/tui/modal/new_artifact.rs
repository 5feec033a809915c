//! The new-artifact line: a new artifact from the selected dataset item (`A` in Datasets)
//! or from a file (`n` in Review, after the path prompt), its type (one of
//! `artifact_types:` in rubricate.yaml, `tab` cycles) and name asked on one line.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Answer, Modal, Then};
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput, Typing};

/// The new-artifact line while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct NewArtifact {
    /// Where the content came from, as the line says it (`item q03 of support-answers`).
    pub from: String,
    pub content: serde_json::Value,
    /// Which of the workspace's artifact types (their order in `Shared::artifact_types`).
    pub kind: usize,
    pub name: LineInput,
}

impl NewArtifact {
    /// The line for content from `from` — or `None`, said why, when the workspace has no
    /// artifact types.
    pub fn open(
        sh: &mut Shared,
        from: String,
        content: serde_json::Value,
        name: &str,
    ) -> Option<Modal> {
        if sh.artifact_types.is_empty() {
            sh.message = Some(
                "no artifact types: add `artifact_types:` to rubricate.yaml (a type and the rubrics its review evaluates)"
                    .into(),
            );
            return None;
        }
        Some(Modal::NewArtifact(NewArtifact {
            from,
            content,
            kind: 0,
            name: LineInput::new(name),
        }))
    }

    /// Keys of the line: `tab` the next type, text the name, `enter` creates.
    pub(super) fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Answer {
        let n = sh.artifact_types.len().max(1);
        match k.code {
            KeyCode::Tab => self.kind = (self.kind + 1) % n,
            KeyCode::BackTab => self.kind = (self.kind + n - 1) % n,
            _ => match self.name.handle_key(k) {
                Edit::Cancel => {
                    sh.message = Some("no artifact made".into());
                    return Answer::Close(Then::Nothing);
                }
                Edit::Submit => {
                    let name = self.name.text().trim().to_owned();
                    if name.is_empty() {
                        sh.message = Some("type a name for the artifact".into());
                        return Answer::Stay(Vec::new());
                    }
                    let Some((kind, rubrics)) = sh.artifact_types.get(self.kind).cloned() else {
                        return Answer::Close(Then::Nothing);
                    };
                    sh.message = Some(format!("making the {kind} artifact '{name}'…"));
                    return Answer::Close(Then::Effects(vec![Effect::CreateArtifact {
                        kind,
                        name,
                        content: std::mem::take(&mut self.content),
                        rubrics,
                    }]));
                }
                Edit::Changed | Edit::Moved | Edit::Ignored => {}
            },
        }
        Answer::Stay(Vec::new())
    }

    /// The status line: what is typed first, so it shows on a narrow terminal.
    pub(super) fn typing<'a>(&'a self, sh: &'a Shared) -> Typing<'a> {
        let kind = sh
            .artifact_types
            .get(self.kind)
            .map_or("", |(k, _)| k.as_str());
        Typing::new(
            "new artifact name: ",
            &self.name,
            format!(
                " · type {kind} (tab) · enter makes it, esc drops · from {}",
                self.from
            ),
        )
    }
}
