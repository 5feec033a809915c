//! What the Label pane shows of a long item: a pair's answers scrolled together, any other
//! item's text scrolled by page, and a conversation's tool calls folded or in full.

use super::LabelPane;
use super::pair::{Shown, max_scroll};
use crate::tui::effect::Effect;
use crate::tui::shared::Shared;

impl LabelPane {
    /// Scrolls a pair's answers by half a screen (`down` or up), never past the longer
    /// one's end; `false` when the item is not a pair (nothing scrolled).
    pub(super) fn scroll_pair(&mut self, sh: &Shared, down: bool) -> bool {
        let rubric = sh.labelling_rubric();
        let Some(shown) = sh
            .browse
            .as_ref()
            .and_then(|b| b.current())
            .and_then(|item| Shown::of(item, rubric.as_deref()))
        else {
            return false;
        };
        let step = 8;
        self.pair_scroll = if down {
            self.pair_scroll
                .saturating_add(step)
                .min(max_scroll(&shown).saturating_sub(1))
        } else {
            self.pair_scroll.saturating_sub(step)
        };
        true
    }

    /// Scrolls the item's text a page down (or up), within what was last drawn.
    pub(super) fn scroll_item(&mut self, sh: &Shared, down: bool) {
        let Some(id) = sh
            .browse
            .as_ref()
            .and_then(|b| b.current())
            .map(|i| i.id.clone())
        else {
            return;
        };
        if self.item_scroll.0 != id {
            self.item_scroll = (id, 0);
        }
        let page = sh.size.1.saturating_sub(6).max(1);
        let at = &mut self.item_scroll.1;
        *at = if down {
            at.saturating_add(page).min(self.item_scroll_max.get())
        } else {
            at.saturating_sub(page)
        };
    }

    /// `x`: a conversation's tool calls in full, or folded to a line each.
    pub(super) fn toggle_tool_calls(&mut self, sh: &mut Shared) -> Vec<Effect> {
        self.tools_open = !self.tools_open;
        sh.message = Some(
            if self.tools_open {
                "tool calls in full (x folds them)"
            } else {
                "tool calls folded to a line each (x shows them in full)"
            }
            .into(),
        );
        Vec::new()
    }
}
