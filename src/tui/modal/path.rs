//! The path prompt (`o` in Datasets, `n` in Review): a path typed, `tab` completing it
//! from its directory (as a shell does, in the runtime), `enter` reading the file.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Answer, Then};
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput};

/// What the typed path is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PathPurpose {
    /// A dataset file to register and open.
    #[default]
    Dataset,
    /// A file whose content becomes a new artifact.
    Artifact,
}

/// The prompt while it is open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPrompt {
    pub purpose: PathPurpose,
    pub text: LineInput,
    /// What the last `tab` found in the directory (shown under the prompt).
    pub candidates: Vec<String>,
}

/// Entries shown under the prompt at most.
pub const SHOWN: usize = 8;

impl PathPrompt {
    pub(super) fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Answer {
        if k.code == KeyCode::Tab {
            return Answer::Stay(vec![Effect::CompletePath(self.text.text().to_owned())]);
        }
        match self.text.handle_key(k) {
            Edit::Cancel => return Answer::Close(Then::Nothing),
            Edit::Submit => {
                let path = self.text.text().trim().to_owned();
                if path.is_empty() {
                    return Answer::Close(Then::Nothing);
                }
                sh.message = Some(format!("reading {path}…"));
                return Answer::Close(Then::Effects(vec![match self.purpose {
                    PathPurpose::Dataset => Effect::AddDataset(path),
                    PathPurpose::Artifact => Effect::ReadArtifactFile(path),
                }]));
            }
            // What `tab` found was for the text before.
            Edit::Changed => self.candidates.clear(),
            Edit::Moved | Edit::Ignored => {}
        }
        Answer::Stay(Vec::new())
    }

    /// A completion arrived: applied when the prompt still holds what was completed.
    pub fn completed(&mut self, typed: &str, text: &str, candidates: Vec<String>) {
        if self.text.text() == typed {
            self.text.set_text(text);
            self.candidates = candidates;
        }
    }
}
