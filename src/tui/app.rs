//! The terminal UI's state and the one place it changes: `App::update(msg) -> effects`.
//! `update` never waits and does no I/O; reading windows of a dataset, saving labels and
//! scanning for a search are effects the runtime carries out, answering with messages tagged
//! so that an answer to a superseded request is dropped.
//!
//! A key goes to the modal on top of the stack first, then to the pane in front (what it
//! has being typed), then through the keymap to an action of that pane. Panes change only
//! their own state and `Shared`; what they ask of the rest (another pane, a modal) comes
//! back as an `Outcome` that only this file applies.

use crossterm::event::KeyEventKind;

use super::data::DatasetInfo;
pub use super::effect::{AlignSource, Effect};
use super::keymap::{Action, Context, Keymap};
use super::modal::{Modal, NewArtifact, Palette, Then};
pub use super::msg::{Msg, RunEnd};
use super::nav::Nav;
pub use super::nav::PaneId;
pub use super::open_dataset::{Browse, Filter, label_text};
use super::pane::{Outcome, Pane};
use super::panes::Panes;
use super::shared::Shared;
use super::widgets::LineInput;

mod input;

/// Where the first tab begins: after ` rubricate ` and a space.
pub const TAB_BAR_START: usize = 12;

pub struct App {
    shared: Shared,
    panes: Panes,
    /// Questions, prompts and overlays, the top one last.
    modals: Vec<Modal>,
    quit: bool,
    /// Quit was asked while writes were queued: the UI quits once the disk confirmed them
    /// all (a failed write cancels it; `esc` stays).
    quitting: bool,
}

impl App {
    pub fn new(
        workspace: std::path::PathBuf,
        keymap: Keymap,
        annotator: String,
        datasets: Vec<DatasetInfo>,
    ) -> Self {
        Self {
            shared: Shared::new(workspace, keymap, annotator, datasets),
            panes: Panes::default(),
            modals: Vec::new(),
            quit: false,
            quitting: false,
        }
    }

    /// What every pane reads.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The same, to set up before the UI starts (`tui::build`, tests).
    pub fn shared_mut(&mut self) -> &mut Shared {
        &mut self.shared
    }

    /// The panes' own state (read by tests and the view).
    pub fn panes(&self) -> &Panes {
        &self.panes
    }

    /// The same, to set up before the UI starts (`tui::build`, tests).
    pub fn panes_mut(&mut self) -> &mut Panes {
        &mut self.panes
    }

    /// The pane in front.
    pub fn pane(&self) -> PaneId {
        self.shared.front
    }

    /// The modal on top, if any.
    pub fn modal(&self) -> Option<&Modal> {
        self.modals.last()
    }

    /// What the open palette lists now (nothing when it is closed).
    pub fn palette_matches(&self) -> Vec<super::modal::Entry> {
        match self.modal() {
            Some(Modal::Palette(p)) => p.matches(&self.shared.keymap),
            _ => Vec::new(),
        }
    }

    /// Rows the item list shows.
    pub fn list_height(&self) -> usize {
        self.shared.list_height()
    }

    /// Every modal open, the top one last.
    pub fn modals(&self) -> &[Modal] {
        &self.modals
    }

    /// The user asked to quit and every write is on disk.
    pub fn quit(&self) -> bool {
        self.quit
    }

    /// Quitting once the queued writes are on disk.
    pub fn quitting(&self) -> bool {
        self.quitting
    }

    /// Brings back what the last sitting left: the judge model typed, the dataset (selected,
    /// and the item it ended on once the dataset is open) and the pane.
    pub fn restore(&mut self, state: &super::ui_state::UiState) {
        if state.judge.is_some() {
            self.panes.grade.judge.clone_from(&state.judge);
        }
        if let Some(i) = state
            .dataset
            .as_ref()
            .and_then(|n| self.shared.datasets.iter().position(|d| &d.name == n))
        {
            self.shared.selected = i;
            self.shared.resume_item = state.item.map(|p| (i, p));
        }
        if let Some(p) = state
            .pane
            .as_ref()
            .and_then(|t| PaneId::ALL.into_iter().find(|p| p.title() == t))
        {
            self.shared.front = p;
        }
    }

    /// The effects that bring back the pane restored: its dataset opened (and, for the
    /// Review pane, the artifacts read).
    pub fn resume_effects(&mut self) -> Vec<Effect> {
        let pane = self.shared.front;
        if pane == PaneId::Datasets {
            return Vec::new();
        }
        self.switch(pane)
    }

    /// What to remember of this sitting.
    pub fn ui_state(&self) -> super::ui_state::UiState {
        let sh = &self.shared;
        let dataset = sh.browse.as_ref().map_or(sh.selected, |b| b.dataset);
        super::ui_state::UiState {
            // Adjudicating is a mode: the UI comes back as who was labelling before it.
            annotator: if sh.adjudicating() {
                self.panes.label.adjudicating_from.clone()
            } else {
                sh.annotator_confirmed.then(|| sh.annotator.clone())
            },
            judge: self.panes.grade.judge.clone(),
            dataset: sh.datasets.get(dataset).map(|d| d.name.clone()),
            pane: Some(sh.front.title().to_owned()),
            item: sh.browse.as_ref().and_then(|b| b.position(b.cursor)),
        }
    }

    /// Where keys are looked up now.
    pub fn context(&self) -> Context {
        self.shared.front.context()
    }

    /// Writes the disk has not confirmed yet: labels, undos and rubric drafts.
    pub fn unsaved(&self) -> usize {
        self.panes.label.unsaved() + self.panes.rubrics.unsaved()
    }

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        // Only a write of the person's work that failed stops a quit (it says why).
        let unwritten = msg.unwritten();
        let mut effects = self.apply(msg);
        effects.extend(self.wants());
        if self.quitting {
            if unwritten {
                // Something was not written: stay, and say what (the message is the error).
                self.quitting = false;
            } else if self.unsaved() == 0 {
                self.quit = true;
            }
        }
        effects
    }

    /// What the panes need after any change: reads, passes and figures not asked for yet.
    fn wants(&mut self) -> Vec<Effect> {
        let sh = &mut self.shared;
        let mut effects = self.panes.label.wants(sh);
        effects.extend(self.panes.results.wants(sh));
        let rows = self
            .panes
            .get(sh.front)
            .run_rows(sh)
            .or_else(|| match sh.front {
                PaneId::Datasets => {
                    sh.browse_run_rows(sh.browse.as_ref().is_some_and(|b| b.detail))
                }
                PaneId::Label => sh.browse_run_rows(true),
                _ => None,
            });
        effects.extend(sh.want_run_details(rows));
        let planning_shown = matches!(sh.front, PaneId::Label | PaneId::Results);
        effects.extend(sh.want_label_plan(planning_shown));
        effects
    }

    fn apply(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Key(k) if k.kind == KeyEventKind::Press => self.key(&k),
            Msg::Key(_) => Vec::new(),
            Msg::Paste(text) => self.paste(&text),
            Msg::Mouse(m) => self.mouse(m),
            Msg::Stop => self.act(Action::Quit),
            Msg::PathCompleted {
                typed,
                text,
                candidates,
            } => {
                if let Some(Modal::Path(p)) = self.modals.last_mut() {
                    p.completed(&typed, &text, candidates);
                }
                Vec::new()
            }
            Msg::ArtifactContent { from, content } => {
                // A file's content read for a new artifact: its name offered from the file's.
                let name = from
                    .rsplit('/')
                    .next()
                    .and_then(|f| f.split('.').next())
                    .unwrap_or_default()
                    .to_owned();
                if let Some(line) = NewArtifact::open(&mut self.shared, from, content, &name) {
                    self.modals.push(line);
                }
                Vec::new()
            }
            msg => self.answer(msg),
        }
    }

    /// An answer of the runtime: to its pane, to the labels (which the open dataset, the
    /// Label pane and the runs compared in Results all follow), or to what panes share.
    fn answer(&mut self, msg: Msg) -> Vec<Effect> {
        let sh = &mut self.shared;
        let panes = &mut self.panes;
        if let Some(pane) = msg.pane() {
            let outcome = panes.get_mut(pane).on_msg(msg, sh);
            return self.outcome(outcome);
        }
        match msg {
            Msg::Opened {
                dataset,
                run,
                rubric,
                labels,
                notes,
                annotators,
                peers,
                assignment,
            } => {
                let opened = sh.opened(
                    dataset, run, rubric, labels, notes, annotators, peers, assignment,
                );
                // The labels arrive with this: an item focused before they did (the UI
                // coming back to where it was left) may have its focus on an answered
                // criterion, where the next key would replace a label.
                if opened
                    && (std::mem::take(&mut panes.label.refocus_on_open)
                        || panes.label.focused_is_answered(sh))
                {
                    panes.label.focus_first_unanswered(sh);
                }
                Vec::new()
            }
            Msg::LabelSaved {
                seq,
                item,
                criterion,
                verdict,
                note,
            } => {
                let compared = panes.results.compared_runs();
                panes
                    .label
                    .label_saved(sh, &compared, seq, item, criterion, verdict, note)
            }
            Msg::LabelUndone {
                item,
                criterion,
                verdict,
            } => {
                let compared = panes.results.compared_runs();
                panes
                    .label
                    .label_undone(sh, &compared, item, criterion, verdict)
            }
            Msg::LabelFailed(e) => panes.label.label_failed(sh, e),
            Msg::LabelsJoined {
                run_id,
                labels_gen,
                join,
            } => {
                let compared = panes.results.compared_runs();
                sh.labels_joined(&compared, &run_id, labels_gen, join)
            }
            msg => sh.on_msg(msg),
        }
    }

    /// What a closed modal leaves to do.
    fn then(&mut self, then: Then) -> Vec<Effect> {
        match then {
            Then::Nothing => Vec::new(),
            Then::Effects(effects) => effects,
            Then::Act {
                action,
                pane,
                confirmed,
            } => {
                let mut effects = Vec::new();
                if let Some(pane) = pane
                    && pane != self.shared.front
                {
                    effects = self.switch(pane);
                }
                self.shared.confirming = confirmed;
                effects.extend(self.act(action));
                self.shared.confirming = false;
                effects
            }
            Then::Nav(nav) => self.nav(nav),
            Then::Note(text) => self.panes.label.save_note(&mut self.shared, text),
            Then::Annotator(name) => {
                let sh = &mut self.shared;
                sh.annotator_confirmed = true;
                sh.annotator.clone_from(&name);
                sh.message = Some(format!("labelling as {name}"));
                vec![Effect::SetAnnotator {
                    name,
                    dataset: sh.browse.as_ref().map(|b| b.dataset),
                }]
            }
        }
    }

    /// Applies what a pane asked for.
    fn outcome(&mut self, outcome: Outcome) -> Vec<Effect> {
        match outcome {
            Outcome::Effects(effects) => effects,
            Outcome::Ignored => Vec::new(),
            Outcome::Nav(nav) => self.nav(nav),
            Outcome::Modal(modal) => {
                if let Modal::Refused(why) = &modal {
                    self.shared.message = Some(why.clone());
                }
                self.modals.push(modal);
                Vec::new()
            }
        }
    }

    /// Shows another pane as asked.
    fn nav(&mut self, nav: Nav) -> Vec<Effect> {
        match nav {
            Nav::To(pane) => self.switch(pane),
            Nav::Filtered(filter) => {
                let sh = &mut self.shared;
                if let Some(b) = &mut sh.browse {
                    b.filter = filter;
                    b.detail = false;
                }
                sh.front = PaneId::Datasets;
                sh.rescan(String::new())
            }
            Nav::Item { id, position } => {
                self.shared.front = PaneId::Datasets;
                self.shared.show_item(&id, position)
            }
            Nav::Align(rubric) => {
                let mut effects = self.switch(PaneId::Results);
                effects.extend(
                    self.panes
                        .results
                        .show_align(&mut self.shared, AlignSource::Rubric(rubric)),
                );
                effects
            }
            Nav::NewArtifact {
                from,
                content,
                name,
            } => {
                if let Some(line) = NewArtifact::open(&mut self.shared, from, content, &name) {
                    self.modals.push(line);
                }
                Vec::new()
            }
        }
    }

    fn act(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Quit => {
                if self.unsaved() > 0 {
                    // Quit once the disk has every queued write (never before).
                    self.quitting = true;
                    self.shared.message = Some(format!(
                        "writing {} change(s) to disk; quitting when they are saved (esc stays)",
                        self.unsaved()
                    ));
                } else {
                    self.quit = true;
                }
                Vec::new()
            }
            Action::Palette => {
                self.modals
                    .push(Modal::Palette(Palette::new(self.context())));
                Vec::new()
            }
            Action::Help => {
                self.modals.push(Modal::Help { scroll: 0 });
                Vec::new()
            }
            Action::NextPane | Action::PrevPane => {
                let i = PaneId::ALL
                    .iter()
                    .position(|p| *p == self.shared.front)
                    .unwrap_or(0);
                let n = PaneId::ALL.len();
                let next = if action == Action::NextPane {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.switch(PaneId::ALL[next])
            }
            Action::DatasetsPane => self.switch(PaneId::Datasets),
            Action::LabelPane => self.switch(PaneId::Label),
            Action::ResultsPane => self.switch(PaneId::Results),
            Action::GradePane => self.switch(PaneId::Grade),
            Action::ReviewPane => self.switch(PaneId::Review),
            Action::RubricsPane => self.switch(PaneId::Rubrics),
            Action::Annotator if matches!(self.shared.front, PaneId::Label | PaneId::Results) => {
                self.next_annotator()
            }
            _ => {
                let front = self.shared.front;
                let outcome = self.panes.get_mut(front).action(action, &mut self.shared);
                self.outcome(outcome)
            }
        }
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset.
    fn next_annotator(&mut self) -> Vec<Effect> {
        let effects = self.shared.next_annotator();
        if !effects.is_empty() {
            self.panes.label.refocus_on_open = true;
            self.modals.retain(|m| !matches!(m, Modal::Annotator(_)));
        }
        effects
    }

    fn switch(&mut self, pane: PaneId) -> Vec<Effect> {
        let sh = &mut self.shared;
        // What was said belongs to the pane it was said in.
        if pane != sh.front {
            sh.message = None;
        }
        sh.front = pane;
        if pane == PaneId::Review {
            return vec![Effect::LoadArtifacts];
        }
        if pane == PaneId::Datasets && sh.browse.is_none() {
            return vec![Effect::FindDatasets];
        }
        if pane == PaneId::Label && !sh.annotator_confirmed {
            // Nothing said who labels: ask once, with the login name offered.
            self.modals
                .push(Modal::Annotator(LineInput::offered(&sh.annotator)));
        }
        if pane != PaneId::Datasets && sh.browse.is_none() && !sh.datasets.is_empty() {
            return sh.open(sh.selected);
        }
        if pane == PaneId::Label {
            return sh.scrolled();
        }
        Vec::new()
    }

    /// Draws the frame: the tab bar, the pane in front, the status bar, and the modals on
    /// top.
    pub fn draw(&self, f: &mut ratatui::Frame<'_>) {
        let screen = super::view::Screen {
            shared: &self.shared,
            front: self.panes.get(self.shared.front),
            modals: &self.modals,
        };
        super::view::draw(&screen, f);
    }
}
