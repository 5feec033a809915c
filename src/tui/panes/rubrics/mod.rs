//! The Rubrics pane's state and its part of `App::update`: the workspace's rubric files
//! (new ones blank or from a built-in), one shown as a tree (criteria → levels, options,
//! anchors) beside the selected criterion's fields and the lint findings about it; keys
//! and actions (editing in place is `edit.rs`, search `search.rs`). Edits
//! land in a draft (`.rubricate/drafts/`, so an edit survives a crash); a valid draft is
//! saved as a new version in the registry (and over the rubric file) with a one-line note;
//! `d` shows the diff against the previous version.

mod edit;
mod search;
mod update;
pub mod view;

use crate::tui::widgets::LineInput;
use std::sync::Arc;

use crate::model::{Kind, Rubric};
pub use crate::tui::msg::RubricView;
pub use edit::{Field, FieldEdit};

/// Saving a draft: the version it gets (one of the offers, tab cycles) and the note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveDialog {
    pub offers: Vec<String>,
    pub chosen: usize,
    pub note: LineInput,
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
            note: LineInput::default(),
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
