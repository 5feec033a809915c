//! The Results pane's part of `App::update`: its keys, actions and the runtime's answers.

use crate::tui::data::RunData;
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::modal::Modal;
use crate::tui::msg::Msg;
use crate::tui::open_dataset::Filter;
use crate::tui::pane::{Nav, Outcome, Pane, PaneId};
use crate::tui::run_details::{DETAILS_MARGIN, RunRows};
use crate::tui::run_scan::{Comparison, ItemsQuery};
use crate::tui::shared::{PAGE, Shared};
use ratatui::Frame;
use ratatui::layout::Rect;
use std::sync::Arc;

use super::{ItemsView, ResultsPane, RowsFor, verdicts, view};

impl Pane for ResultsPane {
    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        self.results_action(sh, action)
    }

    /// The passes it needs and has not asked for (a new dataset starts it again first).
    fn wants(&mut self, sh: &mut Shared) -> Vec<Effect> {
        self.start_again_if_reopened(sh);
        let mut effects = self.want_results(sh);
        effects.extend(self.want_calibration(sh));
        effects
    }

    fn run_rows(&self, sh: &Shared) -> Option<RunRows> {
        if self.compare.is_some() || self.calibrate.is_some() || self.align.is_some() {
            return None;
        }
        let height = sh.list_height();
        let run = self.shown_run(sh)?;
        let view = self.items.as_ref()?;
        let n = view.row_count(&run);
        let selected = view.cursor.min(n.saturating_sub(1));
        let first = (selected + 1).saturating_sub(height);
        let pick = |rows: std::ops::Range<usize>| -> Vec<usize> {
            rows.filter_map(|k| view.position(&run, k)).collect()
        };
        let on_screen = pick(first..(first + height).min(n));
        let around = pick(
            first.saturating_sub(DETAILS_MARGIN * height)
                ..(first + (DETAILS_MARGIN + 1) * height).min(n),
        );
        Some(RunRows {
            run,
            on_screen,
            around,
        })
    }

    fn on_msg(&mut self, msg: Msg, sh: &mut Shared) -> Outcome {
        Outcome::from(match msg {
            Msg::EarlierRun { back, run, b } => self.earlier_run(sh, back, run, b),
            Msg::RunItemsFiltered { tag, positions } => self.run_items_filtered(sh, tag, positions),
            Msg::Compared { a, b, result } => self.compared(sh, &a, &b, result),
            Msg::Calibrated { labels_gen, ranked } => self.calibrated(labels_gen, ranked),
            Msg::AlignRead { source, found } => self.align_read(&source, found),
            Msg::AlignAdopted { adopted, .. } => self.align_adopted(sh, adopted),
            _ => return Outcome::Ignored,
        })
    }

    fn hints(&self, sh: &Shared) -> &'static [Action] {
        let pairwise = self.compare_b.is_none()
            && sh
                .browse
                .as_ref()
                .and_then(|b| b.run.as_ref())
                .is_some_and(|r| r.figures.pairs.is_some());
        if self.align.is_some() {
            &[Action::Adopt, Action::Back]
        } else if pairwise && self.items.is_none() && self.compare.is_none() {
            // A pairwise run's confusion is of preferences: no cell's items to list.
            &[
                Action::Down,
                Action::Items,
                Action::Compare,
                Action::Annotator,
            ]
        } else if self.items.is_some() && self.compare.is_none() {
            &[
                Action::NextVerdict,
                Action::FailedOnly,
                Action::Open,
                Action::Items,
                Action::Export,
            ]
        } else {
            &[
                Action::Down,
                Action::Items,
                Action::Choice(1),
                Action::Compare,
                Action::Annotator,
            ]
        }
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        view::draw(self, sh, f, area);
    }
}

impl ResultsPane {
    fn results_action(&mut self, sh: &mut Shared, action: Action) -> Outcome {
        let pairwise = sh
            .browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .is_some_and(|r| r.figures.pairs.is_some());
        let n = sh
            .browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .map_or(0, |r| {
                // A pairwise run's rows are its written criteria.
                r.figures
                    .pairs
                    .as_ref()
                    .map_or(r.rubric.criteria.len(), |p| p.criteria.len())
            });
        if let Some(outcome) = self.align_action(sh, action) {
            return outcome;
        }
        if action == Action::Align {
            return self.toggle_align(sh).into();
        }
        if let Some(effects) = self.calibrate_action(sh, action) {
            return effects.into();
        }
        if action == Action::Calibrate {
            return self.toggle_calibrate(sh).into();
        }
        if self.compare.is_some()
            && let Some(outcome) = self.compare_action(sh, action)
        {
            return outcome;
        }
        if let Some(outcome) = self.items_action(sh, action) {
            return outcome;
        }
        match action {
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::Down if n > 0 => self.cursor = (self.cursor + 1).min(n - 1),
            Action::Items | Action::NextVerdict | Action::FailedOnly => {
                self.items = Some(ItemsView::default());
                if action != Action::Items {
                    return self.results_action(sh, action);
                }
            }
            // Jump to the items of one cell of the selected criterion's confusion matrix.
            // A pairwise run's confusion is of preferences, not of its cells: no jump.
            Action::Choice(_) if pairwise => {
                sh.message = Some(
                    "a pairwise run: its preferences' confusion has no item list yet; i lists the run's items".into(),
                );
            }
            Action::Choice(cell @ 1..=4) if n > 0 => {
                return Outcome::Nav(Nav::Filtered(Filter::Cell {
                    criterion: self.cursor,
                    cell: cell - 1,
                }));
            }
            Action::Export => return self.export(sh),
            Action::Compare => {
                self.compare_cursor = 0;
                if self.compare.is_some() {
                    self.compare = None;
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Outcome::none();
                }
                if let Some(b) = &sh.browse {
                    return Outcome::from(vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back: 1,
                        b: false,
                    }]);
                }
            }
            Action::Older | Action::Newer if self.compare.is_some() => {
                let back = if action == Action::Older {
                    self.compare_back + 1
                } else {
                    self.compare_back.saturating_sub(1).max(1)
                };
                if let Some(b) = &sh.browse {
                    return Outcome::from(vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: false,
                    }]);
                }
            }
            // Side B moves too: any two runs of the dataset can be compared. Without a
            // comparison it is the run shown.
            Action::OlderB | Action::NewerB => {
                let back = if action == Action::OlderB {
                    self.compare_b_back + 1
                } else {
                    self.compare_b_back.saturating_sub(1)
                };
                if back == 0 {
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Outcome::none();
                }
                if let Some(b) = &sh.browse {
                    return Outcome::from(vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: true,
                    }]);
                }
            }
            _ => return Outcome::Ignored,
        }
        Outcome::none()
    }

    /// The run to compare with arrived: side B when `b`, else side A (`None`: there is
    /// none that far back — A stays on the last one that existed).
    pub fn earlier_run(
        &mut self,
        sh: &mut Shared,
        back: usize,
        run: Option<Arc<RunData>>,
        b: bool,
    ) -> Vec<Effect> {
        match (run, b) {
            (Some(run), true) => {
                self.compare_b_back = back;
                self.compare_b = Some(run);
            }
            (None, true) => sh.message = Some("no run that far back".into()),
            (Some(run), false) => {
                self.compare_back = back;
                self.compare = Some(run);
            }
            (None, false) if back <= 1 => {
                sh.message = Some("there is no earlier run of this dataset to compare with".into());
                self.compare = None;
            }
            (None, false) => {
                sh.message = Some("no run that far back".into());
                self.compare_back = back - 1;
            }
        }
        Vec::new()
    }

    /// `x`: asks which format to export the run shown in — whole, or, while the item list
    /// is filtered, only the items it lists.
    fn export(&self, sh: &mut Shared) -> Outcome {
        let Some(run) = self.shown_run(sh) else {
            sh.message = Some("no run of this dataset to export".into());
            return Outcome::none();
        };
        let view = self.items.as_ref().filter(|v| v.filtered());
        if view.is_some_and(|v| v.filtering.is_some()) {
            sh.message = Some("the list is still being worked out: export once it shows".into());
            return Outcome::none();
        }
        let what = if view.is_some() {
            "the items listed"
        } else {
            "the run"
        };
        sh.message = Some(format!(
            "export {what} as: c CSV · j JSONL · m Markdown · h HTML page of the run (esc: no)"
        ));
        Outcome::Modal(Modal::Export {
            run_id: run.manifest.id.clone(),
            only: view.and_then(|v| v.rows.clone()),
        })
    }

    /// The passes the Results pane needs and has not asked for: each run's join with the
    /// labels, the comparison of the two runs shown, the item list's matches (after every
    /// message: a comparison of keys otherwise).
    pub fn want_results(&mut self, sh: &mut Shared) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut runs: Vec<Arc<RunData>> = Vec::new();
        for r in [
            sh.browse.as_ref().and_then(|b| b.run.clone()),
            self.compare.clone(),
            self.compare_b.clone(),
        ]
        .into_iter()
        .flatten()
        {
            if !runs.iter().any(|x| x.manifest.id == r.manifest.id) {
                runs.push(r);
            }
        }
        // Joined with the labels where they are shown (Results' agreement, Label's queue).
        if matches!(sh.front, PaneId::Results | PaneId::Label) {
            let refs: Vec<&RunData> = runs.iter().map(|r| &**r).collect();
            effects.extend(sh.stats.want(&refs, &sh.labels, sh.labels_gen));
        }
        let Some(run) = self.shown_run(sh) else {
            return effects;
        };
        if let Some(a) = &self.compare {
            let pair = (a.manifest.id.clone(), run.manifest.id.clone());
            let have = self
                .comparison
                .as_ref()
                .is_some_and(|c| (c.a.as_str(), c.b.as_str()) == (&pair.0[..], &pair.1[..]));
            if !have && self.comparing.as_ref() != Some(&pair) {
                self.comparing = Some(pair.clone());
                effects.push(Effect::CompareRuns {
                    a: pair.0,
                    b: pair.1,
                });
            }
        }
        let criterion = run.rubric.criteria.get(self.cursor).map(|c| c.id.clone());
        let tag = sh.new_tag();
        let Some(view) = self.items.as_mut() else {
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
    pub fn run_items_filtered(
        &mut self,
        sh: &mut Shared,
        tag: u64,
        positions: Result<Vec<usize>, String>,
    ) -> Vec<Effect> {
        let Some(view) = self.items.as_mut().filter(|v| v.filtering == Some(tag)) else {
            return Vec::new();
        };
        view.filtering = None;
        match positions {
            Ok(positions) => {
                view.cursor = view.cursor.min(positions.len().saturating_sub(1));
                view.rows = Some(positions);
            }
            Err(e) => sh.message = Some(format!("could not list the run's items: {e}")),
        }
        Vec::new()
    }

    /// A comparison came back: shown while its two runs are the ones on screen.
    pub fn compared(
        &mut self,
        sh: &mut Shared,
        a: &str,
        b: &str,
        result: Result<Arc<Comparison>, String>,
    ) -> Vec<Effect> {
        if self
            .comparing
            .as_ref()
            .is_some_and(|(x, y)| x == a && y == b)
        {
            self.comparing = None;
        }
        let shown = self.compare.as_ref().map(|x| x.manifest.id.as_str()) == Some(a)
            && self.shown_run(sh).is_some_and(|x| x.manifest.id == b);
        if !shown {
            // Asked for before a side moved: not what the screen shows.
            return Vec::new();
        }
        match result {
            Ok(c) => {
                if c.mismatched > 0 {
                    sh.message = Some(format!(
                        "{} positions hold different items in the two runs (the dataset changed between them): those are not compared",
                        c.mismatched
                    ));
                }
                self.comparison = Some(c);
            }
            Err(e) => sh.message = Some(format!("could not compare the runs: {e}")),
        }
        Vec::new()
    }

    /// The comparison of the two runs shown, when it has been worked out.
    /// The runs compared with the open dataset's latest (their joins with the labels are
    /// kept up to date too).
    pub fn compared_runs(&self) -> Vec<Arc<RunData>> {
        self.compare
            .iter()
            .chain(&self.compare_b)
            .cloned()
            .collect()
    }

    pub fn shown_comparison(&self, sh: &Shared) -> Option<&Comparison> {
        let a = self.compare.as_ref()?;
        let b = self.shown_run(sh)?;
        self.comparison
            .as_deref()
            .filter(|c| c.a == a.manifest.id && c.b == b.manifest.id)
    }

    /// The run shown: side B of a comparison (or the run chosen with `{` `}`), else the
    /// dataset's latest.
    pub fn shown_run(&self, sh: &Shared) -> Option<Arc<RunData>> {
        self.compare_b
            .clone()
            .or_else(|| sh.browse.as_ref().and_then(|b| b.run.clone()))
    }

    /// Keys of a comparison: the changed items move and open.
    fn compare_action(&mut self, sh: &mut Shared, action: Action) -> Option<Outcome> {
        self.compare.as_ref()?;
        let last = self
            .shown_comparison(sh)
            .map_or(0, |c| c.moved.len().saturating_sub(1));
        match action {
            Action::Down => {
                self.compare_cursor = (self.compare_cursor + 1).min(last);
            }
            Action::Up => {
                self.compare_cursor = self.compare_cursor.saturating_sub(1);
            }
            Action::PageDown => {
                self.compare_cursor = (self.compare_cursor + PAGE).min(last);
            }
            Action::PageUp => {
                self.compare_cursor = self.compare_cursor.saturating_sub(PAGE);
            }
            Action::Open => {
                let (id, _, _, position) = self
                    .shown_comparison(sh)?
                    .moved
                    .get(self.compare_cursor)?
                    .clone();
                return Some(Outcome::Nav(Nav::Item { id, position }));
            }
            _ => return None,
        }
        Some(Outcome::none())
    }

    /// Keys of the item list: move, filter by the selected criterion's verdict or by
    /// failure, open, back to the criteria.
    fn items_action(&mut self, sh: &mut Shared, action: Action) -> Option<Outcome> {
        let run = self.shown_run(sh)?;
        let criterion = run.rubric.criteria.get(self.cursor).map(|c| c.id.clone());
        let view = self.items.as_mut()?;
        let last = view.row_count(&run).saturating_sub(1);
        match action {
            Action::Items | Action::Back => self.items = None,
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
                let id = sh
                    .run_details
                    .at(&run, position)
                    .map_or_else(|| format!("item {}", position + 1), |d| d.id.clone());
                return Some(Outcome::Nav(Nav::Item { id, position }));
            }
            _ => return None,
        }
        Some(Outcome::none())
    }
}
