//! Drawing: panes render `&App` only. The frame is the tab bar, the focused pane, and the
//! status bar whose hints come from the effective keymap; the help overlay lists it whole.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::keymap::{Action, Context};
use super::modal::Modal;
use super::nav::PaneId;
use super::pane::Pane;
use super::shared::Shared;

/// What one frame shows: what every pane shares, the pane in front, and the modals on top
/// (the top one last).
pub struct Screen<'a> {
    pub shared: &'a Shared,
    pub front: &'a dyn Pane,
    pub modals: &'a [Modal],
}

impl Screen<'_> {
    fn context(&self) -> Context {
        self.shared.front.context()
    }
}

pub fn draw(app: &Screen<'_>, f: &mut Frame<'_>) {
    let area = f.area();
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let sh = app.shared;
    tab_bar(app, f, tabs);
    app.front.draw(sh, f, body);
    status_bar(app, f, status);
    for modal in app.modals {
        crate::tui::modal::view::draw(modal, app.context(), sh, f, status);
    }
}

fn tab_bar(app: &Screen<'_>, f: &mut Frame<'_>, area: Rect) {
    let mut spans = vec![
        Span::styled(" rubricate ", app.shared.theme.selected),
        Span::raw(" "),
    ];
    for p in PaneId::ALL {
        let style = if p == app.shared.front {
            app.shared.theme.title.add_modifier(Modifier::UNDERLINED)
        } else {
            Style::new()
        };
        spans.push(Span::styled(
            format!(" {} ", app.shared.tab_label(p)),
            style,
        ));
    }
    // The workspace's path, when it fits whole (a cut path names nothing).
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let path = format!("  {}", app.shared.workspace.display());
    if used + path.chars().count() <= usize::from(area.width) {
        spans.push(Span::raw(path));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `key action · key action …` for the focused pane, from the keymap.
fn hints(app: &Screen<'_>) -> String {
    let sh = app.shared;
    let ctx = app.context();
    let wanted = app.front.hints(sh);
    // Help first: on a narrow terminal the end of the line is cut, and help lists the rest.
    let global = |a: Action| {
        sh.keymap
            .keys_for(Context::Global, a)
            .first()
            .map(|k| format!("{k} {}", short(a)))
    };
    let parts: Vec<String> = global(Action::Help)
        .into_iter()
        .chain(global(Action::Palette))
        .chain(wanted.iter().filter_map(|a| {
            let keys = sh.keymap.keys_for(ctx, *a);
            keys.first().map(|k| format!("{k} {}", short(*a)))
        }))
        .chain(global(Action::Quit))
        .collect();
    parts.join(" · ")
}

fn short(a: Action) -> &'static str {
    match a {
        Action::Open => "open",
        Action::Search => "search",
        Action::Filter => "filter",
        Action::Back => "back",
        Action::NextPane => "pane",
        Action::Met => "met",
        Action::Unmet => "unmet",
        Action::CannotAssess => "can't tell",
        Action::PreferA => "A better",
        Action::PreferB => "B better",
        Action::PreferTie => "tie",
        Action::Undo => "undo",
        Action::Blind => "blind",
        Action::Queue => "queue",
        Action::Annotator => "annotator",
        Action::Down => "criterion",
        Action::Choice(_) => "…4 items of a cell",
        Action::Estimate => "estimate",
        Action::RegradeChanged => "changed only",
        Action::Submit => "submit",
        Action::Edit => "$EDITOR",
        Action::EditRequirement => "requirement (n name · w weight · i id · g gate)",
        Action::AddCriterion => "add (y copy)",
        Action::DeleteCriterion => "delete (K/J move)",
        Action::Compare => "compare runs",
        Action::Save => "save version",
        Action::Diff => "diff",
        Action::Approve => "approve",
        Action::RequestRevision => "revise",
        Action::Reject => "reject",
        Action::Pause => "pause",
        Action::Retry => "retry cell",
        Action::RetryAll => "retry failures",
        Action::Note => "note",
        Action::Help => "help",
        Action::Items => "items",
        Action::OpenPath => "open a file",
        Action::NewArtifact => "new",
        Action::ReviseArtifact => "edit",
        Action::NextVerdict => "by verdict",
        Action::FailedOnly => "failed only",
        Action::Export => "export",
        Action::Adopt => "adopt",
        Action::Align => "align",
        Action::PageDown => "scroll the panel",
        Action::Palette => "actions",
        Action::Quit => "quit",
        _ => "",
    }
}

/// The status bar: the line being typed (its cursor the terminal's), else what was said
/// and the pane's keys.
fn status_bar(app: &Screen<'_>, f: &mut Frame<'_>, area: Rect) {
    let sh = app.shared;
    let typing = app
        .modals
        .last()
        .and_then(|m| m.typing(sh))
        .or_else(|| app.front.typing(sh));
    if let Some(t) = typing {
        t.field
            .render(f, area, &t.prefix, &t.suffix, sh.theme.selected);
        return;
    }
    let (text, style) = match &sh.message {
        // Work not saved, or the disk refusing: marked, so it is not read as a tip.
        Some(m) if sh.alarm.as_ref() == Some(m) => {
            (format!("⚠ {m} │ {}", hints(app)), sh.theme.unmet)
        }
        Some(m) => (format!("{m} │ {}", hints(app)), sh.theme.selected),
        None => (hints(app), sh.theme.selected),
    };
    f.render_widget(Paragraph::new(text).style(style), area);
}

/// The first `n` characters of a line, columns kept (`…` where it is cut; a line break
/// or a tab in it becomes a space).
pub fn cut(text: &str, n: usize) -> String {
    let flat = text.chars().map(|c| if c.is_control() { ' ' } else { c });
    if text.chars().count() > n {
        flat.take(n.saturating_sub(1))
            .chain(std::iter::once('…'))
            .collect()
    } else {
        flat.collect()
    }
}

/// The first `n` characters of text on one line.
pub fn preview(text: &str, n: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > n {
        let cut: String = one.chars().take(n.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        one
    }
}
