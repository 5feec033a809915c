//! The labelling session and the Label pane's part of `App::update`: one key per verdict,
//! on to the next criterion and then the next item of the queue, notes and undo.

use std::time::Instant;

use super::app::{App, Effect};
use super::keymap::Action;
use crate::model::{Kind, Verdict};

/// The label queue's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Queue {
    #[default]
    InOrder,
    UnlabelledFirst,
    DisagreementsFirst,
    /// Items the judge was least sure of: votes that disagreed, an abstention, a failure.
    MostInformative,
}

impl Queue {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Queue::InOrder => Queue::UnlabelledFirst,
            Queue::UnlabelledFirst => Queue::DisagreementsFirst,
            Queue::DisagreementsFirst => Queue::MostInformative,
            Queue::MostInformative => Queue::InOrder,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Queue::InOrder => "in order",
            Queue::UnlabelledFirst => "unlabelled first",
            Queue::DisagreementsFirst => "disagreements first",
            Queue::MostInformative => "most informative",
        }
    }
}

/// The labelling session.
#[derive(Debug, Clone)]
pub struct LabelState {
    pub criterion: usize,
    pub blind: bool,
    pub queue: Queue,
    /// Labels saved this sitting, and when it began.
    pub sitting: usize,
    pub started: Instant,
    /// Sequence numbers of this sitting's labels, newest last (for undo).
    pub saved: Vec<(u64, String, String)>,
    /// Labels sent but not yet acknowledged (synced to disk).
    pub unsaved: usize,
    /// The item changed before it was read: focus its first unanswered criterion once it
    /// arrives.
    pub refocus: bool,
}

impl Default for LabelState {
    fn default() -> Self {
        Self {
            criterion: 0,
            blind: false,
            queue: Queue::default(),
            sitting: 0,
            started: Instant::now(),
            saved: Vec::new(),
            unsaved: 0,
            refocus: false,
        }
    }
}

impl App {
    /// Focuses the current item's first criterion without a label (the first one when all
    /// have one), so the next key always answers what the screen shows first. Called
    /// whenever the item changes; when the item is not read yet, again once it is.
    pub(super) fn focus_first_unanswered(&mut self) {
        let criteria = self.label_criteria();
        let Some(b) = &self.browse else {
            return;
        };
        let id = b.position(b.cursor).and_then(|p| {
            b.window
                .get(&p)
                .map(|i| i.id.clone())
                .or_else(|| b.ids.get(p).cloned())
        });
        self.label.refocus = id.is_none();
        self.label.criterion = id
            .and_then(|id| {
                criteria
                    .iter()
                    .position(|c| !self.labels.contains_key(&(id.clone(), c.id.clone())))
            })
            .unwrap_or(0);
    }

    /// The criteria being labelled.
    pub fn label_criteria(&self) -> Vec<crate::model::Criterion> {
        self.browse
            .as_ref()
            .and_then(|b| b.rubric.as_ref())
            .map(|r| r.criteria.clone())
            .unwrap_or_default()
    }

    pub(super) fn label_action(&mut self, action: Action) -> Vec<Effect> {
        let criteria = self.label_criteria();
        let n = criteria.len();
        match action {
            Action::NextCriterion if n > 0 => {
                self.label.criterion = (self.label.criterion + 1).min(n - 1);
                Vec::new()
            }
            Action::PrevCriterion => {
                self.label.criterion = self.label.criterion.saturating_sub(1);
                Vec::new()
            }
            Action::NextItem => self.next_item(1),
            Action::PrevItem => self.next_item(-1),
            Action::Note => {
                self.note = Some(String::new());
                Vec::new()
            }
            Action::Blind => {
                self.label.blind = !self.label.blind;
                self.message = Some(format!(
                    "blind mode {}",
                    if self.label.blind { "on" } else { "off" }
                ));
                Vec::new()
            }
            Action::Queue => {
                self.label.queue = self.label.queue.next();
                self.message = Some(format!("queue: {}", self.label.queue.name()));
                Vec::new()
            }
            Action::Undo => {
                let Some((seq, item, criterion)) = self.label.saved.pop() else {
                    self.message = Some("nothing to undo in this sitting".into());
                    return Vec::new();
                };
                let Some(b) = &self.browse else {
                    return Vec::new();
                };
                vec![Effect::Undo {
                    dataset: b.dataset,
                    seq,
                    item,
                    criterion,
                }]
            }
            Action::Met | Action::Unmet | Action::CannotAssess | Action::Choice(_) => {
                let Some(c) = criteria.get(self.label.criterion) else {
                    return Vec::new();
                };
                let Some(verdict) = verdict_for(c, action) else {
                    self.message = Some(format!("that key does not answer '{}'", c.name));
                    return Vec::new();
                };
                let Some(b) = &self.browse else {
                    return Vec::new();
                };
                let Some(item) = b.current() else {
                    self.message = Some("the item is still loading".into());
                    return Vec::new();
                };
                let (rubric, version) = b
                    .rubric
                    .as_ref()
                    .map(|r| (r.id.clone(), r.version.clone()))
                    .unwrap_or_default();
                let effect = Effect::SaveLabel {
                    dataset: b.dataset,
                    item: item.id.clone(),
                    criterion: c.id.clone(),
                    verdict: verdict.label_value(),
                    note: String::new(),
                    rubric,
                    rubric_version: version,
                };
                self.label.unsaved += 1;
                // On to the next criterion; after the last, the next item in the queue.
                if self.label.criterion + 1 < n {
                    self.label.criterion += 1;
                    vec![effect]
                } else {
                    self.label.criterion = 0;
                    let mut out = vec![effect];
                    out.extend(self.next_item(1));
                    out
                }
            }
            _ => Vec::new(),
        }
    }

    /// Saves the current criterion's label again with a note (a label must exist).
    pub(super) fn save_note(&mut self, note: String) -> Vec<Effect> {
        let criteria = self.label_criteria();
        let Some(c) = criteria.get(self.label.criterion) else {
            return Vec::new();
        };
        let Some(b) = &self.browse else {
            return Vec::new();
        };
        let Some(item) = b.current() else {
            return Vec::new();
        };
        let Some(verdict) = self.labels.get(&(item.id.clone(), c.id.clone())).cloned() else {
            self.message = Some(format!("label '{}' first, then add a note", c.name));
            return Vec::new();
        };
        let (rubric, rubric_version) = b
            .rubric
            .as_ref()
            .map(|r| (r.id.clone(), r.version.clone()))
            .unwrap_or_default();
        self.label.unsaved += 1;
        vec![Effect::SaveLabel {
            dataset: b.dataset,
            item: item.id.clone(),
            criterion: c.id.clone(),
            verdict,
            note,
            rubric,
            rubric_version,
        }]
    }

    /// The next item in the queue's order (or the previous one).
    pub(super) fn next_item(&mut self, dir: isize) -> Vec<Effect> {
        if dir < 0 || self.label.queue == Queue::InOrder {
            return self.move_cursor(dir);
        }
        let Some(b) = &self.browse else {
            return Vec::new();
        };
        let rows = b.row_count();
        let criteria = self.label_criteria();
        let wanted = |row: usize| -> bool {
            let Some(id) = b.position(row).and_then(|p| {
                b.window
                    .get(&p)
                    .map(|i| i.id.clone())
                    .or_else(|| b.ids.get(p).cloned())
            }) else {
                return false;
            };
            match self.label.queue {
                Queue::UnlabelledFirst => criteria
                    .iter()
                    .any(|c| !self.labels.contains_key(&(id.clone(), c.id.clone()))),
                Queue::DisagreementsFirst => b
                    .run
                    .as_ref()
                    .and_then(|r| r.by_item.get(&id))
                    .is_some_and(|r| {
                        r.results.iter().any(|c| {
                            self.labels
                                .get(&(id.clone(), c.criterion_id.clone()))
                                .zip(c.verdict.as_ref())
                                .is_some_and(|(h, v)| label_text(h) != v.to_string())
                        })
                    }),
                Queue::MostInformative => b
                    .run
                    .as_ref()
                    .and_then(|r| r.by_item.get(&id))
                    .is_some_and(|r| {
                        r.results.iter().any(|c| {
                            c.failure.is_some()
                                || c.verdict == Some(Verdict::CannotAssess)
                                || c.ensemble
                                    .as_ref()
                                    .and_then(|e| e.agreement)
                                    .is_some_and(|a| a < 1.0)
                        })
                    }),
                Queue::InOrder => true,
            }
        };
        let from = b.cursor + 1;
        let target = (from..rows)
            .find(|r| wanted(*r))
            .unwrap_or(from.min(rows.saturating_sub(1)));
        let delta = isize::try_from(target).unwrap_or(0) - isize::try_from(b.cursor).unwrap_or(0);
        self.move_cursor(delta)
    }
}

/// A label's verdict as text (numbers as written).
pub fn label_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The verdict a key gives for a criterion: MET/UNMET/`CANNOT_ASSESS` for binary ones, the
/// n-th option or level (or scale point) for the others.
pub fn verdict_for(c: &crate::model::Criterion, action: Action) -> Option<Verdict> {
    match (action, &c.kind) {
        (Action::CannotAssess, _) => Some(Verdict::CannotAssess),
        (Action::Met, Kind::Binary) => Some(Verdict::Met),
        (Action::Unmet, Kind::Binary) => Some(Verdict::Unmet),
        (Action::Choice(n), Kind::Options { options, .. }) => options
            .get(usize::from(n) - 1)
            .map(|o| Verdict::Choice(o.label.clone())),
        (Action::Choice(n), Kind::Levels(levels)) => levels
            .get(usize::from(n) - 1)
            .map(|l| Verdict::Level(l.id.clone())),
        (Action::Choice(n), Kind::Scale(s)) => {
            let x = s.min + f64::from(n) - 1.0;
            (x <= s.max).then_some(Verdict::Score(x))
        }
        _ => None,
    }
}
