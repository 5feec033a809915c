//! The labelling session and the Label pane's part of `App::update`: one key per verdict,
//! on to the next criterion and then the next item of the queue, notes and undo.

use std::time::Instant;

use std::sync::Arc;

use super::app::{App, Effect};
use super::keymap::Action;
use crate::model::{Kind, Rubric, Verdict};

/// The label queue's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Queue {
    #[default]
    InOrder,
    UnlabelledFirst,
    DisagreementsFirst,
    /// `rubricate labels next`'s order: where the judges (every run over the dataset, an
    /// ensemble's votes or samples) disagree, abstain or fail first, criteria and verdicts
    /// in turn.
    WhereItMatters,
}

impl Queue {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Queue::InOrder => Queue::UnlabelledFirst,
            Queue::UnlabelledFirst => Queue::DisagreementsFirst,
            Queue::DisagreementsFirst => Queue::WhereItMatters,
            Queue::WhereItMatters => Queue::InOrder,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Queue::InOrder => "in order",
            Queue::UnlabelledFirst => "unlabelled first",
            Queue::DisagreementsFirst => "disagreements first",
            Queue::WhereItMatters => "where it matters (labels next)",
        }
    }
}

/// The labelling session.
#[derive(Debug, Clone, Default)]
pub struct LabelState {
    pub criterion: usize,
    pub blind: bool,
    pub queue: Queue,
    /// Labels saved this sitting, and when the first was (the rate counts from it).
    pub sitting: usize,
    pub started: Option<Instant>,
    /// Sequence numbers of this sitting's labels, newest last (for undo).
    pub saved: Vec<(u64, String, String)>,
    /// Labels (and undos) sent but not yet acknowledged (synced to disk), oldest first (answers come in this order): a label's item and
    /// criterion, `None` for an undo. The queue counts a label in flight as given, so keys
    /// typed faster than the disk answers never send the labeller back to an item.
    pub pending: std::collections::VecDeque<Option<(String, String)>>,
    /// The item changed before it was read: focus its first unanswered criterion once it
    /// arrives.
    pub refocus: bool,
    /// Who was labelling before adjudication began (`A` goes back to them).
    pub adjudicating_from: Option<String>,
    /// The annotator changed: once their labels are read, focus the item's first criterion
    /// left to answer (adjudicating: the first difference).
    pub refocus_on_open: bool,
    /// The "labels next" order and stop rule as last worked out.
    pub plan: Option<super::label_plan::PlanShown>,
    /// One is being worked out (never two at once: labels typed meanwhile are counted in
    /// the next).
    pub planning: bool,
}

impl App {
    /// Focuses the current item's first criterion without a label (the first one when all
    /// have one), so the next key always answers what the screen shows first. Called
    /// whenever the item changes; when the item is not read yet, again once it is.
    pub(super) fn focus_first_unanswered(&mut self) {
        let criteria = self.label_criteria();
        let Some(b) = &self.shared.browse else {
            return;
        };
        let id = b.position(b.cursor).and_then(|p| {
            b.window
                .get(&p)
                .map(|i| i.id.clone())
                .or_else(|| b.ids.get(p).cloned())
        });
        self.label.refocus = id.is_none();
        // Adjudicating, the first difference still to settle comes first.
        self.label.criterion = id
            .and_then(|id| {
                criteria
                    .iter()
                    .position(|c| {
                        self.adjudicating()
                            && self.peers_differ(&id, &c.id)
                            && !self.answered(&id, &c.id)
                    })
                    .or_else(|| criteria.iter().position(|c| !self.answered(&id, &c.id)))
            })
            .unwrap_or(0);
    }

    /// The criterion to answer after `from` on `item`: the next one in order without a
    /// label (wrapping round to those before `from`), adjudicating a difference still to
    /// settle first; `None` when every criterion has one.
    fn next_unanswered(&self, item: &str, from: usize) -> Option<usize> {
        let criteria = self.label_criteria();
        let n = criteria.len();
        let order = || (1..n).map(move |k| (from + k) % n);
        let open = |i: &usize| !self.answered(item, &criteria[*i].id);
        let mut differing = order()
            .filter(open)
            .filter(|i| self.adjudicating() && self.peers_differ(item, &criteria[*i].id));
        differing.next().or_else(|| order().find(open))
    }

    /// Whether the item has a label for the criterion, on disk or on its way there.
    pub fn answered(&self, item: &str, criterion: &str) -> bool {
        self.shared.labels
            .contains_key(&(item.to_owned(), criterion.to_owned()))
            || self
                .label
                .pending
                .iter()
                .flatten()
                .any(|(i, c)| i == item && c == criterion)
    }

    /// The rubric the item at `position` is labelled with: its own when it brings one (an
    /// agentv case, an autorubric item) and no run graded the dataset with another, else the
    /// dataset's (`data::labelling_rubric`).
    pub fn item_rubric(&self, position: Option<usize>) -> Option<Arc<Rubric>> {
        let b = self.shared.browse.as_ref()?;
        position
            .and_then(|p| b.window.get(&p))
            .filter(|_| b.items_rubrics)
            .and_then(|i| i.rubric.clone())
            .or_else(|| b.rubric.clone())
    }

    /// The rubric the current item is labelled with.
    pub fn labelling_rubric(&self) -> Option<Arc<Rubric>> {
        let b = self.shared.browse.as_ref()?;
        self.item_rubric(b.position(b.cursor))
    }

    /// The criteria being labelled (the current item's rubric's).
    pub fn label_criteria(&self) -> Vec<crate::model::Criterion> {
        self.labelling_rubric()
            .map(|r| r.criteria.clone())
            .unwrap_or_default()
    }

    /// What the dataset file says of the item for each criterion of `rubric` (its
    /// `ground_truth`, as `rubricate score` reads it), by criterion; empty when it says
    /// nothing or does not fit the rubric.
    pub fn file_verdicts(item: &crate::model::Item, rubric: &Rubric) -> Vec<Option<String>> {
        item.ground_truth
            .as_ref()
            .and_then(|gt| gt.resolve(rubric).ok())
            .map(|v| v.into_iter().map(|v| v.map(|v| v.to_string())).collect())
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
                self.shared.message = Some(format!(
                    "blind mode {}",
                    if self.label.blind { "on" } else { "off" }
                ));
                Vec::new()
            }
            Action::Adjudicate => self.toggle_adjudication(),
            Action::Queue => {
                self.label.queue = self.label.queue.next();
                self.shared.message = Some(format!("queue: {}", self.label.queue.name()));
                Vec::new()
            }
            Action::Undo => {
                let Some((seq, item, criterion)) = self.label.saved.pop() else {
                    self.shared.message = Some("nothing to undo in this sitting".into());
                    return Vec::new();
                };
                let Some(b) = &self.shared.browse else {
                    return Vec::new();
                };
                self.label.pending.push_back(None);
                vec![Effect::Undo {
                    dataset: b.dataset,
                    seq,
                    item,
                    criterion,
                }]
            }
            Action::Met | Action::Unmet | Action::CannotAssess | Action::Choice(_) => {
                let Some(c) = criteria.get(self.label.criterion) else {
                    // Never silently: the key answered nothing.
                    let opening = self.shared.browse.as_ref().is_some_and(|b| !b.opened);
                    self.shared.message = Some(if opening {
                        "not labelled: the dataset's rubric and labels are still being read".into()
                    } else {
                        "not labelled: there is no rubric to label with (add one in Rubrics)".into()
                    });
                    return Vec::new();
                };
                let Some(verdict) = verdict_for(c, action) else {
                    self.shared.message = Some(format!("that key does not answer '{}'", c.name));
                    return Vec::new();
                };
                let Some(b) = &self.shared.browse else {
                    return Vec::new();
                };
                let Some(item) = b.current() else {
                    self.shared.message = Some("the item is still loading".into());
                    return Vec::new();
                };
                let (rubric, version) = self
                    .labelling_rubric()
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
                self.label
                    .pending
                    .push_back(Some((item.id.clone(), c.id.clone())));
                // On to the item's next criterion still without a label (never one that
                // has one: the next key would silently replace it); when none is left, the
                // next item in the queue — except in blind mode, where the item stays until
                // its reveal is seen.
                let item = item.id.clone();
                if let Some(next) = self.next_unanswered(&item, self.label.criterion) {
                    self.label.criterion = next;
                    vec![effect]
                } else if self.label.blind {
                    self.shared.message = Some(
                        "labelled: the judge's verdicts are shown; n (or →) for the next item"
                            .into(),
                    );
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
        let Some(b) = &self.shared.browse else {
            return Vec::new();
        };
        let Some(item) = b.current() else {
            return Vec::new();
        };
        let Some(verdict) = self.shared.labels.get(&(item.id.clone(), c.id.clone())).cloned() else {
            self.shared.message = Some(format!("label '{}' first, then add a note", c.name));
            return Vec::new();
        };
        let (rubric, rubric_version) = self
            .labelling_rubric()
            .map(|r| (r.id.clone(), r.version.clone()))
            .unwrap_or_default();
        self.label
            .pending
            .push_back(Some((item.id.clone(), c.id.clone())));
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
        let mut fallback = None;
        if self.label.queue == Queue::WhereItMatters {
            if let Some(row) = self.planned_row() {
                let cursor = self.shared.browse.as_ref().map_or(0, |b| b.cursor);
                let delta =
                    isize::try_from(row).unwrap_or(0) - isize::try_from(cursor).unwrap_or(0);
                return self.move_cursor(delta);
            }
            // No plan yet (or nothing left in it): the unlabelled items, in order.
            let why = match self.label.plan.as_ref().map(|p| &p.plan) {
                Some(Err(e)) => format!("labels next: {e}"),
                Some(Ok(_)) if !self.label.planning => {
                    "labels next: every planned item is labelled; on with unlabelled items".into()
                }
                _ => "labels next: still working out the order; on with unlabelled items".into(),
            };
            fallback = Some(why);
        }
        let Some(b) = &self.shared.browse else {
            return Vec::new();
        };
        let rows = b.row_count();
        let wanted = |row: usize| -> bool {
            let position = b.position(row);
            let Some(id) = position.and_then(|p| {
                b.window
                    .get(&p)
                    .map(|i| i.id.clone())
                    .or_else(|| b.ids.get(p).cloned())
            }) else {
                return false;
            };
            // Each item's own criteria when it brings a rubric.
            let rubric = self.item_rubric(position);
            let criteria = rubric.as_ref().map_or(&[][..], |r| &r.criteria[..]);
            // With an assignment, the queues keep to the annotator's own items.
            if self
                .shared.assignment
                .as_ref()
                .is_some_and(|mine| !mine.contains(&id))
            {
                return false;
            }
            match self.label.queue {
                Queue::UnlabelledFirst | Queue::WhereItMatters => {
                    criteria.iter().any(|c| !self.answered(&id, &c.id))
                }
                // Adjudicating: where the annotators differ and nothing is settled yet.
                Queue::DisagreementsFirst if self.adjudicating() => criteria
                    .iter()
                    .any(|c| self.peers_differ(&id, &c.id) && !self.answered(&id, &c.id)),
                // Where the run joined with the labels found them differing (the join is
                // worked out again in the runtime as the labels change).
                Queue::DisagreementsFirst => b
                    .run
                    .as_ref()
                    .and_then(|r| self.results.stats.join(&r.manifest.id))
                    .zip(position)
                    .is_some_and(|(j, p)| j.disagree.binary_search(&p).is_ok()),
                Queue::InOrder => true,
            }
        };
        let from = b.cursor + 1;
        let cursor = b.cursor;
        // Past the end the queue starts again from the top, and says so.
        let (target, note) = match (from..rows).find(|r| wanted(*r)) {
            Some(r) => (r, None),
            None => match (0..from.min(rows)).find(|r| wanted(*r)) {
                Some(r) if r != cursor => (
                    r,
                    Some(format!(
                        "queue {}: wrapped to the top",
                        self.label.queue.name()
                    )),
                ),
                _ => (
                    from.min(rows.saturating_sub(1)),
                    Some(format!(
                        "queue {}: no other item left; on in order",
                        self.label.queue.name()
                    )),
                ),
            },
        };
        let delta = isize::try_from(target).unwrap_or(0) - isize::try_from(cursor).unwrap_or(0);
        let out = self.move_cursor(delta);
        if note.is_some() {
            self.shared.message = note;
        } else if fallback.is_some() {
            self.shared.message = fallback;
        }
        out
    }
}

/// A label's verdict as text (numbers as written).
pub fn label_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The verdict a key gives for a criterion: MET/UNMET/`CANNOT_ASSESS` for binary ones; for
/// the others the answer [`choice_keys`] draws beside that digit.
pub fn verdict_for(c: &crate::model::Criterion, action: Action) -> Option<Verdict> {
    match (action, &c.kind) {
        (Action::CannotAssess, _) => Some(Verdict::CannotAssess),
        (Action::Met, Kind::Binary) => Some(Verdict::Met),
        (Action::Unmet, Kind::Binary) => Some(Verdict::Unmet),
        (Action::Choice(n), _) => choice_keys(c)
            .into_iter()
            .find(|(key, _, _)| *key == n)
            .map(|(_, verdict, _)| verdict),
        _ => None,
    }
}

/// Each answer a criterion takes by a digit key, with the key and what the screen shows:
/// options and levels are numbered from 1 in their order; a whole-number scale of at most
/// ten points is answered by the point itself when it lies in 0–9 (key `5` is 5 on a 0–5
/// scale), else by its position (1–9, then 0 for the tenth).
pub fn choice_keys(c: &crate::model::Criterion) -> Vec<(u8, Verdict, String)> {
    let positional = |n: usize| u8::try_from((n + 1) % 10).ok();
    match &c.kind {
        Kind::Binary => Vec::new(),
        Kind::Options { options, .. } => options
            .iter()
            .take(9)
            .enumerate()
            .filter_map(|(k, o)| {
                Some((
                    positional(k)?,
                    Verdict::Choice(o.label.clone()),
                    o.label.clone(),
                ))
            })
            .collect(),
        Kind::Levels(levels) => levels
            .iter()
            .take(9)
            .enumerate()
            .filter_map(|(k, l)| {
                Some((
                    positional(k)?,
                    Verdict::Level(l.id.clone()),
                    l.label.clone(),
                ))
            })
            .collect(),
        Kind::Scale(s) => {
            let whole = s.min.fract() == 0.0 && s.max.fract() == 0.0;
            let points = s.max - s.min + 1.0;
            if !whole || !(1.0..=10.0).contains(&points) {
                return Vec::new();
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            let (lo, n) = (s.min as i64, points as usize);
            let by_value = s.min >= 0.0 && s.max <= 9.0;
            (0..n)
                .filter_map(|k| {
                    let value = lo + i64::try_from(k).ok()?;
                    let key = if by_value {
                        u8::try_from(value).ok()?
                    } else {
                        positional(k)?
                    };
                    #[allow(clippy::cast_precision_loss)] // a small whole number
                    let v = value as f64;
                    Some((key, Verdict::Score(v), value.to_string()))
                })
                .collect()
        }
    }
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl App {
    /// A label is on disk: counted, remembered for undo, shown.
    pub(super) fn label_saved(
        &mut self,
        seq: u64,
        item: String,
        criterion: String,
        verdict: serde_json::Value,
        note: String,
    ) -> Vec<Effect> {
        if note.is_empty() {
            self.shared.notes.remove(&(item.clone(), criterion.clone()));
        } else {
            self.shared.notes.insert((item.clone(), criterion.clone()), note);
        }
        self.label.pending.pop_front();
        self.label.sitting += 1;
        self.label.started.get_or_insert(self.shared.now);
        self.label
            .saved
            .push((seq, item.clone(), criterion.clone()));
        // A label that replaces another says so (a key typed on an answered criterion).
        let key = (item, criterion);
        self.shared.message = Some(match self.shared.labels.get(&key).filter(|b| **b != verdict) {
            Some(b) => {
                let undo = self
                    .shared.keymap
                    .keys_for(super::keymap::Context::Label, Action::Undo)
                    .first()
                    .map(|k| format!(" ({k} undoes)"))
                    .unwrap_or_default();
                format!(
                    "saved label {seq}: {} '{}' was {}, now {}{undo}",
                    key.0,
                    key.1,
                    label_text(b),
                    label_text(&verdict)
                )
            }
            None => format!("saved label {seq}"),
        });
        let item = key.0.clone();
        Arc::make_mut(&mut self.shared.labels).insert(key, verdict);
        self.shared.labels_gen += 1;
        self.label_changed(&item);
        Vec::new()
    }

    /// An undo is on disk: the label is what it was before.
    pub(super) fn label_undone(
        &mut self,
        item: String,
        criterion: String,
        verdict: Option<serde_json::Value>,
    ) -> Vec<Effect> {
        let key = (item, criterion);
        match verdict {
            Some(v) => Arc::make_mut(&mut self.shared.labels).insert(key.clone(), v),
            None => Arc::make_mut(&mut self.shared.labels).remove(&key),
        };
        self.shared.labels_gen += 1;
        self.label_changed(&key.0);
        self.label.pending.pop_front();
        self.label.sitting = self.label.sitting.saturating_sub(1);
        self.shared.message = Some("undone".into());
        Vec::new()
    }

    /// A label (or undo) was not written: no longer pending, and the reason shown.
    pub(super) fn label_failed(&mut self, e: String) -> Vec<Effect> {
        self.label.pending.pop_front();
        self.shared.message = Some(e);
        Vec::new()
    }
}

#[cfg(test)]
mod tests;
