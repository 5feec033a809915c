//! A saved run's judge against a person's labels of its dataset (SCORING.md "Metrics"):
//! the one place that reads a run and an annotator's labels into metrics, for `metrics`
//! (one run) and `calibrate` (several runs ranked).

use std::collections::BTreeMap;
use std::path::Path;

use super::Error;
use crate::engine::executor::build_evaluation;
use crate::metrics::{Bootstrap, MetricsReport, ScoreMetrics, judge_vs_human, score_metrics};
use crate::model::{CriterionResult, Item, MethodKind, Rubric, Verdict};
use crate::store::labels::{self, annotators, dataset_key, fold};
use crate::store::runs::{Cell, Manifest, RunDir};

/// One run's agreement with one annotator.
#[derive(Debug, Clone)]
pub struct RunAgreement {
    pub manifest: Manifest,
    pub rubric: Rubric,
    pub annotator: String,
    /// Every annotator of the run's dataset.
    pub annotators: Vec<String>,
    /// Per criterion and pooled, with intervals when a bootstrap was asked for.
    pub report: MetricsReport,
    /// The judge's item scores against the person's, for items labelled on every criterion.
    pub item_scores: ScoreMetrics,
    /// The run's cells (for what else a caller measures: ensembles, latency).
    pub cells: Vec<Cell>,
}

/// Reads run `run_id` (an id or a unique prefix) and `annotator`'s labels (default: the
/// only annotator of its dataset) into metrics.
pub fn run_agreement(
    runs_dir: &Path,
    labels_dir: &Path,
    run_id: &str,
    annotator: Option<&str>,
    bootstrap: Option<&Bootstrap>,
) -> Result<RunAgreement, Error> {
    let run = RunDir::find(runs_dir, run_id)?;
    let m = run.read_manifest()?;
    let rubric: Rubric = if m.rubric.is_null() {
        return Err(Error::input(format!(
            "run {} graded items with their own rubrics; metrics need one rubric for the run",
            m.id
        )));
    } else {
        let text = m.rubric.to_string();
        let file = format!("{}#rubric", run.manifest_path().display());
        (*crate::formats::parse_rubric_text(&file, &text, &m.rubric_id, &run.dir, None)?.rubric)
            .clone()
    };
    let key = dataset_key(Path::new(&m.dataset.path));
    let people = annotators(labels_dir, &key);
    let annotator = choose_annotator(&key, &people, annotator)?;
    let human = read_labels(labels_dir, &key, &annotator)?;
    let (cells, _) = run.read_cells(&m)?;
    let cells: Vec<Cell> = cells.into_values().collect();
    // The judge's verdict per (item id, criterion), and its results per item.
    let mut judged: BTreeMap<(String, String), Verdict> = BTreeMap::new();
    let mut judge_results: BTreeMap<String, Vec<CriterionResult>> = BTreeMap::new();
    for cell in &cells {
        if let Some(v) = &cell.result.verdict {
            judged.insert(
                (cell.item_id.clone(), cell.result.criterion_id.clone()),
                v.clone(),
            );
        }
        judge_results
            .entry(cell.item_id.clone())
            .or_default()
            .push(cell.result.clone());
    }
    let human_verdicts = judge_vs_human::human_verdicts(
        &rubric,
        human.iter().map(|(cell, label)| (cell, &label.verdict)),
    );
    let report = judge_vs_human::agreement(&rubric, &human_verdicts, &judged, bootstrap);
    let item_scores = score_metrics(&item_score_pairs(&rubric, &human_verdicts, &judge_results));
    Ok(RunAgreement {
        manifest: m,
        rubric,
        annotator,
        annotators: people,
        report,
        item_scores,
        cells,
    })
}

/// Whose labels are the truth: the one asked for, else the adjudicated labels when there
/// are some, else the dataset's only annotator.
pub fn choose_annotator(
    key: &str,
    people: &[String],
    wanted: Option<&str>,
) -> Result<String, Error> {
    match (wanted, people) {
        (Some(a), _) if people.iter().any(|p| p == a) => Ok(a.to_owned()),
        (Some(a), _) => Err(Error::input(format!(
            "no labels by '{a}' for dataset '{key}'; annotators: {}",
            if people.is_empty() {
                "none".into()
            } else {
                people.join(", ")
            }
        ))),
        (None, [one]) => Ok(one.clone()),
        (None, many) if many.iter().any(|p| p == labels::ADJUDICATED) => {
            Ok(labels::ADJUDICATED.to_owned())
        }
        (None, []) => Err(Error::input(format!(
            "no human labels for dataset '{key}' yet; `rubricate labels set` or `labels import` adds some"
        ))),
        (None, many) => Err(Error::input(format!(
            "dataset '{key}' has several annotators ({}); pick one with --annotator",
            many.join(", ")
        ))),
    }
}

/// An annotator's current labels of a dataset, by (item id, criterion id).
pub fn read_labels(
    labels_dir: &Path,
    key: &str,
    annotator: &str,
) -> Result<BTreeMap<(String, String), labels::Label>, Error> {
    let (events, _) = labels::read(&labels::journal_path(labels_dir, key, annotator))?;
    Ok(fold(&events))
}

/// (judge score, human score) for each item the person labelled on every criterion.
fn item_score_pairs(
    rubric: &Rubric,
    human: &BTreeMap<(String, String), Verdict>,
    judge_results: &BTreeMap<String, Vec<CriterionResult>>,
) -> Vec<(f64, f64)> {
    let mut pairs = Vec::new();
    for (item, results) in judge_results {
        let mut human_results = Vec::new();
        for c in &rubric.criteria {
            let Some(v) = human.get(&(item.clone(), c.id.clone())) else {
                break;
            };
            let Ok(value) = c.value_of(v) else { break };
            let mut r = CriterionResult::failed(
                &c.id,
                MethodKind::Judge,
                crate::model::Failure::error("", ""),
            );
            r.failure = None;
            r.verdict = Some(v.clone());
            r.value = value;
            human_results.push(r);
        }
        if human_results.len() != rubric.criteria.len() {
            continue;
        }
        let stub = Item {
            id: item.clone(),
            ..Item::default()
        };
        let h = build_evaluation(rubric, &stub, human_results, "human");
        let j = build_evaluation(rubric, &stub, results.clone(), "judge");
        if let (Some(hs), Some(js)) = (h.score, j.score) {
            pairs.push((js, hs));
        }
    }
    pairs
}
