//! The Results pane: the open dataset's latest run — summary, score histogram, per-criterion
//! pass rates, judge-vs-human agreement per criterion, and the confusion matrix of the
//! selected criterion.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::metrics::{CriterionLabels, CriterionMetrics, LabelPair, LabelScale, criterion_report};
use crate::model::Verdict;
use crate::tui::app::App;

pub fn draw(app: &App, f: &mut Frame<'_>, area: Rect) {
    let Some(run) = app.browse.as_ref().and_then(|b| b.run.as_ref()) else {
        f.render_widget(
            Paragraph::new("No run for this dataset yet: `rubricate grade --rubric R DATASET --save` records one.")
                .block(Block::new().borders(Borders::ALL).title(" Results ")),
            area,
        );
        return;
    };
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Min(6),
        Constraint::Length(8),
    ])
    .areas(area);
    let items = run.by_item.len();
    let passed = run.by_item.values().filter(|r| r.passed).count();
    let incomplete = run.by_item.values().filter(|r| r.incomplete).count();
    let scores: Vec<f64> = run.by_item.values().filter_map(|r| r.score).collect();
    #[allow(clippy::cast_precision_loss)]
    let mean = if scores.is_empty() {
        0.0
    } else {
        scores.iter().sum::<f64>() / scores.len() as f64
    };
    let t = run.manifest.totals.unwrap_or_default();
    let summary = vec![
        Line::raw(format!(
            "run {} · {}@{} · {items} items · {passed} passed ({:.0}%) · mean {:.3} · {incomplete} incomplete",
            run.manifest.id,
            run.manifest.rubric_id,
            run.manifest.rubric_version,
            if items == 0 {
                0.0
            } else {
                100.0 * passed as f64 / items as f64
            },
            mean
        )),
        Line::raw(format!(
            "tokens {} in / {} out · cost ${:.4}",
            t.input_tokens, t.output_tokens, t.cost
        )),
    ];
    f.render_widget(
        Paragraph::new(summary).block(Block::new().borders(Borders::ALL).title(" Summary ")),
        top,
    );

    // The histogram gives way on narrow screens.
    let hist_width = if middle.width < 100 { 22 } else { 34 };
    let [hist, table] =
        Layout::horizontal([Constraint::Length(hist_width), Constraint::Min(30)]).areas(middle);
    // Score histogram: ten bins, as bars of '█'.
    let mut bins = [0usize; 10];
    for s in &scores {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let i = ((s * 10.0).floor() as usize).min(9);
        bins[i] += 1;
    }
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

    // Per criterion: pass rate (full marks), agreement with the human labels.
    let criteria = &run.rubric.criteria;
    let human: Vec<Vec<(String, Verdict, Verdict)>> = criteria
        .iter()
        .map(|c| {
            run.by_item
                .iter()
                .filter_map(|(id, r)| {
                    let judge = r
                        .results
                        .iter()
                        .find(|x| x.criterion_id == c.id)?
                        .verdict
                        .clone()?;
                    let label = app.labels.get(&(id.clone(), c.id.clone()))?;
                    let h = match label {
                        serde_json::Value::Number(n) => Verdict::Score(n.as_f64()?),
                        other => {
                            crate::engine::executor::parse_verdict_text(c, other.as_str()?).ok()?
                        }
                    };
                    Some((id.clone(), h, judge))
                })
                .collect()
        })
        .collect();
    let labels: Vec<CriterionLabels<'_>> = criteria
        .iter()
        .zip(&human)
        .map(|(c, pairs)| CriterionLabels {
            criterion: &c.id,
            scale: if matches!(c.kind, crate::model::Kind::Binary) {
                LabelScale::Binary
            } else {
                LabelScale::Interval
            },
            pairs: pairs
                .iter()
                .map(|(id, h, j)| LabelPair {
                    item: id,
                    human: h,
                    judge: j,
                })
                .collect(),
        })
        .collect();
    let report = criterion_report(&labels, None);
    let num = |x: Option<f64>| x.map_or_else(|| "  -  ".into(), |v| format!("{v:>5.2}"));
    let mut lines = vec![Line::styled(
        format!(
            "{:<20} {:>6}  {:>5} {:>5} {:>5} {:>6} {:>5}",
            "CRITERION", "PASS", "κ", "F1", "ACC", "LENIENT", "N"
        ),
        app.theme.header,
    )];
    for (i, c) in criteria.iter().enumerate() {
        let full = run
            .by_item
            .values()
            .filter(|r| {
                r.results
                    .iter()
                    .any(|x| x.criterion_id == c.id && x.value.is_some_and(|v| v >= 1.0 - 1e-9))
            })
            .count();
        #[allow(clippy::cast_precision_loss)]
        let rate = if items == 0 {
            0.0
        } else {
            full as f64 / items as f64
        };
        let (kappa, f1, acc, len, n) = match report.criteria.get(i).map(|r| &r.metrics) {
            Some(CriterionMetrics::Binary(b)) => (
                b.metrics.kappa,
                b.metrics.f1,
                b.metrics.accuracy,
                b.metrics.leniency,
                b.metrics.support,
            ),
            _ => (None, None, None, None, 0),
        };
        let bar = "▇".repeat((rate * 6.0).round() as usize);
        let style = if i == app.results_cursor {
            app.theme.selected
        } else {
            Style::new()
        };
        lines.push(Line::styled(
            format!(
                "{:<20} {:>3.0}% {:<6} {} {} {} {:>6} {:>5}",
                crate::tui::view::preview(&c.name, 20),
                rate * 100.0,
                bar,
                num(kappa),
                num(f1),
                num(acc),
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
                .title(format!(" Criteria vs {}'s labels ", app.annotator)),
        ),
        table,
    );

    let selected = criteria.get(app.results_cursor);
    let confusion =
        selected.and_then(
            |_| match report.criteria.get(app.results_cursor).map(|r| &r.metrics) {
                Some(CriterionMetrics::Binary(b)) => Some(b.confusion),
                _ => None,
            },
        );
    let lines = match confusion {
        Some(c) => vec![
            Line::raw("                 judge MET   judge UNMET"),
            Line::raw(format!("human MET       {:>9}   {:>11}", c.tp, c.fn_)),
            Line::raw(format!("human UNMET     {:>9}   {:>11}", c.fp, c.tn)),
        ],
        None => vec![Line::raw(
            "no binary labels to compare for this criterion yet",
        )],
    };
    let title = format!(" Confusion: {} ", selected.map_or("", |c| c.name.as_str()));
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(title)),
        bottom,
    );
}
