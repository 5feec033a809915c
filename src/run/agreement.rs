//! A saved run's judge against a person's labels of its dataset (SCORING.md "Metrics"):
//! the one place that reads a run and an annotator's labels into metrics, for `metrics`
//! (one run) and `calibrate` (several runs ranked).

use std::collections::BTreeMap;
use std::path::Path;

use super::Error;
use crate::engine::executor::build_evaluation;
use crate::metrics::pairwise::{PairTally, PairwiseReport};
use crate::metrics::ppi::{Corrected, Corrector};
use crate::metrics::preference::{judge_preference, preference_rubric};
use crate::metrics::{
    Bootstrap, LabelPair, MetricsReport, ScoreMetrics, UnitTally, judge_vs_human, score_metrics,
};
use crate::model::{CriterionResult, Item, MethodKind, Rubric, Verdict};
use crate::store::labels::{self, annotators, dataset_key};
use crate::store::runs::{Manifest, RunDir};

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
    /// The judge's mean score and pass rate over the whole run, corrected by the labelled
    /// items (prediction-powered inference).
    pub corrected: CorrectedFigures,
    /// The run's calls and ensemble votes, gathered in the same pass over its journal.
    pub calls: CallStats,
    /// A pairwise run's results over all its pairs (position bias among them); `None` for
    /// a run of single answers.
    pub pairs: Option<PairwiseReport>,
}

/// A run's figures corrected by its labelled items; `None` with fewer than two labelled.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CorrectedFigures {
    /// The mean item score.
    pub score: Option<Corrected>,
    /// The pass rate.
    pub pass_rate: Option<Corrected>,
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
    // A pairwise run of two candidates is measured on people's preferences: one verdict
    // per written criterion (a candidate's id or tie), the judge's both orders combined.
    let (run_rubric, rubric) = match preference_rubric(&rubric) {
        Some(prefs) => (rubric, prefs),
        None => (rubric.clone(), rubric),
    };
    let mut tally = PairTally::of(&run_rubric);
    let key = dataset_key(Path::new(&m.dataset.path));
    let people = annotators(labels_dir, &key);
    let annotator = choose_annotator(&key, &people, annotator)?;
    let human = HumanVerdicts::read(&rubric, labels_dir, &key, &annotator)?;
    let k = rubric.criteria.len();
    // The judge's verdicts on labelled cells only, laid out as the labels; the rest of the
    // run streams past.
    let mut judged: Vec<Option<Verdict>> = vec![None; human.verdicts.len()];
    let mut pairs = Vec::new();
    let mut calls = CallStats::default();
    let (mut corrected_score, mut corrected_pass) = (Corrector::default(), Corrector::default());
    for group in run.stream_cells(&m)? {
        let group = group?;
        for cell in &group.cells {
            calls.add(&cell.result);
        }
        let Some(item_id) = group.cells.first().map(|c| c.item_id.clone()) else {
            continue;
        };
        let at = human.position(&item_id);
        let labels = at.map(|at| &human.verdicts[at * k..(at + 1) * k]);
        if let Some(tally) = tally.as_mut() {
            let results: Vec<CriterionResult> =
                group.cells.iter().map(|c| c.result.clone()).collect();
            tally.add(&run_rubric, &results);
            if let (Some(at), Some(labels)) = (at, labels) {
                for (c, criterion) in rubric.criteria.iter().enumerate() {
                    if labels[c].is_some() {
                        judged[at * k + c] = judge_preference(&run_rubric, &results, &criterion.id);
                    }
                }
            }
        } else if let (Some(at), Some(labels)) = (at, labels) {
            for cell in &group.cells {
                if let Some(v) = &cell.result.verdict
                    && let Some(c) = rubric
                        .criteria
                        .iter()
                        .position(|c| c.id == cell.result.criterion_id)
                    && labels[c].is_some()
                {
                    judged[at * k + c] = Some(v.clone());
                }
            }
        }
        let j = super::record::evaluation_of(&run_rubric, group.cells);
        // A judge's cell still to come (a batch at the provider): no judge score yet.
        if !j.pending.is_empty() {
            continue;
        }
        let person = labels
            .filter(|l| l.iter().all(Option::is_some))
            .and_then(|l| person_outcome(&rubric, l, &item_id));
        if let (Some(js), Some((hs, _))) = (j.score, person) {
            pairs.push((js, hs));
        }
        if let Some(js) = j.score {
            corrected_score.add(js, person.map(|p| p.0));
        }
        corrected_pass.add(
            f64::from(u8::from(j.passed)),
            person.map(|p| f64::from(u8::from(p.1))),
        );
    }
    let report = judge_vs_human::agreement_of(
        &rubric,
        |criterion| {
            let Some(c) = rubric.criteria.iter().position(|x| x.id == criterion) else {
                return Vec::new();
            };
            human
                .items
                .iter()
                .enumerate()
                .filter_map(|(at, item)| {
                    Some(LabelPair {
                        item,
                        human: human.verdicts[at * k + c].as_ref()?,
                        judge: judged[at * k + c].as_ref()?,
                    })
                })
                .collect()
        },
        bootstrap,
    );
    let item_scores = score_metrics(&pairs);
    Ok(RunAgreement {
        manifest: m,
        rubric,
        annotator,
        annotators: people,
        report,
        item_scores,
        corrected: CorrectedFigures {
            score: corrected_score.corrected(),
            pass_rate: corrected_pass.corrected(),
        },
        calls,
        pairs: tally.map(|t| t.report()),
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

/// An annotator's labels as verdicts of a rubric's criteria, compactly: each labelled item
/// once, in id order (the order the bootstrap resamples them in), with a verdict slot per
/// criterion in the rubric's order. Labels of criteria the rubric lacks, or that do not
/// fit their criterion, are left out (as [`judge_vs_human::human_verdicts`] does).
struct HumanVerdicts {
    /// The labelled items' ids, sorted.
    items: Vec<String>,
    /// `items.len()` × criteria slots: item `i`'s verdicts at `i * criteria ..`.
    verdicts: Vec<Option<Verdict>>,
}

impl HumanVerdicts {
    fn read(rubric: &Rubric, labels_dir: &Path, key: &str, annotator: &str) -> Result<Self, Error> {
        let k = rubric.criteria.len();
        let mut out = Self {
            items: Vec::new(),
            verdicts: Vec::new(),
        };
        let path = labels::journal_path(labels_dir, key, annotator);
        // In (item, criterion) order: an item's labels come together, items sorted.
        for ((item, criterion), label) in labels::current_verdicts(&path)? {
            let Some((c, criterion)) = rubric
                .criteria
                .iter()
                .enumerate()
                .find(|(_, c)| c.id == criterion)
            else {
                continue;
            };
            let Some(verdict) = judge_vs_human::label_verdict(criterion, &label) else {
                continue;
            };
            if out.items.last() != Some(&item) {
                out.items.push(item);
                out.verdicts.resize(out.verdicts.len() + k, None);
            }
            let at = out.verdicts.len() - k + c;
            out.verdicts[at] = Some(verdict);
        }
        out.items.shrink_to_fit();
        out.verdicts.shrink_to_fit();
        Ok(out)
    }

    /// Where item `id` is among the labelled items.
    fn position(&self, id: &str) -> Option<usize> {
        self.items
            .binary_search_by(|item| item.as_str().cmp(id))
            .ok()
    }
}

/// An annotator's current verdicts of a dataset, by (item id, criterion id): their
/// labels without notes and times.
pub fn read_verdicts(
    labels_dir: &Path,
    key: &str,
    annotator: &str,
) -> Result<BTreeMap<(String, String), serde_json::Value>, Error> {
    Ok(labels::current_verdicts(&labels::journal_path(
        labels_dir, key, annotator,
    ))?)
}

/// The people's score and pass for an item they labelled on every criterion, through the
/// rubric's own scoring.
pub fn person_outcome(
    rubric: &Rubric,
    labels: &[Option<Verdict>],
    item: &str,
) -> Option<(f64, bool)> {
    let mut human_results = Vec::with_capacity(rubric.criteria.len());
    for (c, v) in rubric.criteria.iter().zip(labels) {
        let v = v.as_ref()?;
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
    let h = build_evaluation(rubric, &stub, human_results, "human");
    Some((h.score?, h.passed))
}
