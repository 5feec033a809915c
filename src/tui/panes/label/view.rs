//! The Label pane: one item at a time with the rubric's criteria; one key per verdict; the
//! judge's verdicts hidden in blind mode until the item is labelled, disagreements marked.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::{LabelPane, choice_keys};
use crate::model::Kind;
use crate::tui::open_dataset::{file_verdicts, label_text};
use crate::tui::shared::Shared;

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
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let mut text = Vec::new();
    if let Some(p) = &item.prompt {
        text.push(Line::styled(
            format!("Q: {p}"),
            Style::new().add_modifier(Modifier::ITALIC),
        ));
        text.push(Line::raw(""));
    }
    text.extend(item.submission.lines().map(|l| Line::raw(l.to_owned())));
    let total = b.total.map_or_else(|| "…".into(), |t| t.to_string());
    f.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: false }).block(
            Block::new().borders(Borders::ALL).title(format!(
                " {} ({} of {total}) ",
                item.id,
                b.cursor + 1
            )),
        ),
        left,
    );
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
        let human = sh
            .labels
            .get(&(item.id.clone(), c.id.clone()))
            .map(label_text);
        let judge = result
            .and_then(|d| d.cell(&c.id))
            .and_then(|x| x.verdict.as_ref())
            .map(ToString::to_string);
        let reveal = !pane.blind || labelled_all;
        let disagree = reveal && human.is_some() && judge.is_some() && human != judge;
        let marker = if i == pane.criterion { "▶" } else { " " };
        let mut style = Style::new();
        if i == pane.criterion {
            style = style.add_modifier(Modifier::BOLD);
        }
        lines.push(Line::styled(
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
        ));
        lines.push(Line::raw(format!("    {}", c.requirement)));
        if i == pane.criterion {
            focus = lines.len().saturating_sub(2);
            // Every answer with the key that gives it, as `verdict_for` reads keys.
            let keys = choice_keys(c);
            let choices = match &c.kind {
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
            };
            lines.push(Line::raw(format!("    keys: {choices}")));
        }
        let judge_text = match (&judge, reveal) {
            (Some(j), true) => j.clone(),
            (Some(_), false) => "hidden".into(),
            (None, _) => "—".into(),
        };
        let flag = if disagree { "  ≠ DISAGREE" } else { "" };
        let note = sh.notes.get(&(item.id.clone(), c.id.clone()));
        // Hidden with the judge's in blind mode: it is an answer too.
        let file_text = match (file.get(i).cloned().flatten(), reveal) {
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
            // Each annotator's label, for the adjudicated one to settle.
            let said: Vec<(&String, String)> = sh
                .peers
                .iter()
                .filter_map(|(who, labels)| {
                    labels
                        .get(&(item.id.clone(), c.id.clone()))
                        .map(|v| (who, label_text(v)))
                })
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
            lines.push(Line::styled(
                format!("    {text}{}", if differ { "  ≠ DIFFER" } else { "" }),
                if differ {
                    sh.theme.disagree
                } else {
                    sh.theme.muted
                },
            ));
        }
        if let Some(n) = note {
            lines.push(Line::styled(format!("    note: {n}"), sh.theme.muted));
        }
    }
    let minutes = pane
        .started
        .map_or(0.0, |t| sh.now.duration_since(t).as_secs_f64() / 60.0);
    #[allow(clippy::cast_precision_loss)]
    let rate = if minutes > 0.0 {
        pane.sitting as f64 / minutes
    } else {
        0.0
    };
    lines.push(Line::raw(""));
    lines.push(Line::raw(format!(
        "annotator {} · this sitting {} labelled ({rate:.1}/min) · queue: {}{}{}",
        sh.annotator,
        pane.sitting,
        pane.queue.name(),
        if pane.blind { " · blind" } else { "" },
        if pane.pending.is_empty() {
            ""
        } else {
            " · saving…"
        }
    )));
    if let Some(c) = criteria.get(pane.criterion) {
        lines.push(Line::styled(
            format!("{}: {}", c.id, sh.stop_rule_text(&c.id)),
            sh.theme.muted,
        ));
    }
    if pane.queue == super::Queue::WhereItMatters
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
    let rubric = sh
        .labelling_rubric()
        .map_or_else(|| "no rubric".into(), |r| format!("{}@{}", r.id, r.version));
    let rubric = if sh.adjudicating() {
        format!("adjudicating · {rubric}")
    } else {
        rubric
    };
    let scroll = scroll_to(&lines, focus, right);
    let mut block = Block::new()
        .borders(Borders::ALL)
        .title(format!(" {rubric} "));
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
        right,
    );
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
