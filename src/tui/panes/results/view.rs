//! The Results pane: the open dataset's latest run — summary, score histogram, per-criterion
//! pass rates, judge-vs-human agreement per criterion, and the confusion matrix of the
//! selected criterion.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::ResultsPane;
use crate::metrics::{CriterionMetrics, MetricsReport};
use crate::tui::data::RunData;
use crate::tui::run_data::RunFigures;
use crate::tui::run_stats::RunStats;
use crate::tui::shared::Shared;
use std::fmt::Write as _;

/// A run's per-criterion figures, as they were worked out when its join with the labels
/// came back.
pub(super) fn stats(sh: &Shared, run: &RunData) -> std::sync::Arc<RunStats> {
    sh.stats.stats(run, &sh.labels)
}

/// κ of a criterion (quadratic-weighted for ordered kinds), where it is defined.
pub(super) fn kappa(report: &MetricsReport, i: usize) -> Option<f64> {
    report.criteria.get(i)?.kappa()
}

/// A figure in a table's five columns, `  -  ` where it is not defined.
pub(super) fn figure(x: Option<f64>) -> String {
    x.map_or_else(|| "  -  ".into(), |v| format!("{v:>5.2}"))
}

/// An n×n confusion: rows the human's category, columns the judge's (in score order).
fn categorical_confusion(c: &crate::metrics::CategoricalReport) -> Vec<Line<'static>> {
    // Columns as wide as the longest category (8–14): names alike at the start (two
    // candidates `assistant-v1`, `assistant-v2`) stay told apart.
    let w = c
        .categories
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, 14);
    let short = |s: &str| crate::tui::view::preview(s, w);
    let mut head = format!("{:<14}", "human \\ judge");
    for cat in &c.categories {
        let _ = write!(head, " {:>w$}", short(cat));
    }
    let mut lines = vec![Line::raw(head)];
    for (cat, row) in c.categories.iter().zip(&c.confusion) {
        let mut line = format!("{:<14}", short(cat));
        for n in row {
            let _ = write!(line, " {n:>w$}");
        }
        lines.push(Line::raw(line));
    }
    lines
}

pub fn draw(pane: &ResultsPane, sh: &Shared, f: &mut Frame<'_>, area: Rect) {
    if let Some(view) = &pane.align {
        super::view_align::draw(sh, view, f, area);
        return;
    }
    if let Some(view) = &pane.calibrate {
        super::view_calibrate::draw(sh, view, f, area);
        return;
    }
    if let (Some(a), Some(b)) = (
        &pane.compare,
        pane.compare_b
            .as_ref()
            .or_else(|| sh.browse.as_ref().and_then(|b| b.run.as_ref())),
    ) {
        super::view_compare::draw(pane, sh, a, b, f, area);
        return;
    }
    // The run chosen with `{` `}` (so many back), else the latest.
    let Some(run) = pane
        .compare_b
        .as_ref()
        .or_else(|| sh.browse.as_ref().and_then(|b| b.run.as_ref()))
    else {
        f.render_widget(
            Paragraph::new("No run for this dataset yet: `rubricate grade --rubric R DATASET --save` records one.")
                .block(Block::new().borders(Borders::ALL).title(" Results ")),
            area,
        );
        return;
    };
    let figures = stats(sh, run);
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(
            4 + u16::from(!figures.tags.is_empty()) + u16::from(figures.corrected.score.is_some()),
        ),
        Constraint::Min(6),
        Constraint::Length(8),
    ])
    .areas(area);
    summary(pane, run, &figures, f, top);
    if let Some(view) = &pane.items {
        // The selected item's verdicts get the rows they need (a conversation's turns add
        // one each), up to half the room.
        let room = middle.height + bottom.height;
        let wanted = view
            .position(run, view.cursor)
            .and_then(|p| sh.run_details.at(run, p))
            .map_or(8, |d| {
                d.cells.iter().map(|c| 1 + c.turns.len()).sum::<usize>() + 2
            });
        let detail_rows = u16::try_from(wanted)
            .unwrap_or(u16::MAX)
            .clamp(8, (room / 2).max(8));
        let [list, detail] =
            Layout::vertical([Constraint::Min(5), Constraint::Length(detail_rows)]).areas(
                Rect::new(
                    middle.x,
                    middle.y,
                    middle.width,
                    middle.height + bottom.height,
                ),
            );
        super::view_items::item_list(pane, sh, run, view, f, list, detail);
        return;
    }

    // A pairwise run: its pairs, per written criterion, with people's preferences.
    if let Some(pairs) = &run.figures.pairs {
        super::view_pairs::table(pane, sh, pairs, &figures.report, f, middle);
        let measured = crate::metrics::preference::measured(&run.rubric);
        confusion(pane, sh, &measured.criteria, &figures, f, bottom);
        return;
    }
    // The histogram gives way on narrow screens.
    let hist_width = if middle.width < 100 { 22 } else { 34 };
    let [hist, table] =
        Layout::horizontal([Constraint::Length(hist_width), Constraint::Min(30)]).areas(middle);
    histogram(run, f, hist);
    criteria_table(pane, sh, run, &figures, f, table);
    confusion(pane, sh, &run.rubric.criteria, &figures, f, bottom);
}

/// The summary: the run's id, state, rubric, items passed and mean score; its tokens and
/// cost and which run it is; each tag's mean when the items carry tags.
fn summary(pane: &ResultsPane, run: &RunData, figures: &RunStats, f: &mut Frame<'_>, top: Rect) {
    let RunFigures {
        items,
        passed,
        incomplete,
        mean,
        ..
    } = run.figures;
    let t = run.manifest.totals.unwrap_or_default();
    let mut summary = vec![
        Line::raw(format!(
            "run {}{} · {} · {items} items · {passed} passed ({:.0}%) · mean {:.3} · {incomplete} incomplete",
            run.manifest.id,
            state_note(&run.manifest),
            run.manifest.rubric_label(),
            if items == 0 {
                0.0
            } else {
                100.0 * passed as f64 / items as f64
            },
            mean
        )),
        Line::raw(format!(
            "tokens {} in / {} out · {} · {} ({{ older · }} newer)",
            t.input_tokens,
            t.output_tokens,
            // Tokens at no cost: no price in rubricate.yaml, not a free run.
            if t.cost == 0.0 && t.output_tokens > 0 {
                "no price set".to_owned()
            } else {
                format!("cost ${:.4}", t.cost)
            },
            if pane.compare_b.is_some() {
                format!("{} runs back", pane.compare_b_back)
            } else {
                "the latest run".to_owned()
            }
        )),
    ];
    if !figures.tags.is_empty() {
        // Each tag's mean over the items and its interval, as `grade` prints them.
        summary.push(Line::raw(crate::tui::view::preview(
            &crate::run::tags_text(&figures.tags, 2),
            usize::from(top.width.saturating_sub(2)),
        )));
    }
    if let Some(line) = corrected_line(&figures.corrected) {
        summary.push(Line::raw(crate::tui::view::preview(
            &line,
            usize::from(top.width.saturating_sub(2)),
        )));
    }
    f.render_widget(
        Paragraph::new(summary).block(Block::new().borders(Borders::ALL).title(" Summary ")),
        top,
    );
}

/// `to quote (28 labelled): mean 0.750→0.512 [0.41, 0.61] · pass 75%→52% [40%, 63%]`: the
/// judge's figures corrected by the labelled items, as `metrics` gives them.
fn corrected_line(c: &crate::run::agreement::CorrectedFigures) -> Option<String> {
    let score = c.score?;
    let mut line = format!(
        "to quote ({} labelled): mean {:.3}→{:.3} [{:.2}, {:.2}]",
        score.labelled, score.raw, score.corrected, score.ci.low, score.ci.high
    );
    if let Some(p) = c.pass_rate {
        let _ = write!(
            line,
            " · pass {:.0}%→{:.0}% [{:.0}%, {:.0}%]",
            p.raw * 100.0,
            p.corrected * 100.0,
            p.ci.low * 100.0,
            p.ci.high * 100.0
        );
    }
    Some(line)
}

/// The score histogram: ten bins, highest first, as bars of '█'.
fn histogram(run: &RunData, f: &mut Frame<'_>, hist: Rect) {
    let bins = run.figures.bins;
    let most = bins.iter().copied().max().unwrap_or(1).max(1);
    let width = usize::from(hist.width.saturating_sub(12)).max(1);
    let hist_lines: Vec<Line> = bins
        .iter()
        .enumerate()
        .rev()
        .map(|(i, n)| {
            Line::raw(format!(
                "{:>3}% {:>3} {}",
                i * 10,
                n,
                "█".repeat(n * width / most)
            ))
        })
        .collect();
    f.render_widget(
        Paragraph::new(hist_lines).block(Block::new().borders(Borders::ALL).title(" Scores ")),
        hist,
    );
}

/// Per criterion: pass rate (full marks) with a bar, and agreement with the human labels
/// (κ, F1, accuracy, leniency, how many pairs); the selected criterion highlighted.
fn criteria_table(
    pane: &ResultsPane,
    sh: &Shared,
    run: &RunData,
    figures: &RunStats,
    f: &mut Frame<'_>,
    table: Rect,
) {
    let report = &figures.report;
    // The name takes what the figures (43 columns) leave, so every column fits at 80×24.
    let name_w = usize::from(table.width.saturating_sub(2))
        .saturating_sub(43)
        .clamp(8, 28);
    let mut lines = vec![Line::styled(
        format!(
            "{:<name_w$} {:>6}  {:>5} {:>5} {:>5} {:>6} {:>5}",
            "CRITERION", "PASS", "κ", "F1", "ACC", "LENIENT", "N"
        ),
        sh.theme.header,
    )];
    for (i, c) in run.rubric.criteria.iter().enumerate() {
        let rate = figures.full.get(i).copied().unwrap_or(0.0);
        let (kappa, f1, acc, len, n) = match report.criteria.get(i).map(|r| &r.metrics) {
            Some(CriterionMetrics::Binary(b)) => (
                b.metrics.kappa,
                b.metrics.f1,
                b.metrics.accuracy,
                b.metrics.leniency,
                b.metrics.support,
            ),
            Some(CriterionMetrics::Nominal(c) | CriterionMetrics::Ordinal(c)) => (
                c.metrics.kappa,
                None,
                c.metrics.accuracy,
                None,
                c.metrics.support,
            ),
            Some(CriterionMetrics::Interval(s)) => {
                (None, None, None, s.metrics.bias, s.metrics.n as u64)
            }
            None => (None, None, None, None, 0),
        };
        let bar = "▇".repeat((rate * 6.0).round() as usize);
        let style = if i == pane.cursor {
            sh.theme.selected
        } else {
            Style::new()
        };
        lines.push(Line::styled(
            format!(
                "{:<name_w$} {:>3.0}% {:<6} {} {} {} {:>6} {:>5}",
                crate::tui::view::preview(&c.name, name_w),
                rate * 100.0,
                bar,
                figure(kappa),
                figure(f1),
                figure(acc),
                len.map_or_else(|| "-".into(), |l| format!("{l:+.1}")),
                n
            ),
            style,
        ));
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(format!(" Criteria vs {}'s labels ", sh.annotator)),
        ),
        table,
    );
}

/// The selected criterion's confusion (binary, categorical, or the interval figures),
/// people against people on it, and its stop rule.
fn confusion(
    pane: &ResultsPane,
    sh: &Shared,
    criteria: &[crate::model::Criterion],
    figures: &RunStats,
    f: &mut Frame<'_>,
    bottom: Rect,
) {
    let selected = criteria.get(pane.cursor);
    let metrics =
        selected.and_then(|_| figures.report.criteria.get(pane.cursor).map(|r| &r.metrics));
    let mut lines = match metrics {
        Some(CriterionMetrics::Binary(c)) if c.metrics.support > 0 => {
            let c = c.confusion;
            vec![
                Line::raw("                 judge MET   judge UNMET"),
                Line::raw(format!("human MET       {:>9}   {:>11}", c.tp, c.fn_)),
                Line::raw(format!("human UNMET     {:>9}   {:>11}", c.fp, c.tn)),
            ]
        }
        Some(CriterionMetrics::Nominal(c) | CriterionMetrics::Ordinal(c))
            if c.metrics.support > 0 =>
        {
            categorical_confusion(c)
        }
        Some(CriterionMetrics::Interval(s)) if s.metrics.n > 0 => vec![Line::raw(format!(
            "{} pairs · MAE {} · RMSE {} · Pearson {} · bias (judge − human) {}",
            s.metrics.n,
            figure(s.metrics.mae),
            figure(s.metrics.rmse),
            figure(s.metrics.pearson),
            figure(s.metrics.bias)
        ))],
        _ => vec![Line::raw("no labels to compare for this criterion yet")],
    };
    if let Some(line) = selected.and_then(|c| people_line(sh, &c.id)) {
        lines.push(Line::raw(line));
    }
    if let Some(c) = selected {
        // How solid the agreement is, and how many more labels make it so (`labels next`).
        lines.push(Line::styled(sh.stop_rule_text(&c.id), sh.theme.muted));
    }
    let title = format!(" Confusion: {} ", selected.map_or("", |c| c.name.as_str()));
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(title)),
        bottom,
    );
}

/// People against people on a criterion, beside the judge against each of them:
/// `people: alice~bob κ 0.60 (10) · α 0.62 │ judge~alice 1.00 · judge~bob 0.60`.
fn people_line(sh: &Shared, criterion: &str) -> Option<String> {
    let r = sh.people()?;
    let k = |report: &MetricsReport| {
        report
            .criteria
            .iter()
            .find(|c| c.criterion == criterion)
            .and_then(crate::metrics::CriterionReport::kappa)
            .map_or_else(|| "-".into(), |k| format!("{k:.2}"))
    };
    let mut parts: Vec<String> = r
        .pairs
        .iter()
        .map(|p| format!("{}~{} κ {} ({})", p.a, p.b, k(&p.report), p.items))
        .collect();
    if let Some(a) = r.alpha.iter().find(|a| a.criterion == criterion) {
        parts.push(format!(
            "α {}",
            a.alpha.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
        ));
    }
    let judge: Vec<String> = r
        .judge
        .iter()
        .map(|j| format!("judge~{} {}", j.annotator, k(&j.report)))
        .collect();
    Some(format!(
        "people: {} │ {}",
        parts.join(" · "),
        judge.join(" · ")
    ))
}

/// ` · in batches (1 of 2 in flight)` or ` · unfinished` after a run's id; nothing when
/// the run is finished.
pub(super) fn state_note(m: &crate::store::runs::Manifest) -> String {
    let state = m.state();
    if state.is_finished() {
        String::new()
    } else {
        format!(" · {state}")
    }
}
