//! The Datasets pane: the workspace's datasets, and the open one's items (a search, a
//! filter, an item's detail). What it shows is the open dataset in `Shared`, which the
//! Label pane walks too, so the pane itself keeps nothing.

pub mod view;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::effect::Effect;
use crate::tui::keymap::Action;
use crate::tui::modal::{Modal, PathPrompt};
use crate::tui::pane::{Nav, Outcome, Pane};
use crate::tui::shared::{PAGE, Shared};
use crate::tui::widgets::{Edit, LineInput, Typing};

#[derive(Debug, Default)]
pub struct DatasetsPane;

impl Pane for DatasetsPane {
    /// The search line takes typed keys first; each change runs the search again.
    fn key(&mut self, k: &KeyEvent, sh: &mut Shared) -> Option<Outcome> {
        let b = sh.browse.as_mut()?;
        let query = b.search.as_mut()?;
        let effects = match query.handle_key(k) {
            Edit::Cancel => {
                b.search = None;
                sh.rescan(String::new())
            }
            Edit::Submit => {
                b.search = None;
                Vec::new()
            }
            Edit::Changed => {
                let q = query.text().to_owned();
                sh.rescan(q)
            }
            Edit::Moved | Edit::Ignored => Vec::new(),
        };
        Some(effects.into())
    }

    fn paste(&mut self, text: &str, sh: &mut Shared) -> Option<Outcome> {
        let query = sh.browse.as_mut()?.search.as_mut()?;
        query.paste(text);
        let q = query.text().to_owned();
        Some(sh.rescan(q).into())
    }

    fn field<'a>(&'a self, sh: &'a Shared) -> Option<&'a LineInput> {
        sh.browse.as_ref()?.search.as_ref()
    }

    fn click(&mut self, row: u16, drag: bool, sh: &mut Shared) -> Outcome {
        if drag {
            return Outcome::Ignored;
        }
        // Rows start below the tab bar and the list's border.
        let row = usize::from(row).saturating_sub(3);
        if let Some(b) = &sh.browse {
            let target = b.offset + row;
            let delta =
                isize::try_from(target).unwrap_or(0) - isize::try_from(b.cursor).unwrap_or(0);
            sh.move_cursor(delta).into()
        } else {
            if row < sh.datasets.len() {
                sh.selected = row;
            }
            Outcome::none()
        }
    }

    fn action(&mut self, action: Action, sh: &mut Shared) -> Outcome {
        if action == Action::OpenPath {
            return Outcome::Modal(Modal::Path(PathPrompt::default()));
        }
        if action == Action::NewArtifact {
            return new_artifact_from_item(sh);
        }
        if sh.browse.is_none() {
            let n = sh.datasets.len();
            match action {
                Action::Up => sh.selected = sh.selected.saturating_sub(1),
                Action::Down if n > 0 => sh.selected = (sh.selected + 1).min(n - 1),
                Action::Open if n > 0 => return sh.open(sh.selected).into(),
                _ => {}
            }
            return Outcome::none();
        }
        let page = isize::try_from(sh.list_height().max(PAGE)).unwrap_or(10);
        if let Some(b) = &mut sh.browse
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
                return Outcome::none();
            }
        }
        Outcome::from(match action {
            Action::Up => sh.move_cursor(-1),
            Action::Down => sh.move_cursor(1),
            Action::PageUp => sh.move_cursor(-page),
            Action::PageDown => sh.move_cursor(page),
            Action::Top => sh.move_cursor(isize::MIN / 2),
            Action::Bottom => sh.move_cursor(isize::MAX / 2),
            Action::Open => {
                if let Some(b) = &mut sh.browse {
                    b.detail = !b.detail;
                }
                Vec::new()
            }
            Action::Back => {
                match &mut sh.browse {
                    Some(b) if b.detail => {
                        b.detail = false;
                        Vec::new()
                    }
                    // Back on the list of datasets: any added meanwhile show up.
                    _ => {
                        sh.browse = None;
                        vec![Effect::FindDatasets]
                    }
                }
            }
            Action::Search => {
                if let Some(b) = &mut sh.browse {
                    b.search = Some(LineInput::default());
                }
                Vec::new()
            }
            Action::Filter => {
                let Some(b) = &mut sh.browse else {
                    return Outcome::none();
                };
                b.filter = b.filter.next();
                sh.message = Some(format!("filter: {}", b.filter.name()));
                sh.rescan(String::new())
            }
            _ => return Outcome::Ignored,
        })
    }

    fn hints(&self, sh: &Shared) -> &'static [Action] {
        if sh.browse.is_none() {
            &[Action::Open, Action::OpenPath, Action::NextPane]
        } else {
            &[Action::Open, Action::Search, Action::Filter, Action::Back]
        }
    }

    fn typing<'a>(&'a self, sh: &'a Shared) -> Option<Typing<'a>> {
        let query = sh.browse.as_ref()?.search.as_ref()?;
        Some(Typing::new("/", query, " (enter keeps, esc clears)"))
    }

    fn draw(&self, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
        view::draw(sh, f, area);
    }
}

/// `A` in Datasets: the selected item's submission as a new artifact.
fn new_artifact_from_item(sh: &mut Shared) -> Outcome {
    let Some(b) = &sh.browse else {
        sh.message = Some("open a dataset and select an item first".into());
        return Outcome::none();
    };
    let Some(item) = b.current() else {
        return Outcome::none();
    };
    let dataset = sh
        .datasets
        .get(b.dataset)
        .map_or_else(String::new, |d| d.name.clone());
    let from = format!("item {} of {dataset}", item.id);
    let (content, name) = (
        serde_json::Value::String(item.submission.clone()),
        item.id.clone(),
    );
    Outcome::Nav(Nav::NewArtifact {
        from,
        content,
        name,
    })
}
