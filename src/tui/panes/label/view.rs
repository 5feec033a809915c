//! The Label pane: one item at a time with the rubric's criteria; one key per verdict; the
//! judge's verdicts hidden in blind mode until the item is labelled, disagreements marked.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::pair::Shown;
use super::{LabelPane, choice_keys};
use crate::core::text::visible;
use crate::model::{Criterion, Item, Kind};
use crate::tui::keymap::{Action, Context};
use crate::tui::open_dataset::{Browse, file_verdicts, label_text};
use crate::tui::shared::Shared;
use crate::tui::widgets::transcript;

pub fn draw(pane: &LabelPane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    let Some(b) = &sh.browse else {
        f.render_widget(
            Paragraph::new("Open a dataset in the Datasets pane to label it.")
                .block(Block::new().borders(Borders::ALL).title(" Label ")),
            area,
        );
        return;
    };
    let Some(item) = b.current() else {
        f.render_widget(
            Paragraph::new("loading…").block(Block::new().borders(Borders::ALL).title(" Label ")),
            area,
        );
        return;
    };
    let rubric = sh.labelling_rubric();
    if let Some(shown) = Shown::of(item, rubric.as_deref()) {
        // Side by side when there is room for two answers and the criteria beneath them;
        // narrower, the answers one above the other beside the criteria.
        if area.width >= WIDE_PAIR {
            let criteria_rows = (area.height * 2 / 5).max(9);
            let [top, bottom] =
                Layout::vertical([Constraint::Min(6), Constraint::Length(criteria_rows)])
                    .areas(area);
            answers(pane, b, item, &shown, f, top, true);
            criteria_panel(pane, sh, b, item, Some(&shown), f, bottom);
        } else {
            let [left, right] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                    .areas(area);
            answers(pane, b, item, &shown, f, left, false);
            criteria_panel(pane, sh, b, item, Some(&shown), f, right);
        }
        return;
    }
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    submission(pane, sh, b, item, f, left);
    criteria_panel(pane, sh, b, item, None, f, right);
}

/// From this many columns a pair's answers are shown side by side.
pub const WIDE_PAIR: u16 = 100;

/// A pair's question and its two answers, A and B (never the candidates' ids), side by
/// side or one above the other; both scroll together with the page keys.
fn answers(
    pane: &LabelPane,
    b: &Browse,
    item: &Item,
    shown: &Shown<'_>,
    f: &mut Frame<'_>,
    area: Rect,
    side_by_side: bool,
) {
    let total = b.total.map_or_else(|| "…".into(), |t| t.to_string());
    let title = format!(
        " {} ({} of {total}) · a pair, shown blind ",
        item.id,
        b.cursor + 1
    );
    let question = Paragraph::new(Line::styled(
        format!("Q: {}", item.prompt.as_deref().unwrap_or("(no question)")),
        Style::new().add_modifier(Modifier::ITALIC),
    ))
    .wrap(Wrap { trim: false });
    // The whole question when it fits in a third of the height.
    let question_rows = u16::try_from(question.line_count(area.width.saturating_sub(2)))
        .unwrap_or(u16::MAX)
        .clamp(1, (area.height / 3).max(1));
    let [top, rest] =
        Layout::vertical([Constraint::Length(question_rows + 2), Constraint::Min(3)]).areas(area);
    f.render_widget(
        question.block(Block::new().borders(Borders::ALL).title(title)),
        top,
    );
    let halves = if side_by_side {
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).split(rest)
    } else {
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).split(rest)
    };
    for (k, (name, candidate)) in [("A", shown.a), ("B", shown.b)].into_iter().enumerate() {
        let Some(&half) = halves.get(k) else { continue };
        let text = Paragraph::new(candidate.submission.clone()).wrap(Wrap { trim: false });
        // Both scroll together, each no further than its own end.
        let rows = u16::try_from(text.line_count(half.width.saturating_sub(2))).unwrap_or(u16::MAX);
        let room = half.height.saturating_sub(2);
        let scroll = pane.pair_scroll.min(rows.saturating_sub(room));
        let above = if scroll > 0 { " ↑ pgup" } else { "" };
        let below = if rows.saturating_sub(scroll) > room {
            " more ↓ pgdn "
        } else {
            ""
        };
        f.render_widget(
            text.scroll((scroll, 0)).block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(format!(" Answer {name}{above} "))
                    .title_bottom(Line::from(below).right_aligned()),
            ),
            half,
        );
    }
}

/// The left panel: the item's prompt (in italics) and submission — a conversation as a
/// transcript, its tool calls folded or in full — titled with its id and its place in the
/// list, scrolled by page.
fn submission(
    pane: &LabelPane,
    sh: &Shared,
    b: &Browse,
    item: &Item,
    f: &mut Frame<'_>,
    area: Rect,
) {
    let mut text = Vec::new();
    if let Some(p) = &item.prompt {
        text.push(Line::styled(
            format!("Q: {}", visible(p)),
            Style::new().add_modifier(Modifier::ITALIC),
        ));
        text.push(Line::raw(""));
    }
    let inner = area.width.saturating_sub(2);
    match item.conversation.as_deref() {
        Some(c) => text.extend(transcript::lines(c, pane.tools_open, &sh.theme, inner)),
        None => text.extend(
            visible(&item.submission)
                .lines()
                .map(|l| Line::raw(l.to_owned())),
        ),
    }
    let total = b.total.map_or_else(|| "…".into(), |t| t.to_string());
    let mut title = format!(" {} ({} of {total}) ", item.id, b.cursor + 1);
    if let Some(c) = item.conversation.as_deref() {
        // As much as fits the frame: the counts, then the fold key.
        let fold = if pane.tools_open {
            "x folds"
        } else {
            "x unfolds"
        };
        let counts = format!("{title}· {} ", transcript::summary(c));
        let room = usize::from(area.width.saturating_sub(4));
        let full = format!("{counts}· {fold} ");
        if c.tool_calls().next().is_some() && full.chars().count() <= room {
            title = full;
        } else if counts.chars().count() <= room {
            title = counts;
        }
    }
    let paragraph = Paragraph::new(text).wrap(Wrap { trim: false });
    let rows = u16::try_from(paragraph.line_count(inner)).unwrap_or(u16::MAX);
    let max = rows.saturating_sub(area.height.saturating_sub(2));
    pane.item_scroll_max.set(max);
    let scroll = if pane.item_scroll.0 == item.id {
        pane.item_scroll.1.min(max)
    } else {
        0
    };
    let mut block = Block::new().borders(Borders::ALL).title(title);
    if max > 0 {
        let more = if scroll < max { "pgdn more" } else { "end" };
        block = block.title_bottom(Line::styled(
            format!(
                " {}/{} rows · {more} ",
                (scroll + area.height.saturating_sub(2)).min(rows),
                rows
            ),
            sh.theme.muted,
        ));
    }
    f.render_widget(paragraph.scroll((scroll, 0)).block(block), area);
}

/// The right panel: every criterion with your label, the judge's and the file's, the
/// sitting's figures below, titled with the rubric and scrolled to the focused criterion.
fn criteria_panel(
    pane: &LabelPane,
    sh: &Shared,
    b: &Browse,
    item: &Item,
    pair: Option<&Shown<'_>>,
    f: &mut Frame<'_>,
    area: Rect,
) {
    let criteria = sh.label_criteria();
    // What the dataset file says (its ground truth), beside your label and the judge's.
    let file = sh
        .labelling_rubric()
        .map(|r| file_verdicts(item, &r))
        .unwrap_or_default();
    // The judge's verdicts on the item, read from the run's journal by position.
    let result = b
        .run
        .as_ref()
        .zip(b.position(b.cursor))
        .and_then(|(r, p)| sh.run_details.item(r, p, &item.id));
    let labelled_all = criteria
        .iter()
        .all(|c| sh.labels.contains_key(&(item.id.clone(), c.id.clone())));
    let reveal = !pane.blind || labelled_all;
    let mut lines = Vec::new();
    if criteria.is_empty() {
        lines.push(Line::raw(if b.opened {
            "No rubric to label with: add one in Rubrics (B)."
        } else {
            "Reading the dataset's rubric and labels…"
        }));
    }
    // The first line of the focused criterion, kept in view.
    let mut focus = 0usize;
    for (i, c) in criteria.iter().enumerate() {
        if i == pane.criterion {
            focus = lines.len();
        }
        let judge = match (pair, &b.run) {
            // A pair's verdict is both orders' cells put together, said as a side.
            (Some(shown), Some(run)) => {
                result.and_then(|d| shown.judge_side(&run.rubric, d, &c.id))
            }
            _ => result
                .and_then(|d| d.cell(&c.id))
                .and_then(|x| x.verdict.as_ref())
                .map(ToString::to_string),
        };
        let answers = Answers {
            judge,
            file: file.get(i).cloned().flatten(),
            reveal,
        };
        lines.extend(criterion_lines(
            sh,
            item,
            c,
            pair,
            i == pane.criterion,
            answers,
        ));
    }
    lines.extend(footer_lines(pane, sh, item, &criteria));
    let scroll = scroll_to(&lines, focus, area);
    let mut block = Block::new()
        .borders(Borders::ALL)
        .title(format!(" {} ", rubric_title(sh)));
    // The focused criterion's stop rule stays in sight however far the list scrolls.
    if let Some(short) = criteria
        .get(pane.criterion)
        .and_then(|c| stop_rule_short(sh, &c.id))
    {
        block = block.title_bottom(Line::styled(short, sh.theme.muted));
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(block),
        area,
    );
}

/// The other answers shown beside yours for one criterion.
struct Answers {
    /// The judge's verdict, if the run has one.
    judge: Option<String>,
    /// The dataset file's verdict (its ground truth), if it has one.
    file: Option<String>,
    /// Whether the judge's and the file's answers are shown (blind mode hides them until
    /// the item is labelled).
    reveal: bool,
}

/// One criterion's lines: its name and kind, its requirement, the answer keys when it has
/// focus, your label beside the judge's and the file's, the annotators' labels when
/// adjudicating, and your note.
fn criterion_lines(
    sh: &Shared,
    item: &Item,
    c: &Criterion,
    pair: Option<&Shown<'_>>,
    focused: bool,
    answers: Answers,
) -> Vec<Line<'static>> {
    let key = (item.id.clone(), c.id.clone());
    let human = sh.labels.get(&key).map(|v| shown_label(pair, v));
    let Answers {
        judge,
        file,
        reveal,
    } = answers;
    let disagree = reveal && human.is_some() && judge.is_some() && human != judge;
    let marker = if focused { "▶" } else { " " };
    let mut style = Style::new();
    if focused {
        style = style.add_modifier(Modifier::BOLD);
    }
    let mut lines = vec![
        Line::styled(
            format!(
                "{marker} {} ({})",
                c.name,
                if c.weight < 0.0 {
                    "penalty"
                } else {
                    "criterion"
                }
            ),
            style,
        ),
        Line::raw(format!("    {}", c.requirement)),
    ];
    if focused {
        let keys = match pair {
            Some(_) => pair_choices(sh),
            None => choices(c),
        };
        lines.push(Line::raw(format!("    keys: {keys}")));
    }
    let judge_text = match (&judge, reveal) {
        (Some(j), true) => j.clone(),
        (Some(_), false) => "hidden".into(),
        (None, _) => "—".into(),
    };
    let flag = if disagree { "  ≠ DISAGREE" } else { "" };
    // Hidden with the judge's in blind mode: it is an answer too.
    let file_text = match (file, reveal) {
        (Some(v), true) => format!(" · file: {v}"),
        (Some(_), false) => " · file: hidden".into(),
        (None, _) => String::new(),
    };
    lines.push(Line::styled(
        format!(
            "    you: {} · judge: {judge_text}{file_text}{flag}",
            human.unwrap_or_else(|| "—".into())
        ),
        if disagree {
            sh.theme.disagree
        } else {
            Style::new()
        },
    ));
    if sh.adjudicating() {
        lines.push(peers_line(sh, &key, pair));
    }
    if let Some(n) = sh.notes.get(&key) {
        lines.push(Line::styled(format!("    note: {n}"), sh.theme.muted));
    }
    lines
}

/// Every answer with the key that gives it, as `verdict_for` reads keys.
fn choices(c: &Criterion) -> String {
    let keys = choice_keys(c);
    match &c.kind {
        Kind::Binary => "m MET · u UNMET · c can't tell".to_owned(),
        Kind::Scale(s) if keys.is_empty() => format!(
            "{} to {}: no key for every point; use the CLI (rubricate labels set)",
            s.min, s.max
        ),
        _ => keys
            .iter()
            .map(|(key, _, shown)| format!("{key} {shown}"))
            .chain(std::iter::once("c can't tell".to_owned()))
            .collect::<Vec<_>>()
            .join(" · "),
    }
}

/// A label as the screen says it: a pair's names a candidate, said as the side it is
/// shown on (the candidates stay hidden).
fn shown_label(pair: Option<&Shown<'_>>, v: &serde_json::Value) -> String {
    match pair {
        Some(shown) => shown.side(&label_text(v)),
        None => label_text(v),
    }
}

/// A pair's answers with the keys that give them, as the keymap binds them.
pub fn pair_choices(sh: &Shared) -> String {
    [
        (Action::PreferA, "A better"),
        (Action::PreferB, "B better"),
        (Action::PreferTie, "tie"),
        (Action::CannotAssess, "can't tell"),
    ]
    .iter()
    .filter_map(|(a, shown)| {
        let key = sh.keymap.keys_for(Context::Label, *a).into_iter().next()?;
        Some(format!("{key} {shown}"))
    })
    .collect::<Vec<_>>()
    .join(" · ")
}

/// Each annotator's label on one (item, criterion), for the adjudicated one to settle,
/// marked when they differ.
fn peers_line(sh: &Shared, key: &(String, String), pair: Option<&Shown<'_>>) -> Line<'static> {
    let said: Vec<(&String, String)> = sh
        .peers
        .iter()
        .filter_map(|(who, labels)| labels.get(key).map(|v| (who, shown_label(pair, v))))
        .collect();
    let differ = said.windows(2).any(|w| w[0].1 != w[1].1);
    let text = if said.is_empty() {
        "no annotator labelled it".to_owned()
    } else {
        said.iter()
            .map(|(who, v)| format!("{who}: {v}"))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    Line::styled(
        format!("    {text}{}", if differ { "  ≠ DIFFER" } else { "" }),
        if differ {
            sh.theme.disagree
        } else {
            sh.theme.muted
        },
    )
}

/// The lines under the criteria: the annotator, the sitting's count and rate, the queue,
/// the focused criterion's stop rule and, in the where-it-matters queue, why this item.
fn footer_lines(
    pane: &LabelPane,
    sh: &Shared,
    item: &Item,
    criteria: &[Criterion],
) -> Vec<Line<'static>> {
    let minutes = pane
        .started
        .map_or(0.0, |t| sh.now.duration_since(t).as_secs_f64() / 60.0);
    #[allow(clippy::cast_precision_loss)]
    let rate = if minutes > 0.0 {
        pane.sitting as f64 / minutes
    } else {
        0.0
    };
    // The top two by name, once the plan says which they are.
    let queue = match sh.plan_between() {
        Some([a, b]) if pane.queue == super::Queue::BetweenTopTwo => {
            format!("where {a} and {b} differ")
        }
        _ => pane.queue.name().to_owned(),
    };
    let mut lines = vec![
        Line::raw(""),
        Line::raw(format!(
            "annotator {} · this sitting {} labelled ({rate:.1}/min) · queue: {queue}{}{}",
            sh.annotator,
            pane.sitting,
            if pane.blind { " · blind" } else { "" },
            if pane.pending.is_empty() {
                ""
            } else {
                " · saving…"
            }
        )),
    ];
    if let Some(c) = criteria.get(pane.criterion) {
        lines.push(Line::styled(
            format!("{}: {}", c.id, sh.stop_rule_text(&c.id)),
            sh.theme.muted,
        ));
    }
    if pane.queue.planned()
        && let Some(next) = sh
            .label_plan()
            .and_then(|p| p.next.iter().find(|n| n.item == item.id))
        && !next.reasons.is_empty()
    {
        lines.push(Line::styled(
            format!("why this item: {}", next.reasons.join("; ")),
            sh.theme.muted,
        ));
    }
    lines
}

/// The right panel's title: the rubric labelled with, and whether you are adjudicating.
fn rubric_title(sh: &Shared) -> String {
    let rubric = sh
        .labelling_rubric()
        .map_or_else(|| "no rubric".into(), |r| format!("{}@{}", r.id, r.version));
    if sh.adjudicating() {
        format!("adjudicating · {rubric}")
    } else {
        rubric
    }
}

/// How many rows to scroll so that the focused criterion (from line `focus`, its header,
/// requirement, keys and answers) is in view: rows are counted as the lines wrap.
fn scroll_to(lines: &[Line<'_>], focus: usize, area: Rect) -> u16 {
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    let height = usize::from(area.height.saturating_sub(2)).max(1);
    let rows = |l: &Line<'_>| l.width().div_ceil(width).max(1);
    let top: usize = lines.iter().take(focus).map(rows).sum();
    let block: usize = lines.iter().skip(focus).take(4).map(rows).sum();
    let scroll = (top + block).saturating_sub(height).min(top);
    u16::try_from(scroll).unwrap_or(u16::MAX)
}

/// The stop rule in a few words, for the Label pane's frame: ` κ 0.62 ±0.11 · ~140 more `.
fn stop_rule_short(sh: &Shared, criterion: &str) -> Option<String> {
    let c = sh.stop_rule(criterion)?;
    let k = c.kappa?;
    Some(match (c.half_width, c.more_needed) {
        (Some(_), Some(0)) => format!(" κ {k:.2} · target reached "),
        (Some(w), Some(m)) if w < 1e-9 => format!(" κ {k:.2} · ~{m} more labels "),
        (Some(w), Some(m)) => format!(" κ {k:.2} ±{w:.2} · ~{m} more labels "),
        _ => format!(" κ {k:.2} "),
    })
}
