//! People against people: how far the annotators of a dataset agree with each other — κ
//! for every pair on the items both labelled (weighted where the criterion is ordered, as
//! the judge's is), Krippendorff's α over all of them — beside how far the latest run's
//! judge agrees with each of them, and with the adjudicated labels when there are some.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::Error;
use super::agreement::{read_verdicts, run_agreement};
use crate::metrics::{
    AlphaLevel, Bootstrap, FleissKappa, MetricsReport, UnitTally, judge_vs_human,
};
use crate::model::{Kind, OptionScale, Rubric, Verdict};
use crate::store::Workspace;
use crate::store::labels::{ADJUDICATED, annotators, dataset_key};
use crate::store::runs::runs_over;

/// Two annotators on the items both labelled (`b`'s labels against `a`'s).
#[derive(Debug, Clone, Serialize)]
pub struct PairAgreement {
    pub a: String,
    pub b: String,
    /// Items both labelled on some criterion.
    pub items: usize,
    pub report: MetricsReport,
}

/// Krippendorff's α (and Fleiss' κ) over every annotator's labels of one criterion: what
/// `labels agreement` and `metrics` both report between people.
#[derive(Debug, Clone, Serialize)]
pub struct CriterionAlpha {
    pub criterion: String,
    /// `nominal`, `ordinal` or `interval`, by the criterion's kind.
    pub level: &'static str,
    /// Items labelled by two annotators or more (the units α counts).
    pub items: usize,
    pub alpha: Option<f64>,
    /// Fleiss' κ over the same units (the values as categories).
    pub fleiss_kappa: FleissKappa,
}

/// The judge (the latest run) against one set of labels.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeAgreement {
    pub annotator: String,
    pub report: MetricsReport,
}

/// Everything `rubricate labels agreement` reports.
#[derive(Debug, Clone, Serialize)]
pub struct PeopleReport {
    pub dataset: String,
    /// The run whose rubric gives the criteria and whose judge is compared.
    pub run: String,
    pub rubric: String,
    /// The annotators (the adjudicated labels are not one of them).
    pub annotators: Vec<String>,
    pub pairs: Vec<PairAgreement>,
    pub alpha: Vec<CriterionAlpha>,
    /// The judge against each annotator, then against the adjudicated labels.
    pub judge: Vec<JudgeAgreement>,
}

/// Works the report out for `dataset` from its latest run of one rubric and every journal.
pub fn people(
    ws: &Workspace,
    dataset: &Path,
    bootstrap: Option<&Bootstrap>,
) -> Result<PeopleReport, Error> {
    let (runs_dir, labels_dir) = (ws.runs_dir(), ws.labels_dir());
    let key = dataset_key(dataset);
    let Some(run) = runs_over(&runs_dir, &ws.root, dataset)
        .into_iter()
        .rfind(|m| !m.rubric.is_null())
    else {
        return Err(Error::input(format!(
            "no run of one rubric over {} yet: the criteria and their scales come from it; grade it first (`rubricate grade --rubric R {} --save`)",
            dataset.display(),
            dataset.display()
        )));
    };
    let everyone = annotators(&labels_dir, &key);
    if everyone.is_empty() {
        return Err(Error::input(format!(
            "no labels for dataset '{key}' yet; `rubricate labels set` or the Label pane adds some"
        )));
    }
    let mut judge = Vec::new();
    let mut rubric: Option<Rubric> = None;
    // People first, the adjudicated labels last.
    let mut order: Vec<&String> = everyone.iter().filter(|a| *a != ADJUDICATED).collect();
    order.extend(everyone.iter().filter(|a| *a == ADJUDICATED));
    for a in order {
        let r = run_agreement(&runs_dir, &labels_dir, &run.id, Some(a), bootstrap)?;
        rubric.get_or_insert(r.rubric);
        judge.push(JudgeAgreement {
            annotator: a.clone(),
            report: r.report,
        });
    }
    let Some(rubric) = rubric else {
        return Err(Error::input(format!("no labels for dataset '{key}' yet")));
    };
    let people: Vec<String> = everyone.into_iter().filter(|a| a != ADJUDICATED).collect();
    let verdicts = people_verdicts(&labels_dir, &key, &rubric, &people)?;
    let mut pairs = Vec::new();
    for i in 0..people.len() {
        for j in i + 1..people.len() {
            let items = verdicts[i]
                .keys()
                .filter(|cell| verdicts[j].contains_key(*cell))
                .map(|(item, _)| item)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            pairs.push(PairAgreement {
                a: people[i].clone(),
                b: people[j].clone(),
                items,
                report: judge_vs_human::agreement(&rubric, &verdicts[i], &verdicts[j], bootstrap),
            });
        }
    }
    let alpha = between_people(&rubric, &verdicts);
    Ok(PeopleReport {
        dataset: key,
        run: run.id.clone(),
        rubric: format!("{}@{}", run.rubric_id, run.rubric_version),
        annotators: people,
        pairs,
        alpha,
        judge,
    })
}

/// One person's verdicts by (item id, criterion id).
pub type Verdicts = BTreeMap<judge_vs_human::Cell, Verdict>;

/// Each person's current labels of a dataset read as verdicts of `rubric`'s criteria
/// (labels that fit no criterion left out), in `people`'s order.
pub fn people_verdicts(
    labels_dir: &Path,
    key: &str,
    rubric: &Rubric,
    people: &[String],
) -> Result<Vec<Verdicts>, Error> {
    people
        .iter()
        .map(|a| {
            let labels = read_verdicts(labels_dir, key, a)?;
            Ok(judge_vs_human::human_verdicts(rubric, labels))
        })
        .collect()
}

/// Agreement between people on each criterion of `rubric`, from each person's verdicts
/// ([`people_verdicts`]): the one place the units are built, for `labels agreement` and
/// `metrics` alike.
pub fn between_people(rubric: &Rubric, verdicts: &[Verdicts]) -> Vec<CriterionAlpha> {
    rubric
        .criteria
        .iter()
        .map(|c| criterion_alpha(c, verdicts))
        .collect()
}

/// α for one criterion: each item a unit, each annotator's label a value on the
/// criterion's own scale (binary and nominal options as categories, levels and ordinal
/// options by their score's rank, a scale as numbers). Abstentions are not values.
fn criterion_alpha(c: &crate::model::Criterion, verdicts: &[Verdicts]) -> CriterionAlpha {
    let (level, name) = match &c.kind {
        Kind::Binary
        | Kind::Options {
            scale: OptionScale::Nominal,
            ..
        } => (AlphaLevel::Nominal, "nominal"),
        Kind::Levels(_) | Kind::Options { .. } => (AlphaLevel::Ordinal, "ordinal"),
        Kind::Scale(_) => (AlphaLevel::Interval, "interval"),
    };
    // A nominal option's label is its category: two options of one value stay apart.
    let mut codes: BTreeMap<String, f64> = BTreeMap::new();
    let mut units: BTreeMap<&String, Vec<Option<f64>>> = BTreeMap::new();
    for (k, labels) in verdicts.iter().enumerate() {
        for ((item, crit), v) in labels {
            if crit != &c.id {
                continue;
            }
            let value = match (&c.kind, level) {
                (Kind::Options { .. }, AlphaLevel::Nominal) if *v != Verdict::CannotAssess => {
                    let next = codes.len() as f64;
                    Some(*codes.entry(v.to_string()).or_insert(next))
                }
                _ => c.value_of(v).ok().flatten(),
            };
            units
                .entry(item)
                .or_insert_with(|| vec![None; verdicts.len()])[k] = value;
        }
    }
    // Items labelled by one person only say nothing about agreement.
    let units: Vec<Vec<Option<f64>>> = units
        .into_values()
        .filter(|u| u.iter().flatten().count() >= 2)
        .collect();
    let tally = UnitTally::of(&units);
    CriterionAlpha {
        criterion: c.id.clone(),
        level: name,
        items: units.len(),
        alpha: tally.alpha(level),
        fleiss_kappa: tally.fleiss(),
    }
}
