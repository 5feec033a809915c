//! The Align view (in Results): a `rubricate align` report. Above, each weak criterion's
//! candidates with their κ on the dev items (ranking only); in the middle, the selected
//! candidate's requirement as a word diff against the original's, marked `[-removed-]` and
//! `{+added+}` (and coloured); below, THE result — each criterion on the test items before
//! and after, the search's cost and whether it stopped early, and what adopting would do.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::AlignView;
use crate::metrics::Ci;
use crate::run::align_report::{AlignReport, Candidate, Figures, Found};
use crate::tui::shared::Shared;
use crate::tui::view::preview;

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

fn interval(ci: Option<Ci>) -> String {
    ci.map_or_else(|| "[-]".into(), |c| format!("[{:.2},{:.2}]", c.low, c.high))
}

pub fn draw(sh: &Shared, view: &AlignView, f: &mut Frame<'_>, area: Rect) {
    let found = match &view.found {
        Some(Ok(found)) => found,
        Some(Err(e)) => {
            f.render_widget(
                Paragraph::new(e.as_str())
                    .wrap(Wrap { trim: false })
                    .block(Block::new().borders(Borders::ALL).title(" Align ")),
                area,
            );
            return;
        }
        None => {
            f.render_widget(
                Paragraph::new("reading the newest align report…")
                    .block(Block::new().borders(Borders::ALL).title(" Align ")),
                area,
            );
            return;
        }
    };
    let r = &found.report;
    // The result keeps its rows (a line per criterion, the cost line, the borders); the
    // candidates take what is left after the diff.
    // A line per criterion, three for the split and cost, the stop, adopting; the borders.
    let test_h = u16::try_from(r.test.len() + 5)
        .unwrap_or(u16::MAX)
        .min(area.height / 2)
        .max(5);
    // The candidates take the rows they need (a heading per criterion), the diff what is
    // left (at least 4 rows: a requirement often wraps).
    let criteria = r.weak_criteria.len().max(1);
    let table_h =
        u16::try_from(r.candidates.len() + criteria + 2 + usize::from(!found.skipped.is_empty()))
            .unwrap_or(u16::MAX)
            .min(area.height.saturating_sub(test_h + 4))
            .max(4);
    // The diff: the rows its words wrap to (both requirements, roughly), at least 3.
    let selected = r.candidates.get(view.cursor);
    let words = selected.map_or(0, |c| {
        c.requirement.chars().count()
            + r.original_requirement(&c.criterion)
                .map_or(0, |o| o.chars().count())
    });
    let diff_h = u16::try_from(words / usize::from(area.width.saturating_sub(2)).max(1) + 3)
        .unwrap_or(u16::MAX)
        .clamp(3, area.height.saturating_sub(table_h + test_h).max(3));
    let [table, diff, test, _] = Layout::vertical([
        Constraint::Length(table_h),
        Constraint::Length(diff_h),
        Constraint::Length(test_h),
        Constraint::Min(0),
    ])
    .areas(area);
    draw_candidates(sh, view, found, f, table);
    draw_diff(sh, r, selected, f, diff);
    draw_test(sh, r, f, test);
}

/// The candidates, criterion by criterion, the selected one kept in sight.
fn draw_candidates(sh: &Shared, view: &AlignView, found: &Found, f: &mut Frame<'_>, area: Rect) {
    let r = &found.report;
    // The mark, figures and tag take 50 columns; the label what is left.
    let label_w = usize::from(area.width.saturating_sub(2))
        .saturating_sub(50)
        .clamp(8, 32);
    let mut lines = Vec::new();
    let mut selected_line = 0;
    let mut criterion: Option<&str> = None;
    for (i, c) in r.candidates.iter().enumerate() {
        if criterion != Some(c.criterion.as_str()) {
            criterion = Some(&c.criterion);
            let heading_w = label_w + 2;
            lines.push(Line::styled(
                format!(
                    "{:<heading_w$} {:>5} {:>11} {:>8}",
                    preview(&c.criterion, heading_w),
                    "κ dev",
                    "95% CI",
                    "disagree"
                ),
                sh.theme.header,
            ));
        }
        if i == view.cursor {
            selected_line = lines.len();
        }
        let best = best_on_dev(r, &c.criterion) == Some(i);
        let tag = match (best, c.indistinguishable) {
            (true, _) => " best",
            (false, true) => " not distinguishable",
            (false, false) => "",
        };
        let examples = if c.examples > 0 {
            format!(" +{} ex", c.examples)
        } else {
            String::new()
        };
        let mark = if i == view.cursor { "▸" } else { " " };
        lines.push(Line::styled(
            format!(
                "{mark} {:<label_w$} {:>5} {:>11} {:>8}{tag}",
                preview(&format!("{}{examples}", c.label), label_w),
                num(c.dev.kappa),
                interval(c.dev.kappa_ci),
                format!("{}/{}", c.dev.disagreements, c.dev.pairs),
            ),
            if i == view.cursor {
                sh.theme.selected
            } else {
                Style::new()
            },
        ));
    }
    if !found.skipped.is_empty() {
        lines.push(Line::styled(
            format!(
                "{} newer file(s) in aligns/ could not be read: {}",
                found.skipped.len(),
                found.skipped.join(" · ")
            ),
            sh.theme.unmet,
        ));
    }
    let inner = usize::from(area.height.saturating_sub(2)).max(1);
    let first = (selected_line + 1).saturating_sub(inner);
    let title = format!(
        " Align {}@{} · {}'s labels of {} · candidates ranked on dev · made {} ",
        r.rubric, r.rubric_version, r.annotator, r.dataset, r.created_at
    );
    f.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(first).unwrap_or(u16::MAX), 0))
            .block(Block::new().borders(Borders::ALL).title(title)),
        area,
    );
}

/// The candidate of `criterion` with the highest κ on dev (the first of equals).
fn best_on_dev(r: &AlignReport, criterion: &str) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in r.candidates.iter().enumerate() {
        if c.criterion != criterion {
            continue;
        }
        let k = c.dev.kappa.unwrap_or(f64::NEG_INFINITY);
        if best.is_none_or(|(_, b)| k > b) {
            best = Some((i, k));
        }
    }
    best.map(|(i, _)| i)
}

/// The selected candidate's requirement against the original's, word by word.
fn draw_diff(sh: &Shared, r: &AlignReport, c: Option<&Candidate>, f: &mut Frame<'_>, area: Rect) {
    let (title, body) = match c {
        Some(c) => {
            let original = r.original_requirement(&c.criterion).unwrap_or_default();
            let title = format!(
                " [-removed-] {{+added+}} vs the original · {} · {} ",
                c.criterion, c.label
            );
            let body = if c.round == 0 {
                vec![Line::styled(c.requirement.clone(), sh.theme.muted)]
            } else {
                vec![word_diff(sh, original, &c.requirement)]
            };
            (title, body)
        }
        None => (" requirement ".to_owned(), vec![Line::raw("no candidates")]),
    };
    f.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .block(Block::new().borders(Borders::ALL).title(title)),
        area,
    );
}

/// `new` against `old` word by word: each change (the words between two unchanged ones)
/// as `[-removed-]{+added+}`, so it reads as a phrase, and without colour too.
pub fn word_diff(sh: &Shared, old: &str, new: &str) -> Line<'static> {
    use similar::{ChangeTag, TextDiff};
    let removed = sh.theme.unmet.add_modifier(Modifier::CROSSED_OUT);
    let mut spans: Vec<Span<'static>> = Vec::new();
    // The change being gathered: what it removes, what it adds, and the space after it
    // (inside the change if another word changes after it).
    let (mut del, mut ins, mut space) = (String::new(), String::new(), String::new());
    let mut open = false;
    for change in TextDiff::from_words(old, new).iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal if open && text.trim().is_empty() => space.push_str(text),
            ChangeTag::Equal => {
                if open {
                    close_change(
                        &mut spans,
                        (&mut del, &mut ins, &mut space),
                        (removed, sh.theme.met),
                    );
                    open = false;
                }
                spans.push(Span::raw(text.to_owned()));
            }
            tag => {
                if open {
                    del.push_str(&space);
                    ins.push_str(&space);
                    space.clear();
                }
                open = true;
                if tag == ChangeTag::Delete {
                    del.push_str(text);
                } else {
                    ins.push_str(text);
                }
            }
        }
    }
    if open {
        close_change(
            &mut spans,
            (&mut del, &mut ins, &mut space),
            (removed, sh.theme.met),
        );
    }
    Line::from(spans)
}

/// Ends a change of `word_diff`: `[-removed-]{+added+}`, the space it began or ended with
/// kept outside the marks; the three buffers emptied for the next.
fn close_change(
    spans: &mut Vec<Span<'static>>,
    (del, ins, space): (&mut String, &mut String, &mut String),
    (removed, added): (Style, Style),
) {
    let texts = [del.as_str(), ins.as_str()];
    let edge = |at: fn(&str) -> Option<char>| {
        texts
            .iter()
            .any(|t| !t.trim().is_empty() && at(t).is_some_and(char::is_whitespace))
    };
    if edge(|t| t.chars().next()) {
        spans.push(Span::raw(" "));
    }
    let trailing = edge(|t| t.chars().next_back());
    if !del.trim().is_empty() {
        spans.push(Span::styled(format!("[-{}-]", del.trim()), removed));
    }
    if !ins.trim().is_empty() {
        spans.push(Span::styled(format!("{{+{}+}}", ins.trim()), added));
    }
    if space.is_empty() && trailing {
        spans.push(Span::raw(" "));
    } else {
        spans.push(Span::raw(std::mem::take(space)));
    }
    space.clear();
    del.clear();
    ins.clear();
}

/// THE result: each criterion on the test items, before → after, and the search's cost.
fn draw_test(sh: &Shared, r: &AlignReport, f: &mut Frame<'_>, area: Rect) {
    let name_w = r
        .test
        .iter()
        .map(|o| o.criterion.chars().count())
        .max()
        .unwrap_or(0)
        .min(16);
    let mut lines: Vec<Line<'static>> = r
        .test
        .iter()
        .map(|o| {
            let mark = if o.worked_on { "*" } else { " " };
            Line::raw(format!(
                "{mark}{:<name_w$} κ {} → {} · lenient {} → {}",
                preview(&o.criterion, name_w),
                kappa(&o.before),
                kappa(&o.after),
                lenient(o.before.leniency),
                lenient(o.after.leniency),
            ))
        })
        .collect();
    let stopped = r.stopped.as_deref().map_or_else(
        || "the search ran to the end".to_owned(),
        |why| format!("STOPPED EARLY: {why}"),
    );
    let adopt = match (&r.adopted, &r.winner) {
        (Some(v), _) => format!("adopted as {v}"),
        (None, Some(_)) => "A adopts the winner".to_owned(),
        (None, None) => "no winner: nothing beat the original".to_owned(),
    };
    lines.push(Line::styled(
        format!(
            "split {}/{}/{} train/dev/test (seed {}) · search cost ${:.4}",
            r.split.train.len(),
            r.split.dev.len(),
            r.split.test.len(),
            r.split.seed,
            r.cost
        ),
        sh.theme.muted,
    ));
    lines.push(Line::styled(
        stopped,
        if r.stopped.is_some() {
            sh.theme.unmet
        } else {
            sh.theme.muted
        },
    ));
    lines.push(Line::styled(adopt, sh.theme.header));
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::new().borders(Borders::ALL).title(format!(
                " THE RESULT: {} test items, graded once · before → after · * worked on ",
                r.split.test.len()
            )),
        ),
        area,
    );
}

fn kappa(x: &Figures) -> String {
    format!("{} {}", num(x.kappa), interval(x.kappa_ci))
}

fn lenient(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |l| format!("{l:+.1}"))
}
