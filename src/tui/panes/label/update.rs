//! The Label pane's part of `App::update`: its keys, actions and the runtime's answers.

use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::modal::Modal;
use crate::tui::msg::Failure;
use crate::tui::open_dataset::label_text;
use crate::tui::pane::{Outcome, Pane};
use crate::tui::shared::Shared;
use crate::tui::widgets::LineInput;
use ratatui::Frame;
use ratatui::layout::Rect;
use std::sync::Arc;

use super::pair::Shown;
use super::{LabelPane, Queue, verdict_for, view};

impl Pane for LabelPane {
    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        self.label_action(sh, action)
    }

    /// The item changed (or its criteria arrived): its first criterion left to answer is
    /// focused, so the next key answers what the screen shows first.
    fn wants(&mut self, sh: &mut Shared) -> Vec<Effect> {
        if self.focused_at != sh.item_moves || self.refocus {
            if self.focused_at != sh.item_moves {
                self.pair_scroll = 0;
            }
            self.focused_at = sh.item_moves;
            self.focus_first_unanswered(sh);
        }
        Vec::new()
    }

    fn hints(&self, sh: &Shared) -> &'static [Action] {
        if Self::shows_pair(sh) {
            return &[
                Action::PreferA,
                Action::PreferB,
                Action::PreferTie,
                Action::Undo,
                Action::Note,
                Action::Queue,
                Action::Annotator,
            ];
        }
        &[
            Action::Met,
            Action::Unmet,
            Action::CannotAssess,
            Action::Undo,
            Action::Note,
            Action::Blind,
            Action::Queue,
            Action::Annotator,
        ]
    }

    fn unsaved(&self) -> usize {
        self.pending.len()
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        view::draw(self, sh, f, area);
    }
}

impl LabelPane {
    /// Whether the item on screen is a pair labelled with a pairwise rubric.
    fn shows_pair(sh: &Shared) -> bool {
        let rubric = sh.labelling_rubric();
        sh.browse
            .as_ref()
            .and_then(|b| b.current())
            .is_some_and(|item| Shown::of(item, rubric.as_deref()).is_some())
    }

    /// Focuses the current item's first criterion without a label (the first one when all
    /// have one), so the next key always answers what the screen shows first. Called
    /// whenever the item changes; when the item is not read yet, again once it is.
    pub fn focus_first_unanswered(&mut self, sh: &mut Shared) {
        let criteria = sh.label_criteria();
        let Some(b) = &sh.browse else {
            return;
        };
        let id = b.position(b.cursor).and_then(|p| {
            b.window
                .get(&p)
                .map(|i| i.id.clone())
                .or_else(|| b.ids.get(p).cloned())
        });
        self.refocus = id.is_none();
        // Adjudicating, the first difference still to settle comes first.
        self.criterion = id
            .and_then(|id| {
                criteria
                    .iter()
                    .position(|c| {
                        sh.adjudicating()
                            && self.peers_differ(sh, &id, &c.id)
                            && !self.answered(sh, &id, &c.id)
                    })
                    .or_else(|| criteria.iter().position(|c| !self.answered(sh, &id, &c.id)))
            })
            .unwrap_or(0);
    }

    /// The next item of the "labels next" plan that still has a criterion without a label
    /// (and is shown: a search or filter may hide it), other than the current one.
    pub fn planned_row(&self, sh: &Shared) -> Option<usize> {
        let b = sh.browse.as_ref()?;
        let plan = sh.label_plan()?;
        let current = b.position(b.cursor);
        plan.next.iter().find_map(|n| {
            let rubric = sh.item_rubric(Some(n.position));
            let criteria = rubric.as_ref().map_or(&[][..], |r| &r.criteria[..]);
            if Some(n.position) == current
                || criteria.iter().all(|c| self.answered(sh, &n.item, &c.id))
            {
                return None;
            }
            match &b.rows {
                Some(rows) => rows.iter().position(|p| *p == n.position),
                None => b.total.filter(|t| n.position < *t).map(|_| n.position),
            }
        })
    }

    /// The criterion to answer after `from` on `item`: the next one in order without a
    /// label (wrapping round to those before `from`), adjudicating a difference still to
    /// settle first; `None` when every criterion has one.
    fn next_unanswered(&self, sh: &Shared, item: &str, from: usize) -> Option<usize> {
        let criteria = sh.label_criteria();
        let n = criteria.len();
        let order = || (1..n).map(move |k| (from + k) % n);
        let open = |i: &usize| !self.answered(sh, item, &criteria[*i].id);
        let mut differing = order()
            .filter(open)
            .filter(|i| sh.adjudicating() && self.peers_differ(sh, item, &criteria[*i].id));
        differing.next().or_else(|| order().find(open))
    }

    /// `o`: the next queue order.
    fn next_queue(&mut self, sh: &mut Shared) -> Vec<Effect> {
        self.queue = self.queue.next();
        // The planner reads it: the top two's plan is another plan.
        sh.plan_between_top_two = self.queue == Queue::BetweenTopTwo;
        sh.message = Some(format!("queue: {}", self.queue.name()));
        Vec::new()
    }

    /// Moves to `item` (when the list shows it) and focuses `criterion`, whatever its label.
    fn go_to(&mut self, sh: &mut Shared, item: &str, criterion: &str) -> Vec<Effect> {
        let Some(b) = &sh.browse else {
            return Vec::new();
        };
        // The items read around the view hold it (it was just labelled), else the scan's ids.
        let position = b
            .window
            .iter()
            .find(|(_, i)| i.id == item)
            .map(|(p, _)| *p)
            .or_else(|| b.ids.iter().position(|id| id == item));
        let row = position.and_then(|p| match &b.rows {
            Some(rows) => rows.iter().position(|q| *q == p),
            None => Some(p),
        });
        let Some(row) = row else {
            return Vec::new();
        };
        let delta = isize::try_from(row).unwrap_or(0) - isize::try_from(b.cursor).unwrap_or(0);
        let effects = if delta == 0 {
            Vec::new()
        } else {
            sh.move_cursor(delta)
        };
        // Focused by hand: the move must not focus the first unanswered one instead.
        self.focused_at = sh.item_moves;
        self.refocus = false;
        if let Some(i) = sh.label_criteria().iter().position(|c| c.id == criterion) {
            self.criterion = i;
        }
        effects
    }

    /// Whether the focused criterion of the item shown already has a label.
    pub fn focused_is_answered(&self, sh: &Shared) -> bool {
        let Some(item) = sh.browse.as_ref().and_then(|b| b.current()) else {
            return false;
        };
        sh.label_criteria()
            .get(self.criterion)
            .is_some_and(|c| self.answered(sh, &item.id, &c.id))
    }

    /// Whether the item has a label for the criterion, on disk or on its way there.
    pub fn answered(&self, sh: &Shared, item: &str, criterion: &str) -> bool {
        sh.labels
            .contains_key(&(item.to_owned(), criterion.to_owned()))
            || self
                .pending
                .iter()
                .flatten()
                .any(|(i, c)| i == item && c == criterion)
    }

    fn label_action(&mut self, sh: &mut Shared, action: Action) -> Outcome {
        let criteria = sh.label_criteria();
        let n = criteria.len();
        Outcome::from(match action {
            Action::NextCriterion if n > 0 => {
                self.criterion = (self.criterion + 1).min(n - 1);
                Vec::new()
            }
            Action::PrevCriterion => {
                self.criterion = self.criterion.saturating_sub(1);
                Vec::new()
            }
            Action::NextItem => self.next_item(sh, 1),
            // A pair's two answers scroll together; any other item's text scrolls alone.
            Action::PageDown | Action::PageUp => {
                if !self.scroll_pair(sh, action == Action::PageDown) {
                    self.scroll_item(sh, action == Action::PageDown);
                }
                Vec::new()
            }
            Action::PrevItem => self.next_item(sh, -1),
            Action::Note => return Outcome::Modal(Modal::Note(LineInput::default())),
            Action::Blind => {
                self.blind = !self.blind;
                sh.message = Some(format!(
                    "blind mode {}",
                    if self.blind { "on" } else { "off" }
                ));
                Vec::new()
            }
            Action::Adjudicate => self.toggle_adjudication(sh),
            Action::ToolCalls => self.toggle_tool_calls(sh),
            Action::Queue => self.next_queue(sh),
            Action::Undo => {
                let Some((seq, item, criterion)) = self.saved.pop() else {
                    sh.message = Some("nothing to undo in this sitting".into());
                    return Outcome::none();
                };
                let Some(b) = &sh.browse else {
                    return Outcome::none();
                };
                let dataset = b.dataset;
                self.pending.push_back(None);
                // Back to the label undone (it may be on the item before), so the next key
                // answers it again.
                let mut effects = self.go_to(sh, &item, &criterion);
                effects.push(Effect::Undo {
                    dataset,
                    seq,
                    item,
                    criterion,
                });
                effects
            }
            Action::Met
            | Action::Unmet
            | Action::CannotAssess
            | Action::Choice(_)
            | Action::PreferA
            | Action::PreferB
            | Action::PreferTie => {
                let Some(c) = criteria.get(self.criterion) else {
                    // Never silently: the key answered nothing.
                    let opening = sh.browse.as_ref().is_some_and(|b| !b.opened);
                    sh.message = Some(if opening {
                        "not labelled: the dataset's rubric and labels are still being read".into()
                    } else {
                        "not labelled: there is no rubric to label with (add one in Rubrics)".into()
                    });
                    return Outcome::none();
                };
                let Some(b) = &sh.browse else {
                    return Outcome::none();
                };
                let Some(item) = b.current() else {
                    sh.message = Some("the item is still loading".into());
                    return Outcome::none();
                };
                let verdict = match key_label(sh, item, c, action) {
                    Ok(v) => v,
                    Err(why) => {
                        sh.message = Some(why);
                        return Outcome::none();
                    }
                };
                let (rubric, version) = sh
                    .labelling_rubric()
                    .map(|r| (r.id.clone(), r.version.clone()))
                    .unwrap_or_default();
                let effect = Effect::SaveLabel {
                    dataset: b.dataset,
                    item: item.id.clone(),
                    criterion: c.id.clone(),
                    verdict,
                    note: String::new(),
                    rubric,
                    rubric_version: version,
                };
                self.pending
                    .push_back(Some((item.id.clone(), c.id.clone())));
                // On to the item's next criterion still without a label (never one that
                // has one: the next key would silently replace it); when none is left, the
                // next item in the queue — except in blind mode, where the item stays until
                // its reveal is seen.
                let item = item.id.clone();
                if let Some(next) = self.next_unanswered(sh, &item, self.criterion) {
                    self.criterion = next;
                    vec![effect]
                } else if self.blind {
                    sh.message = Some(
                        "labelled: the judge's verdicts are shown; n (or →) for the next item"
                            .into(),
                    );
                    vec![effect]
                } else {
                    self.criterion = 0;
                    let mut out = vec![effect];
                    out.extend(self.next_item(sh, 1));
                    out
                }
            }
            _ => return Outcome::Ignored,
        })
    }

    /// Saves the current criterion's label again with a note (a label must exist).
    pub fn save_note(&mut self, sh: &mut Shared, note: String) -> Vec<Effect> {
        let criteria = sh.label_criteria();
        let Some(c) = criteria.get(self.criterion) else {
            return Vec::new();
        };
        let Some(b) = &sh.browse else {
            return Vec::new();
        };
        let Some(item) = b.current() else {
            return Vec::new();
        };
        let Some(verdict) = sh.labels.get(&(item.id.clone(), c.id.clone())).cloned() else {
            sh.message = Some(format!("label '{}' first, then add a note", c.name));
            return Vec::new();
        };
        let (rubric, rubric_version) = sh
            .labelling_rubric()
            .map(|r| (r.id.clone(), r.version.clone()))
            .unwrap_or_default();
        self.pending
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
    pub fn next_item(&mut self, sh: &mut Shared, dir: isize) -> Vec<Effect> {
        if dir < 0 || self.queue == Queue::InOrder {
            return sh.move_cursor(dir);
        }
        let mut fallback = None;
        if self.queue.planned() {
            if let Some(row) = self.planned_row(sh) {
                let cursor = sh.browse.as_ref().map_or(0, |b| b.cursor);
                let delta =
                    isize::try_from(row).unwrap_or(0) - isize::try_from(cursor).unwrap_or(0);
                return sh.move_cursor(delta);
            }
            // No plan yet (or nothing left in it): the unlabelled items, in order.
            let why = match sh.plan.as_ref().map(|p| &p.plan) {
                Some(Err(e)) => format!("labels next: {e}"),
                Some(Ok(_)) if !sh.planning => {
                    "labels next: every planned item is labelled; on with unlabelled items".into()
                }
                _ => "labels next: still working out the order; on with unlabelled items".into(),
            };
            fallback = Some(why);
        }
        let Some(b) = &sh.browse else {
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
            let rubric = sh.item_rubric(position);
            let criteria = rubric.as_ref().map_or(&[][..], |r| &r.criteria[..]);
            // With an assignment, the queues keep to the annotator's own items.
            if sh
                .assignment
                .as_ref()
                .is_some_and(|mine| !mine.contains(&id))
            {
                return false;
            }
            match self.queue {
                Queue::UnlabelledFirst | Queue::WhereItMatters | Queue::BetweenTopTwo => {
                    criteria.iter().any(|c| !self.answered(sh, &id, &c.id))
                }
                // Adjudicating: where the annotators differ and nothing is settled yet.
                Queue::DisagreementsFirst if sh.adjudicating() => criteria
                    .iter()
                    .any(|c| self.peers_differ(sh, &id, &c.id) && !self.answered(sh, &id, &c.id)),
                // Where the run joined with the labels found them differing (the join is
                // worked out again in the runtime as the labels change).
                Queue::DisagreementsFirst => b
                    .run
                    .as_ref()
                    .and_then(|r| sh.stats.join(&r.manifest.id))
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
                    Some(format!("queue {}: wrapped to the top", self.queue.name())),
                ),
                _ => (
                    from.min(rows.saturating_sub(1)),
                    Some(format!(
                        "queue {}: no other item left; on in order",
                        self.queue.name()
                    )),
                ),
            },
        };
        let delta = isize::try_from(target).unwrap_or(0) - isize::try_from(cursor).unwrap_or(0);
        let out = sh.move_cursor(delta);
        if note.is_some() {
            sh.message = note;
        } else if fallback.is_some() {
            sh.message = fallback;
        }
        out
    }
}

/// The label a key gives `c` of `item` (a pair's: the candidate shown on the side
/// chosen), or why the key does not answer it.
fn key_label(
    sh: &Shared,
    item: &crate::model::Item,
    c: &crate::model::Criterion,
    action: Action,
) -> Result<serde_json::Value, String> {
    let rubric = sh.labelling_rubric();
    if item.candidates.len() > 2 && rubric.as_ref().is_some_and(|r| r.mode.is_pairwise()) {
        return Err(format!(
            "not labelled: '{}' has {} candidates; preferences are labelled on pairs of two",
            item.id,
            item.candidates.len()
        ));
    }
    let shown = Shown::of(item, rubric.as_deref());
    let label = match &shown {
        Some(shown) => shown.label_for(action),
        None => verdict_for(c, action).map(|v| v.label_value()),
    };
    label.ok_or_else(|| {
        if shown.is_some() {
            format!(
                "'{}' compares two answers: say which is better ({})",
                c.name,
                view::pair_choices(sh)
            )
        } else {
            format!("that key does not answer '{}'", c.name)
        }
    })
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl LabelPane {
    /// A label is on disk: counted, remembered for undo, shown.
    #[allow(clippy::too_many_arguments)] // the message's fields, as the runtime says them
    pub fn label_saved(
        &mut self,
        sh: &mut Shared,
        compared: &[Arc<crate::tui::data::RunData>],
        seq: u64,
        item: String,
        criterion: String,
        verdict: serde_json::Value,
        note: String,
    ) -> Vec<Effect> {
        if note.is_empty() {
            sh.notes.remove(&(item.clone(), criterion.clone()));
        } else {
            sh.notes.insert((item.clone(), criterion.clone()), note);
        }
        self.pending.pop_front();
        self.sitting += 1;
        self.started.get_or_insert(sh.now);
        self.saved.push((seq, item.clone(), criterion.clone()));
        // A label that replaces another says so (a key typed on an answered criterion).
        let key = (item, criterion);
        sh.message = Some(match sh.labels.get(&key).filter(|b| **b != verdict) {
            Some(b) => {
                let undo = sh
                    .keymap
                    .keys_for(crate::tui::keymap::Context::Label, Action::Undo)
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
        Arc::make_mut(&mut sh.labels).insert(key, verdict);
        sh.labels_gen += 1;
        sh.label_changed(compared, &item);
        Vec::new()
    }

    /// An undo is on disk: the label is what it was before.
    pub fn label_undone(
        &mut self,
        sh: &mut Shared,
        compared: &[Arc<crate::tui::data::RunData>],
        item: String,
        criterion: String,
        verdict: Option<serde_json::Value>,
    ) -> Vec<Effect> {
        let key = (item, criterion);
        let now = verdict.as_ref().map_or_else(
            || "unlabelled".to_owned(),
            crate::tui::open_dataset::label_text,
        );
        match verdict {
            Some(v) => Arc::make_mut(&mut sh.labels).insert(key.clone(), v),
            None => Arc::make_mut(&mut sh.labels).remove(&key),
        };
        sh.labels_gen += 1;
        sh.label_changed(compared, &key.0);
        self.pending.pop_front();
        self.sitting = self.sitting.saturating_sub(1);
        sh.message = Some(format!("undone: {} '{}' is {now} again", key.0, key.1));
        Vec::new()
    }

    /// A label (or undo) was not written: no longer pending, and the reason shown.
    pub fn label_failed(&mut self, sh: &mut Shared, failure: Failure) -> Vec<Effect> {
        self.pending.pop_front();
        sh.failed(failure);
        Vec::new()
    }
}
