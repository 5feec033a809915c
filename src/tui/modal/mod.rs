//! What sits on top of the panes and takes every key first: questions and refusals, the
//! command palette, the path prompt, the annotator's name, a label's note, the export
//! question and the help. They are one enum on one stack (`App::modals`): the top one gets
//! the key, and what it answers (`Answer`) the app carries out, so keys typed after a
//! refused action never land anywhere else.
//!
//! The rule for questions: an action that spends (continue a run, retry cells, re-grade
//! what changed), submits (an artifact for review) or hands the terminal to `$EDITOR` runs
//! only after `y` pressed at its question; any other key drops it and does nothing else. A
//! refusal stays on screen and swallows every key until esc or enter closes it (a note typed
//! after a refused `x` goes nowhere).

mod new_artifact;
mod palette;
mod path;
pub mod view;

use crossterm::event::{KeyCode, KeyEvent};

pub use new_artifact::NewArtifact;
pub use palette::{Entry, Palette, entries, matches};
pub use path::{PathPrompt, PathPurpose, SHOWN};

use super::effect::Effect;
use super::export::ExportFormat;
use super::keymap::{Action, Key};
use super::nav::{Nav, PaneId};
use super::shared::Shared;
use super::widgets::{Edit, LineInput, Typing};

/// One thing on the modal stack.
#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    /// An action was refused, and why.
    Refused(String),
    /// `y` runs the action (in the pane it was asked in); any other key drops it.
    Confirm {
        question: String,
        action: Action,
    },
    Palette(Palette),
    Path(PathPrompt),
    /// The annotator's name being typed (asked once, when nothing configured it), the name
    /// offered (the login name) in it: enter keeps it, the first key typed replaces it (a
    /// person types their name, not a suffix to someone else's).
    Annotator(LineInput),
    /// A note being typed for the current label.
    Note(LineInput),
    /// Which format to export the run shown in: the run, and the dataset positions of the
    /// items listed when the list is filtered.
    Export {
        run_id: String,
        only: Option<Vec<usize>>,
    },
    /// A new artifact's type and name being chosen.
    NewArtifact(NewArtifact),
    /// The keys, scrolled this far.
    Help {
        scroll: usize,
    },
}

/// What the app does after a key at the top modal.
#[derive(Debug)]
pub enum Answer {
    /// The modal stays (changed or not), and the runtime gets these.
    Stay(Vec<Effect>),
    /// The modal closes, and then this happens.
    Close(Then),
}

/// What a closed modal leaves to do.
#[derive(Debug)]
pub enum Then {
    Nothing,
    Effects(Vec<Effect>),
    /// Run an action as its key would (switched to `pane` first; `confirmed`: the question
    /// it asked was answered yes).
    Act {
        action: Action,
        pane: Option<PaneId>,
        confirmed: bool,
    },
    Nav(Nav),
    /// The note typed for the current label.
    Note(String),
    /// The annotator's name, checked.
    Annotator(String),
}

impl Modal {
    /// A key while this modal is on top.
    pub fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Answer {
        match self {
            Modal::Refused(_) => {
                if matches!(k.code, KeyCode::Esc | KeyCode::Enter) {
                    Answer::Close(Then::Nothing)
                } else {
                    Answer::Stay(Vec::new())
                }
            }
            Modal::Confirm { action, .. } => {
                if k.code == KeyCode::Char('y') {
                    Answer::Close(Then::Act {
                        action: *action,
                        pane: None,
                        confirmed: true,
                    })
                } else {
                    sh.message = Some("not done (only y goes ahead)".into());
                    Answer::Close(Then::Nothing)
                }
            }
            Modal::Palette(p) => p.key(k, &sh.keymap),
            Modal::NewArtifact(n) => n.key(k, sh),
            Modal::Path(p) => p.key(k, sh),
            Modal::Annotator(name) => match name.handle_key(k) {
                // Not now: back to the list (the pane asks again next time).
                Edit::Cancel => Answer::Close(Then::Nav(Nav::To(PaneId::Datasets))),
                Edit::Submit => {
                    let name = name.text().trim().to_owned();
                    if let Err(e) = crate::store::labels::check_name("annotator", &name) {
                        sh.message = Some(e.to_string());
                        return Answer::Stay(Vec::new());
                    }
                    Answer::Close(Then::Annotator(name))
                }
                _ => Answer::Stay(Vec::new()),
            },
            Modal::Note(note) => match note.handle_key(k) {
                Edit::Cancel => Answer::Close(Then::Nothing),
                Edit::Submit => Answer::Close(Then::Note(std::mem::take(note).into_text())),
                _ => Answer::Stay(Vec::new()),
            },
            Modal::Export { run_id, only } => {
                let format = match k.code {
                    KeyCode::Char('c') => ExportFormat::Csv,
                    KeyCode::Char('j') => ExportFormat::Jsonl,
                    KeyCode::Char('m') => ExportFormat::Markdown,
                    KeyCode::Char('h') => ExportFormat::Html,
                    _ => {
                        sh.message = Some("not exported".into());
                        return Answer::Close(Then::Nothing);
                    }
                };
                sh.message = Some("exporting…".into());
                Answer::Close(Then::Effects(vec![Effect::ExportRun {
                    run_id: std::mem::take(run_id),
                    format,
                    only: only.take(),
                }]))
            }
            Modal::Help { scroll } => {
                // The help scrolls with the arrows and pages; any other key closes it (quit
                // still quits).
                match k.code {
                    KeyCode::Down | KeyCode::Char('j') => *scroll += 1,
                    KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => *scroll += 10,
                    KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                    _ => {
                        let quit = sh
                            .keymap
                            .action(super::keymap::Context::Global, Key::from_event(k))
                            == Some(Action::Quit);
                        return Answer::Close(if quit {
                            Then::Act {
                                action: Action::Quit,
                                pane: None,
                                confirmed: false,
                            }
                        } else {
                            Then::Nothing
                        });
                    }
                }
                Answer::Stay(Vec::new())
            }
        }
    }

    /// Text pasted while this modal is on top (into the line it has being typed).
    pub fn paste(&mut self, text: &str) {
        if let Modal::Palette(p) = self {
            p.selected = 0;
        }
        if let Modal::Path(p) = self {
            p.candidates.clear();
        }
        if let Some(field) = self.field_mut() {
            field.paste(text);
        }
    }

    /// The line this modal has being typed, if any.
    pub fn field(&self) -> Option<&LineInput> {
        match self {
            Modal::Palette(p) => Some(&p.query),
            Modal::Path(p) => Some(&p.text),
            Modal::Annotator(name) => Some(name),
            Modal::Note(note) => Some(note),
            Modal::NewArtifact(n) => Some(&n.name),
            _ => None,
        }
    }

    fn field_mut(&mut self) -> Option<&mut LineInput> {
        match self {
            Modal::Palette(p) => Some(&mut p.query),
            Modal::Path(p) => Some(&mut p.text),
            Modal::Annotator(name) => Some(name),
            Modal::Note(note) => Some(note),
            Modal::NewArtifact(n) => Some(&mut n.name),
            _ => None,
        }
    }

    /// The status line while this modal has a line being typed there.
    pub fn typing<'a>(&'a self, sh: &'a Shared) -> Option<Typing<'a>> {
        match self {
            Modal::NewArtifact(n) => Some(n.typing(sh)),
            Modal::Path(p) => Some(Typing::new(
                match p.purpose {
                    PathPurpose::Artifact => "a new artifact from the file: ",
                    PathPurpose::Dataset => "open a dataset file: ",
                },
                &p.text,
                " (tab completes · enter opens · esc) · relative to the workspace",
            )),
            Modal::Annotator(name) if name.is_offered() => Some(Typing::new(
                "who is labelling? [",
                name,
                "] (enter keeps it, or type your name; set `annotator:` in rubricate.yaml to skip this)",
            )),
            Modal::Annotator(name) => Some(Typing::new(
                "who is labelling? ",
                name,
                " (enter confirms; set `annotator:` in rubricate.yaml to skip this)",
            )),
            Modal::Note(note) => Some(Typing::new(
                "note: ",
                note,
                " (enter saves it with the label, esc drops it)",
            )),
            _ => None,
        }
    }
}
