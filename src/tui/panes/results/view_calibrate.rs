//! The Calibrate view (in Results): candidates ranked, best first, by κ against the
//! annotator's labels, with the figures `rubricate calibrate` prints; below, the selected
//! candidate per criterion (κ, its confusion, who is best on it) and whether the best can be
//! told from the runner-up.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::CalibrateView;
use crate::metrics::CriterionMetrics;
use crate::run::calibration::{Calibration, macro_f1, overall, overall_ci, usage};
use crate::tui::shared::Shared;

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

pub fn draw(sh: &Shared, view: &CalibrateView, f: &mut Frame<'_>, area: Rect) {
    let cal = match &view.ranked {
        Some(Ok(cal)) => cal,
        Some(Err(e)) => {
            f.render_widget(
                Paragraph::new(e.as_str())
                    .wrap(Wrap { trim: false })
                    .block(Block::new().borders(Borders::ALL).title(" Calibrate ")),
                area,
            );
            return;
        }
        None => {
            f.render_widget(
                Paragraph::new("ranking the runs against your labels…")
                    .block(Block::new().borders(Borders::ALL).title(" Calibrate ")),
                area,
            );
            return;
        }
    };
    let [table, detail] = Layout::vertical([Constraint::Min(5), Constraint::Length(9)]).areas(area);
    // The candidate's name takes what the figures (47 columns) leave.
    let name_w = usize::from(table.width.saturating_sub(2))
        .saturating_sub(47)
        .clamp(8, 40);
    let mut lines = vec![Line::styled(
        format!(
            "{:<name_w$} {:>5} {:>12} {:>5} {:>5} {:>7} {:>7}",
            "CANDIDATE", "κ", "95% CI", "M-F1", "ACC", "LENIENT", "COST"
        ),
        sh.theme.header,
    )];
    for (i, c) in cal.candidates.iter().enumerate() {
        let r = &c.agreement.report;
        let pooled = r.pooled.as_ref().map(|p| &p.metrics);
        let (_, _, cost, _) = usage(&c.agreement);
        lines.push(Line::styled(
            format!(
                "{:<name_w$} {:>5} {:>12} {:>5} {:>5} {:>7} {:>7}",
                crate::tui::view::preview(&c.label, name_w),
                num(overall(r)),
                overall_ci(r).map_or_else(
                    || "-".into(),
                    |ci| format!("[{:.2},{:.2}]", ci.low, ci.high)
                ),
                num(macro_f1(r)),
                num(pooled.and_then(|p| p.accuracy)),
                pooled
                    .and_then(|p| p.leniency)
                    .map_or_else(|| "-".into(), |l| format!("{l:+.1}")),
                format!("${cost:.3}"),
            ),
            if i == view.cursor {
                sh.theme.selected
            } else {
                Style::new()
            },
        ));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        cal.note
            .clone()
            .unwrap_or_else(|| match cal.candidates.first() {
                Some(best) if cal.candidates.len() > 1 => {
                    format!(
                        "{} is ahead: its κ interval clears the runner-up's",
                        best.label
                    )
                }
                _ => "one candidate: grade the dataset with another judge (G) to compare".into(),
            }),
        sh.theme.muted,
    ));
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::new().borders(Borders::ALL).title(format!(
                " Calibrate: {} runs against {}'s labels of {} items (best first) ",
                cal.candidates.len(),
                cal.annotator,
                cal.labelled
            )),
        ),
        table,
    );
    f.render_widget(
        Paragraph::new(per_criterion(cal, view.cursor)).block(
            Block::new().borders(Borders::ALL).title(format!(
                " {} per criterion · A adopts its judge ",
                cal.candidates
                    .get(view.cursor)
                    .map_or("", |c| c.label.as_str())
            )),
        ),
        detail,
    );
}

/// The selected candidate's κ and confusion on each criterion, and who is best on it.
fn per_criterion(cal: &Calibration, cursor: usize) -> Vec<Line<'static>> {
    let Some(c) = cal.candidates.get(cursor) else {
        return Vec::new();
    };
    let best = cal.best_per_criterion();
    // Which run this is (candidates may share a name): adopting is never blind.
    let about = Line::raw(crate::tui::view::preview(&c.about, 200));
    std::iter::once(about)
        .chain(c.agreement.report.criteria.iter().map(|r| {
            let confusion = match &r.metrics {
                // The confusion as what it means: MET where the person said UNMET is the
                // judge being lenient, and the other way strict.
                CriterionMetrics::Binary(b) => format!(
                    "agree {}/{} · lenient {} · strict {}",
                    b.confusion.tp + b.confusion.tn,
                    b.confusion.tp + b.confusion.tn + b.confusion.fp + b.confusion.fn_,
                    b.confusion.fp,
                    b.confusion.fn_
                ),
                CriterionMetrics::Nominal(m) | CriterionMetrics::Ordinal(m) => {
                    format!(
                        "{} pairs, accuracy {}",
                        m.metrics.support,
                        num(m.metrics.accuracy)
                    )
                }
                CriterionMetrics::Interval(s) => {
                    format!("{} pairs, bias {}", s.metrics.n, num(s.metrics.bias))
                }
            };
            let leader = best
                .iter()
                .find(|b| b.criterion == r.criterion)
                .map_or_else(String::new, |b| {
                    if b.candidate == c.label {
                        " · best".to_owned()
                    } else {
                        format!(" · best: {} {:.2}", b.candidate, b.kappa)
                    }
                });
            Line::raw(format!(
                "{}: κ {} · {confusion}{leader}",
                r.criterion,
                num(r.kappa())
            ))
        }))
        .collect()
}
