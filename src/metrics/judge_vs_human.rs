//! A run's judge against one annotator's labels, per criterion: each criterion compared on
//! its own scale (binary; levels and valued options ordered by their score, so κ is
//! quadratic-weighted; scales as numbers). `rubricate metrics` and the TUI's Results pane
//! both report this, so they show the same numbers.

use std::collections::BTreeMap;

use super::{Bootstrap, CriterionLabels, LabelPair, LabelScale, MetricsReport, criterion_report};
use crate::engine::executor::parse_verdict_text;
use crate::model::{Criterion, Kind, Rubric, Verdict};

/// (item id, criterion id).
pub type Cell = (String, String);

/// A label as a verdict of its criterion (`None` when it does not fit the criterion).
pub fn label_verdict(c: &Criterion, v: &serde_json::Value) -> Option<Verdict> {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map(Verdict::Score),
        serde_json::Value::String(s) => parse_verdict_text(c, s).ok(),
        _ => None,
    }
}

/// Labels (as written in a journal) read as verdicts of the rubric's criteria; labels of
/// criteria the rubric does not have, or that do not fit, are left out.
pub fn human_verdicts<'a>(
    rubric: &Rubric,
    labels: impl IntoIterator<Item = (&'a Cell, &'a serde_json::Value)>,
) -> BTreeMap<Cell, Verdict> {
    labels
        .into_iter()
        .filter_map(|((item, crit), label)| {
            let c = rubric.criteria.iter().find(|c| &c.id == crit)?;
            Some(((item.clone(), crit.clone()), label_verdict(c, label)?))
        })
        .collect()
}

/// The categories of an ordered criterion, lowest score first (`None`: not categorical).
fn ordered_categories(c: &Criterion) -> Option<Vec<String>> {
    match &c.kind {
        Kind::Levels(levels) => {
            let mut l: Vec<_> = levels.iter().collect();
            l.sort_by(|a, b| a.score.total_cmp(&b.score));
            Some(l.iter().map(|l| l.id.clone()).collect())
        }
        Kind::Options { options, .. } => {
            let mut o: Vec<_> = options.iter().filter(|o| !o.na).collect();
            o.sort_by(|a, b| a.value.total_cmp(&b.value));
            Some(o.iter().map(|o| o.label.clone()).collect())
        }
        Kind::Binary | Kind::Scale(_) => None,
    }
}

/// Per criterion (and pooled over binary ones): the judge's verdicts against the human's.
pub fn agreement(
    rubric: &Rubric,
    human: &BTreeMap<Cell, Verdict>,
    judged: &BTreeMap<Cell, Verdict>,
    bootstrap: Option<&Bootstrap>,
) -> MetricsReport {
    let categories: Vec<Option<Vec<String>>> =
        rubric.criteria.iter().map(ordered_categories).collect();
    let labels: Vec<CriterionLabels<'_>> = rubric
        .criteria
        .iter()
        .zip(&categories)
        .map(|(c, cats)| CriterionLabels {
            criterion: &c.id,
            scale: match (&c.kind, cats) {
                (Kind::Binary, _) => LabelScale::Binary,
                (_, Some(cats)) => LabelScale::Ordinal(cats),
                (_, None) => LabelScale::Interval,
            },
            pairs: human
                .iter()
                .filter(|((_, crit), _)| crit == &c.id)
                .filter_map(|(cell, h)| {
                    judged.get(cell).map(|j| LabelPair {
                        item: &cell.0,
                        human: h,
                        judge: j,
                    })
                })
                .collect(),
        })
        .collect();
    criterion_report(&labels, bootstrap)
}
