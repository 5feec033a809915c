//! A paste (bracketed paste: the terminal hands it over as one `Msg::Paste`, not as keys):
//! it goes into the line being typed — the one keys would reach first — made one line
//! (`widgets::line_input::one_line`), and nowhere else. With no line open it is dropped:
//! its letters are text, never keys that would run actions, and a question on screen (run
//! it? delete it?) is not answered by whatever happened to be pasted.
//!
//! For now the text is appended to today's typed `String`s; each field moves onto
//! `widgets::LineInput` (which pastes at the cursor) as its pane is moved.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Effect, Pane};
use super::rubric_edit::Field;
use super::widgets::line_input::one_line;

impl App {
    pub(super) fn paste(&mut self, text: &str) -> Vec<Effect> {
        if self.asks_first() {
            return Vec::new();
        }
        let line = one_line(text);
        if let Some(p) = &mut self.palette {
            p.query.push_str(&line);
            p.selected = 0;
            return Vec::new();
        }
        if let Some(p) = &mut self.path_prompt {
            p.text.push_str(&line);
            p.candidates.clear();
            return Vec::new();
        }
        if let Some(new) = &mut self.review.new {
            new.name.push_str(&line);
            return Vec::new();
        }
        if self.pane == Pane::Rubrics && self.rubrics.search.is_some() {
            // The search moves to the first match as it is typed: typed it is.
            let mut effects = Vec::new();
            for c in line.chars() {
                let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
                effects.extend(self.rubric_search_key(&key));
            }
            return effects;
        }
        if self.pane == Pane::Rubrics
            && let Some(edit) = &mut self.rubrics.edit
        {
            // A template has lines of its own; every other field is one line.
            if edit.field == Field::Template {
                edit.area.insert_str(text.replace("\r\n", "\n"));
            } else {
                edit.area.insert_str(line);
            }
            return Vec::new();
        }
        let offered = self.annotator_offered && self.pastes_into_annotator_prompt();
        if let Some(typed) = self.typed_text() {
            if offered {
                // As a typed key does: the offered name goes.
                typed.clear();
            }
            typed.push_str(&line);
            self.annotator_offered &= !offered;
            return Vec::new();
        }
        if let Some(b) = &mut self.browse
            && let Some(query) = &mut b.search
        {
            query.push_str(&line);
            let query = query.clone();
            return self.rescan(query);
        }
        Vec::new()
    }

    /// Whether something that reads keys, not text, is open above the typed lines: a
    /// question, the export choice, the choice of a rubric to start from, a delete to
    /// confirm, a diff.
    fn asks_first(&self) -> bool {
        self.ask.is_some()
            || self.export_prompt
            || (self.pane == Pane::Grade && self.grade.confirm.is_some())
            || (self.pane == Pane::Rubrics
                && (self.rubrics.new_from.is_some()
                    || self.rubrics.confirm_delete.is_some()
                    || self.rubrics.diff.is_some()))
    }

    /// Whether the typed line keys reach first is the annotator prompt.
    fn pastes_into_annotator_prompt(&mut self) -> bool {
        let prompt = self.annotator_prompt.as_ref().map(std::ptr::from_ref);
        prompt.is_some() && self.typed_text().map(|t| std::ptr::from_ref(t)) == prompt
    }
}

#[cfg(test)]
mod tests {
    use super::super::app::{App, Msg};
    use super::super::keymap::Keymap;

    fn app() -> App {
        let Ok(keymap) = Keymap::load(None) else {
            panic!("the default keymap loads");
        };
        App::new("/nowhere".into(), keymap, "pat".into(), Vec::new())
    }

    #[test]
    fn with_no_line_open_a_paste_is_dropped_and_runs_no_action() {
        let mut app = app();
        let effects = app.update(Msg::Paste("q:?".into()));
        assert!(effects.is_empty());
        assert!(!app.quit && !app.quitting && !app.help && app.palette.is_none());
    }

    #[test]
    fn a_paste_goes_into_the_line_being_typed_as_one_line() {
        let mut app = app();
        app.note = Some("seen: ".into());
        app.update(Msg::Paste("first\r\nsecond\n".into()));
        assert_eq!(app.note.as_deref(), Some("seen: first second"));
        app.open_palette();
        app.update(Msg::Paste("quit\n".into()));
        assert_eq!(app.palette.as_ref().map(|p| p.query.as_str()), Some("quit"));
        assert_eq!(app.note.as_deref(), Some("seen: first second"));
    }

    #[test]
    fn a_paste_replaces_an_offered_annotator_name_as_a_typed_key_does() {
        let mut app = app();
        app.annotator_prompt = Some("pat".into());
        app.annotator_offered = true;
        app.update(Msg::Paste("sam".into()));
        assert_eq!(app.annotator_prompt.as_deref(), Some("sam"));
        assert!(!app.annotator_offered);
        app.update(Msg::Paste(" lee".into()));
        assert_eq!(app.annotator_prompt.as_deref(), Some("sam lee"));
    }

    #[test]
    fn a_choice_on_screen_is_not_answered_by_a_paste() {
        let mut app = app();
        app.note = Some(String::new());
        app.export_prompt = true;
        app.update(Msg::Paste("csv".into()));
        assert_eq!(app.note.as_deref(), Some(""));
    }
}
