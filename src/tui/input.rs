//! Keys and the mouse: what is being typed takes them first (a note, a name, a search, a
//! question), then the keymap turns them into actions; clicks on the tab bar open panes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::app::{App, Effect, Pane, TAB_BAR_START};
use super::keymap::{Action, Context, Key};

impl App {
    /// The one-line text being typed, if any (in the order keys reach them).
    pub(super) fn typed_text(&mut self) -> Option<&mut String> {
        if let Some((_, note)) = &mut self.review.note {
            return Some(note);
        }
        if self.pane == Pane::Rubrics
            && self.rubrics.edit.is_none()
            && let Some(d) = &mut self.rubrics.save
        {
            return Some(&mut d.note);
        }
        if self.pane == Pane::Grade {
            if let Some(t) = &mut self.grade.max_cost_input {
                return Some(t);
            }
            if let Some(t) = &mut self.grade.judge_input {
                return Some(t);
            }
            if let Some(t) = &mut self.grade.name_input {
                return Some(t);
            }
        }
        if let Some(t) = &mut self.annotator_prompt {
            return Some(t);
        }
        if let Some(t) = &mut self.note {
            return Some(t);
        }
        None
    }

    pub(super) fn key(&mut self, k: KeyEvent) -> Vec<Effect> {
        if self.quitting && k.code == KeyCode::Esc {
            self.quitting = false;
            self.message = Some("not quitting; the writes go on".into());
            return Vec::new();
        }
        // A question or a refusal takes every key first.
        if let Some(ask) = self.ask.take() {
            return self.ask_key(ask, &k);
        }
        if self.palette.is_some() {
            return self.palette_key(&k);
        }
        if self.path_prompt.is_some() {
            return self.path_prompt_key(&k);
        }
        if self.export_prompt {
            return self.export_key(&k);
        }
        // ctrl-u clears the line being typed (as in a shell); other ctrl keys type nothing.
        if k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char(_))
            && self.rubrics.edit.is_none()
            && let Some(text) = self.typed_text()
        {
            if k.code == KeyCode::Char('u') {
                text.clear();
            }
            return Vec::new();
        }
        if k.modifiers.contains(KeyModifiers::CONTROL)
            && k.code == KeyCode::Char('u')
            && self.pane == Pane::Datasets
            && let Some(b) = &mut self.browse
            && let Some(query) = &mut b.search
        {
            query.clear();
            return self.rescan(String::new());
        }
        if let Some(effects) = self.review_key(&k) {
            return effects;
        }
        if self.pane == Pane::Rubrics
            && let Some(effects) = self.rubrics_key(&k)
        {
            return effects;
        }
        if self.pane == Pane::Grade
            && let Some(effects) = self.grade_key(&k)
        {
            return effects;
        }
        // The annotator prompt, the note line, then the search line take typed text first.
        if let Some(name) = &mut self.annotator_prompt {
            let offered = std::mem::take(&mut self.annotator_offered);
            match k.code {
                KeyCode::Esc => {
                    self.annotator_prompt = None;
                    self.pane = Pane::Datasets;
                }
                KeyCode::Backspace if offered => name.clear(),
                KeyCode::Backspace => {
                    name.pop();
                }
                KeyCode::Char(c) => {
                    if offered {
                        name.clear();
                    }
                    name.push(c);
                }
                KeyCode::Enter => {
                    let name = name.trim().to_owned();
                    if let Err(e) = crate::store::labels::check_name("annotator", &name) {
                        self.message = Some(e.to_string());
                        return Vec::new();
                    }
                    self.annotator_prompt = None;
                    self.annotator_confirmed = true;
                    self.annotator.clone_from(&name);
                    self.message = Some(format!("labelling as {name}"));
                    return vec![Effect::SetAnnotator {
                        name,
                        dataset: self.browse.as_ref().map(|b| b.dataset),
                    }];
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(note) = &mut self.note {
            match k.code {
                KeyCode::Esc => self.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                KeyCode::Enter => {
                    let text = self.note.take().unwrap_or_default();
                    return self.save_note(text);
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(b) = &mut self.browse
            && let Some(query) = &mut b.search
        {
            match k.code {
                KeyCode::Esc => {
                    b.search = None;
                    return self.rescan(String::new());
                }
                KeyCode::Enter => {
                    b.search = None;
                    return Vec::new();
                }
                KeyCode::Backspace => {
                    query.pop();
                    let q = query.clone();
                    return self.rescan(q);
                }
                KeyCode::Char(c) => {
                    query.push(c);
                    let q = query.clone();
                    return self.rescan(q);
                }
                _ => return Vec::new(),
            }
        }
        if self.help {
            // The help scrolls with the arrows and pages; any other key closes it (quit
            // still quits).
            match k.code {
                KeyCode::Down | KeyCode::Char('j') => self.help_scroll += 1,
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1);
                }
                KeyCode::PageDown | KeyCode::Char(' ') => self.help_scroll += 10,
                KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                _ => {
                    self.help = false;
                    let quit = self.keymap.action(self.context(), Key::from_event(&k))
                        == Some(Action::Quit);
                    if quit {
                        return self.act(Action::Quit);
                    }
                }
            }
            return Vec::new();
        }
        let Some(action) = self.keymap.action(self.context(), Key::from_event(&k)) else {
            return Vec::new();
        };
        self.act(action)
    }

    pub(super) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if m.row == 0
            && matches!(m.kind, MouseEventKind::Down(_))
            && let Some(p) = self.tab_at(m.column)
        {
            return self.switch(p);
        }
        match m.kind {
            MouseEventKind::ScrollDown => self.act(Action::Down),
            MouseEventKind::ScrollUp => self.act(Action::Up),
            MouseEventKind::Drag(_) if self.pane == Pane::Rubrics => {
                let row = self.rubrics_offset() + usize::from(m.row).saturating_sub(2);
                self.drag_criterion(row)
            }
            MouseEventKind::Down(_) if self.pane == Pane::Rubrics => {
                // Tree lines start below the tab bar and the border, scrolled.
                let row = self.rubrics_offset() + usize::from(m.row).saturating_sub(2);
                if self.rubrics.view.is_some() {
                    self.rubrics.line = row;
                } else if row < self.rubrics.files.len() {
                    self.rubrics.file = row;
                }
                Vec::new()
            }
            MouseEventKind::Down(_) if self.pane == Pane::Datasets => {
                // Rows start below the tab bar and the list's border.
                let row = usize::from(m.row).saturating_sub(3);
                if let Some(b) = &self.browse {
                    let target = b.offset + row;
                    let delta = isize::try_from(target).unwrap_or(0)
                        - isize::try_from(b.cursor).unwrap_or(0);
                    self.move_cursor(delta)
                } else {
                    if row < self.datasets.len() {
                        self.selected = row;
                    }
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }

    /// A tab's text: the key that opens the pane, then its name (`D Datasets`).
    pub fn tab_label(&self, p: Pane) -> String {
        let action = match p {
            Pane::Datasets => Action::DatasetsPane,
            Pane::Rubrics => Action::RubricsPane,
            Pane::Label => Action::LabelPane,
            Pane::Grade => Action::GradePane,
            Pane::Results => Action::ResultsPane,
            Pane::Review => Action::ReviewPane,
        };
        match self.keymap.keys_for(Context::Global, action).first() {
            Some(k) => format!("{k} {}", p.title()),
            None => p.title().to_owned(),
        }
    }

    /// The pane whose tab is at `column` of the tab bar (laid out as the view draws it:
    /// the name `rubricate`, then each tab with a space either side).
    pub fn tab_at(&self, column: u16) -> Option<Pane> {
        let mut x = TAB_BAR_START;
        let column = usize::from(column);
        for p in Pane::ALL {
            let width = self.tab_label(p).chars().count() + 2;
            if (x..x + width).contains(&column) {
                return Some(p);
            }
            x += width;
        }
        None
    }
}
