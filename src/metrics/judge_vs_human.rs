//! A run's judge against one annotator's labels, per criterion: each criterion compared on
//! its own scale (binary; levels and ordinal options ordered by their score, so κ is
//! quadratic-weighted; nominal options as unordered categories, unweighted κ, as
//! SCORING.md and autorubric; scales as numbers). `rubricate metrics` and the TUI's Results pane
//! both report this, so they show the same numbers.

use std::collections::BTreeMap;

use super::{Bootstrap, CriterionLabels, LabelPair, LabelScale, MetricsReport, criterion_report};
use crate::model::parse_verdict_text;
use crate::model::{Criterion, Kind, OptionScale, Rubric, Verdict};

/// (item id, criterion id).
pub type Cell = (String, String);

/// A label as a verdict of its criterion (`None` when it does not fit the criterion).
pub fn label_verdict(c: &Criterion, v: &serde_json::Value) -> Option<Verdict> {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map(Verdict::Score),
        // An option's own label first: a candidate named `yes` is that candidate.
        serde_json::Value::String(s) => match &c.kind {
            Kind::Options { options, .. } => crate::model::find_option(options, s)
                .map(|o| Verdict::Choice(o.label.clone()))
                .or_else(|| parse_verdict_text(c, s).ok()),
            _ => parse_verdict_text(c, s).ok(),
        },
        _ => None,
    }
}

/// Labels (as written in a journal) read as verdicts of the rubric's criteria; labels of
/// criteria the rubric does not have, or that do not fit, are left out. Labels given by
/// value are moved, not copied (a caller done with them frees each as it goes).
pub fn human_verdicts<V: std::borrow::Borrow<serde_json::Value>>(
    rubric: &Rubric,
    labels: impl IntoIterator<Item = (Cell, V)>,
) -> BTreeMap<Cell, Verdict> {
    labels
        .into_iter()
        .filter_map(|(cell, label)| {
            let c = rubric.criteria.iter().find(|c| c.id == cell.1)?;
            Some((cell, label_verdict(c, label.borrow())?))
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
    agreement_of(
        rubric,
        |criterion| {
            human
                .iter()
                .filter(|((_, crit), _)| crit == criterion)
                .filter_map(|(cell, h)| {
                    judged.get(cell).map(|j| LabelPair {
                        item: &cell.0,
                        human: h,
                        judge: j,
                    })
                })
                .collect()
        },
        bootstrap,
    )
}

/// [`agreement`] over each criterion's pairs as `pairs(criterion id)` gives them (items in
/// the same order for every criterion: the bootstrap resamples them in that order).
pub fn agreement_of<'a>(
    rubric: &'a Rubric,
    pairs: impl Fn(&str) -> Vec<LabelPair<'a>>,
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
                (
                    Kind::Options {
                        scale: OptionScale::Nominal,
                        ..
                    },
                    Some(cats),
                ) => LabelScale::Nominal(cats),
                (_, Some(cats)) => LabelScale::Ordinal(cats),
                (_, None) => LabelScale::Interval,
            },
            pairs: pairs(&c.id),
        })
        .collect();
    criterion_report(&labels, bootstrap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::CriterionMetrics;
    use crate::model::OptionChoice;

    /// κ for `scale` options on human [A, A, B, C] against judge [A, B, B, A].
    fn kappa(scale: OptionScale) -> Option<f64> {
        let option = |label: &str, value: f64| OptionChoice {
            label: label.into(),
            value,
            na: false,
        };
        let mut c = Criterion::binary("q", "Quality", 1.0);
        c.kind = Kind::Options {
            options: vec![option("A", 0.0), option("B", 0.5), option("C", 1.0)],
            scale,
        };
        let rubric = Rubric::new("r", vec![c]);
        let cells = |labels: [&str; 4]| -> BTreeMap<Cell, Verdict> {
            labels
                .iter()
                .enumerate()
                .map(|(i, l)| ((format!("i{i}"), "q".into()), Verdict::Choice((*l).into())))
                .collect()
        };
        let report = agreement(
            &rubric,
            &cells(["A", "A", "B", "C"]),
            &cells(["A", "B", "B", "A"]),
            None,
        );
        match &report.criteria[0].metrics {
            CriterionMetrics::Nominal(m) | CriterionMetrics::Ordinal(m) => m.metrics.kappa,
            _ => None,
        }
    }

    #[test]
    fn nominal_options_get_unweighted_kappa_and_ordinal_ones_quadratic() {
        // scikit-learn: cohen_kappa_score(h, j) 0.2; weights="quadratic" −0.25.
        assert!((kappa(OptionScale::Nominal).unwrap() - 0.2).abs() < 1e-12);
        assert!((kappa(OptionScale::Ordinal).unwrap() + 0.25).abs() < 1e-12);
    }
}
