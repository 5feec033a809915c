//! Which run items the screen needs, asked for when they are not held: the item list's rows
//! around its cursor in Results, the Datasets list's rows (their score) or the open item,
//! the item being labelled (the judge's verdicts). One read at a time; an answer replaces
//! what was held. And a run's join with the labels, when it comes back.

use super::data::RunData;
use super::effect::Effect;
use super::run_data::ItemDetail;
use super::run_scan::LabelJoin;
use super::shared::Shared;
use std::collections::HashMap;
use std::sync::Arc;

/// How many list heights beyond the screen a read covers, each way, so that moving row
/// by row reads the journal again only every few pages.
pub const DETAILS_MARGIN: usize = 2;

/// The run items a pane shows: the run, their dataset positions on screen, and the wider
/// set to read.
pub struct RunRows {
    pub run: Arc<RunData>,
    pub on_screen: Vec<usize>,
    pub around: Vec<usize>,
}

impl Shared {
    /// The read the screen needs now (`rows`: what the pane in front shows), if its items
    /// are neither held nor asked for.
    pub fn want_run_details(&mut self, rows: Option<RunRows>) -> Vec<Effect> {
        let Some(RunRows {
            run,
            on_screen,
            around,
        }) = rows
        else {
            return Vec::new();
        };
        let id = &run.manifest.id;
        if on_screen.is_empty()
            || self.run_details.covers(id, &on_screen)
            || self.run_details.failed.as_deref() == Some(id)
            || self.run_details.loading.is_some()
        {
            return Vec::new();
        }
        self.run_details.loading = Some((id.clone(), around.clone()));
        vec![Effect::LoadRunDetails {
            run_id: id.clone(),
            positions: around,
        }]
    }

    /// The open dataset's run items on screen: the list's rows (each shows its score), or
    /// the open (or labelled) item alone (`one`: its verdicts and reasons).
    pub fn browse_run_rows(&self, one: bool) -> Option<RunRows> {
        let height = self.list_height();
        let b = self.browse.as_ref()?;
        let run = b.run.clone()?;
        let n = b.row_count();
        let pick = |rows: std::ops::Range<usize>| -> Vec<usize> {
            rows.filter_map(|r| b.position(r)).collect()
        };
        let on_screen = if one {
            b.position(b.cursor).into_iter().collect()
        } else {
            pick(b.offset..(b.offset + height).min(n))
        };
        let around = pick(
            b.offset.saturating_sub(DETAILS_MARGIN * height)
                ..(b.offset + (DETAILS_MARGIN + 1) * height).min(n),
        );
        Some(RunRows {
            run,
            on_screen,
            around,
        })
    }

    /// A read of run items came back.
    pub fn run_details_read(
        &mut self,
        run_id: String,
        positions: &[usize],
        items: Result<HashMap<usize, ItemDetail>, String>,
    ) -> Vec<Effect> {
        let details = &mut self.run_details;
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
                self.message = Some(format!("could not read the run's items: {e}"));
                details.failed = Some(run_id);
            }
        }
        Vec::new()
    }

    /// A run's join with the labels came back: its figures are worked out once, here.
    pub fn labels_joined(
        &mut self,
        compared: &[Arc<RunData>],
        run_id: &str,
        labels_gen: u64,
        join: Result<Arc<LabelJoin>, String>,
    ) -> Vec<Effect> {
        let run = self
            .browse
            .as_ref()
            .and_then(|b| b.run.clone())
            .into_iter()
            .chain(compared.iter().cloned())
            .find(|r| r.manifest.id == run_id);
        if let Err(e) = self
            .stats
            .joined(run.as_deref(), &self.labels, run_id, labels_gen, join)
        {
            self.message = Some(format!("could not join run {run_id} with the labels: {e}"));
        }
        Vec::new()
    }

    /// A label of `item` changed (the labels' generation moved on): each run's join is
    /// brought up to date from the item's cells when they are held (the item being
    /// labelled is).
    pub fn label_changed(&mut self, compared: &[Arc<RunData>], item: &str) {
        let open = self.browse.as_ref().and_then(|b| b.run.clone());
        for run in open.iter().chain(compared) {
            let held = self
                .run_details
                .items
                .iter()
                .filter(|_| self.run_details.run_id == run.manifest.id)
                .find(|(_, d)| d.id == item);
            if let Some((&position, d)) = held {
                self.stats
                    .patch(run, &self.labels, self.labels_gen, position, d);
            }
        }
    }
}
