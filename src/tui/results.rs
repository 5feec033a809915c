//! The Results pane's part of `App::update`: the selected criterion, a confusion cell's
//! items, the run's items (filtered by verdict or failure, opened), run comparison (both
//! sides move, a changed item opens), export, and whose labels are compared.

use super::app::{App, Effect, Filter, PAGE, Pane};
use super::data::RunData;
use super::keymap::Action;

/// The Results pane's state: the criterion selected, the item list, a comparison.
#[derive(Debug, Default, Clone)]
pub struct ResultsState {
    /// The criterion selected.
    pub cursor: usize,
    /// The list of the run's items (`i`, `v`, `F`), while it is shown.
    pub items: Option<ItemsView>,
    /// The run the latest is compared with (A; the latest is B), and how far back it is.
    pub compare: Option<std::sync::Arc<RunData>>,
    pub compare_back: usize,
    /// Side B of a comparison when it is not the latest run, and how far back it is.
    pub compare_b: Option<std::sync::Arc<RunData>>,
    pub compare_b_back: usize,
    /// The changed item selected in a comparison.
    pub compare_cursor: usize,
    /// A comparison's changed items (id, change, regression), worked out in `update` when
    /// either side changes, and the two runs (by identity) they were worked out for.
    pub moved: Vec<(String, f64, bool)>,
    pub moved_for: Option<(usize, usize)>,
    /// The criteria tables' figures for the runs on screen.
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
    /// The rows listed (indices of the run's items), worked out in `update` when what
    /// they depend on changes — never per frame (a run may hold a million items).
    pub rows: Vec<usize>,
    /// What `rows` were worked out for: the run (by identity), criterion, filters.
    rows_for: Option<(usize, Option<String>, Option<String>, bool)>,
}

/// A cell's verdict as the list shows it (`FAILED` for a cell that could not be graded).
pub fn verdict_text(x: &crate::model::CriterionResult) -> String {
    match (&x.verdict, &x.failure) {
        (Some(v), _) => v.to_string(),
        (None, Some(_)) => "FAILED".to_owned(),
        (None, None) => "-".to_owned(),
    }
}

/// The run's items the list shows, in dataset order.
pub fn item_rows<'a>(run: &'a RunData, view: &ItemsView, criterion: Option<&str>) -> Vec<&'a str> {
    positions(run, view, criterion)
        .into_iter()
        .map(|i| run.id(i))
        .collect()
}

/// The indices of the run's items the list shows.
fn positions(run: &RunData, view: &ItemsView, criterion: Option<&str>) -> Vec<usize> {
    let c = criterion.and_then(|c| run.criterion(c));
    (0..run.len())
        .filter(|&i| {
            let failed = !view.failed || run.any_failure(i);
            let verdict = match (&view.verdict, c) {
                (Some(want), Some(c)) => run.cell(i, c).text().as_ref() == Some(want),
                (Some(_), None) => criterion.is_none(),
                _ => true,
            };
            failed && verdict
        })
        .collect()
}

/// Every verdict the judge gave on a criterion in the run, each once, in order.
pub fn verdicts(run: &RunData, criterion: &str) -> Vec<String> {
    run.criterion(criterion)
        .map(|c| run.verdict_texts(c))
        .unwrap_or_default()
}

/// The items whose score or pass changed from run A to B: (id, change, regression),
/// regressions first, then the largest change.
pub fn moved<'a>(a: &RunData, b: &'a RunData) -> Vec<(&'a str, f64, bool)> {
    let mut moved: Vec<(&str, f64, bool)> = (0..b.len())
        .filter_map(|ib| {
            let id = b.id(ib);
            let ia = a.find(id)?;
            let d = b.score(ib).unwrap_or(0.0) - a.score(ia).unwrap_or(0.0);
            let regression = a.passed(ia) && !b.passed(ib);
            (d.abs() > 1e-12 || a.passed(ia) != b.passed(ib)).then_some((id, d, regression))
        })
        .collect();
    moved.sort_by(|p, q| {
        q.2.cmp(&p.2)
            .then(q.1.abs().total_cmp(&p.1.abs()))
            .then(p.0.cmp(q.0))
    });
    moved
}

impl App {
    pub(super) fn results_action(&mut self, action: Action) -> Vec<Effect> {
        let n = self
            .browse
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
                if let Some(b) = &mut self.browse {
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
                    self.message = Some(format!(
                        "export {what} as: c CSV · j JSONL · m Markdown (esc: no)"
                    ));
                } else {
                    self.message = Some("no run of this dataset to export".into());
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
                if let Some(b) = &self.browse {
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
                if let Some(b) = &self.browse {
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
                if let Some(b) = &self.browse {
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
        run: Option<std::sync::Arc<RunData>>,
        b: bool,
    ) -> Vec<Effect> {
        match (run, b) {
            (Some(run), true) => {
                self.results.compare_b_back = back;
                self.results.compare_b = Some(run);
            }
            (None, true) => self.message = Some("no run that far back".into()),
            (Some(run), false) => {
                self.results.compare_back = back;
                self.results.compare = Some(run);
            }
            (None, false) if back <= 1 => {
                self.message =
                    Some("there is no earlier run of this dataset to compare with".into());
                self.results.compare = None;
            }
            (None, false) => {
                self.message = Some("no run that far back".into());
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
            self.message = Some("not exported".into());
            return Vec::new();
        };
        let only = self
            .results
            .items
            .as_ref()
            .filter(|v| v.verdict.is_some() || v.failed)
            .map(|v| {
                let criterion = run
                    .rubric
                    .criteria
                    .get(self.results.cursor)
                    .map(|c| c.id.as_str());
                item_rows(&run, v, criterion)
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            });
        self.message = Some("exporting…".into());
        vec![Effect::ExportRun {
            run_id: run.manifest.id.clone(),
            format,
            only,
        }]
    }

    /// Works the item list's rows (and a comparison's changed items) out again when the
    /// run, the criterion or a filter changed since they were (after every message: a
    /// comparison of keys otherwise).
    pub(super) fn refresh_item_rows(&mut self) {
        let Some(run) = self.shown_run() else {
            return;
        };
        if self.pane == Pane::Results {
            let a = self.results.compare.clone();
            let runs: Vec<&RunData> = a.as_deref().into_iter().chain([&*run]).collect();
            self.results
                .stats
                .refresh(&runs, &self.labels, self.labels_gen);
        }
        if let Some(a) = self.results.compare.clone() {
            let key = (
                std::sync::Arc::as_ptr(&a) as usize,
                std::sync::Arc::as_ptr(&run) as usize,
            );
            if self.results.moved_for != Some(key) {
                self.results.moved = moved(&a, &run)
                    .into_iter()
                    .map(|(id, d, r)| (id.to_owned(), d, r))
                    .collect();
                self.results.moved_for = Some(key);
            }
        }
        let criterion = run
            .rubric
            .criteria
            .get(self.results.cursor)
            .map(|c| c.id.clone());
        let Some(view) = self.results.items.as_mut() else {
            return;
        };
        let key = (
            std::sync::Arc::as_ptr(&run) as usize,
            criterion.clone(),
            view.verdict.clone(),
            view.failed,
        );
        if view.rows_for.as_ref() != Some(&key) {
            view.rows = positions(&run, view, criterion.as_deref());
            view.rows_for = Some(key);
        }
    }

    /// The run shown: side B of a comparison (or the run chosen with `{` `}`), else the
    /// dataset's latest.
    pub(super) fn shown_run(&self) -> Option<std::sync::Arc<RunData>> {
        self.results
            .compare_b
            .clone()
            .or_else(|| self.browse.as_ref().and_then(|b| b.run.clone()))
    }

    /// Keys of a comparison: the changed items move and open.
    fn compare_action(&mut self, action: Action) -> Option<Vec<Effect>> {
        let b = self.shown_run()?;
        self.results.compare.as_ref()?;
        self.refresh_item_rows();
        let last = self.results.moved.len().saturating_sub(1);
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
                let id = self
                    .results
                    .moved
                    .get(self.results.compare_cursor)?
                    .0
                    .clone();
                let position = b.position(b.find(&id)?)?;
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
        self.refresh_item_rows();
        let view = self.results.items.as_mut()?;
        let last = view.rows.len().saturating_sub(1);
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
                let i = *view.rows.get(view.cursor)?;
                let (id, position) = (run.id(i).to_owned(), run.position(i)?);
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
        self.pane = Pane::Datasets;
        self.message = Some(format!("{id}: esc for the list · R back to Results"));
        self.scrolled()
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset.
    pub(super) fn next_annotator(&mut self) -> Vec<Effect> {
        let mut names = self.annotators.clone();
        if !names.contains(&self.annotator) {
            names.push(self.annotator.clone());
        }
        names.sort();
        let at = names.iter().position(|n| *n == self.annotator).unwrap_or(0);
        let Some(next) = names.get((at + 1) % names.len().max(1)).cloned() else {
            return Vec::new();
        };
        if next == self.annotator {
            self.message = Some(format!(
                "only {next} has labels for this dataset; type another name in rubricate.yaml (annotator:) or at the Label prompt"
            ));
            return Vec::new();
        }
        self.annotator.clone_from(&next);
        self.label.refocus_on_open = true;
        self.annotator_confirmed = true;
        self.annotator_prompt = None;
        self.message = Some(format!(
            "labels of {next}: shown, and new labels are {next}'s"
        ));
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.browse.as_ref().map(|b| b.dataset),
        }]
    }
}
