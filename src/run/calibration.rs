//! Which judge agrees with your people: candidate runs over a labelled dataset ranked by
//! their agreement with an annotator's labels (pooled κ with its bootstrap interval, then
//! macro-F1), the best per criterion, whether the best can be told from the runner-up, and
//! adopting the winner's judge into its rubric. `rubricate calibrate` and the TUI's
//! Calibrate view both rank through here.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use super::Error;
use super::agreement::{RunAgreement, read_verdicts, run_agreement};
use crate::metrics::{Bootstrap, Ci, MetricsReport};
use crate::store::Workspace;

/// One candidate: a run and its agreement with the labels.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// What the candidate is called (a run's name, or the judge it was graded with); unique
    /// among the candidates (a name two runs share gets the run's id).
    pub label: String,
    /// Which run it is, to tell candidates apart before adopting one: run id,
    /// rubric@version, judge model(s), when it started.
    pub about: String,
    pub agreement: RunAgreement,
}

/// A run as people tell it from others: `run ID · rubric@version · model · YYYY-MM-DD HH:MM`.
pub fn about(m: &crate::store::runs::Manifest) -> String {
    let models = super::RunSettings::of(m)
        .ok()
        .map(|s| s.judge.judge.join("+"))
        .filter(|j| !j.is_empty())
        .unwrap_or_else(|| "rubric's judge".into());
    let when = m.started_at.parse::<jiff::Timestamp>().map_or_else(
        |_| m.started_at.clone(),
        |t| t.strftime("%Y-%m-%d %H:%M").to_string(),
    );
    format!("run {} · {} · {models} · {when}", m.id, m.rubric_label())
}

/// Candidates ranked, best first, and what can be said about the ranking.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub dataset: String,
    pub annotator: String,
    /// Items the annotator labelled.
    pub labelled: usize,
    pub candidates: Vec<Candidate>,
    /// `None` when the best is clearly ahead of the runner-up; else why they cannot be told
    /// apart.
    pub note: Option<String>,
}

/// The best candidate on one criterion.
#[derive(Debug, Clone, Serialize)]
pub struct BestOn {
    pub criterion: String,
    pub candidate: String,
    pub kappa: f64,
}

/// What adopting wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Adopted {
    pub rubric: String,
    pub version: String,
    pub model: String,
    pub note: String,
}

/// The items `annotator` labelled in the dataset keyed `key`.
pub fn labelled_items(
    ws: &Workspace,
    key: &str,
    annotator: &str,
) -> Result<HashSet<String>, Error> {
    Ok(read_verdicts(&ws.labels_dir(), key, annotator)?
        .into_keys()
        .map(|(item, _)| item)
        .collect())
}

/// Ranks `runs` (label, run id) against `annotator`'s labels of the dataset keyed `key`.
pub fn rank(
    ws: &Workspace,
    key: &str,
    annotator: &str,
    runs: Vec<(String, String)>,
    bootstrap: Option<&Bootstrap>,
) -> Result<Calibration, Error> {
    let labelled = labelled_items(ws, key, annotator)?.len();
    let mut candidates = Vec::new();
    for (label, id) in runs {
        let agreement = run_agreement(
            &ws.runs_dir(),
            &ws.labels_dir(),
            &id,
            Some(annotator),
            bootstrap,
        )
        .map_err(|e| Error::input(format!("{label}: {e}")))?;
        candidates.push(Candidate {
            about: about(&agreement.manifest),
            label,
            agreement,
        });
    }
    // A name two runs share (`ui` seven times) says which run by its id.
    let shared: HashSet<String> = {
        let mut seen = HashSet::new();
        candidates
            .iter()
            .filter(|c| !seen.insert(c.label.clone()))
            .map(|c| c.label.clone())
            .collect()
    };
    for c in &mut candidates {
        if shared.contains(&c.label) {
            c.label = format!("{} ({})", c.label, c.agreement.manifest.id);
        }
    }
    // Best first: pooled κ, then macro-F1 (undefined last).
    candidates.sort_by(|a, b| {
        let key = |c: &Candidate| (overall(&c.agreement.report), macro_f1(&c.agreement.report));
        let (ka, fa) = key(a);
        let (kb, fb) = key(b);
        kb.unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&ka.unwrap_or(f64::NEG_INFINITY))
            .then(
                fb.unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&fa.unwrap_or(f64::NEG_INFINITY)),
            )
    });
    let note = distinguishable(&candidates);
    Ok(Calibration {
        dataset: key.to_owned(),
        annotator: annotator.to_owned(),
        labelled,
        candidates,
        note,
    })
}

/// The figure candidates are ranked by: pooled κ over the binary criteria, else the mean κ
/// of the criteria that have one.
pub fn overall(r: &MetricsReport) -> Option<f64> {
    if let Some(k) = r.pooled.as_ref().and_then(|p| p.metrics.kappa) {
        return Some(k);
    }
    let ks: Vec<f64> = r
        .criteria
        .iter()
        .filter_map(crate::metrics::CriterionReport::kappa)
        .collect();
    (!ks.is_empty()).then(|| ks.iter().sum::<f64>() / ks.len() as f64)
}

pub fn overall_ci(r: &MetricsReport) -> Option<Ci> {
    r.pooled.as_ref()?.ci.as_ref()?.kappa
}

pub fn macro_f1(r: &MetricsReport) -> Option<f64> {
    r.pooled.as_ref().and_then(|p| p.metrics.macro_f1)
}

/// `None` when the best candidate's κ interval clears the runner-up's; else why the two
/// cannot be told apart.
fn distinguishable(candidates: &[Candidate]) -> Option<String> {
    let [first, second, ..] = candidates else {
        return None;
    };
    let n = first
        .agreement
        .report
        .pooled
        .as_ref()
        .map_or(0, |p| p.metrics.support);
    if overall(&second.agreement.report).is_none() {
        return Some(format!(
            "only {} has a κ: the others have none against the labels (failed cells, or labels of one class)",
            first.label
        ));
    }
    match (
        overall_ci(&first.agreement.report),
        overall_ci(&second.agreement.report),
    ) {
        (Some(a), Some(b)) if a.low > b.high => None,
        (Some(_), Some(_)) => Some(format!(
            "{} and {} are not distinguishable at {n} labels: their κ intervals overlap; label more items to tell them apart",
            first.label, second.label
        )),
        _ => Some(format!(
            "{} and {} cannot be told apart: κ has no interval (too few labels, or --bootstrap 0)",
            first.label, second.label
        )),
    }
}

impl Calibration {
    /// Per criterion (by id, over every candidate's rubric, in the order first met), the
    /// candidate with the highest κ on it (the better ranked wins a tie). A run whose rubric
    /// lacks the criterion is no candidate for it.
    pub fn best_per_criterion(&self) -> Vec<BestOn> {
        let mut ids: Vec<&str> = Vec::new();
        for cand in &self.candidates {
            for c in &cand.agreement.report.criteria {
                if !ids.contains(&c.criterion.as_str()) {
                    ids.push(&c.criterion);
                }
            }
        }
        ids.into_iter()
            .filter_map(|id| {
                let (label, kappa) = self
                    .candidates
                    .iter()
                    .filter_map(|cand| {
                        let on = cand
                            .agreement
                            .report
                            .criteria
                            .iter()
                            .find(|c| c.criterion == id)?;
                        Some((&cand.label, on.kappa()?))
                    })
                    .fold(None::<(&String, f64)>, |best, (label, k)| match best {
                        Some((_, b)) if b >= k => best,
                        _ => Some((label, k)),
                    })?;
                Some(BestOn {
                    criterion: id.to_owned(),
                    candidate: label.clone(),
                    kappa,
                })
            })
            .collect()
    }
}

/// Calls made (cache hits not counted), tokens and cost of a candidate's run, and the
/// median judge latency of the calls made.
pub fn usage(a: &RunAgreement) -> (usize, u64, f64, Option<u64>) {
    let totals = a.manifest.totals.unwrap_or_default();
    (
        a.calls.made,
        totals.input_tokens + totals.output_tokens,
        totals.cost,
        a.calls.median_latency_ms(),
    )
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// Writes `chosen`'s judge (its model, and the strategy, temperature and system prompt it
/// graded with) into its rubric's `judge:` block as the next minor version in the
/// workspace's registry, the calibration's figures in the version's note.
pub fn adopt(ws: &Workspace, cal: &Calibration, chosen: &Candidate) -> Result<Adopted, Error> {
    if overall(&chosen.agreement.report).is_none() {
        return Err(Error::input(format!(
            "nothing adopted: {} has no κ against the labels (failed cells, or labels of one class)",
            chosen.label
        )));
    }
    let run = super::record::Recording::open(&ws.runs_dir(), &chosen.agreement.manifest.id)?;
    let judge = run.settings()?.judge;
    let Some(model) = judge.judge.first().cloned() else {
        return Err(Error::input(format!(
            "{}: the run names no judge model (it used the rubric's or the workspace's); nothing to adopt",
            chosen.label
        )));
    };
    let mut rubric = chosen.agreement.rubric.clone();
    let mut settings = rubric.judge.clone().unwrap_or_default();
    settings.model = Some(model.clone());
    if let Some(s) = judge.strategy {
        settings.strategy = Some(s.to_string());
    }
    if judge.temperature.is_some() {
        settings.temperature = judge.temperature;
    }
    if let Some(p) = &judge.system_prompt {
        let text = std::fs::read_to_string(p).map_err(|e| {
            Error::input(format!("{}: the system prompt to adopt: {e}", p.display()))
        })?;
        settings.system_prompt = Some(text);
    }
    rubric.judge = Some(settings);
    let r = &chosen.agreement.report;
    let note = format!(
        "calibrate: judge {model} adopted from {} (κ {}{}, macro-F1 {}, leniency {}) against {}'s labels of {} items in '{}'{}",
        chosen.label,
        num(overall(r)),
        overall_ci(r).map_or_else(String::new, |ci| format!(
            " [{:.2}, {:.2}]",
            ci.low, ci.high
        )),
        num(macro_f1(r)),
        r.pooled
            .as_ref()
            .and_then(|p| p.metrics.leniency)
            .map_or_else(|| "-".into(), |l| format!("{l:+.1}pp")),
        chosen.agreement.annotator,
        cal.labelled,
        cal.dataset,
        cal.note
            .as_deref()
            .map_or_else(String::new, |n| format!("; {n}"))
    );
    let version = crate::store::registry::Registry::new(&ws.root)
        .save_next_minor(&rubric, &note)
        .map_err(Error::from)?;
    Ok(Adopted {
        rubric: rubric.id,
        version,
        model,
        note,
    })
}

/// Every run of one rubric over `dataset`, newest first, each labelled by its name (or id):
/// the candidates the TUI's Calibrate view ranks (each told apart by [`Candidate::about`]).
/// The two runs over `dataset` that agree best with `annotator`'s labels (as `rank` orders
/// them, without intervals), as `(label, run id)`: the candidates whose differences the next
/// labels should settle. An error says why there are not two.
pub fn top_two(
    ws: &Workspace,
    dataset: &Path,
    key: &str,
    annotator: &str,
) -> Result<[(String, String); 2], Error> {
    let runs = dataset_runs(ws, dataset);
    if runs.len() < 2 {
        return Err(Error::input(format!(
            "{} run over this dataset: grade it with two judges or rubrics to have two to tell apart",
            if runs.is_empty() { "no" } else { "only one" }
        )));
    }
    let ranked = rank(ws, key, annotator, runs, None)?;
    let mut best = ranked
        .candidates
        .into_iter()
        .map(|c| (c.label, c.agreement.manifest.id));
    match (best.next(), best.next()) {
        (Some(a), Some(b)) => Ok([a, b]),
        _ => Err(Error::input(
            "fewer than two runs could be ranked".to_owned(),
        )),
    }
}

pub fn dataset_runs(ws: &Workspace, dataset: &Path) -> Vec<(String, String)> {
    let mut runs: Vec<(String, String)> =
        crate::store::runs::runs_over(&ws.runs_dir(), &ws.root, dataset)
            .into_iter()
            .filter(|m| !m.rubric.is_null())
            .map(|m| {
                let name = m.name.clone().unwrap_or_else(|| format!("run {}", m.id));
                (name, m.id)
            })
            .collect();
    runs.reverse();
    runs
}
