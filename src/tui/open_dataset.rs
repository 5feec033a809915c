//! The open dataset: which rows the list shows (all items, or a search's or filter's
//! matches), the cursor, and the window of items read around it. The Datasets and Label
//! panes both walk it, so it is part of `Shared`.

use super::data::{DatasetInfo, Labels, RunData};
use super::effect::Effect;
use super::effect::RunScan;
use super::run_scan::RunFilter;
use super::shared::{MARGIN, Shared};
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
    pub search: Option<super::widgets::LineInput>,
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

impl Shared {
    pub(super) fn open(&mut self, dataset: usize) -> Vec<Effect> {
        let tag = self.new_tag();
        self.browse = Some(Browse {
            dataset,
            total: self.datasets.get(dataset).and_then(|d| d.items),
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
        // Panes that keep something of the dataset before (a criterion focused, runs
        // compared) see the count change and start again.
        self.opens += 1;
        self.item_moves += 1;
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
        let Some(b) = &mut self.browse else {
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
            run: Self::run_filter(b, &self.labels),
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
        let Some(b) = &mut self.browse else {
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
            self.item_moves += 1;
        }
        self.scrolled()
    }

    /// Asks for the visible items that are not read yet (and a margin around them).
    pub(super) fn scrolled(&mut self) -> Vec<Effect> {
        let height = self.list_height();
        let tag = self.new_tag();
        let Some(b) = &mut self.browse else {
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
}

/// Answers of the runtime about the open dataset (routed here by `App::update`).
impl Shared {
    /// A window of the open dataset arrived (dropped when a newer one was asked for).
    pub(super) fn window_read(
        &mut self,
        tag: u64,
        total: usize,
        items: Vec<(usize, crate::model::Item)>,
    ) -> Vec<Effect> {
        if let Some(b) = &mut self.browse
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
            if let Some(info) = self.datasets.get_mut(b.dataset) {
                info.items = Some(total);
            }
            // The first items of the dataset the last sitting ended in: on to its item.
            if let Some((dataset, position)) = self.resume_item
                && dataset == b.dataset
            {
                self.resume_item = None;
                if position < total && b.cursor == 0 && b.rows.is_none() {
                    return self.move_cursor(isize::try_from(position).unwrap_or(0));
                }
            }
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
        if let Some(b) = &mut self.browse
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
        if let Some(b) = &mut self.browse
            && b.scan_tag == tag
        {
            b.scanning = None;
            // A filter on the run alone reads no item (its pass gives the positions).
            if !ids.is_empty() || b.total.is_none() {
                b.total = Some(ids.len());
            }
            b.ids = ids;
            let keep = |p: &usize| Self::passes(b, &self.labels, *p);
            let rows: Vec<usize> = matches.into_iter().filter(keep).collect();
            b.rows = Some(rows);
            b.cursor = 0;
            b.offset = 0;
            return self.scrolled();
        }
        Vec::new()
    }

    /// A dataset file was registered: listed (once) and opened.
    pub fn dataset_added(&mut self, info: DatasetInfo) -> Vec<Effect> {
        let i = if let Some(i) = self.datasets.iter().position(|d| d.path == info.path) {
            i
        } else {
            self.datasets.push(info);
            self.datasets.len() - 1
        };
        self.selected = i;
        self.message = Some(format!(
            "{}: registered in this workspace (it stays in the list)",
            self.datasets[i].path.display()
        ));
        self.open(i)
    }

    /// The rubric the item at `position` is labelled with: its own when it brings one (an
    /// agentv case, an autorubric item) and no run graded the dataset with another, else the
    /// dataset's (`data::labelling_rubric`).
    pub fn item_rubric(&self, position: Option<usize>) -> Option<Arc<Rubric>> {
        let b = self.browse.as_ref()?;
        position
            .and_then(|p| b.window.get(&p))
            .filter(|_| b.items_rubrics)
            .and_then(|i| i.rubric.clone())
            .or_else(|| b.rubric.clone())
    }

    /// The rubric the current item is labelled with.
    pub fn labelling_rubric(&self) -> Option<Arc<Rubric>> {
        let b = self.browse.as_ref()?;
        self.item_rubric(b.position(b.cursor))
    }

    /// The criteria being labelled (the current item's rubric's).
    pub fn label_criteria(&self) -> Vec<crate::model::Criterion> {
        self.labelling_rubric()
            .map(|r| r.criteria.clone())
            .unwrap_or_default()
    }

    /// The dataset's latest run, rubric and labels were read: kept when it is still the
    /// open one (`false`: another opened since, the answer is dropped).
    #[allow(clippy::too_many_arguments)] // the message's fields, as the runtime says them
    pub fn opened(
        &mut self,
        dataset: usize,
        run: Option<Arc<RunData>>,
        rubric: Option<Arc<Rubric>>,
        labels: Labels,
        notes: std::collections::BTreeMap<(String, String), String>,
        annotators: Vec<String>,
        peers: std::collections::BTreeMap<String, Labels>,
        assignment: Option<std::collections::BTreeSet<String>>,
    ) -> bool {
        let Some(b) = &mut self.browse else {
            return false;
        };
        if b.dataset != dataset {
            return false;
        }
        self.peers = peers;
        self.assignment = assignment;
        b.items_rubrics = run.as_ref().is_none_or(|r| {
            !crate::run::RunSettings::of(&r.manifest).is_ok_and(|s| s.override_rubric)
        });
        b.run = run;
        // Items read of an earlier state of the run (it may have grown) go.
        self.run_details = super::data::RunDetails::default();
        b.opened = true;
        if rubric.is_some() {
            b.rubric = rubric;
        }
        self.labels = Arc::new(labels);
        self.labels_gen += 1;
        self.notes = notes;
        self.annotators = annotators;
        true
    }

    /// Shows one item in the Datasets pane (the whole list, the item open).
    pub fn show_item(&mut self, id: &str, position: usize) -> Vec<Effect> {
        let height = self.list_height();
        // A scan still running would replace the list: its answer is dropped.
        let stale = self.new_tag();
        let Some(b) = &mut self.browse else {
            return Vec::new();
        };
        b.filter = Filter::All;
        b.rows = None;
        b.search = None;
        b.scanning = None;
        b.scan_tag = stale;
        b.cursor = position;
        b.offset = position.saturating_sub(height / 2);
        b.detail = true;
        b.detail_scroll = 0;
        self.message = Some(format!("{id}: esc for the list · R back to Results"));
        self.scrolled()
    }
}

/// What the dataset file says of the item for each criterion of `rubric` (its
/// `ground_truth`, as `rubricate score` reads it), by criterion; empty when it says
/// nothing or does not fit the rubric.
pub fn file_verdicts(item: &Item, rubric: &Rubric) -> Vec<Option<String>> {
    item.ground_truth
        .as_ref()
        .and_then(|gt| gt.resolve(rubric).ok())
        .map(|v| v.into_iter().map(|v| v.map(|v| v.to_string())).collect())
        .unwrap_or_default()
}

/// A label's verdict as text (numbers as written).
pub fn label_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}
