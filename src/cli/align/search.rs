//! `align`'s search: grading candidates as saved runs, measuring them against the labels,
//! asking the proposer, and the rounds of one criterion.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use crate::cli::CliError;
use crate::cli::calibrate::grade_candidate;
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::metrics::Bootstrap;
use crate::model::{Method, Rubric};
use crate::run::agreement::run_agreement;
use crate::run::align::{self, Disagreement, Figures, Shares, Split};
use crate::store::Workspace;

/// What the search does with the workspace: grade, measure, propose, add up the cost.
pub(super) struct Search<'a> {
    pub(super) ws: &'a Workspace,
    pub(super) dataset: &'a Path,
    pub(super) key: String,
    pub(super) annotator: String,
    /// Dataset position of every labelled item.
    pub(super) positions: HashMap<String, usize>,
    pub(super) judge: crate::run::JudgeSettings,
    pub(super) bootstrap: Bootstrap,
    pub(super) spent: f64,
    pub(super) max_cost: Option<f64>,
}

/// One candidate for one criterion, as ranked on dev.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct Tried {
    pub(super) criterion: String,
    pub(super) round: usize,
    pub(super) label: String,
    pub(super) requirement: String,
    /// Examples the judge is shown for the criterion.
    pub(super) examples: usize,
    pub(super) run: String,
    pub(super) dev: Figures,
    /// κ's interval overlaps the best's both ways.
    pub(super) indistinguishable: bool,
}

/// One weak criterion's search, and where it starts from.
pub(super) struct Criterion<'a> {
    pub(super) original: &'a LoadedRubric,
    /// The rubric so far (earlier criteria's winners in it).
    pub(super) base: &'a Rubric,
    pub(super) id: &'a str,
    /// The train items the original judge got wrong on it.
    pub(super) wrong: &'a [Disagreement],
    pub(super) dev: &'a [String],
}

/// Rounds of candidates for one criterion, each graded on dev: a rewording by the
/// proposer, few-shot examples from the train disagreements, and both together; the next
/// round starts from the round's best when it beats the one before, else the search ends.
/// Every candidate tried (the start first), and the best with its rubric.
pub(super) fn search_criterion(
    search: &mut Search<'_>,
    c: &Criterion<'_>,
    start: Tried,
    proposer: Option<&Proposer>,
    rounds: usize,
    stopped: &mut Option<String>,
) -> Result<(Vec<Tried>, (Tried, Rubric)), CliError> {
    let rubric_id = &c.original.rubric.id;
    let mut tried = vec![start.clone()];
    let mut best = (start, c.base.clone());
    for round in 1..=rounds {
        if let Some(why) = search.over_budget() {
            *stopped = Some(why);
            break;
        }
        let mut made: Vec<(String, Rubric)> = Vec::new();
        if let Some(p) = proposer {
            match search.propose(p, &best.1, c.id, c.wrong) {
                Ok(proposal) => made.push((
                    format!("reworded (round {round})"),
                    align::reworded(&best.1, c.id, &proposal),
                )),
                Err(e) => eprintln!("warning: {}, round {round}: {e}", c.id),
            }
        }
        let has_examples = best
            .1
            .criterion(c.id)
            .and_then(|x| x.examples.as_ref())
            .is_some();
        if !has_examples {
            let reworded = made.first().map(|(_, r)| r.clone());
            if let Some(r) = align::with_examples(&best.1, c.id, c.wrong, align::FEW_SHOT) {
                made.push((format!("few-shot (round {round})"), r));
            }
            if let Some(r) =
                reworded.and_then(|r| align::with_examples(&r, c.id, c.wrong, align::FEW_SHOT))
            {
                made.push((format!("reworded + few-shot (round {round})"), r));
            }
        }
        if made.is_empty() {
            break;
        }
        let mut round_best: Option<(Tried, Rubric)> = None;
        for (n, (label, candidate)) in made.into_iter().enumerate() {
            if let Some(why) = search.over_budget() {
                // What is left does not cover another candidate.
                *stopped = Some(why);
                break;
            }
            let loaded = as_loaded(c.original, candidate.clone());
            let name = format!("align {rubric_id}: {} r{round}.{} · dev", c.id, n + 1);
            let (run, report) = match search.grade_within(&loaded, c.dev, &name, true) {
                Ok(graded) => graded,
                Err(e) if search.over_budget().is_some() => {
                    // The budget ran out inside the candidate's run: its figures are partial.
                    eprintln!("note: {}", e.message);
                    *stopped = search.over_budget();
                    break;
                }
                Err(e) => return Err(e),
            };
            let t = Tried {
                criterion: c.id.to_owned(),
                round,
                label,
                requirement: requirement(&candidate, c.id),
                examples: candidate
                    .criterion(c.id)
                    .and_then(|x| x.examples.as_ref())
                    .map_or(0, |e| e.written().len()),
                run,
                dev: align::figures(&report, c.id),
                indistinguishable: false,
            };
            tried.push(t.clone());
            if round_best
                .as_ref()
                .is_none_or(|(b, _)| better(&t.dev, &b.dev))
            {
                round_best = Some((t, candidate));
            }
        }
        match round_best {
            Some(r) if better(&r.0.dev, &best.0.dev) => best = r,
            // Nothing better this round: the next would start from the same place.
            _ => break,
        }
        if stopped.is_some() {
            break;
        }
    }
    Ok((tried, best))
}

impl Search<'_> {
    /// Grades `ids` with `rubric` as a saved run; the run and its agreement with the labels.
    pub(super) fn grade(
        &mut self,
        rubric: &LoadedRubric,
        ids: &[String],
        name: &str,
    ) -> Result<(String, crate::metrics::MetricsReport), CliError> {
        self.grade_within(rubric, ids, name, false)
    }

    /// [`grade`](Self::grade); `budgeted`: the run is part of the search, bounded by what
    /// is left of `--max-cost` (test is graded whatever the search cost).
    pub(super) fn grade_within(
        &mut self,
        rubric: &LoadedRubric,
        ids: &[String],
        name: &str,
        budgeted: bool,
    ) -> Result<(String, crate::metrics::MetricsReport), CliError> {
        let only: HashSet<usize> = ids
            .iter()
            .filter_map(|id| self.positions.get(id).copied())
            .collect();
        let mut settings = self.judge.clone();
        if let (true, Some(max)) = (budgeted, self.max_cost) {
            // What is left of the budget bounds this run too.
            settings.max_cost = Some((max - self.spent).max(1e-9));
        }
        let graded = grade_candidate(self.ws, self.dataset, rubric.clone(), name, settings, &only)?;
        self.spent += graded.cost;
        if let Some(why) = graded.stopped {
            return Err(CliError::input(format!("{name}: stopped: {why}")));
        }
        let run = graded.run;
        let agreement = run_agreement(
            &self.ws.runs_dir(),
            &self.ws.labels_dir(),
            &run,
            Some(&self.annotator),
            Some(&self.bootstrap),
        )
        .map_err(|e| CliError::input(e.to_string()))?;
        Ok((run, agreement.report))
    }

    pub(super) fn over_budget(&self) -> Option<String> {
        self.max_cost
            .filter(|max| self.spent >= *max)
            .map(|max| format!("--max-cost ${max:.4} reached (${:.4} spent)", self.spent))
    }

    /// The proposer's client; `None` when no model is named anywhere.
    pub(super) fn proposer(
        &self,
        model: Option<&str>,
        rubric: &LoadedRubric,
    ) -> Result<Option<Proposer>, CliError> {
        let config = &self.ws.config;
        let Some(id) = model
            .map(str::to_owned)
            .or_else(|| rubric.rubric.judge.as_ref().and_then(|j| j.model.clone()))
            .or_else(|| config.judge.model.clone())
        else {
            eprintln!(
                "warning: no proposer model (--proposer or --judge); no rewordings are proposed"
            );
            return Ok(None);
        };
        let spec = config
            .resolve_model(&id, &|k| std::env::var(k).ok())
            .map_err(|e| CliError::input(e.to_string()))?;
        let model = spec.model.clone();
        let meter = Arc::new(crate::llm::Meter::default());
        let client = crate::llm::Client::new(&id, spec, crate::llm::ClientOptions::default())
            .map_err(|e| CliError::input(e.to_string()))?
            .with_meter(Arc::clone(&meter), config.prices.get(&id).copied())
            .with_cache(
                crate::store::workspace::cache_dir(&self.ws.root).map(crate::llm::Cache::new),
            );
        Ok(Some(Proposer {
            client,
            model,
            meter,
        }))
    }

    /// One proposal for `criterion` of `rubric`, from the train disagreements.
    pub(super) fn propose(
        &mut self,
        p: &Proposer,
        rubric: &Rubric,
        criterion: &str,
        wrong: &[Disagreement],
    ) -> Result<align::Proposal, String> {
        let c = rubric
            .criterion(criterion)
            .ok_or_else(|| format!("no criterion '{criterion}'"))?;
        let req = align::proposer_request(&p.model, rubric, c, wrong);
        let before = p.meter.snapshot().cost;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        // A reply that holds no proposal is asked again (and never cached); one that does is
        // cached, so the same search run again proposes the same candidates offline.
        let outcome = runtime.block_on(p.client.complete_read(
            &req,
            None,
            crate::llm::IfUnreadable::Retry,
            |text| match align::read_proposal(text) {
                Ok(proposal) => crate::llm::Reading::Accepted(proposal),
                Err(why) => crate::llm::Reading::Rejected(why),
            },
        ));
        self.spent += p.meter.snapshot().cost - before;
        match outcome {
            Ok(read) => Ok(read.value),
            Err(crate::llm::ReadError::Call { error, .. }) => {
                Err(format!("the proposer failed: {error}"))
            }
            Err(crate::llm::ReadError::Unreadable {
                completion,
                problem,
            }) => Err(format!(
                "the proposer's reply could not be read after {} tries ({problem}): {}",
                completion.attempts,
                crate::core::text::clipped(&completion.response.text, 200)
            )),
        }
    }
}

/// The proposer: a client, its model's own name, and what it has cost.
pub(super) struct Proposer {
    client: crate::llm::Client,
    model: String,
    meter: Arc<crate::llm::Meter>,
}

/// A candidate rubric loaded as the original was (same file and folder for messages and
/// relative paths).
pub(super) fn as_loaded(original: &LoadedRubric, rubric: Rubric) -> LoadedRubric {
    LoadedRubric {
        rubric: Arc::new(rubric),
        ..original.clone()
    }
}

pub(super) fn requirement(rubric: &Rubric, criterion: &str) -> String {
    rubric
        .criterion(criterion)
        .map(|c| c.requirement.clone())
        .unwrap_or_default()
}

/// A candidate is better when its κ is higher (a κ beats none), else when it disagrees
/// less.
pub(super) fn better(a: &Figures, b: &Figures) -> bool {
    match (a.kappa, b.kappa) {
        (Some(x), Some(y)) if (x - y).abs() > 1e-9 => x > y,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => a.disagreements < b.disagreements,
    }
}

/// The judged criteria the judge disagrees on, most disagreements first (lowest κ next),
/// at most `n`.
pub(super) fn weak_criteria(
    rubric: &Rubric,
    dev: &crate::metrics::MetricsReport,
    n: usize,
) -> Vec<String> {
    let mut weak: Vec<(String, Figures)> = rubric
        .criteria
        .iter()
        .filter(|c| matches!(c.method, Method::Judge(_)))
        .map(|c| (c.id.clone(), align::figures(dev, &c.id)))
        .filter(|(_, f)| f.disagreements > 0)
        .collect();
    weak.sort_by(|(_, a), (_, b)| {
        b.disagreements
            .cmp(&a.disagreements)
            .then(a.kappa.unwrap_or(-1.0).total_cmp(&b.kappa.unwrap_or(-1.0)))
    });
    weak.into_iter().take(n).map(|(id, _)| id).collect()
}

/// The labelled items (those labelled on some criterion of the rubric), each with its
/// labels as its stratum, split.
pub(super) fn split_labelled(
    labels: &BTreeMap<(String, String), serde_json::Value>,
    rubric: &Rubric,
    shares: Shares,
    seed: u64,
) -> Result<Split, CliError> {
    let mut strata: BTreeMap<&str, String> = BTreeMap::new();
    for ((item, criterion), v) in labels {
        if v.is_null() || rubric.criterion(criterion).is_none() {
            continue;
        }
        let s = strata.entry(item.as_str()).or_default();
        let _ = write!(s, "{criterion}={v};");
    }
    let items: Vec<(String, String)> = strata.into_iter().map(|(i, s)| (i.to_owned(), s)).collect();
    align::split(&items, shares, seed).map_err(|e| CliError::input(e.to_string()))
}

/// Dataset positions by item id.
pub(super) type Positions = HashMap<String, usize>;
/// Submissions by item id.
pub(super) type Submissions = HashMap<String, String>;

/// Every labelled item's position in the dataset, and the train items' submissions (the
/// only ones a proposer may read).
pub(super) fn read_items(
    dataset: &Path,
    split: &Split,
) -> Result<(Positions, Submissions), CliError> {
    let wanted: HashSet<&str> = split
        .train
        .iter()
        .chain(&split.dev)
        .chain(&split.test)
        .map(String::as_str)
        .collect();
    let train: HashSet<&str> = split.train.iter().map(String::as_str).collect();
    let mut positions = HashMap::new();
    let mut submissions = HashMap::new();
    for (i, item) in open_dataset(dataset, ReadOptions::default())?
        .items
        .enumerate()
    {
        let item = item.map_err(|d| CliError::input(d.to_string()))?;
        if wanted.contains(item.id.as_str()) {
            positions.insert(item.id.clone(), i);
        }
        if train.contains(item.id.as_str()) {
            submissions.insert(item.id.clone(), item.submission);
        }
    }
    Ok((positions, submissions))
}

/// The train items where the original judge and the people disagree on `criterion`.
pub(super) fn disagreements(
    search: &Search<'_>,
    train_run: &str,
    criterion: &str,
    labels: &BTreeMap<(String, String), serde_json::Value>,
    notes: &BTreeMap<(String, String), String>,
    submissions: &HashMap<String, String>,
) -> Result<Vec<Disagreement>, CliError> {
    let rec = crate::run::Recording::open(&search.ws.runs_dir(), train_run)?;
    let Some(c) = rec
        .rubric()?
        .and_then(|r| r.rubric.criterion(criterion).cloned())
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    rec.replay(|_, e| {
        let key = (e.target_id.clone(), criterion.to_owned());
        let (Some(human), Some(submission)) = (labels.get(&key), submissions.get(&e.target_id))
        else {
            return;
        };
        let Some(people) = crate::metrics::judge_vs_human::label_verdict(&c, human) else {
            return;
        };
        let Some(r) = e.results.iter().find(|r| r.criterion_id == criterion) else {
            return;
        };
        match &r.verdict {
            Some(v) if *v != people => out.push(Disagreement {
                item: e.target_id.clone(),
                submission: submission.clone(),
                people: people.to_string(),
                verdict: people.clone(),
                judge: v.to_string(),
                judge_reason: r.reason.clone(),
                note: notes.get(&key).cloned().unwrap_or_default(),
            }),
            _ => {}
        }
    })?;
    Ok(out)
}
