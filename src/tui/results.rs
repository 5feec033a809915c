//! The Results pane's part of `App::update`: the selected criterion, a confusion cell's
//! items, the run's items (filtered by verdict or failure, opened), run comparison (both
//! sides move, a changed item opens), export, and whose labels are compared.

use super::app::{App, Effect, Filter, PAGE, Pane};
use super::data::RunData;
use super::keymap::Action;
use super::run_scan::{Comparison, ItemsQuery};
use std::sync::Arc;

pub use super::run_data::verdict_text;

/// The Results pane's state: the criterion selected, the item list, a comparison.
#[derive(Debug, Default, Clone)]
pub struct ResultsState {
    /// The criterion selected.
    pub cursor: usize,
    /// The list of the run's items (`i`, `v`, `F`), while it is shown.
    pub items: Option<ItemsView>,
    /// The run the latest is compared with (A; the latest is B), and how far back it is.
    pub compare: Option<Arc<RunData>>,
    pub compare_back: usize,
    /// Side B of a comparison when it is not the latest run, and how far back it is.
    pub compare_b: Option<Arc<RunData>>,
    pub compare_b_back: usize,
    /// The changed item selected in a comparison.
    pub compare_cursor: usize,
    /// The comparison of the two runs shown, from a pass over both in the runtime.
    pub comparison: Option<Arc<Comparison>>,
    /// A comparison asked for (runs A and B) and not answered yet.
    pub comparing: Option<(String, String)>,
    /// The runs' joins with the labels and the criteria tables' figures.
    pub stats: super::run_stats::StatsCache,
    /// The Calibrate view (`K`), while it is open.
    pub calibrate: Option<super::calibrate::CalibrateView>,
}

/// The Results pane's item list: which row is selected and what it shows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ItemsView {
    pub cursor: usize,
    /// Only items the judge gave this verdict on the selected criterion.
    pub verdict: Option<String>,
    /// Only items with a cell that could not be graded.
    pub failed: bool,
    /// The dataset positions of the items listed, from a pass over the run in the runtime
    /// (a few bytes per match); `None`: every item of the run, item `k` at position `k`.
    pub rows: Option<Vec<usize>>,
    /// The pass under way for the list (its tag): answers of older ones are dropped.
    pub filtering: Option<u64>,
    /// What `rows` are for.
    rows_for: Option<RowsFor>,
}

/// What an item list was worked out for: the run (and its size: a continued run grows),
/// the criterion selected and the filters.
#[derive(Debug, Clone, PartialEq)]
struct RowsFor {
    run: String,
    items: usize,
    criterion: Option<String>,
    verdict: Option<String>,
    failed: bool,
}

impl ItemsView {
    /// How many items the list shows.
    pub fn row_count(&self, run: &RunData) -> usize {
        self.rows.as_ref().map_or(run.len(), Vec::len)
    }

    /// The dataset position of the item at `row`.
    pub fn position(&self, run: &RunData, row: usize) -> Option<usize> {
        match &self.rows {
            Some(rows) => rows.get(row).copied(),
            None => (row < run.len()).then_some(row),
        }
    }

    /// Whether it keeps only some items (a verdict or failures).
    pub fn filtered(&self) -> bool {
        self.verdict.is_some() || self.failed
    }
}

/// Every verdict the judge gave on a criterion in the run, each once, in order.
pub fn verdicts(run: &RunData, criterion: &str) -> Vec<String> {
    run.criterion(criterion)
        .map(|c| run.verdict_texts(c))
        .unwrap_or_default()
}

impl App {
    pub(super) fn results_action(&mut self, action: Action) -> Vec<Effect> {
        let n = self
            .shared.browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .map_or(0, |r| r.rubric.criteria.len());
        if let Some(effects) = self.calibrate_action(action) {
            return effects;
        }
        if action == Action::Calibrate {
            return self.toggle_calibrate();
        }
        if self.results.compare.is_some()
            && let Some(effects) = self.compare_action(action)
        {
            return effects;
        }
        if let Some(effects) = self.items_action(action) {
            return effects;
        }
        match action {
            Action::Up => self.results.cursor = self.results.cursor.saturating_sub(1),
            Action::Down if n > 0 => self.results.cursor = (self.results.cursor + 1).min(n - 1),
            Action::Items | Action::NextVerdict | Action::FailedOnly => {
                self.results.items = Some(ItemsView::default());
                if action != Action::Items {
                    return self.results_action(action);
                }
            }
            // Jump to the items of one cell of the selected criterion's confusion matrix.
            Action::Choice(cell @ 1..=4) if n > 0 => {
                if let Some(b) = &mut self.shared.browse {
                    b.filter = Filter::Cell {
                        criterion: self.results.cursor,
                        cell: cell - 1,
                    };
                    b.detail = false;
                }
                self.pane = Pane::Datasets;
                return self.rescan(String::new());
            }
            Action::Export => {
                if self.shown_run().is_some() {
                    self.export_prompt = true;
                    let what = if self
                        .results
                        .items
                        .as_ref()
                        .is_some_and(|v| v.verdict.is_some() || v.failed)
                    {
                        "the items listed"
                    } else {
                        "the run"
                    };
                    self.shared.message = Some(format!(
                        "export {what} as: c CSV · j JSONL · m Markdown (esc: no)"
                    ));
                } else {
                    self.shared.message = Some("no run of this dataset to export".into());
                }
            }
            Action::Compare => {
                self.results.compare_cursor = 0;
                if self.results.compare.is_some() {
                    self.results.compare = None;
                    self.results.compare_b = None;
                    self.results.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.shared.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back: 1,
                        b: false,
                    }];
                }
            }
            Action::Older | Action::Newer if self.results.compare.is_some() => {
                let back = if action == Action::Older {
                    self.results.compare_back + 1
                } else {
                    self.results.compare_back.saturating_sub(1).max(1)
                };
                if let Some(b) = &self.shared.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: false,
                    }];
                }
            }
            // Side B moves too: any two runs of the dataset can be compared. Without a
            // comparison it is the run shown.
            Action::OlderB | Action::NewerB => {
                let back = if action == Action::OlderB {
                    self.results.compare_b_back + 1
                } else {
                    self.results.compare_b_back.saturating_sub(1)
                };
                if back == 0 {
                    self.results.compare_b = None;
                    self.results.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.shared.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: true,
                    }];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// The run to compare with arrived: side B when `b`, else side A (`None`: there is
    /// none that far back — A stays on the last one that existed).
    pub(super) fn earlier_run(
        &mut self,
        back: usize,
        run: Option<Arc<RunData>>,
        b: bool,
    ) -> Vec<Effect> {
        match (run, b) {
            (Some(run), true) => {
                self.results.compare_b_back = back;
                self.results.compare_b = Some(run);
            }
            (None, true) => self.shared.message = Some("no run that far back".into()),
            (Some(run), false) => {
                self.results.compare_back = back;
                self.results.compare = Some(run);
            }
            (None, false) if back <= 1 => {
                self.shared.message =
                    Some("there is no earlier run of this dataset to compare with".into());
                self.results.compare = None;
            }
            (None, false) => {
                self.shared.message = Some("no run that far back".into());
                self.results.compare_back = back - 1;
            }
        }
        Vec::new()
    }

    /// The answer to "export as?": the run shown, whole — or, while the item list is
    /// filtered, only the items it lists.
    pub(super) fn export_key(&mut self, k: &crossterm::event::KeyEvent) -> Vec<Effect> {
        use super::export::ExportFormat;
        use crossterm::event::KeyCode;
        self.export_prompt = false;
        let format = match k.code {
            KeyCode::Char('c') => Some(ExportFormat::Csv),
            KeyCode::Char('j') => Some(ExportFormat::Jsonl),
            KeyCode::Char('m') => Some(ExportFormat::Markdown),
            _ => None,
        };
        let (Some(format), Some(run)) = (format, self.shown_run()) else {
            self.shared.message = Some("not exported".into());
            return Vec::new();
        };
        let view = self.results.items.as_ref().filter(|v| v.filtered());
        if view.is_some_and(|v| v.filtering.is_some()) {
            self.shared.message = Some("the list is still being worked out: export once it shows".into());
            return Vec::new();
        }
        let only = view.and_then(|v| v.rows.clone());
        self.shared.message = Some("exporting…".into());
        vec![Effect::ExportRun {
            run_id: run.manifest.id.clone(),
            format,
            only,
        }]
    }

    /// The passes the Results pane needs and has not asked for: each run's join with the
    /// labels, the comparison of the two runs shown, the item list's matches (after every
    /// message: a comparison of keys otherwise).
    pub(super) fn want_results(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut runs: Vec<Arc<RunData>> = Vec::new();
        for r in [
            self.shared.browse.as_ref().and_then(|b| b.run.clone()),
            self.results.compare.clone(),
            self.results.compare_b.clone(),
        ]
        .into_iter()
        .flatten()
        {
            if !runs.iter().any(|x| x.manifest.id == r.manifest.id) {
                runs.push(r);
            }
        }
        // Joined with the labels where they are shown (Results' agreement, Label's queue).
        if matches!(self.pane, Pane::Results | Pane::Label) {
            let refs: Vec<&RunData> = runs.iter().map(|r| &**r).collect();
            effects.extend(
                self.results
                    .stats
                    .want(&refs, &self.shared.labels, self.shared.labels_gen),
            );
        }
        let Some(run) = self.shown_run() else {
            return effects;
        };
        if let Some(a) = &self.results.compare {
            let pair = (a.manifest.id.clone(), run.manifest.id.clone());
            let have = self
                .results
                .comparison
                .as_ref()
                .is_some_and(|c| (c.a.as_str(), c.b.as_str()) == (&pair.0[..], &pair.1[..]));
            if !have && self.results.comparing.as_ref() != Some(&pair) {
                self.results.comparing = Some(pair.clone());
                effects.push(Effect::CompareRuns {
                    a: pair.0,
                    b: pair.1,
                });
            }
        }
        let criterion = run
            .rubric
            .criteria
            .get(self.results.cursor)
            .map(|c| c.id.clone());
        let tag = self.new_tag();
        let Some(view) = self.results.items.as_mut() else {
            return effects;
        };
        let key = RowsFor {
            run: run.manifest.id.clone(),
            items: run.len(),
            criterion: criterion.clone(),
            verdict: view.verdict.clone(),
            failed: view.failed,
        };
        if view.rows_for.as_ref() == Some(&key) {
            return effects;
        }
        view.rows_for = Some(key);
        if !view.filtered() && run.dense {
            view.rows = None;
            view.filtering = None;
            return effects;
        }
        // Nothing listed until the pass answers.
        view.rows = Some(Vec::new());
        view.filtering = Some(tag);
        effects.push(Effect::FilterRunItems {
            tag,
            run_id: run.manifest.id.clone(),
            query: ItemsQuery {
                criterion,
                verdict: view.verdict.clone(),
                failed: view.failed,
            },
        });
        effects
    }

    /// The item list's matches came back (dropped when the list asked for others since).
    pub(super) fn run_items_filtered(
        &mut self,
        tag: u64,
        positions: Result<Vec<usize>, String>,
    ) -> Vec<Effect> {
        let Some(view) = self
            .results
            .items
            .as_mut()
            .filter(|v| v.filtering == Some(tag))
        else {
            return Vec::new();
        };
        view.filtering = None;
        match positions {
            Ok(positions) => {
                view.cursor = view.cursor.min(positions.len().saturating_sub(1));
                view.rows = Some(positions);
            }
            Err(e) => self.shared.message = Some(format!("could not list the run's items: {e}")),
        }
        Vec::new()
    }

    /// A comparison came back: shown while its two runs are the ones on screen.
    pub(super) fn compared(
        &mut self,
        a: &str,
        b: &str,
        result: Result<Arc<Comparison>, String>,
    ) -> Vec<Effect> {
        if self
            .results
            .comparing
            .as_ref()
            .is_some_and(|(x, y)| x == a && y == b)
        {
            self.results.comparing = None;
        }
        let shown = self
            .results
            .compare
            .as_ref()
            .map(|x| x.manifest.id.as_str())
            == Some(a)
            && self.shown_run().is_some_and(|x| x.manifest.id == b);
        if !shown {
            // Asked for before a side moved: not what the screen shows.
            return Vec::new();
        }
        match result {
            Ok(c) => {
                if c.mismatched > 0 {
                    self.shared.message = Some(format!(
                        "{} positions hold different items in the two runs (the dataset changed between them): those are not compared",
                        c.mismatched
                    ));
                }
                self.results.comparison = Some(c);
            }
            Err(e) => self.shared.message = Some(format!("could not compare the runs: {e}")),
        }
        Vec::new()
    }

    /// The comparison of the two runs shown, when it has been worked out.
    pub fn shown_comparison(&self) -> Option<&Comparison> {
        let a = self.results.compare.as_ref()?;
        let b = self.shown_run()?;
        self.results
            .comparison
            .as_deref()
            .filter(|c| c.a == a.manifest.id && c.b == b.manifest.id)
    }

    /// The run shown: side B of a comparison (or the run chosen with `{` `}`), else the
    /// dataset's latest.
    pub(super) fn shown_run(&self) -> Option<Arc<RunData>> {
        self.results
            .compare_b
            .clone()
            .or_else(|| self.shared.browse.as_ref().and_then(|b| b.run.clone()))
    }

    /// Keys of a comparison: the changed items move and open.
    fn compare_action(&mut self, action: Action) -> Option<Vec<Effect>> {
        self.results.compare.as_ref()?;
        let last = self
            .shown_comparison()
            .map_or(0, |c| c.moved.len().saturating_sub(1));
        match action {
            Action::Down => {
                self.results.compare_cursor = (self.results.compare_cursor + 1).min(last);
            }
            Action::Up => {
                self.results.compare_cursor = self.results.compare_cursor.saturating_sub(1);
            }
            Action::PageDown => {
                self.results.compare_cursor = (self.results.compare_cursor + PAGE).min(last);
            }
            Action::PageUp => {
                self.results.compare_cursor = self.results.compare_cursor.saturating_sub(PAGE);
            }
            Action::Open => {
                let (id, _, _, position) = self
                    .shown_comparison()?
                    .moved
                    .get(self.results.compare_cursor)?
                    .clone();
                return Some(self.open_item(&id, position));
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Keys of the item list: move, filter by the selected criterion's verdict or by
    /// failure, open, back to the criteria.
    fn items_action(&mut self, action: Action) -> Option<Vec<Effect>> {
        let run = self.shown_run()?;
        let criterion = run
            .rubric
            .criteria
            .get(self.results.cursor)
            .map(|c| c.id.clone());
        let view = self.results.items.as_mut()?;
        let last = view.row_count(&run).saturating_sub(1);
        match action {
            Action::Items | Action::Back => self.results.items = None,
            Action::Down => view.cursor = (view.cursor + 1).min(last),
            Action::Up => view.cursor = view.cursor.saturating_sub(1),
            Action::PageDown => view.cursor = (view.cursor + PAGE).min(last),
            Action::PageUp => view.cursor = view.cursor.saturating_sub(PAGE),
            Action::Top => view.cursor = 0,
            Action::Bottom => view.cursor = last,
            Action::NextVerdict => {
                // None → each verdict the judge gave on the criterion → None.
                let all = verdicts(&run, criterion.as_deref().unwrap_or_default());
                let next = match &view.verdict {
                    None => all.first().cloned(),
                    Some(v) => all.iter().skip_while(|x| *x != v).nth(1).cloned(),
                };
                view.verdict = next;
                view.cursor = 0;
            }
            Action::FailedOnly => {
                view.failed = !view.failed;
                view.cursor = 0;
            }
            Action::Open => {
                let position = view.position(&run, view.cursor)?;
                let id = self
                    .shared.run_details
                    .at(&run, position)
                    .map_or_else(|| format!("item {}", position + 1), |d| d.id.clone());
                return Some(self.open_item(&id, position));
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Shows one item in the Datasets pane (the whole list, the item open).
    fn open_item(&mut self, id: &str, position: usize) -> Vec<Effect> {
        let height = self.list_height();
        // A scan still running would replace the list: its answer is dropped.
        let stale = self.new_tag();
        let Some(b) = &mut self.shared.browse else {
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
        self.pane = Pane::Datasets;
        self.shared.message = Some(format!("{id}: esc for the list · R back to Results"));
        self.scrolled()
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset.
    pub(super) fn next_annotator(&mut self) -> Vec<Effect> {
        let mut names = self.shared.annotators.clone();
        if !names.contains(&self.shared.annotator) {
            names.push(self.shared.annotator.clone());
        }
        names.sort();
        let at = names.iter().position(|n| *n == self.shared.annotator).unwrap_or(0);
        let Some(next) = names.get((at + 1) % names.len().max(1)).cloned() else {
            return Vec::new();
        };
        if next == self.shared.annotator {
            self.shared.message = Some(format!(
                "only {next} has labels for this dataset; type another name in rubricate.yaml (annotator:) or at the Label prompt"
            ));
            return Vec::new();
        }
        self.shared.annotator.clone_from(&next);
        self.label.refocus_on_open = true;
        self.shared.annotator_confirmed = true;
        self.annotator_prompt = None;
        self.shared.message = Some(format!(
            "labels of {next}: shown, and new labels are {next}'s"
        ));
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.shared.browse.as_ref().map(|b| b.dataset),
        }]
    }
}
