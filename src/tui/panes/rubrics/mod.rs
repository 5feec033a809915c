//! The Rubrics pane's state and its part of `App::update`: the workspace's rubric files
//! (new ones blank or from a built-in), one shown as a tree (criteria → levels, options,
//! anchors) beside the selected criterion's fields and the lint findings about it; keys
//! and actions (editing in place is `edit.rs`, search `search.rs`). Edits
//! land in a draft (`.rubricate/drafts/`, so an edit survives a crash); a valid draft is
//! saved as a new version in the registry (and over the rubric file) with a one-line note;
//! `d` shows the diff against the previous version.

mod edit;
mod search;
pub mod view;

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::model::{Kind, Rubric};
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::msg::Msg;
use crate::tui::pane::{Outcome, Pane};
use crate::tui::shared::Shared;
pub use edit::{Field, FieldEdit};
use ratatui::Frame;
use ratatui::layout::Rect;
use std::path::PathBuf;

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
    /// The version a save must go above: the highest saved in the registry, else the
    /// file's own (a version not above it is refused).
    pub base_version: Option<String>,
}

/// Saving a draft: the version it gets (one of the offers, tab cycles) and the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveDialog {
    pub offers: Vec<String>,
    pub chosen: usize,
    pub note: String,
}

impl SaveDialog {
    /// The draft's own version when it is above `base`, then the next patch, minor and
    /// major version of `base` (or of the draft's version when nothing is saved).
    pub fn new(draft_version: &str, base: Option<&str>) -> Self {
        use crate::store::registry::{Bump, Version};
        let draft = Version::parse(draft_version).ok();
        let base = base.and_then(|b| Version::parse(b).ok());
        let mut offers = Vec::new();
        match (&draft, &base) {
            (Some(d), Some(b)) if d > b => offers.push(d.to_string()),
            (Some(d), None) => offers.push(d.to_string()),
            _ => {}
        }
        let from = base.or(draft).unwrap_or_else(|| Version::new(1, 0, 0));
        for part in [Bump::Patch, Bump::Minor, Bump::Major] {
            let next = from.bumped(part).to_string();
            if !offers.contains(&next) {
                offers.push(next);
            }
        }
        Self {
            offers,
            chosen: 0,
            note: String::new(),
        }
    }

    pub fn version(&self) -> &str {
        self.offers.get(self.chosen).map_or("", String::as_str)
    }
}

#[derive(Debug, Clone, Default)]
pub struct RubricsPane {
    pub file: usize,
    pub view: Option<RubricView>,
    /// The selected line of the tree.
    pub line: usize,
    /// A draft being saved: its version and change note, typed before saving.
    pub save: Option<SaveDialog>,
    /// A diff being shown, and how many versions back its base is (1: the previous).
    pub diff: Option<String>,
    pub diff_back: usize,
    /// The number of the last draft write made, and of the last one answered: the draft is
    /// "saving…" while they differ (a write made redundant by a later one is skipped).
    pub draft_seq: u64,
    pub written_seq: u64,
    /// The rubric before each edit of this sitting, newest last (`z` goes back one).
    pub undo: Vec<Arc<Rubric>>,
    /// A criterion waiting for `y` before it is deleted.
    pub confirm_delete: Option<usize>,
    /// A field being edited in place.
    pub edit: Option<FieldEdit>,
    /// A search in the open rubric (or the list of files), while it is typed.
    pub search: Option<search::RubricSearch>,
    /// Choosing what a new rubric starts from: 0 blank, then each built-in in turn.
    pub new_from: Option<usize>,
}

/// What a tree line is: (criterion, the n-th level/option/anchor under it).
pub fn node(r: &Rubric, line: usize) -> (Option<usize>, Option<usize>) {
    let mut at = 1;
    if line == 0 {
        return (None, None);
    }
    for (i, c) in r.criteria.iter().enumerate() {
        if line == at {
            return (Some(i), None);
        }
        at += 1;
        let subs = match &c.kind {
            Kind::Levels(l) => l.len(),
            Kind::Options { options, .. } => options.len(),
            Kind::Scale(s) => s.anchors.len(),
            Kind::Binary => 0,
        };
        if line < at + subs {
            return (Some(i), Some(line - at));
        }
        at += subs;
    }
    (None, None)
}

/// What a rubric without criteria says when it is loaded (`a` adds the first).
pub const NO_CRITERIA: &str = "the rubric has no criteria";

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

/// Edits `z` can take back in one sitting.
pub(super) const UNDO_DEPTH: usize = 100;

impl RubricsPane {
    /// An edit is still on its way to the draft.
    pub fn saving(&self) -> bool {
        self.written_seq < self.draft_seq
    }
}

impl Pane for RubricsPane {
    fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Option<Outcome> {
        let only_note = self.search.is_none()
            && self.new_from.is_none()
            && self.confirm_delete.is_none()
            && self.edit.is_none()
            && self.diff.is_none();
        if only_note
            && k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char(_))
            && let Some(d) = &mut self.save
        {
            // ctrl-u clears the change note (as in a shell); other ctrl keys type nothing.
            if k.code == KeyCode::Char('u') {
                d.note.clear();
            }
            return Some(Outcome::none());
        }
        self.rubrics_key(sh, k).map(Outcome::from)
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
        self.rubrics_action(sh, action).into()
    }

    fn on_msg(&mut self, msg: Msg, sh: &mut Shared) -> Outcome {
        Outcome::from(match msg {
            Msg::RubricCreated(path) => self.rubric_created(sh, path),
            Msg::RubricLoaded {
                view,
                message,
                draft,
            } => self.rubric_loaded(sh, view, message, draft),
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

    fn typing(&self, sh: &Shared) -> Option<String> {
        if let Some(d) = &self.save {
            return Some(format!(
                "save as version {} (tab: {}) · change note: {}▏ (enter saves, esc drops)",
                d.version(),
                d.offers
                    .iter()
                    .filter(|v| v.as_str() != d.version())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" / "),
                d.note
            ));
        }
        let search = self.search.as_ref()?;
        Some(format!(
            "/{}▏ (↓/ctrl-n next · ↑/ctrl-p previous · enter keeps · esc back){}",
            search.query,
            sh.message
                .as_deref()
                .map_or_else(String::new, |m| format!(" · {m}"))
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
            KeyCode::Esc => self.save = None,
            KeyCode::Backspace => {
                dialog.note.pop();
            }
            KeyCode::Tab => dialog.chosen = (dialog.chosen + 1) % dialog.offers.len().max(1),
            KeyCode::BackTab => {
                let n = dialog.offers.len().max(1);
                dialog.chosen = (dialog.chosen + n - 1) % n;
            }
            KeyCode::Char(c) => dialog.note.push(c),
            KeyCode::Enter => {
                let (note, version) = (dialog.note.clone(), dialog.version().to_owned());
                self.save = None;
                let v = self.view.as_ref()?;
                let draft = v.draft.clone()?;
                return Some(vec![Effect::SaveRubric {
                    path: v.path.clone(),
                    draft,
                    note,
                    version,
                }]);
            }
            _ => {}
        }
        Some(Vec::new())
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
        draft: Option<u64>,
    ) -> Vec<Effect> {
        if let Some(seq) = draft {
            self.written_seq = self.written_seq.max(seq);
            // A later edit is already on screen (and queued after this write).
            if seq < self.draft_seq && message.is_none() {
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
