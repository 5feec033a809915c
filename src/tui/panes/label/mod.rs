//! The Label pane: one item at a time, one key per verdict, on to the next criterion and
//! then the next item of the queue; notes, undo, blind mode and adjudication.

mod adjudicate;
mod keys;
mod pair;
mod scroll;
mod update;
pub mod view;

use std::time::Instant;

pub use keys::{choice_keys, verdict_for};

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
    /// The same order from the two runs that agree best with your labels only (`labels next
    /// --between`): the items they tell apart first, so the next labels settle which is better.
    BetweenTopTwo,
}

impl Queue {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Queue::InOrder => Queue::UnlabelledFirst,
            Queue::UnlabelledFirst => Queue::DisagreementsFirst,
            Queue::DisagreementsFirst => Queue::WhereItMatters,
            Queue::WhereItMatters => Queue::BetweenTopTwo,
            Queue::BetweenTopTwo => Queue::InOrder,
        }
    }

    /// The queue walks a "labels next" plan.
    pub fn planned(self) -> bool {
        matches!(self, Queue::WhereItMatters | Queue::BetweenTopTwo)
    }

    pub fn name(self) -> &'static str {
        match self {
            Queue::InOrder => "in order",
            Queue::UnlabelledFirst => "unlabelled first",
            Queue::DisagreementsFirst => "disagreements first",
            Queue::WhereItMatters => "where it matters (labels next)",
            Queue::BetweenTopTwo => "where the top two runs differ",
        }
    }
}

/// The labelling session.
#[derive(Debug, Clone, Default)]
pub struct LabelPane {
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
    /// How far a pair's answers are scrolled (rows; back to the top on another item).
    pub pair_scroll: u16,
    /// `Shared::item_moves` when the criterion was last focused: a move since focuses
    /// the new item's first criterion left to answer.
    focused_at: u64,
    /// How far the item's text is scrolled, and the item it was scrolled on (another item
    /// starts at the top).
    pub item_scroll: (String, u16),
    /// The furthest the item's text can scroll, as it was last drawn (the panel's size is
    /// known only when drawing; the keys stop there).
    pub item_scroll_max: std::cell::Cell<u16>,
    /// A conversation's tool calls shown in full, not folded to a line each.
    pub tools_open: bool,
}
