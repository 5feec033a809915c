//! Which run items the screen needs, asked for when they are not held: the item list's rows
//! around its cursor in Results, the Datasets list's rows (their score) or the open item,
//! the item being labelled (the judge's verdicts). One read at a time; an answer replaces
//! what was held. And a run's join with the labels, when it comes back.

use super::app::{App, Effect, Pane};
use super::data::RunData;
use super::run_data::ItemDetail;
use super::run_scan::LabelJoin;
use std::collections::HashMap;
use std::sync::Arc;

/// How many list heights beyond the screen a read covers, each way, so that moving row
/// by row reads the journal again only every few pages.
const MARGIN: usize = 2;

impl App {
    /// The read the screen needs now, if its items are neither held nor asked for.
    pub(super) fn want_run_details(&mut self) -> Vec<Effect> {
        let Some((run, on_screen, around)) = self.details_wanted() else {
            return Vec::new();
        };
        let id = &run.manifest.id;
        if on_screen.is_empty()
            || self.shared.run_details.covers(id, &on_screen)
            || self.shared.run_details.failed.as_deref() == Some(id)
            || self.shared.run_details.loading.is_some()
        {
            return Vec::new();
        }
        self.shared.run_details.loading = Some((id.clone(), around.clone()));
        vec![Effect::LoadRunDetails {
            run_id: id.clone(),
            positions: around,
        }]
    }

    /// The run whose items are on screen, their dataset positions, and the wider set to
    /// read.
    fn details_wanted(&self) -> Option<(Arc<RunData>, Vec<usize>, Vec<usize>)> {
        let height = self.list_height();
        match self.pane {
            Pane::Results if self.results.compare.is_none() && self.results.calibrate.is_none() => {
                let run = self.shown_run()?;
                let view = self.results.items.as_ref()?;
                let n = view.row_count(&run);
                let selected = view.cursor.min(n.saturating_sub(1));
                let first = (selected + 1).saturating_sub(height);
                let pick = |rows: std::ops::Range<usize>| -> Vec<usize> {
                    rows.filter_map(|k| view.position(&run, k)).collect()
                };
                let shown = pick(first..(first + height).min(n));
                let wide = pick(
                    first.saturating_sub(MARGIN * height)..(first + (MARGIN + 1) * height).min(n),
                );
                Some((run, shown, wide))
            }
            Pane::Datasets | Pane::Label => {
                let b = self.shared.browse.as_ref()?;
                let run = b.run.clone()?;
                let n = b.row_count();
                let pick = |rows: std::ops::Range<usize>| -> Vec<usize> {
                    rows.filter_map(|r| b.position(r)).collect()
                };
                // The list's rows show each item's score; the open (or labelled) item its
                // verdicts and reasons.
                let shown = if self.pane == Pane::Datasets && !b.detail {
                    pick(b.offset..(b.offset + height).min(n))
                } else {
                    b.position(b.cursor).into_iter().collect()
                };
                let wide = pick(
                    b.offset.saturating_sub(MARGIN * height)
                        ..(b.offset + (MARGIN + 1) * height).min(n),
                );
                Some((run, shown, wide))
            }
            _ => None,
        }
    }

    /// A read of run items came back.
    pub(super) fn run_details_read(
        &mut self,
        run_id: String,
        positions: &[usize],
        items: Result<HashMap<usize, ItemDetail>, String>,
    ) -> Vec<Effect> {
        let details = &mut self.shared.run_details;
        if details
            .loading
            .as_ref()
            .is_some_and(|(r, p)| *r == run_id && p == positions)
        {
            details.loading = None;
        }
        match items {
            Ok(items) => {
                details.items = items;
                let mut read = positions.to_vec();
                read.sort_unstable();
                details.read = read;
                details.run_id = run_id;
            }
            Err(e) => {
                self.shared.message = Some(format!("could not read the run's items: {e}"));
                details.failed = Some(run_id);
            }
        }
        Vec::new()
    }

    /// A run's join with the labels came back: its figures are worked out once, here.
    pub(super) fn labels_joined(
        &mut self,
        run_id: &str,
        labels_gen: u64,
        join: Result<Arc<LabelJoin>, String>,
    ) -> Vec<Effect> {
        let run = [
            self.shared.browse.as_ref().and_then(|b| b.run.clone()),
            self.results.compare.clone(),
            self.results.compare_b.clone(),
        ]
        .into_iter()
        .flatten()
        .find(|r| r.manifest.id == run_id);
        if let Err(e) =
            self.results
                .stats
                .joined(run.as_deref(), &self.shared.labels, run_id, labels_gen, join)
        {
            self.shared.message = Some(format!("could not join run {run_id} with the labels: {e}"));
        }
        Vec::new()
    }

    /// A label of `item` changed (the labels' generation moved on): each run's join is
    /// brought up to date from the item's cells when they are held (the item being
    /// labelled is).
    pub(super) fn label_changed(&mut self, item: &str) {
        let runs = [
            self.shared.browse.as_ref().and_then(|b| b.run.clone()),
            self.results.compare.clone(),
            self.results.compare_b.clone(),
        ];
        for run in runs.into_iter().flatten() {
            let held = self
                .shared.run_details
                .items
                .iter()
                .filter(|_| self.shared.run_details.run_id == run.manifest.id)
                .find(|(_, d)| d.id == item);
            if let Some((&position, d)) = held {
                self.results
                    .stats
                    .patch(&run, &self.shared.labels, self.shared.labels_gen, position, d);
            }
        }
    }
}
