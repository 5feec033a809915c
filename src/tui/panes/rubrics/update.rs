//! The Rubrics pane's part of `App::update`: its keys, actions and the runtime's answers.

use crate::model::Rubric;
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::msg::{Failure, Msg};
use crate::tui::pane::{Nav, Outcome, Pane};
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput, Typing};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use std::sync::Arc;

use super::{Field, NO_CRITERIA, RubricView, RubricsPane, SaveDialog, tree, view};

impl RubricsPane {
    /// An edit is still on its way to the draft.
    pub fn saving(&self) -> bool {
        self.written_seq < self.draft_seq
    }
}

impl Pane for RubricsPane {
    fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Option<Outcome> {
        self.rubrics_key(sh, k).map(Outcome::from)
    }

    fn paste(&mut self, text: &str, sh: &mut Shared) -> Option<Outcome> {
        if self.search.is_some() {
            self.rubric_search_paste(sh, text);
        } else if let Some(edit) = &mut self.edit {
            // A template keeps its line breaks; one-line fields are made one line on commit.
            edit.area.insert_str(text);
        } else {
            self.save.as_mut()?.note.paste(text);
        }
        Some(Outcome::none())
    }

    fn field<'a>(&'a self, _sh: &'a Shared) -> Option<&'a LineInput> {
        match (&self.search, &self.save) {
            (Some(search), _) => Some(&search.query),
            (None, Some(d)) if self.edit.is_none() => Some(&d.note),
            _ => None,
        }
    }

    fn click(&mut self, row: u16, drag: bool, sh: &mut Shared) -> Outcome {
        // Tree lines start below the tab bar and the border, scrolled.
        let row = self.rubrics_offset(sh) + usize::from(row).saturating_sub(2);
        if drag {
            return self.drag_criterion(row).into();
        }
        if self.view.is_some() {
            self.line = row;
        } else if row < sh.rubric_files.len() {
            self.file = row;
        }
        Outcome::none()
    }

    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        if action == Action::Align {
            return self.align(sh);
        }
        self.rubrics_action(sh, action).into()
    }

    fn on_msg(&mut self, msg: Msg, sh: &mut Shared) -> Outcome {
        Outcome::from(match msg {
            Msg::RubricCreated(path) => self.rubric_created(sh, path),
            Msg::RubricLoaded {
                view,
                message,
                failed,
                draft,
            } => self.rubric_loaded(sh, view, message, failed, draft),
            Msg::Diff(diff) => self.diff_read(sh, diff),
            _ => return Outcome::Ignored,
        })
    }

    fn hints(&self, _sh: &Shared) -> &'static [Action] {
        if self.view.is_none() {
            &[Action::Open]
        } else {
            &[
                Action::EditRequirement,
                Action::AddCriterion,
                Action::DeleteCriterion,
                Action::Edit,
                Action::Save,
                Action::Diff,
            ]
        }
    }

    fn typing<'a>(&'a self, sh: &'a Shared) -> Option<Typing<'a>> {
        if let Some(d) = &self.save {
            let others = d
                .offers
                .iter()
                .filter(|v| v.as_str() != d.version())
                .cloned()
                .collect::<Vec<_>>()
                .join(" / ");
            return Some(Typing::new(
                format!(
                    "save as version {} (tab: {others}) · change note: ",
                    d.version()
                ),
                &d.note,
                " (enter saves, esc drops)",
            ));
        }
        let search = self.search.as_ref()?;
        Some(Typing::new(
            "/",
            &search.query,
            format!(
                " (↓/ctrl-n next · ↑/ctrl-p previous · enter keeps · esc back){}",
                sh.message
                    .as_deref()
                    .map_or_else(String::new, |m| format!(" · {m}"))
            ),
        ))
    }

    fn unsaved(&self) -> usize {
        usize::from(self.saving())
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        view::draw(self, sh, f, area);
    }
}

impl RubricsPane {
    pub fn current_rubric(&self) -> Option<Arc<Rubric>> {
        self.view.as_ref()?.rubric.clone()
    }

    /// The first line the Rubrics pane shows (of the tree, or of the file list): the
    /// selection is kept on screen, scrolling no further than needed.
    pub fn rubrics_offset(&self, sh: &Shared) -> usize {
        // The screen less the tab and status bars and the box's borders.
        let visible = usize::from(sh.size.1.saturating_sub(4)).max(1);
        let selected = if self.view.is_some() {
            self.line
        } else {
            self.file
        };
        selected.saturating_sub(visible - 1)
    }

    /// The criterion the tree's selected line belongs to.
    pub fn rubric_criterion(&self) -> Option<usize> {
        let r = self.view.as_ref()?.rubric.as_ref()?;
        tree(r).get(self.line).and_then(|(c, _)| *c)
    }

    /// The text area of a field being edited, the diff, then the change-note line take
    /// typed keys first.
    pub fn rubrics_key(&mut self, sh: &mut Shared, k: &KeyEvent) -> Option<Vec<Effect>> {
        if self.search.is_some() {
            return Some(self.rubric_search_key(sh, k));
        }
        if let Some(at) = self.new_from {
            let last = crate::formats::library::NAMES.len();
            match k.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    self.new_from = Some((at + 1).min(last));
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.new_from = Some(at.saturating_sub(1));
                }
                KeyCode::Enter => {
                    self.new_from = None;
                    let from = at
                        .checked_sub(1)
                        .and_then(|i| crate::formats::library::NAMES.get(i))
                        .map(|n| (*n).to_owned());
                    return Some(vec![Effect::NewRubric { from }]);
                }
                KeyCode::Esc => self.new_from = None,
                _ => {}
            }
            return Some(Vec::new());
        }
        if let Some(i) = self.confirm_delete.take() {
            if k.code == KeyCode::Char('y') {
                return Some(self.delete_criterion(sh, i));
            }
            sh.message = Some("kept".into());
            return Some(Vec::new());
        }
        if let Some(edit) = &mut self.edit {
            // A template has lines: Enter breaks one and ctrl-s keeps it; elsewhere Enter keeps.
            let ctrl_s =
                k.code == KeyCode::Char('s') && k.modifiers.contains(KeyModifiers::CONTROL);
            let commit = ctrl_s || (k.code == KeyCode::Enter && edit.field != Field::Template);
            if k.code == KeyCode::Esc {
                self.edit = None;
            } else if commit {
                let edit = edit.clone();
                return Some(self.commit_field(sh, &edit));
            } else {
                edit.area.input(*k);
            }
            return Some(Vec::new());
        }
        if self.diff.is_some() {
            // `[` / `]` move the base to an older / newer version; any other key closes.
            let id = self.current_rubric().map(|r| r.id.clone());
            let back = match k.code {
                KeyCode::Char('[') => Some(self.diff_back + 1),
                KeyCode::Char(']') => Some(self.diff_back.saturating_sub(1).max(1)),
                _ => None,
            };
            if let (Some(back), Some(id)) = (back, id) {
                return Some(vec![Effect::DiffRubric { id, back }]);
            }
            self.diff = None;
            return Some(Vec::new());
        }
        let dialog = self.save.as_mut()?;
        match k.code {
            KeyCode::Tab => dialog.chosen = (dialog.chosen + 1) % dialog.offers.len().max(1),
            KeyCode::BackTab => {
                let n = dialog.offers.len().max(1);
                dialog.chosen = (dialog.chosen + n - 1) % n;
            }
            _ => match dialog.note.handle_key(k) {
                Edit::Cancel => self.save = None,
                Edit::Submit => return self.save_draft(),
                Edit::Changed | Edit::Moved | Edit::Ignored => {}
            },
        }
        Some(Vec::new())
    }

    /// The save dialog's enter: the draft saved as the version chosen, with the note.
    fn save_draft(&mut self) -> Option<Vec<Effect>> {
        let dialog = self.save.take()?;
        let v = self.view.as_ref()?;
        Some(vec![Effect::SaveRubric {
            path: v.path.clone(),
            draft: v.draft.clone()?,
            note: dialog.note.text().to_owned(),
            version: dialog.version().to_owned(),
        }])
    }

    pub fn rubrics_action(&mut self, sh: &mut Shared, action: Action) -> Vec<Effect> {
        let lines = self
            .view
            .as_ref()
            .and_then(|v| v.rubric.as_ref())
            .map_or(0, |r| tree(r).len());
        match action {
            Action::Up if self.view.is_some() => {
                self.line = self.line.saturating_sub(1);
            }
            Action::Down if self.view.is_some() => {
                self.line = (self.line + 1).min(lines.saturating_sub(1));
            }
            Action::Up => self.file = self.file.saturating_sub(1),
            Action::Down => {
                self.file = (self.file + 1).min(sh.rubric_files.len().saturating_sub(1));
            }
            Action::Open => {
                if let Some(path) = sh.rubric_files.get(self.file).cloned() {
                    self.line = 0;
                    return vec![Effect::LoadRubric { path, draft: None }];
                }
            }
            Action::Back => self.view = None,
            Action::Search => return self.start_rubric_search(),
            // On the list of files, `a` starts a new rubric (blank or from a built-in; a file
            // in rubrics/, opened).
            Action::AddCriterion if self.view.is_none() => {
                self.new_from = Some(0);
            }
            // A rubric with no criteria does not load: `a` writes its first one into the draft.
            Action::AddCriterion
                if self.view.as_ref().is_some_and(|v| {
                    v.rubric.is_none() && v.problems.iter().any(|p| p.contains(NO_CRITERIA))
                }) =>
            {
                if let Some(v) = &self.view {
                    self.draft_seq += 1;
                    return vec![Effect::AddFirstCriterion {
                        path: v.path.clone(),
                        seq: self.draft_seq,
                    }];
                }
            }
            Action::Edit => {
                if let Some(v) = &self.view {
                    return vec![Effect::EditRubric {
                        path: v.path.clone(),
                    }];
                }
            }
            Action::Save => match &self.view {
                Some(v) if v.draft.is_some() && v.problems.is_empty() => {
                    let draft_version = v.rubric.as_ref().map_or("", |r| r.version.as_str());
                    self.save = Some(SaveDialog::new(draft_version, v.base_version.as_deref()));
                }
                Some(v) if v.draft.is_some() => {
                    sh.message = Some(format!(
                        "not saved: the draft does not validate ({}); fix it before saving",
                        v.problems.first().map_or("", String::as_str)
                    ));
                }
                Some(_) => {
                    sh.message = Some("nothing to save: edit the rubric first (ctrl-e)".into());
                }
                None => {}
            },
            Action::EditId
            | Action::EditName
            | Action::EditRequirement
            | Action::EditWeight
            | Action::EditMinScore
            | Action::EditTemplate
            | Action::EditArgs => self.start_field_edit(sh, action),
            Action::Undo => return self.undo_edit(sh),
            Action::ToggleRequired
            | Action::NextKind
            | Action::AddCriterion
            | Action::DuplicateCriterion
            | Action::DeleteCriterion
            | Action::MoveUp
            | Action::MoveDown => {
                return self.restructure(sh, action);
            }
            Action::Diff => {
                if let Some(r) = self.view.as_ref().and_then(|v| v.rubric.as_ref()) {
                    return vec![Effect::DiffRubric {
                        id: r.id.clone(),
                        back: 1,
                    }];
                }
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl RubricsPane {
    /// A rubric read and linted; an answer to a draft write older than the newest edit
    /// changes nothing on screen.
    pub fn rubric_loaded(
        &mut self,
        sh: &mut Shared,
        view: RubricView,
        message: Option<String>,
        failed: Option<Failure>,
        draft: Option<u64>,
    ) -> Vec<Effect> {
        if let Some(seq) = draft {
            self.written_seq = self.written_seq.max(seq);
            // A later edit is already on screen (and queued after this write).
            if seq < self.draft_seq && message.is_none() && failed.is_none() {
                return Vec::new();
            }
        }
        // Another rubric: the undo steps belonged to the one before.
        if self.view.as_ref().is_none_or(|v| v.path != view.path) {
            self.undo.clear();
            self.confirm_delete = None;
        }
        let lines = view.rubric.as_ref().map_or(1, |r| tree(r).len());
        self.line = self.line.min(lines.saturating_sub(1));
        self.view = Some(view);
        if message.is_some() {
            sh.message = message;
        }
        if let Some(failure) = failed {
            sh.failed(failure);
        }
        Vec::new()
    }

    /// A diff between saved versions to show (or why there is none).
    pub fn diff_read(
        &mut self,
        sh: &mut Shared,
        diff: Result<(String, usize), String>,
    ) -> Vec<Effect> {
        match diff {
            Ok((text, back)) => {
                self.diff = Some(text);
                self.diff_back = back;
            }
            Err(why) => sh.message = Some(why),
        }
        Vec::new()
    }

    /// A new rubric file was written: listed (here and in Grade) and opened.
    pub fn rubric_created(&mut self, sh: &mut Shared, path: std::path::PathBuf) -> Vec<Effect> {
        sh.message = Some(format!(
            "new rubric {}: edit it in place (r n w …) or with ctrl-e; s saves it as a version",
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ));
        for list in [&mut sh.rubric_files] {
            if !list.contains(&path) {
                list.push(path.clone());
                list.sort();
            }
        }
        self.file = sh.rubric_files.iter().position(|p| *p == path).unwrap_or(0);
        self.line = 0;
        vec![Effect::LoadRubric { path, draft: None }]
    }
}

impl RubricsPane {
    /// `l`: the newest align report of the rubric shown (or selected in the list), in
    /// Results' Align view.
    fn align(&self, sh: &mut Shared) -> Outcome {
        let path = match &self.view {
            Some(v) => Some(v.path.clone()),
            None => sh.rubric_files.get(self.file).cloned(),
        };
        if let Some(path) = path {
            return Outcome::Nav(Nav::Align(path));
        }
        sh.message = Some("no rubric selected: a to start one".into());
        Outcome::none()
    }
}
