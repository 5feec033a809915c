//! Drawing: panes render `&App` only. The frame is the tab bar, the focused pane, and the
//! status bar whose hints come from the effective keymap; the help overlay lists it whole.

mod ask;
mod calibrate;
mod datasets;
mod grade;
pub mod label;
mod palette;
mod results;
mod results_items;
pub(crate) mod review;
mod rubrics;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::app::{App, Pane};
use super::keymap::{Action, Context};

pub fn draw(app: &App, f: &mut Frame<'_>) {
    let area = f.area();
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    tab_bar(app, f, tabs);
    match app.pane {
        Pane::Datasets => datasets::draw(app, f, body),
        Pane::Label => label::draw(app, f, body),
        Pane::Grade => grade::draw(app, f, body),
        Pane::Results => results::draw(app, f, body),
        Pane::Review => review::draw(app, f, body),
        Pane::Rubrics => rubrics::draw(app, f, body),
    }
    status_bar(app, f, status);
    if app.help {
        help(app, f, area);
    }
    palette::draw(app, f, area);
    completions(app, f, status);
    ask::draw(app, f, area);
}

fn tab_bar(app: &App, f: &mut Frame<'_>, area: Rect) {
    let mut spans = vec![
        Span::styled(" rubricate ", app.shared.theme.selected),
        Span::raw(" "),
    ];
    for p in Pane::ALL {
        let style = if p == app.pane {
            app.shared.theme.title.add_modifier(Modifier::UNDERLINED)
        } else {
            Style::new()
        };
        spans.push(Span::styled(format!(" {} ", app.tab_label(p)), style));
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
fn hints(app: &App) -> String {
    let ctx = app.context();
    let wanted: &[Action] = match app.pane {
        Pane::Datasets if app.shared.browse.is_none() => {
            &[Action::Open, Action::OpenPath, Action::NextPane]
        }
        Pane::Datasets => &[Action::Open, Action::Search, Action::Filter, Action::Back],
        Pane::Label => &[
            Action::Met,
            Action::Unmet,
            Action::CannotAssess,
            Action::Undo,
            Action::Note,
            Action::Blind,
            Action::Queue,
            Action::Annotator,
        ],
        Pane::Grade if app.grade.run.is_none() => {
            &[Action::Estimate, Action::Open, Action::RegradeChanged]
        }
        Pane::Grade => &[Action::Pause, Action::Back, Action::Retry, Action::RetryAll],
        Pane::Results if app.results.items.is_some() && app.results.compare.is_none() => &[
            Action::NextVerdict,
            Action::FailedOnly,
            Action::Open,
            Action::Items,
            Action::Export,
        ],
        Pane::Results => &[
            Action::Down,
            Action::Items,
            Action::Choice(1),
            Action::Compare,
            Action::Annotator,
        ],
        Pane::Rubrics if app.rubrics.view.is_none() => &[Action::Open],
        Pane::Rubrics => &[
            Action::EditRequirement,
            Action::AddCriterion,
            Action::DeleteCriterion,
            Action::Edit,
            Action::Save,
            Action::Diff,
        ],
        Pane::Review => &[
            Action::NewArtifact,
            Action::ReviseArtifact,
            Action::Submit,
            Action::Approve,
            Action::RequestRevision,
            Action::Reject,
            Action::PageDown,
        ],
    };
    // Help first: on a narrow terminal the end of the line is cut, and help lists the rest.
    let global = |a: Action| {
        app.shared.keymap
            .keys_for(Context::Global, a)
            .first()
            .map(|k| format!("{k} {}", short(a)))
    };
    let parts: Vec<String> = global(Action::Help)
        .into_iter()
        .chain(global(Action::Palette))
        .chain(wanted.iter().filter_map(|a| {
            let keys = app.shared.keymap.keys_for(ctx, *a);
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
        Action::PageDown => "scroll the panel",
        Action::Palette => "actions",
        Action::Quit => "quit",
        _ => "",
    }
}

fn status_bar(app: &App, f: &mut Frame<'_>, area: Rect) {
    let search = app.shared.browse.as_ref().and_then(|b| b.search.as_ref());
    let text = match (search, &app.shared.message) {
        _ if app.rubrics.save.is_some() => {
            let d = app.rubrics.save.as_ref();
            format!(
                "save as version {} (tab: {}) · change note: {}▏ (enter saves, esc drops)",
                d.map_or("", |d| d.version()),
                d.map(|d| {
                    d.offers
                        .iter()
                        .filter(|v| v.as_str() != d.version())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" / ")
                })
                .unwrap_or_default(),
                d.map_or("", |d| d.note.as_str())
            )
        }
        _ if app.pane == Pane::Rubrics && app.rubrics.search.is_some() => format!(
            "/{}▏ (↓/ctrl-n next · ↑/ctrl-p previous · enter keeps · esc back){}",
            app.rubrics.search.as_ref().map_or("", |s| s.query.as_str()),
            app.shared.message
                .as_deref()
                .map_or_else(String::new, |m| format!(" · {m}"))
        ),
        _ if app.path_prompt.is_some() => format!(
            "{}: {}▏ (tab completes · enter opens · esc) · relative to the workspace",
            match app.path_prompt.as_ref().map(|p| p.purpose) {
                Some(crate::tui::path_prompt::PathPurpose::Artifact) =>
                    "a new artifact from the file",
                _ => "open a dataset file",
            },
            app.path_prompt.as_ref().map_or("", |p| p.text.as_str())
        ),
        _ if app.review.new.is_some() => {
            let new = app.review.new.as_ref();
            // What is typed first, so it shows on a narrow terminal.
            format!(
                "new artifact name: {}▏ · type {} (tab) · enter makes it, esc drops · from {}",
                new.map_or("", |n| n.name.as_str()),
                new.and_then(|n| app.shared.artifact_types.get(n.kind))
                    .map_or("", |(k, _)| k.as_str()),
                new.map_or("", |n| n.from.as_str())
            )
        }
        _ if app.review.note.is_some() => {
            let (to, note) = app
                .review
                .note
                .clone()
                .unwrap_or((crate::store::artifacts::Status::Draft, String::new()));
            format!(
                "note for {}: {note}▏ (enter decides, esc drops)",
                to.as_str()
            )
        }
        _ if app.annotator_prompt.is_some() && app.annotator_offered => format!(
            "who is labelling? [{}] (enter keeps it, or type your name; set `annotator:` in rubricate.yaml to skip this)",
            app.annotator_prompt.as_deref().unwrap_or_default()
        ),
        _ if app.annotator_prompt.is_some() => format!(
            "who is labelling? {}▏ (enter confirms; set `annotator:` in rubricate.yaml to skip this)",
            app.annotator_prompt.as_deref().unwrap_or_default()
        ),
        _ if app.note.is_some() => format!(
            "note: {}▏ (enter saves it with the label, esc drops it)",
            app.note.as_deref().unwrap_or_default()
        ),
        (Some(q), _) => format!("/{q}▏ (enter keeps, esc clears)"),
        (None, Some(m)) => format!("{m} │ {}", hints(app)),
        (None, None) => hints(app),
    };
    let text = cursor_in_view(&text, usize::from(area.width));
    f.render_widget(Paragraph::new(text).style(app.shared.theme.selected), area);
}

fn help(app: &App, f: &mut Frame<'_>, area: Rect) {
    let w = area.width.saturating_sub(4).min(72);
    let h = area.height.saturating_sub(2);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let mut lines = Vec::new();
    // This pane's keys first, then the keys that work everywhere, then the other panes'
    // (the palette's order).
    let here = app.context();
    let mut context = None;
    for e in crate::tui::palette::entries(&app.shared.keymap, here) {
        if context != Some(e.context) {
            context = Some(e.context);
            let name = e.context.name().to_uppercase();
            lines.push(Line::styled(
                if e.context == here {
                    format!("{name} (this pane)")
                } else {
                    name
                },
                app.shared.theme.header,
            ));
        }
        lines.push(Line::raw(format!(
            "  {:<18} {}",
            e.keys.join(" "),
            e.action.describe()
        )));
    }
    let visible = usize::from(h.saturating_sub(2)).max(1);
    let scroll = app.help_scroll.min(lines.len().saturating_sub(visible));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(" Keys (↑/↓ scroll · any other key closes) "),
            ),
        r,
    );
}

/// A status line whose typing cursor (`▏`) is past the width, shifted left (`…` in front)
/// so the cursor and what was just typed stay on screen.
fn cursor_in_view(text: &str, width: usize) -> String {
    let Some(at) = text.chars().position(|c| c == '▏') else {
        return text.to_owned();
    };
    if width < 2 || at < width.saturating_sub(1) {
        return text.to_owned();
    }
    let skip = at + 2 - width;
    std::iter::once('…')
        .chain(text.chars().skip(skip))
        .collect()
}

/// What `tab` found for a path being typed, in a box just above the status bar.
fn completions(app: &App, f: &mut Frame<'_>, status: Rect) {
    let Some(prompt) = &app.path_prompt else {
        return;
    };
    if prompt.candidates.is_empty() {
        return;
    }
    let shown = crate::tui::path_prompt::SHOWN;
    let mut lines: Vec<Line> = prompt
        .candidates
        .iter()
        .take(shown)
        .map(|c| Line::raw(c.clone()))
        .collect();
    if prompt.candidates.len() > shown {
        lines.push(Line::raw(format!(
            "… {} more (type more, then tab)",
            prompt.candidates.len() - shown
        )));
    }
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(status.y);
    let width = status.width.min(60);
    let area = Rect::new(status.x, status.y.saturating_sub(height), width, height);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" tab found ")),
        area,
    );
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_typing_cursor_past_the_width_shifts_the_line_left() {
        assert_eq!(
            super::cursor_in_view("note: ab▏ (enter)", 40),
            "note: ab▏ (enter)"
        );
        // Width 8: the cursor ends in the last column, what was typed just before it.
        let shifted = super::cursor_in_view("note: abcdefgh▏ (enter)", 8);
        assert!(shifted.chars().count() >= 8);
        assert!(shifted.starts_with('…'));
        assert_eq!(shifted.chars().position(|c| c == '▏'), Some(7));
        assert!(shifted.contains("fgh▏"));
    }
}
