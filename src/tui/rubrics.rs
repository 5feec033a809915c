//! The Rubrics pane's state and its part of `App::update`: the workspace's rubric files, one
//! shown as a tree (criteria → levels, options, anchors) beside the selected criterion's
//! fields and the lint findings about it. Editing happens on a draft copy in `$EDITOR`
//! (`.rubricate/drafts/`, so an edit survives a crash); a valid draft is saved as a new
//! version in the registry (and over the rubric file) with a one-line note; `d` shows the
//! diff against the previous version.

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::keymap::Action;
use crate::model::{Kind, Rubric};

/// A rubric as the pane shows it.
#[derive(Debug, Clone, Default)]
pub struct RubricView {
    pub path: PathBuf,
    /// The draft being edited, when there is one.
    pub draft: Option<PathBuf>,
    pub rubric: Option<Arc<Rubric>>,
    /// Validation problems (the draft or file does not load).
    pub problems: Vec<String>,
    /// Lint findings: (criterion index if about one, severity and text).
    pub findings: Vec<(Option<usize>, String)>,
    /// The meta-rubric's structural score.
    pub score: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct RubricsState {
    pub files: Vec<PathBuf>,
    pub file: usize,
    pub view: Option<RubricView>,
    /// The selected line of the tree.
    pub line: usize,
    /// A change note being typed before saving.
    pub note: Option<String>,
    /// A diff being shown.
    pub diff: Option<String>,
}

/// The tree's lines: (criterion index, text).
pub fn tree(r: &Rubric) -> Vec<(Option<usize>, String)> {
    let mut out = vec![(
        None,
        format!(
            "{} ({} criteria, pass ≥ {})",
            r.name,
            r.criteria.len(),
            r.pass_threshold
        ),
    )];
    for (i, c) in r.criteria.iter().enumerate() {
        let kind = c.kind.name();
        let gate = if c.required { " required" } else { "" };
        out.push((
            Some(i),
            format!(
                "├ {} — {} (weight {}{gate}, {kind})",
                c.id, c.name, c.weight
            ),
        ));
        match &c.kind {
            Kind::Levels(levels) => {
                for l in levels {
                    out.push((
                        Some(i),
                        format!("│   level {} {} = {}", l.id, l.label, l.score),
                    ));
                }
            }
            Kind::Options { options, .. } => {
                for o in options {
                    out.push((
                        Some(i),
                        format!(
                            "│   option {} = {}{}",
                            o.label,
                            o.value,
                            if o.na { " (N/A)" } else { "" }
                        ),
                    ));
                }
            }
            Kind::Scale(s) => {
                for a in &s.anchors {
                    out.push((Some(i), format!("│   anchor {} {}", a.value, a.text)));
                }
            }
            Kind::Binary => {}
        }
    }
    out
}

impl App {
    /// The criterion the tree's selected line belongs to.
    pub fn rubric_criterion(&self) -> Option<usize> {
        let r = self.rubrics.view.as_ref()?.rubric.as_ref()?;
        tree(r).get(self.rubrics.line).and_then(|(c, _)| *c)
    }

    /// The change-note line takes typed keys first.
    pub(super) fn rubrics_key(&mut self, k: &KeyEvent) -> Option<Vec<Effect>> {
        if self.rubrics.diff.is_some() {
            // Any key closes the diff.
            self.rubrics.diff = None;
            return Some(Vec::new());
        }
        let note = self.rubrics.note.as_mut()?;
        match k.code {
            KeyCode::Esc => self.rubrics.note = None,
            KeyCode::Backspace => {
                note.pop();
            }
            KeyCode::Char(c) => note.push(c),
            KeyCode::Enter => {
                let note = note.clone();
                self.rubrics.note = None;
                let v = self.rubrics.view.as_ref()?;
                let draft = v.draft.clone()?;
                return Some(vec![Effect::SaveRubric {
                    path: v.path.clone(),
                    draft,
                    note,
                }]);
            }
            _ => {}
        }
        Some(Vec::new())
    }

    pub(super) fn rubrics_action(&mut self, action: Action) -> Vec<Effect> {
        let lines = self
            .rubrics
            .view
            .as_ref()
            .and_then(|v| v.rubric.as_ref())
            .map_or(0, |r| tree(r).len());
        match action {
            Action::Up if self.rubrics.view.is_some() => {
                self.rubrics.line = self.rubrics.line.saturating_sub(1);
            }
            Action::Down if self.rubrics.view.is_some() => {
                self.rubrics.line = (self.rubrics.line + 1).min(lines.saturating_sub(1));
            }
            Action::Up => self.rubrics.file = self.rubrics.file.saturating_sub(1),
            Action::Down => {
                self.rubrics.file =
                    (self.rubrics.file + 1).min(self.rubrics.files.len().saturating_sub(1));
            }
            Action::Open => {
                if let Some(path) = self.rubrics.files.get(self.rubrics.file).cloned() {
                    self.rubrics.line = 0;
                    return vec![Effect::LoadRubric { path, draft: None }];
                }
            }
            Action::Back => self.rubrics.view = None,
            Action::Edit => {
                if let Some(v) = &self.rubrics.view {
                    return vec![Effect::EditRubric {
                        path: v.path.clone(),
                    }];
                }
            }
            Action::Save => match &self.rubrics.view {
                Some(v) if v.draft.is_some() && v.problems.is_empty() => {
                    self.rubrics.note = Some(String::new());
                }
                Some(v) if v.draft.is_some() => {
                    self.message =
                        Some("the draft does not validate; fix it (ctrl-e) before saving".into());
                }
                Some(_) => {
                    self.message = Some("nothing to save: edit the rubric first (ctrl-e)".into());
                }
                None => {}
            },
            Action::Diff => {
                if let Some(r) = self.rubrics.view.as_ref().and_then(|v| v.rubric.as_ref()) {
                    return vec![Effect::DiffRubric { id: r.id.clone() }];
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
