//! The Grade pane's part of `App::update`: its keys, actions and the runtime's answers.

use crate::engine::GradeEvent;
use crate::engine::judge::Strategy;
use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::msg::Msg;
use crate::tui::pane::{Outcome, Pane};
use crate::tui::shared::Shared;
use crate::tui::widgets::{Edit, LineInput};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{AfterEstimate, Confirm, GradePane, GridRun, RUN_NAME_MAX, retry, view};

impl Pane for GradePane {
    fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Option<Outcome> {
        self.grade_key(sh, k).map(Outcome::from)
    }

    fn paste(&mut self, text: &str, _sh: &mut Shared) -> Option<Outcome> {
        self.field_mut()?.paste(text);
        Some(Outcome::none())
    }

    fn field<'a>(&'a self, _sh: &'a Shared) -> Option<&'a LineInput> {
        self.max_cost_input
            .as_ref()
            .or(self.name_input.as_ref())
            .or(self.judge_input.as_ref())
    }

    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        // The set-up grades the open dataset; a grid (a run, or a review) needs none.
        if self.run.is_none() && sh.browse.is_none() {
            sh.message = Some("open a dataset first (Datasets pane)".into());
            return Outcome::none();
        }
        if let Some(out) = self.grade_guard(sh, action) {
            return out;
        }
        self.grade_action(sh, action).into()
    }

    fn on_msg(&mut self, msg: Msg, sh: &mut Shared) -> Outcome {
        match msg {
            Msg::RunStarted {
                tag,
                run_id,
                criteria,
                items,
            } => self.run_started(sh, tag, run_id, criteria, items),
            Msg::Grade { tag, event } => self.grade_event(sh, tag, &event),
            Msg::Preload { tag, cells } => self.grade_preload(tag, &cells),
            Msg::InFlight { tag, calls } => self.grade_in_flight(tag, calls),
            Msg::GradeFinished {
                tag,
                summary,
                end,
                tokens,
                cost,
            } => {
                self.grade_finished(sh, tag, summary, end, tokens, cost);
                // The Results pane shows the latest run: read it again.
                if let Some(b) = &sh.browse {
                    return vec![Effect::Open { dataset: b.dataset }].into();
                }
            }
            Msg::Estimate { result, after } => {
                return self.grade_estimate(sh, result, after).into();
            }
            Msg::EstimateProgress(items) => {
                if self.estimating.is_some() {
                    self.estimating = Some(items);
                }
            }
            Msg::BatchStepped {
                dataset,
                run_id,
                result,
            } => return self.batch_stepped(sh, dataset, run_id, result).into(),
            _ => return Outcome::Ignored,
        }
        Outcome::none()
    }

    fn hints(&self, _sh: &Shared) -> &'static [Action] {
        if self.run.is_none() {
            &[Action::Estimate, Action::Open, Action::RegradeChanged]
        } else {
            &[Action::Pause, Action::Back, Action::Retry, Action::RetryAll]
        }
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        view::draw(self, sh, f, area);
    }
}

impl GradePane {
    /// Typed keys go first to the judge model, run name or cost limit being typed, and to
    /// the question before a large run.
    fn grade_key(&mut self, sh: &mut Shared, k: &KeyEvent) -> Option<Vec<Effect>> {
        if let Some(confirm) = &self.confirm {
            return Some(match k.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                    let changed_only = confirm.changed_only;
                    self.confirm = None;
                    self.start_effect(sh, changed_only)
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                    self.confirm = None;
                    sh.message = Some("not started".into());
                    Vec::new()
                }
                _ => Vec::new(),
            });
        }
        if let Some(text) = self.max_cost_input.as_mut() {
            match text.handle_key(k) {
                Edit::Cancel => self.max_cost_input = None,
                Edit::Submit => {
                    let typed = text.text().trim().trim_start_matches('$').to_owned();
                    self.set_max_cost(sh, &typed);
                }
                Edit::Changed | Edit::Moved | Edit::Ignored => {}
            }
            return Some(Vec::new());
        }
        if let Some(text) = self.name_input.as_mut() {
            match text.handle_key(k) {
                Edit::Cancel => self.name_input = None,
                Edit::Submit => {
                    let name = text.text().trim().to_owned();
                    self.name = (!name.is_empty()).then_some(name);
                    self.name_input = None;
                }
                Edit::Changed | Edit::Moved | Edit::Ignored => {}
            }
            return Some(Vec::new());
        }
        let text = self.judge_input.as_mut()?;
        match text.handle_key(k) {
            Edit::Cancel => self.judge_input = None,
            Edit::Submit => {
                let model = text.text().trim().to_owned();
                self.judge = (!model.is_empty()).then_some(model);
                self.judge_input = None;
                self.estimate = None;
            }
            Edit::Changed | Edit::Moved | Edit::Ignored => {}
        }
        Some(Vec::new())
    }

    /// The line being typed, if any.
    fn field_mut(&mut self) -> Option<&mut LineInput> {
        self.max_cost_input
            .as_mut()
            .or(self.name_input.as_mut())
            .or(self.judge_input.as_mut())
    }

    /// The cost limit typed (dollars; empty: the workspace's, if any), or why not.
    fn set_max_cost(&mut self, sh: &mut Shared, typed: &str) {
        match typed.parse::<f64>() {
            _ if typed.is_empty() => {
                self.max_cost = self.workspace_max_cost;
                self.max_cost_input = None;
                sh.message = Some(match self.workspace_max_cost {
                    Some(c) => format!("rubricate.yaml's judge.max_cost (${c:.2}) still applies"),
                    None => "no cost limit".into(),
                });
            }
            Ok(x) if x.is_finite() && x > 0.0 => {
                self.max_cost = Some(x);
                self.max_cost_input = None;
                self.estimate = None;
            }
            _ => {
                sh.message = Some("the cost limit is a positive number of dollars".into());
            }
        }
    }

    /// A run started: its grid is shown — unless it is a retry of cells of the run on
    /// screen, whose grid stays (with every other cell, and the columns an item's own
    /// rubric gave it).
    pub fn run_started(
        &mut self,
        sh: &mut Shared,
        tag: u64,
        run_id: String,
        criteria: Vec<(String, bool)>,
        items: Option<usize>,
    ) {
        let shown = self
            .run
            .as_ref()
            .is_some_and(|r| r.tag == tag && r.run_id == run_id);
        if !shown {
            sh.message = Some(format!("run {run_id} started (journalled; resumable)"));
            self.run = Some(GridRun::new(tag, run_id, criteria, items, sh.now));
        }
    }

    /// A message for the Grade pane: an event of the watched run, or its estimate.
    pub fn grade_event(&mut self, sh: &mut Shared, tag: u64, ev: &GradeEvent) {
        if let Some(run) = &mut self.run
            && run.tag == tag
        {
            run.apply(ev, sh.now);
        }
    }

    /// Cells already in the run's journal.
    pub fn grade_preload(&mut self, tag: u64, cells: &[crate::store::runs::Cell]) {
        if let Some(run) = &mut self.run
            && run.tag == tag
        {
            run.preload(cells);
        }
    }

    /// Judge calls still in flight while a run pauses.
    pub fn grade_in_flight(&mut self, tag: u64, calls: usize) {
        if let Some(run) = &mut self.run
            && run.tag == tag
            && run.paused
        {
            run.in_flight = Some(calls);
        }
    }

    pub fn grade_finished(
        &mut self,
        sh: &mut Shared,
        tag: u64,
        summary: String,
        end: crate::tui::msg::RunEnd,
        tokens: u64,
        cost: f64,
    ) {
        if let Some(run) = &mut self.run
            && run.tag == tag
        {
            run.finished = true;
            run.paused = false;
            run.in_flight = None;
            run.tokens = run.tokens.max(tokens);
            run.cost = cost;
            sh.message = Some(match &end {
                crate::tui::msg::RunEnd::Finished => summary,
                crate::tui::msg::RunEnd::Unfinished(why) => {
                    format!("{summary} · unfinished: {why} (c in the set-up continues it)")
                }
            });
            run.end = Some(end);
        }
    }

    /// An estimate arrived: shown, or (when it was asked for before starting) the run
    /// starts, or the user is asked first when it is large.
    pub fn grade_estimate(
        &mut self,
        sh: &mut Shared,
        result: Result<crate::run::estimate::Estimate, String>,
        after: AfterEstimate,
    ) -> Vec<Effect> {
        self.estimating = None;
        let e = match result {
            Ok(e) => e,
            Err(why) => {
                sh.message = Some(match after {
                    AfterEstimate::Show => why,
                    AfterEstimate::Start { .. } => format!("the run did not start: {why}"),
                });
                return Vec::new();
            }
        };
        let line = e.line();
        self.estimate = Some(line.clone());
        let AfterEstimate::Start { changed_only } = after else {
            return Vec::new();
        };
        let large_calls = e.to_send() > self.confirm_calls;
        let large_cost = e.cost().is_some_and(|c| c > self.confirm_cost);
        // Without prices the money is unknown: a large number of calls is the warning.
        if large_calls || large_cost {
            self.confirm = Some(Confirm {
                changed_only,
                text: line,
            });
            return Vec::new();
        }
        self.start_effect(sh, changed_only)
    }

    /// The run of the set-up's rubric and judge, as an effect.
    fn start_effect(&mut self, sh: &mut Shared, changed_only: bool) -> Vec<Effect> {
        let Some(dataset) = sh.browse.as_ref().map(|b| b.dataset) else {
            sh.message = Some("open a dataset first (Datasets pane)".into());
            return Vec::new();
        };
        let rubric = sh.rubric_files.get(self.rubric).cloned();
        if self.batch {
            sh.message = Some(
                "recording the run and sending its judge calls to the provider's batch engine…"
                    .into(),
            );
            return vec![Effect::StartBatch {
                dataset,
                rubric,
                judge: self.judge.clone(),
                strategy: self.strategy,
                name: self.name.clone(),
            }];
        }
        let tag = sh.new_tag();
        vec![Effect::StartRun {
            tag,
            dataset,
            rubric,
            judge: self.judge.clone(),
            strategy: self.strategy,
            max_cost: self.max_cost,
            changed_only,
            name: self.name.clone(),
        }]
    }

    fn estimate_effect(&mut self, sh: &mut Shared, after: AfterEstimate) -> Vec<Effect> {
        let Some(dataset) = sh.browse.as_ref().map(|b| b.dataset) else {
            return Vec::new();
        };
        let rubric = sh.rubric_files.get(self.rubric).cloned();
        self.estimating = Some(0);
        vec![Effect::Estimate {
            dataset,
            rubric,
            judge: self.judge.clone(),
            strategy: self.strategy,
            max_cost: self.max_cost,
            after,
        }]
    }

    fn grade_action(&mut self, sh: &mut Shared, action: Action) -> Vec<Effect> {
        if self.run.is_some() {
            self.grid_action(sh, action)
        } else {
            self.setup_action(sh, action)
        }
    }

    /// The set-up's actions: the rubric, judge, strategy, name and cost limit of the next
    /// run, its estimate, and starting (or continuing) it.
    fn setup_action(&mut self, sh: &mut Shared, action: Action) -> Vec<Effect> {
        let dataset = sh.browse.as_ref().map_or(0, |b| b.dataset);
        let batch_run = self.unfinished_batch_run(sh);
        match action {
            Action::Up => {
                self.rubric = self.rubric.saturating_sub(1);
                self.estimate = None;
                Vec::new()
            }
            Action::Down => {
                // The last entry is "each item's own rubric".
                self.rubric = (self.rubric + 1).min(sh.rubric_files.len());
                self.estimate = None;
                Vec::new()
            }
            Action::Strategy => {
                self.strategy = match self.strategy {
                    None => Some(Strategy::PerCriterion),
                    Some(Strategy::PerCriterion) => Some(Strategy::OneShot),
                    Some(Strategy::OneShot) => Some(Strategy::DoublePass),
                    Some(Strategy::DoublePass) => Some(Strategy::Holistic),
                    Some(Strategy::Holistic) => None,
                };
                self.estimate = None;
                Vec::new()
            }
            Action::Continue if batch_run.is_some() => {
                let run_id = batch_run.unwrap_or_default();
                sh.message = Some(format!("asking about run {run_id}'s batches…"));
                vec![Effect::WatchBatch { dataset, run_id }]
            }
            Action::BatchMode => {
                self.batch = !self.batch;
                sh.message = Some(if self.batch {
                    "the next run goes to the providers' batch engines (about half the price, answered within 24 hours)".into()
                } else {
                    "the next run sends its judge calls live".into()
                });
                Vec::new()
            }
            Action::Continue => {
                // Refused or asked about first (`grade_ask.rs`).
                let Some(run_id) = self.unfinished_live_run(sh) else {
                    return Vec::new();
                };
                let tag = sh.new_tag();
                vec![Effect::ResumeRun {
                    tag,
                    dataset,
                    run_id,
                    max_cost: self.max_cost,
                }]
            }
            Action::Model => {
                self.judge_input = Some(LineInput::new(self.judge.as_deref().unwrap_or_default()));
                Vec::new()
            }
            Action::RunName => {
                self.name_input = Some(
                    LineInput::new(self.name.as_deref().unwrap_or_default())
                        .max_chars(RUN_NAME_MAX),
                );
                Vec::new()
            }
            Action::MaxCost => {
                let now = self.max_cost.map(|c| c.to_string()).unwrap_or_default();
                self.max_cost_input =
                    Some(LineInput::new(&now).accepting(|c| c.is_ascii_digit() || c == '.'));
                Vec::new()
            }
            Action::Estimate if self.estimating.is_none() => {
                self.estimate_effect(sh, AfterEstimate::Show)
            }
            // The plan is estimated first (a sample, scaled up): a large run asks first.
            Action::Open | Action::RegradeChanged if self.estimating.is_none() => self
                .estimate_effect(
                    sh,
                    AfterEstimate::Start {
                        changed_only: action == Action::RegradeChanged,
                    },
                ),
            _ => Vec::new(),
        }
    }

    /// The live grid's actions: move, pause, cancel, retry failed cells, back to the set-up.
    fn grid_action(&mut self, sh: &mut Shared, action: Action) -> Vec<Effect> {
        let height = sh.list_height();
        let max_cost = self.max_cost;
        let Some(run) = &mut self.run else {
            return Vec::new();
        };
        match action {
            Action::Up => {
                run.cursor.0 = run.cursor.0.saturating_sub(1);
                run.stream.clear();
                if run.cursor.0 < run.offset {
                    run.offset = run.cursor.0;
                }
                Vec::new()
            }
            Action::Down => {
                run.cursor.0 = (run.cursor.0 + 1).min(run.rows.len().saturating_sub(1));
                run.stream.clear();
                if run.cursor.0 >= run.offset + height {
                    run.offset = run.cursor.0 + 1 - height;
                }
                Vec::new()
            }
            Action::PrevItem => {
                run.cursor.1 = run.cursor.1.saturating_sub(1);
                run.stream.clear();
                Vec::new()
            }
            Action::NextItem => {
                run.cursor.1 = (run.cursor.1 + 1).min(run.criteria.len().saturating_sub(1));
                run.stream.clear();
                Vec::new()
            }
            Action::Pause if !run.finished => {
                run.paused = !run.paused;
                run.in_flight = None;
                vec![Effect::PauseRun {
                    tag: run.tag,
                    paused: run.paused,
                }]
            }
            Action::Back if !run.finished && !run.cancelled => {
                run.cancelled = true;
                sh.message = Some(
                    "cancelling: no new judge call starts; those in flight finish (the run stays resumable)".into(),
                );
                vec![Effect::CancelRun { tag: run.tag }]
            }
            Action::Back => {
                // A finished or cancelled run: back to the set-up (its journal stays).
                self.run = None;
                Vec::new()
            }
            Action::Retry if run.finished || run.cancelled => {
                // Refused or asked about first (`grade_ask.rs`).
                match run.selected_failed() {
                    Some(cell) => retry(run, vec![cell], max_cost),
                    None => Vec::new(),
                }
            }
            Action::RetryAll if run.finished || run.cancelled => {
                let cells = run.failed_cells();
                if cells.is_empty() {
                    return Vec::new();
                }
                retry(run, cells, max_cost)
            }
            Action::Retry | Action::RetryAll => {
                sh.message = Some("retry once the run has finished or been cancelled".into());
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}
