//! The path prompt (`o` in Datasets, `n` in Review): a path typed, `tab` completing it
//! from its directory (as a shell does, in the runtime), `enter` reading the file.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Answer, Then};
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;

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
    pub text: String,
    /// What the last `tab` found in the directory (shown under the prompt).
    pub candidates: Vec<String>,
}

/// Entries shown under the prompt at most.
pub const SHOWN: usize = 8;

impl PathPrompt {
    pub(super) fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Answer {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Esc => return Answer::Close(Then::Nothing),
            KeyCode::Tab => return Answer::Stay(vec![Effect::CompletePath(self.text.clone())]),
            KeyCode::Enter => {
                let path = self.text.trim().to_owned();
                if path.is_empty() {
                    return Answer::Close(Then::Nothing);
                }
                sh.message = Some(format!("reading {path}…"));
                return Answer::Close(Then::Effects(vec![match self.purpose {
                    PathPurpose::Dataset => Effect::AddDataset(path),
                    PathPurpose::Artifact => Effect::ReadArtifactFile(path),
                }]));
            }
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                self.candidates.clear();
            }
            KeyCode::Backspace => {
                self.text.pop();
                self.candidates.clear();
            }
            KeyCode::Char(c) if !ctrl => {
                self.text.push(c);
                self.candidates.clear();
            }
            _ => {}
        }
        Answer::Stay(Vec::new())
    }

    /// A completion arrived: applied when the prompt still holds what was completed.
    pub fn completed(&mut self, typed: &str, text: String, candidates: Vec<String>) {
        if self.text == typed {
            self.text = text;
            self.candidates = candidates;
        }
    }
}
