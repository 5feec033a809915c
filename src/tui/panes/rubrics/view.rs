//! The Rubrics pane: the rubric files; one as a tree (criteria → levels, options, anchors)
//! beside the selected criterion's fields, the lint findings about it and the rubric's
//! structural score; a draft's state; the diff of the last two saved versions.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::tree;
use super::{FieldEdit, RubricView, RubricsPane};
use crate::model::Method;
use crate::tui::shared::Shared;

/// What a new rubric starts from: blank, or a copy of a built-in.
fn new_from(sh: &Shared, at: usize, f: &mut Frame<'_>, area: Rect) {
    let names = crate::formats::library::NAMES;
    let choices = std::iter::once("blank (one criterion to start from)".to_owned()).chain(
        names
            .iter()
            .map(|n| format!("a copy of the built-in '{n}'")),
    );
    let lines: Vec<Line> = choices
        .enumerate()
        .map(|(i, text)| {
            if i == at {
                Line::styled(format!("▶ {text}"), sh.theme.selected)
            } else {
                Line::raw(format!("  {text}"))
            }
        })
        .collect();
    let w = area.width.saturating_sub(4).min(52);
    let h = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" New rubric from (↑/↓ · enter · esc) "),
        ),
        r,
    );
}

pub fn draw(pane: &RubricsPane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let Some(view) = &pane.view else {
        file_list(pane, sh, f, area);
        if let Some(at) = pane.new_from {
            new_from(sh, at, f, area);
        }
        return;
    };
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    rubric_tree(pane, sh, view, f, left);
    f.render_widget(
        Paragraph::new(criterion_side(pane, sh, view))
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(" Criterion ")),
        right,
    );
    if let Some(edit) = &pane.edit {
        field_editor(edit, f, right);
    }
    if let Some(diff) = &pane.diff {
        diff_overlay(pane, sh, diff, f, area);
    }
}

/// The workspace's rubric files, the selected one highlighted, when none is open.
fn file_list(pane: &RubricsPane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let lines: Vec<Line> = if sh.rubric_files.is_empty() {
        vec![Line::raw("no rubric files in rubrics/: a starts one")]
    } else {
        sh.rubric_files
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let name = p
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let style = if i == pane.file {
                    sh.theme.selected
                } else {
                    Style::new()
                };
                Line::styled(name, style)
            })
            .collect()
    };
    f.render_widget(
        Paragraph::new(lines)
            .scroll((
                u16::try_from(pane.rubrics_offset(sh)).unwrap_or(u16::MAX),
                0,
            ))
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(" Rubrics (enter opens · a starts a new one · / finds) "),
            ),
        area,
    );
}

/// The left panel: the open rubric as a tree (criteria with findings marked ⚠), or its
/// problems when it does not load, titled with the file, its lint score and draft state.
fn rubric_tree(pane: &RubricsPane, sh: &Shared, view: &RubricView, f: &mut Frame<'_>, area: Rect) {
    let file = view
        .path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let draft = if pane.saving() {
        " · saving…"
    } else if view.draft.is_some() {
        " · draft (s saves a version)"
    } else {
        ""
    };
    let score = view
        .score
        .map_or_else(String::new, |s| format!(" · lint {:.0}%", s * 100.0));
    let title = format!(" {file}{score}{draft} ");
    let width = usize::from(area.width.saturating_sub(2));
    let mut lines = Vec::new();
    match &view.rubric {
        Some(r) => {
            for (i, (c, text)) in tree(r).into_iter().enumerate() {
                let flagged = c.is_some_and(|c| view.findings.iter().any(|(x, _)| *x == Some(c)));
                let marker = if flagged && text.starts_with('├') {
                    " ⚠"
                } else {
                    ""
                };
                let style = if i == pane.line {
                    sh.theme.selected
                } else {
                    Style::new()
                };
                // One screen row per line (cut, not wrapped), so rows and lines agree for
                // scrolling and the mouse; the side shows the whole criterion.
                lines.push(Line::styled(
                    crate::tui::view::cut(&format!("{text}{marker}"), width),
                    style,
                ));
            }
        }
        None => lines.push(Line::raw("the rubric does not load:")),
    }
    for p in &view.problems {
        // Problems come after the tree and are read whole: wrapped by hand.
        let chars: Vec<char> = p.chars().collect();
        for chunk in chars.chunks(width.max(1)) {
            lines.push(Line::styled(
                chunk.iter().collect::<String>(),
                sh.theme.disagree,
            ));
        }
    }
    if view.rubric.is_none() && view.problems.iter().any(|p| p.contains(super::NO_CRITERIA)) {
        lines.push(Line::raw(""));
        lines.push(Line::raw(
            "a writes a first criterion into its draft, to edit in place",
        ));
    }
    f.render_widget(
        Paragraph::new(lines)
            .scroll((
                u16::try_from(pane.rubrics_offset(sh)).unwrap_or(u16::MAX),
                0,
            ))
            .block(Block::new().borders(Borders::ALL).title(title)),
        area,
    );
}

/// The right panel's lines: the selected criterion's fields and the lint findings about
/// it, then the findings about the rubric as a whole.
fn criterion_side(pane: &RubricsPane, sh: &Shared, view: &RubricView) -> Vec<Line<'static>> {
    let mut side = Vec::new();
    if let (Some(r), Some(i)) = (&view.rubric, pane.rubric_criterion())
        && let Some(c) = r.criteria.get(i)
    {
        side.push(Line::styled(
            format!("{} — {}", c.id, c.name),
            sh.theme.header,
        ));
        side.push(Line::raw(format!("requirement: {}", c.requirement)));
        side.push(Line::raw(format!(
            "weight {} · {} · kind {}",
            c.weight,
            if c.required { "required" } else { "optional" },
            c.kind.name()
        )));
        if let Some(m) = c.min_score {
            side.push(Line::raw(format!("min_score {m}")));
        }
        side.push(Line::raw(method_text(&c.method)));
        side.push(Line::raw(""));
        for (x, finding) in &view.findings {
            if *x == Some(i) {
                side.push(Line::styled(finding.clone(), sh.theme.disagree));
            }
        }
    }
    let general: Vec<&String> = view
        .findings
        .iter()
        .filter(|(x, _)| x.is_none())
        .map(|(_, t)| t)
        .collect();
    if !general.is_empty() {
        side.push(Line::styled("the rubric:", sh.theme.header));
        for g in general {
            side.push(Line::raw(g.clone()));
        }
    }
    side
}

/// How a criterion is graded, in one line: the judge (its model, its own template) or the
/// check with its arguments, or the schema.
fn method_text(method: &Method) -> String {
    match method {
        Method::Judge(j) => format!(
            "method judge{}{}",
            j.model
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default(),
            if j.template.is_some() {
                ", own template"
            } else {
                ""
            }
        ),
        Method::Check(ch) => format!(
            "method check {} {}",
            ch.name,
            serde_json::Value::Object(ch.args.clone())
        ),
        Method::Schema(_) => "method schema".into(),
    }
}

/// The field being edited in place, over the bottom of the right panel (taller for a
/// template).
fn field_editor(edit: &FieldEdit, f: &mut Frame<'_>, right: Rect) {
    let h = if edit.field == super::Field::Template {
        12
    } else {
        5
    }
    .min(right.height);
    let r = Rect::new(
        right.x,
        right.y + right.height.saturating_sub(h),
        right.width,
        h,
    );
    let block = Block::new().borders(Borders::ALL).title(format!(
        " {} (enter saves to the draft · esc cancels) ",
        edit.field.name()
    ));
    let inner = block.inner(r);
    f.render_widget(Clear, r);
    f.render_widget(block, r);
    f.render_widget(&edit.area, inner);
}

/// The diff between saved versions, over the whole pane: added lines green, removed red.
fn diff_overlay(pane: &RubricsPane, sh: &Shared, diff: &str, f: &mut Frame<'_>, area: Rect) {
    let r = Rect::new(
        area.x + 2,
        area.y + 1,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    let lines: Vec<Line> = diff
        .lines()
        .map(|l| {
            let style = if l.starts_with('+') && !l.starts_with("+++") {
                sh.theme.met
            } else if l.starts_with('-') && !l.starts_with("---") {
                sh.theme.unmet
            } else {
                Style::new()
            };
            Line::styled(l.to_owned(), style)
        })
        .collect();
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(format!(
            " Diff from {} versions back ([ older · ] newer · any other key closes) ",
            pane.diff_back
        ))),
        r,
    );
}
