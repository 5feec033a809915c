//! Which run items' reasons the screen needs, asked for when they are not held: the item
//! list's rows around its cursor in Results, the open item (and its neighbours) in
//! Datasets. One read at a time; an answer replaces what was held.

use super::app::{App, Effect, Pane};
use super::data::RunData;
use crate::model::CriterionResult;
use std::collections::HashMap;
use std::sync::Arc;

/// How many list heights beyond the screen a read covers, each way, so that moving row
/// by row reads the journal again only every few pages.
const MARGIN: usize = 2;

impl App {
    /// The read the screen needs now, if its items' reasons are neither held nor asked for.
    pub(super) fn want_run_details(&mut self) -> Vec<Effect> {
        let Some((run, on_screen, around)) = self.details_wanted() else {
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

    /// The run whose items are on screen, their dataset positions, and the wider set to
    /// read.
    fn details_wanted(&self) -> Option<(Arc<RunData>, Vec<usize>, Vec<usize>)> {
        let height = self.list_height();
        let (run, indices) = match self.pane {
            Pane::Results if self.results.compare.is_none() && self.results.calibrate.is_none() => {
                let run = self.shown_run()?;
                let view = self.results.items.as_ref()?;
                let selected = view.cursor.min(view.rows.len().saturating_sub(1));
                let first = (selected + 1).saturating_sub(height);
                let shown = first..(first + height).min(view.rows.len());
                let wide = first.saturating_sub(MARGIN * height)
                    ..(first + (MARGIN + 1) * height).min(view.rows.len());
                let pick = |r: std::ops::Range<usize>| -> Vec<usize> {
                    view.rows.get(r).unwrap_or_default().to_vec()
                };
                (run, (pick(shown), pick(wide)))
            }
            Pane::Datasets => {
                let b = self.browse.as_ref().filter(|b| b.detail)?;
                let run = b.run.clone()?;
                let i = run.find(&b.current()?.id)?;
                let wide =
                    i.saturating_sub(MARGIN * height)..(i + MARGIN * height + 1).min(run.len());
                (run, (vec![i], wide.collect()))
            }
            _ => return None,
        };
        let positions = |is: Vec<usize>| -> Vec<usize> {
            is.into_iter().filter_map(|i| run.position(i)).collect()
        };
        let (shown, wide) = indices;
        let (shown, wide) = (positions(shown), positions(wide));
        Some((run, shown, wide))
    }

    /// A read of run items' reasons came back.
    pub(super) fn run_details_read(
        &mut self,
        run_id: String,
        positions: &[usize],
        items: Result<HashMap<usize, (String, Vec<CriterionResult>)>, String>,
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
                details.run_id = run_id;
            }
            Err(e) => {
                self.message = Some(format!("could not read the run's reasons: {e}"));
                details.failed = Some(run_id);
            }
        }
        Vec::new()
    }
}
