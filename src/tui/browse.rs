//! The open dataset: which rows the list shows (all items, or a search's or filter's
//! matches), the cursor, and the window of items read around it — and the Datasets pane's
//! part of `App::update`.

use super::app::{App, Effect, MARGIN, PAGE};
use super::data::{Labels, RunData};
use super::effect::RunScan;
use super::keymap::Action;
use super::run_scan::RunFilter;
use crate::model::{Item, Rubric};
use std::sync::Arc;

/// Which items the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Unlabelled,
    Labelled,
    Disagreement,
    Failed,
    /// The latest run's score below 50 %.
    ScoreLow,
    /// The latest run's score 50 % or more.
    ScoreHigh,
    /// One cell of a criterion's confusion matrix (0 human MET/judge MET, 1 MET/UNMET,
    /// 2 UNMET/MET, 3 UNMET/UNMET), from the Results pane.
    Cell {
        criterion: usize,
        cell: u8,
    },
}

impl Filter {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Filter::All => Filter::Unlabelled,
            Filter::Unlabelled => Filter::Labelled,
            Filter::Labelled => Filter::Disagreement,
            Filter::Disagreement => Filter::Failed,
            Filter::Failed => Filter::ScoreLow,
            Filter::ScoreLow => Filter::ScoreHigh,
            Filter::ScoreHigh | Filter::Cell { .. } => Filter::All,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Unlabelled => "unlabelled",
            Filter::Labelled => "labelled",
            Filter::Disagreement => "disagreement",
            Filter::Failed => "failed",
            Filter::ScoreLow => "score < 50%",
            Filter::ScoreHigh => "score ≥ 50%",
            Filter::Cell { .. } => "confusion cell",
        }
    }
}

/// The open dataset.
#[derive(Debug, Clone)]
pub struct Browse {
    pub dataset: usize,
    /// Items in the dataset once known (after its index is read).
    pub total: Option<usize>,
    /// Positions shown, in order: every item, or the matches of a search or filter.
    pub rows: Option<Vec<usize>>,
    /// The selected row.
    pub cursor: usize,
    /// The first row on screen.
    pub offset: usize,
    /// Items read so far around the view (position → item).
    pub window: std::collections::BTreeMap<usize, Item>,
    pub window_tag: u64,
    pub detail: bool,
    pub detail_scroll: u16,
    pub filter: Filter,
    /// The search being typed (`Some` while the search line is open).
    pub search: Option<String>,
    pub scan_tag: u64,
    /// A scan in progress: items read, of how many (`None` when none is running).
    pub scanning: Option<(usize, Option<usize>)>,
    /// Item ids by position (from the last scan), for filters on labels and results.
    pub ids: Vec<String>,
    pub run: Option<Arc<RunData>>,
    /// The rubric the dataset is labelled with (`data::labelling_rubric`).
    pub rubric: Option<Arc<Rubric>>,
    /// An item's own rubric is what it is labelled with: the latest run did not grade the
    /// dataset with another (as `grade --rubric` does).
    pub items_rubrics: bool,
    /// Its run, rubric and labels have been read (`Msg::Opened`).
    pub opened: bool,
}

impl Browse {
    /// The item position at a row.
    pub fn position(&self, row: usize) -> Option<usize> {
        match &self.rows {
            Some(rows) => rows.get(row).copied(),
            None => self.total.filter(|t| row < *t).map(|_| row),
        }
    }

    pub fn row_count(&self) -> usize {
        self.rows
            .as_ref()
            .map_or_else(|| self.total.unwrap_or(0), Vec::len)
    }

    pub fn current(&self) -> Option<&Item> {
        self.position(self.cursor).and_then(|p| self.window.get(&p))
    }
}

impl App {
    pub(super) fn open(&mut self, dataset: usize) -> Vec<Effect> {
        let tag = self.new_tag();
        self.shared.browse = Some(Browse {
            dataset,
            total: self.shared.datasets.get(dataset).and_then(|d| d.items),
            rows: None,
            cursor: 0,
            offset: 0,
            window: std::collections::BTreeMap::new(),
            window_tag: tag,
            detail: false,
            detail_scroll: 0,
            filter: Filter::All,
            search: None,
            scan_tag: 0,
            scanning: None,
            ids: Vec::new(),
            run: None,
            rubric: None,
            items_rubrics: true,
            opened: false,
        });
        self.label.criterion = 0;
        // Runs chosen, compared or listed belonged to the dataset before.
        self.results = super::results::ResultsState::default();
        vec![
            Effect::Open { dataset },
            Effect::LoadWindow {
                tag,
                dataset,
                start: 0,
                count: self.list_height() + MARGIN,
            },
        ]
    }

    pub(super) fn rescan(&mut self, query: String) -> Vec<Effect> {
        let tag = self.new_tag();
        let Some(b) = &mut self.shared.browse else {
            return Vec::new();
        };
        b.scan_tag = tag;
        if query.is_empty() && b.filter == Filter::All {
            b.scanning = None;
            b.rows = None;
            b.cursor = 0;
            b.offset = 0;
            return self.scrolled();
        }
        b.scanning = Some((0, b.total));
        vec![Effect::Scan {
            tag,
            dataset: b.dataset,
            query,
            run: Self::run_filter(b, &self.shared.labels),
        }]
    }

    /// Whether the item at `position` passes the open dataset's filter.
    pub(super) fn passes(b: &Browse, labels: &Labels, position: usize) -> bool {
        match b.filter {
            Filter::All => return true,
            // Kept by the run's pass in the scan (`run_filter`); without a run, none.
            Filter::Failed
            | Filter::ScoreLow
            | Filter::ScoreHigh
            | Filter::Cell { .. }
            | Filter::Disagreement => return b.run.is_some(),
            Filter::Unlabelled | Filter::Labelled => {}
        }
        let Some(id) = b.ids.get(position) else {
            return false;
        };
        let criteria: Vec<&str> = b
            .rubric
            .as_ref()
            .map(|r| r.criteria.iter().map(|c| c.id.as_str()).collect())
            .unwrap_or_default();
        let labelled = criteria
            .iter()
            .filter(|c| labels.contains_key(&(id.clone(), (**c).to_owned())))
            .count();
        if b.filter == Filter::Unlabelled {
            labelled < criteria.len().max(1)
        } else {
            labelled > 0 && labelled == criteria.len()
        }
    }

    /// The open dataset's filter as a pass over its run joined with the labels, when it
    /// depends on the run.
    fn run_filter(b: &Browse, labels: &Arc<Labels>) -> Option<RunScan> {
        let filter = match b.filter {
            Filter::All | Filter::Unlabelled | Filter::Labelled => return None,
            Filter::Failed => RunFilter::Failed,
            Filter::ScoreLow => RunFilter::ScoreLow,
            Filter::ScoreHigh => RunFilter::ScoreHigh,
            Filter::Disagreement => RunFilter::Disagreement,
            Filter::Cell { criterion, cell } => {
                let c = b.rubric.as_ref()?.criteria.get(criterion)?;
                let (human, judge) = match cell {
                    0 => ("MET", "MET"),
                    1 => ("MET", "UNMET"),
                    2 => ("UNMET", "MET"),
                    _ => ("UNMET", "UNMET"),
                };
                RunFilter::Cell {
                    criterion: c.id.clone(),
                    human: human.to_owned(),
                    judge: judge.to_owned(),
                }
            }
        };
        Some(RunScan {
            run_id: b.run.as_ref()?.manifest.id.clone(),
            filter,
            labels: Arc::clone(labels),
        })
    }

    /// Moves the cursor by `delta` rows and asks for the items the view now needs.
    pub(super) fn move_cursor(&mut self, delta: isize) -> Vec<Effect> {
        let height = self.list_height();
        let Some(b) = &mut self.shared.browse else {
            return Vec::new();
        };
        let rows = b.row_count();
        if rows == 0 {
            return Vec::new();
        }
        let target = b.cursor.saturating_add_signed(delta).min(rows - 1);
        let moved = target != b.cursor;
        b.cursor = target;
        b.detail_scroll = 0;
        if b.cursor < b.offset {
            b.offset = b.cursor;
        } else if b.cursor >= b.offset + height {
            b.offset = b.cursor + 1 - height;
        }
        if moved {
            self.focus_first_unanswered();
        }
        self.scrolled()
    }

    /// Asks for the visible items that are not read yet (and a margin around them).
    pub(super) fn scrolled(&mut self) -> Vec<Effect> {
        let height = self.list_height();
        let tag = self.new_tag();
        let Some(b) = &mut self.shared.browse else {
            return Vec::new();
        };
        let visible: Vec<usize> = (b.offset..b.offset + height)
            .chain(std::iter::once(b.cursor))
            .filter_map(|r| b.position(r))
            .collect();
        let missing: Vec<usize> = visible
            .into_iter()
            .filter(|p| !b.window.contains_key(p))
            .collect();
        let (Some(&lo), Some(&hi)) = (missing.iter().min(), missing.iter().max()) else {
            return Vec::new();
        };
        if b.total.is_none() && !b.window.is_empty() {
            return Vec::new();
        }
        b.window_tag = tag;
        let start = lo.saturating_sub(MARGIN / 2);
        vec![Effect::LoadWindow {
            tag,
            dataset: b.dataset,
            start,
            count: hi + 1 - start + MARGIN,
        }]
    }

    pub(super) fn datasets_action(&mut self, action: Action) -> Vec<Effect> {
        if action == Action::OpenPath {
            return self.open_path_prompt();
        }
        if action == Action::NewArtifact {
            return self.new_artifact_from_item();
        }
        if self.shared.browse.is_none() {
            let n = self.shared.datasets.len();
            match action {
                Action::Up => self.shared.selected = self.shared.selected.saturating_sub(1),
                Action::Down if n > 0 => self.shared.selected = (self.shared.selected + 1).min(n - 1),
                Action::Open if n > 0 => return self.open(self.shared.selected),
                _ => {}
            }
            return Vec::new();
        }
        let page = isize::try_from(self.list_height().max(PAGE)).unwrap_or(10);
        if let Some(b) = &mut self.shared.browse
            && b.detail
        {
            let step: i32 = match action {
                Action::Up => -1,
                Action::Down => 1,
                Action::PageUp => -10,
                Action::PageDown => 10,
                _ => 0,
            };
            if step != 0 {
                b.detail_scroll =
                    u16::try_from((i32::from(b.detail_scroll) + step).max(0)).unwrap_or(0);
                return Vec::new();
            }
        }
        match action {
            Action::Up => self.move_cursor(-1),
            Action::Down => self.move_cursor(1),
            Action::PageUp => self.move_cursor(-page),
            Action::PageDown => self.move_cursor(page),
            Action::Top => self.move_cursor(isize::MIN / 2),
            Action::Bottom => self.move_cursor(isize::MAX / 2),
            Action::Open => {
                if let Some(b) = &mut self.shared.browse {
                    b.detail = !b.detail;
                }
                Vec::new()
            }
            Action::Back => {
                match &mut self.shared.browse {
                    Some(b) if b.detail => {
                        b.detail = false;
                        Vec::new()
                    }
                    // Back on the list of datasets: any added meanwhile show up.
                    _ => {
                        self.shared.browse = None;
                        vec![Effect::FindDatasets]
                    }
                }
            }
            Action::Search => {
                if let Some(b) = &mut self.shared.browse {
                    b.search = Some(String::new());
                }
                Vec::new()
            }
            Action::Filter => {
                let Some(b) = &mut self.shared.browse else {
                    return Vec::new();
                };
                b.filter = b.filter.next();
                self.shared.message = Some(format!("filter: {}", b.filter.name()));
                self.rescan(String::new())
            }
            _ => Vec::new(),
        }
    }
}

/// Answers of the runtime for this pane (routed here by `App::update`).
impl App {
    /// A window of the open dataset arrived (dropped when a newer one was asked for).
    pub(super) fn window_read(
        &mut self,
        tag: u64,
        total: usize,
        items: Vec<(usize, crate::model::Item)>,
    ) -> Vec<Effect> {
        if let Some(b) = &mut self.shared.browse
            && b.window_tag == tag
        {
            b.total = Some(total);
            for (p, item) in items {
                b.window.insert(p, item);
            }
            // Keep memory bounded: only what is near the view.
            let keep = b.offset.saturating_sub(4 * MARGIN)..b.offset + 5 * MARGIN;
            let keep_pos: std::collections::BTreeSet<usize> =
                keep.filter_map(|r| b.position(r)).collect();
            b.window.retain(|p, _| keep_pos.contains(p));
            if let Some(info) = self.shared.datasets.get_mut(b.dataset) {
                info.items = Some(total);
            }
        }
        if self.label.refocus {
            self.focus_first_unanswered();
        }
        Vec::new()
    }

    /// How far the running search or filter has read.
    pub(super) fn scan_progress(
        &mut self,
        tag: u64,
        read: usize,
        total: Option<usize>,
    ) -> Vec<Effect> {
        if let Some(b) = &mut self.shared.browse
            && b.scan_tag == tag
        {
            b.scanning = Some((read, total));
        }
        Vec::new()
    }

    /// A search or filter finished: its rows replace the list.
    pub(super) fn scanned(
        &mut self,
        tag: u64,
        matches: Vec<usize>,
        ids: Vec<String>,
    ) -> Vec<Effect> {
        if let Some(b) = &mut self.shared.browse
            && b.scan_tag == tag
        {
            b.scanning = None;
            // A filter on the run alone reads no item (its pass gives the positions).
            if !ids.is_empty() || b.total.is_none() {
                b.total = Some(ids.len());
            }
            b.ids = ids;
            let keep = |p: &usize| Self::passes(b, &self.shared.labels, *p);
            let rows: Vec<usize> = matches.into_iter().filter(keep).collect();
            b.rows = Some(rows);
            b.cursor = 0;
            b.offset = 0;
            return self.scrolled();
        }
        Vec::new()
    }
}
