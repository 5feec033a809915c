//! A pair item in the Label pane: its two answers shown **blind** — in an order shuffled
//! per item (seeded by the item's id, so the same item shows the same way whenever you
//! come back to it) and without the candidates' ids — and a person's preference saved as
//! the better candidate's id (or `tie`), never the side it was shown on.

use crate::model::pair::{ANSWER_TIE, Candidate, PairOrder, combine, order_id, preference};
use crate::model::{Item, Rubric, Verdict};
use crate::tui::keymap::Action;
use crate::tui::run_data::ItemDetail;

/// How one pair item is shown: which candidate is answer A (left, or on top) and which B.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// Answer A.
    pub a: &'a Candidate,
    /// Answer B.
    pub b: &'a Candidate,
}

impl<'a> Shown<'a> {
    /// The item shown as a pair, when it is one (two candidates) labelled with a pairwise
    /// rubric.
    pub fn of(item: &'a Item, rubric: Option<&Rubric>) -> Option<Self> {
        let [first, second] = item.candidates.as_slice() else {
            return None;
        };
        if !rubric.is_some_and(|r| r.mode.is_pairwise()) {
            return None;
        }
        // One bit of the id's digest: about half the items show the first candidate as B.
        Some(if crate::core::hash::sha256(&item.id)[0] & 1 == 1 {
            Self {
                a: second,
                b: first,
            }
        } else {
            Self {
                a: first,
                b: second,
            }
        })
    }

    /// The label a key gives: the candidate shown on that side, `tie`, or can't tell.
    pub fn label_for(&self, action: Action) -> Option<serde_json::Value> {
        Some(match action {
            Action::PreferA => serde_json::Value::String(self.a.id.clone()),
            Action::PreferB => serde_json::Value::String(self.b.id.clone()),
            Action::PreferTie => serde_json::Value::String(ANSWER_TIE.to_owned()),
            Action::CannotAssess => Verdict::CannotAssess.label_value(),
            _ => return None,
        })
    }

    /// A preference (a candidate's id, `tie`) as the screen says it: `A`, `B` or `tie`.
    pub fn side(&self, said: &str) -> String {
        if said == self.a.id {
            "A".into()
        } else if said == self.b.id {
            "B".into()
        } else {
            said.to_owned()
        }
    }

    /// The judge's combined verdict on written criterion `criterion` (both orders put
    /// together; an order-dependent answer a tie) as a side, from the run's cells.
    pub fn judge_side(&self, run: &Rubric, detail: &ItemDetail, criterion: &str) -> Option<String> {
        let said = |first: usize, second: usize| {
            let cell = detail.cell(&order_id(criterion, first, second))?;
            let order = PairOrder {
                criterion: criterion.to_owned(),
                first,
                second,
            };
            preference(&order, cell.verdict.as_ref()?)
        };
        let outcome = combine(said(0, 1)?, said(1, 0)?).outcome;
        Some(match outcome {
            crate::model::pair::Preference::Wins(w) => self.side(run.systems.get(w)?),
            crate::model::pair::Preference::Tie => ANSWER_TIE.to_owned(),
        })
    }
}

/// How far the answers may scroll: the rows the longer one takes at the narrowest width
/// it is shown in (each wrapped line counted), so scrolling never runs past its end.
pub fn max_scroll(shown: &Shown<'_>) -> u16 {
    const NARROWEST: usize = 30;
    let rows = |text: &str| -> usize {
        text.lines()
            .map(|l| l.chars().count().div_ceil(NARROWEST).max(1))
            .sum()
    };
    u16::try_from(rows(&shown.a.submission).max(rows(&shown.b.submission))).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Criterion;
    use crate::model::pair::Mode;

    fn pair(id: &str) -> Item {
        let candidate = |id: &str| Candidate {
            id: id.into(),
            submission: format!("{id}'s answer"),
        };
        Item {
            id: id.into(),
            candidates: vec![candidate("gpt"), candidate("claude")],
            ..Item::default()
        }
    }

    #[test]
    fn the_order_is_shuffled_per_item_stable_and_the_label_names_the_candidate() {
        let mut rubric = Rubric::new("r", vec![Criterion::binary("acc", "Accurate", 1.0)]);
        assert!(
            Shown::of(&pair("q0"), Some(&rubric)).is_none(),
            "not pairwise"
        );
        rubric.mode = Mode::Pairwise;
        let items: Vec<Item> = (0..40).map(|i| pair(&format!("q{i}"))).collect();
        let firsts: Vec<&str> = items
            .iter()
            .map(|i| Shown::of(i, Some(&rubric)).unwrap().a.id.as_str())
            .collect();
        // Both orders occur, and the same item shows the same way again.
        assert!(
            firsts.contains(&"gpt") && firsts.contains(&"claude"),
            "{firsts:?}"
        );
        let again: Vec<&str> = items
            .iter()
            .map(|i| Shown::of(i, Some(&rubric)).unwrap().a.id.as_str())
            .collect();
        assert_eq!(firsts, again);
        let swapped = items
            .iter()
            .find(|i| Shown::of(i, Some(&rubric)).unwrap().a.id == "claude")
            .unwrap();
        let shown = Shown::of(swapped, Some(&rubric)).unwrap();
        assert_eq!(shown.label_for(Action::PreferA), Some("claude".into()));
        assert_eq!(shown.label_for(Action::PreferB), Some("gpt".into()));
        assert_eq!(shown.label_for(Action::PreferTie), Some("tie".into()));
        assert_eq!(shown.label_for(Action::Met), None);
        assert_eq!(shown.side("gpt"), "B");
        assert_eq!(shown.side("tie"), "tie");
    }
}
