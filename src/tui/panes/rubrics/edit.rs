//! Editing a rubric in place, in memory first: a criterion's fields in a text area,
//! its kind, gate, order, duplicates and deletions, each written at once as the whole
//! rubric to its draft (in order, by the one writer) and undoable step by step.

use std::sync::Arc;

use ratatui_textarea::TextArea;

use super::RubricsPane;
use super::{UNDO_DEPTH, node, tree};
use crate::model::{Kind, Rubric};
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::shared::Shared;

/// Which field of a criterion is edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Id,
    Name,
    Requirement,
    Weight,
    MinScore,
    /// The judge template (several lines; ctrl-s keeps it).
    Template,
    /// A check's arguments, as JSON.
    Args,
    /// The label (a level's, an option's) or text (an anchor's) of the n-th level, option
    /// or anchor.
    Label(usize),
    /// Its score, value or scale point.
    Value(usize),
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Name => "name",
            Field::Requirement => "requirement",
            Field::Weight => "weight",
            Field::MinScore => "min_score",
            Field::Template => "judge template",
            Field::Args => "check arguments (JSON)",
            Field::Label(_) => "label",
            Field::Value(_) => "value",
        }
    }
}

/// A field of one criterion being edited in a text area.
#[derive(Debug, Clone)]
pub struct FieldEdit {
    pub criterion: usize,
    pub field: Field,
    pub area: TextArea<'static>,
}

/// The next kind in binary → options → levels → scale → binary, with a starting set of
/// options, levels or scale points to edit from (the old ones go: a kind is a new question).
pub fn next_kind(kind: &Kind) -> Kind {
    use crate::model::{Level, OptionChoice, OptionScale, Scale};
    let level = |id: &str, label: &str, score: f64| Level {
        id: id.into(),
        label: label.into(),
        description: String::new(),
        score,
        indicators: Vec::new(),
    };
    let option = |label: &str, value: f64| OptionChoice {
        label: label.into(),
        value,
        na: false,
    };
    match kind {
        Kind::Binary => Kind::Options {
            options: vec![option("Yes", 1.0), option("Partly", 0.5), option("No", 0.0)],
            scale: OptionScale::default(),
        },
        Kind::Options { .. } => Kind::Levels(vec![
            level("poor", "Poor", 0.0),
            level("fair", "Fair", 0.5),
            level("good", "Good", 1.0),
        ]),
        Kind::Levels(_) => Kind::Scale(Scale {
            min: 1.0,
            max: 5.0,
            anchors: Vec::new(),
        }),
        Kind::Scale(_) => Kind::Binary,
    }
}

pub fn sub_label(kind: &Kind, j: usize) -> String {
    match kind {
        Kind::Levels(l) => l.get(j).map(|l| l.label.clone()),
        Kind::Options { options, .. } => options.get(j).map(|o| o.label.clone()),
        Kind::Scale(s) => s.anchors.get(j).map(|a| a.text.clone()),
        Kind::Binary => None,
    }
    .unwrap_or_default()
}

pub fn sub_value(kind: &Kind, j: usize) -> String {
    match kind {
        Kind::Levels(l) => l.get(j).map(|l| l.score),
        Kind::Options { options, .. } => options.get(j).map(|o| o.value),
        Kind::Scale(s) => s.anchors.get(j).map(|a| a.value),
        Kind::Binary => None,
    }
    .map(|x| x.to_string())
    .unwrap_or_default()
}

impl RubricsPane {
    /// `r`, `n`, `w`, … on a criterion of the tree: that field of it, edited in place.
    pub fn start_field_edit(&mut self, sh: &mut Shared, action: Action) {
        let (Some(i), Some(r)) = (self.rubric_criterion(), self.current_rubric()) else {
            sh.message = Some("select a criterion in the tree first".into());
            return;
        };
        let Some(c) = r.criteria.get(i) else {
            return;
        };
        let sub = node(&r, self.line).1;
        let (field, text) = match (action, sub) {
            (Action::EditName, Some(j)) => (Field::Label(j), sub_label(&c.kind, j)),
            (Action::EditWeight, Some(j)) => (Field::Value(j), sub_value(&c.kind, j)),
            _ => match action {
                Action::EditId => (Field::Id, c.id.clone()),
                Action::EditName => (Field::Name, c.name.clone()),
                Action::EditRequirement => (Field::Requirement, c.requirement.clone()),
                Action::EditMinScore => (
                    Field::MinScore,
                    c.min_score.map(|m| m.to_string()).unwrap_or_default(),
                ),
                Action::EditTemplate => {
                    let crate::model::Method::Judge(j) = &c.method else {
                        sh.message = Some("only a judged criterion has a template".into());
                        return;
                    };
                    (Field::Template, j.template.clone().unwrap_or_default())
                }
                Action::EditArgs => {
                    let crate::model::Method::Check(ch) = &c.method else {
                        sh.message = Some("only a check has arguments".into());
                        return;
                    };
                    (
                        Field::Args,
                        serde_json::Value::Object(ch.args.clone()).to_string(),
                    )
                }
                _ => (Field::Weight, c.weight.to_string()),
            },
        };
        let lines: Vec<String> = if text.is_empty() {
            vec![String::new()]
        } else {
            text.lines().map(str::to_owned).collect()
        };
        let mut area = TextArea::new(lines);
        area.move_cursor(ratatui_textarea::CursorMove::End);
        self.edit = Some(FieldEdit {
            criterion: i,
            field,
            area,
        });
    }

    /// Shows `rubric` at once (the next edit starts from it) and writes it to the draft, in
    /// order after any earlier write; the draft is then read back and linted.
    pub fn write_draft(&mut self, rubric: Rubric) -> Vec<Effect> {
        let Some(v) = &mut self.view else {
            return Vec::new();
        };
        if let Some(before) = v.rubric.replace(Arc::new(rubric.clone())) {
            if self.undo.len() >= UNDO_DEPTH {
                self.undo.remove(0);
            }
            self.undo.push(before);
        }
        self.draft_seq += 1;
        vec![Effect::WriteDraft {
            path: v.path.clone(),
            rubric: Box::new(rubric),
            seq: self.draft_seq,
        }]
    }

    pub fn commit_field(&mut self, sh: &mut Shared, edit: &FieldEdit) -> Vec<Effect> {
        let Some(current) = self.current_rubric() else {
            return Vec::new();
        };
        let mut rubric = (*current).clone();
        let Some(c) = rubric.criteria.get_mut(edit.criterion) else {
            return Vec::new();
        };
        let text = if edit.field == Field::Template {
            edit.area.lines().join("\n").trim_end().to_owned()
        } else {
            edit.area.lines().join(" ").trim().to_owned()
        };
        match edit.field {
            Field::Id | Field::Name | Field::Requirement if text.is_empty() => {
                sh.message = Some(format!("the {} cannot be empty", edit.field.name()));
                return Vec::new();
            }
            Field::Id => c.id = text,
            Field::Name => c.name = text,
            Field::Requirement => c.requirement = text,
            Field::Weight => match text.parse::<f64>() {
                Ok(w) if w.is_finite() => c.weight = w,
                _ => {
                    sh.message = Some(format!("'{text}' is not a number"));
                    return Vec::new();
                }
            },
            Field::MinScore if text.is_empty() => c.min_score = None,
            Field::MinScore => match text.parse::<f64>() {
                Ok(m) if (0.0..=1.0).contains(&m) => c.min_score = Some(m),
                _ => {
                    sh.message = Some(format!("min_score is a number from 0 to 1, not '{text}'"));
                    return Vec::new();
                }
            },
            Field::Template => {
                if let crate::model::Method::Judge(j) = &mut c.method {
                    j.template = (!text.is_empty()).then_some(text);
                }
            }
            Field::Label(j) => {
                if text.is_empty() {
                    sh.message = Some("a label cannot be empty".into());
                    return Vec::new();
                }
                match &mut c.kind {
                    Kind::Levels(levels) => {
                        if let Some(level) = levels.get_mut(j) {
                            level.label = text;
                        }
                    }
                    Kind::Options { options, .. } => {
                        if let Some(option) = options.get_mut(j) {
                            option.label = text;
                        }
                    }
                    Kind::Scale(scale) => {
                        if let Some(anchor) = scale.anchors.get_mut(j) {
                            anchor.text = text;
                        }
                    }
                    Kind::Binary => {}
                }
            }
            Field::Value(j) => {
                let Ok(number) = text.parse::<f64>() else {
                    sh.message = Some(format!("'{text}' is not a number"));
                    return Vec::new();
                };
                match &mut c.kind {
                    Kind::Levels(levels) => {
                        if let Some(level) = levels.get_mut(j) {
                            level.score = number;
                        }
                    }
                    Kind::Options { options, .. } => {
                        if let Some(option) = options.get_mut(j) {
                            option.value = number;
                        }
                    }
                    Kind::Scale(scale) => {
                        if let Some(anchor) = scale.anchors.get_mut(j) {
                            anchor.value = number;
                        }
                    }
                    Kind::Binary => {}
                }
            }
            Field::Args => {
                let Ok(serde_json::Value::Object(args)) =
                    serde_json::from_str::<serde_json::Value>(&text)
                else {
                    sh.message = Some(
                        "check arguments are a JSON object, e.g. {\"text\": \"Paris\"}".into(),
                    );
                    return Vec::new();
                };
                if let crate::model::Method::Check(ch) = &mut c.method {
                    ch.args = args;
                }
            }
        }
        self.edit = None;
        self.write_draft(rubric)
    }

    /// Dragging with the mouse: the criterion under the last click moves to the row under
    /// the pointer.
    pub fn drag_criterion(&mut self, row: usize) -> Vec<Effect> {
        let Some(r) = self.current_rubric() else {
            return Vec::new();
        };
        let (Some(from), _) = node(&r, self.line) else {
            return Vec::new();
        };
        let (Some(to), _) = node(&r, row) else {
            return Vec::new();
        };
        if from == to {
            return Vec::new();
        }
        let mut rubric = (*r).clone();
        let c = rubric.criteria.remove(from);
        rubric.criteria.insert(to, c);
        self.line = tree(&rubric)
            .iter()
            .position(|(c, _)| *c == Some(to))
            .unwrap_or(0);
        self.write_draft(rubric)
    }

    /// Adds, duplicates, deletes, moves a criterion, or toggles its gate.
    pub fn restructure(&mut self, sh: &mut Shared, action: Action) -> Vec<Effect> {
        let Some(r) = self.current_rubric() else {
            return Vec::new();
        };
        let mut rubric = (*r).clone();
        let at = self.rubric_criterion();
        let n = rubric.criteria.len();
        let fresh = |rubric: &Rubric, base: &str| {
            (1..=rubric.criteria.len() + 1)
                .map(|k| format!("{base}-{k}"))
                .find(|id| rubric.criteria.iter().all(|c| &c.id != id))
                .unwrap_or_default()
        };
        let select = match (action, at) {
            (Action::AddCriterion, _) => {
                let id = fresh(&rubric, "new");
                let pos = at.map_or(n, |i| i + 1);
                rubric.criteria.insert(
                    pos,
                    crate::model::Criterion::binary(
                        id,
                        "Describe what the submission must do",
                        1.0,
                    ),
                );
                pos
            }
            (Action::DuplicateCriterion, Some(i)) => {
                let mut copy = rubric.criteria[i].clone();
                copy.id = fresh(&rubric, &copy.id);
                rubric.criteria.insert(i + 1, copy);
                i + 1
            }
            (Action::DeleteCriterion, Some(i)) if n > 1 => {
                // Asked first: `y` deletes (and `z` brings it back).
                self.confirm_delete = Some(i);
                sh.message = Some(format!(
                    "delete criterion '{}'? y deletes (z undoes) · any other key keeps it",
                    rubric.criteria[i].id
                ));
                return Vec::new();
            }
            (Action::DeleteCriterion, Some(_)) => {
                sh.message = Some("a rubric keeps at least one criterion".into());
                return Vec::new();
            }
            (Action::MoveUp, Some(i)) if i > 0 => {
                rubric.criteria.swap(i, i - 1);
                i - 1
            }
            (Action::MoveDown, Some(i)) if i + 1 < n => {
                rubric.criteria.swap(i, i + 1);
                i + 1
            }
            (Action::ToggleRequired, Some(i)) => {
                rubric.criteria[i].required = !rubric.criteria[i].required;
                i
            }
            (Action::NextKind, Some(i)) => {
                rubric.criteria[i].kind = next_kind(&rubric.criteria[i].kind);
                i
            }
            _ => return Vec::new(),
        };
        // Keep the moved / new criterion selected.
        self.line = tree(&rubric)
            .iter()
            .position(|(c, _)| *c == Some(select))
            .unwrap_or(0);
        self.write_draft(rubric)
    }

    /// Deletes criterion `i` (the user said yes).
    pub fn delete_criterion(&mut self, sh: &mut Shared, i: usize) -> Vec<Effect> {
        let Some(r) = self.current_rubric() else {
            return Vec::new();
        };
        let mut rubric = (*r).clone();
        if i >= rubric.criteria.len() || rubric.criteria.len() < 2 {
            return Vec::new();
        }
        let gone = rubric.criteria.remove(i);
        let select = i.min(rubric.criteria.len() - 1);
        self.line = tree(&rubric)
            .iter()
            .position(|(c, _)| *c == Some(select))
            .unwrap_or(0);
        sh.message = Some(format!("deleted '{}' (z undoes)", gone.id));
        self.write_draft(rubric)
    }

    /// Takes back the last edit of this sitting (written to the draft like any edit).
    pub fn undo_edit(&mut self, sh: &mut Shared) -> Vec<Effect> {
        let Some(before) = self.undo.pop() else {
            sh.message = Some("nothing to undo in this sitting".into());
            return Vec::new();
        };
        let effects = self.write_draft((*before).clone());
        // Writing pushed the undone state: an undo is not itself undone by `z`.
        self.undo.pop();
        let lines = tree(&before).len();
        self.line = self.line.min(lines.saturating_sub(1));
        sh.message = Some("undone".into());
        effects
    }
}
