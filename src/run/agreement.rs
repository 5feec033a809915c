//! A saved run's judge against a person's labels of its dataset (SCORING.md "Metrics"):
//! the one place that reads a run and an annotator's labels into metrics, for `metrics`
//! (one run) and `calibrate` (several runs ranked).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::Error;
use crate::engine::executor::build_evaluation;
use crate::metrics::{
    Bootstrap, MetricsReport, ScoreMetrics, UnitTally, judge_vs_human, score_metrics,
};
use crate::model::{CriterionResult, Item, MethodKind, Rubric, Verdict};
use crate::store::labels::{self, annotators, dataset_key};
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
    /// The run's calls and ensemble votes, gathered in the same pass over its journal.
    pub calls: CallStats,
}

/// What a run's cells say about its judge calls, gathered one cell at a time in memory
/// that does not grow with the run.
#[derive(Debug, Clone, Default)]
pub struct CallStats {
    /// Calls made (cache hits not counted).
    pub made: usize,
    /// How many calls took each latency, in milliseconds: an exact median without keeping
    /// a latency per call.
    latencies: BTreeMap<u64, usize>,
    /// Per criterion, an ensemble's votes (`None` for a run without ensembles).
    pub ensembles: BTreeMap<String, EnsembleVotes>,
}

/// An ensemble's votes on one criterion: each judge and sample a rater, each item a unit.
#[derive(Debug, Clone, Default)]
pub struct EnsembleVotes {
    /// The raters seen (`judge#sample`).
    pub raters: std::collections::BTreeSet<String>,
    /// Each verdict's code, in the order first seen.
    codes: BTreeMap<String, f64>,
    /// The units, counted by their votes.
    pub units: UnitTally,
}

impl CallStats {
    fn add(&mut self, r: &CriterionResult) {
        if let Some(inv) = r.invocation.as_ref().filter(|inv| !inv.cache_hit) {
            self.made += 1;
            *self.latencies.entry(inv.latency_ms).or_default() += 1;
        }
        let Some(e) = &r.ensemble else { return };
        let votes = self.ensembles.entry(r.criterion_id.clone()).or_default();
        let mut unit = Vec::with_capacity(e.votes.len());
        for v in &e.votes {
            let rater = format!("{}#{}", v.judge, v.sample);
            if !votes.raters.contains(&rater) {
                votes.raters.insert(rater);
            }
            if let Some(verdict) = &v.verdict {
                let next = votes.codes.len() as f64;
                unit.push(Some(
                    *votes.codes.entry(verdict.to_string()).or_insert(next),
                ));
            }
        }
        votes.units.add(&unit);
    }

    /// The median latency of the calls made (the upper one of an even count).
    pub fn median_latency_ms(&self) -> Option<u64> {
        let mut left = self.made / 2;
        for (&ms, &n) in &self.latencies {
            if left < n {
                return Some(ms);
            }
            left -= n;
        }
        None
    }
}

/// Reads run `run_id` (an id or a unique prefix) and `annotator`'s labels (default: the
/// only annotator of its dataset) into metrics. The run is read as a stream joined with the
/// labels (held: they are what is measured), so memory follows the labels, not the run.
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
    // Each label becomes its verdict as it is read out (its note and time freed).
    let human_verdicts = judge_vs_human::human_verdicts(
        &rubric,
        read_labels(labels_dir, &key, &annotator)?
            .into_iter()
            .map(|(cell, label)| (cell, label.verdict)),
    );
    // How many criteria each labelled item has labels on (items with every one give an
    // item-score pair).
    let mut labelled: HashMap<&str, usize> = HashMap::new();
    for (item, _) in human_verdicts.keys() {
        *labelled.entry(item.as_str()).or_default() += 1;
    }
    // The judge's verdicts on labelled cells only; the rest of the run streams past.
    let mut judged: BTreeMap<(String, String), Verdict> = BTreeMap::new();
    let mut pairs = Vec::new();
    let mut calls = CallStats::default();
    for group in run.stream_cells(&m)? {
        let group = group?;
        for cell in &group.cells {
            calls.add(&cell.result);
        }
        let Some(item_id) = group.cells.first().map(|c| c.item_id.as_str()) else {
            continue;
        };
        let Some(&on) = labelled.get(item_id) else {
            continue;
        };
        for cell in &group.cells {
            let key = (cell.item_id.clone(), cell.result.criterion_id.clone());
            if let Some(v) = &cell.result.verdict
                && human_verdicts.contains_key(&key)
            {
                judged.insert(key, v.clone());
            }
        }
        if on == rubric.criteria.len()
            && let Some(pair) = item_score_pair(&rubric, &human_verdicts, item_id, &group.cells)
        {
            pairs.push(pair);
        }
    }
    let report = judge_vs_human::agreement(&rubric, &human_verdicts, &judged, bootstrap);
    let item_scores = score_metrics(&pairs);
    Ok(RunAgreement {
        manifest: m,
        rubric,
        annotator,
        annotators: people,
        report,
        item_scores,
        calls,
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
    Ok(labels::current(&labels::journal_path(
        labels_dir, key, annotator,
    ))?)
}

/// (judge score, human score) for an item the person labelled on every criterion.
fn item_score_pair(
    rubric: &Rubric,
    human: &BTreeMap<(String, String), Verdict>,
    item: &str,
    cells: &[Cell],
) -> Option<(f64, f64)> {
    let mut human_results = Vec::with_capacity(rubric.criteria.len());
    for c in &rubric.criteria {
        let v = human.get(&(item.to_owned(), c.id.clone()))?;
        let value = c.value_of(v).ok()?;
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
    let stub = Item {
        id: item.to_owned(),
        ..Item::default()
    };
    let j = super::record::evaluation_of(rubric, cells.to_vec());
    // A judge's cell still to come (a batch at the provider): no judge score yet.
    if !j.pending.is_empty() {
        return None;
    }
    let h = build_evaluation(rubric, &stub, human_results, "human");
    Some((j.score?, h.score?))
}
