//! `rubricate align`: from the judge's disagreements with the people to a better rubric,
//! proven on items it never saw.
//!
//! The labelled items are split (stratified, seeded) into train, dev and test. The
//! original rubric grades train and dev; the criteria where the judge disagrees most on dev
//! are worked on. Per weak criterion and round, a proposer model reads the criterion and
//! the *train* items the judge got wrong (with the people's verdicts and notes) and
//! rewords the requirement with a decision rule; every candidate grades dev (a saved run,
//! so the cache and `runs resume` apply) and is ranked by κ on that criterion, with
//! "not distinguishable" when the intervals say so. The winner and the original then
//! grade test once, and only those figures are the result. Test items never reach a
//! proposer; dev figures are never reported as the result. `--adopt` keeps the winner as
//! the rubric's next minor version.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::calibrate::{dataset_path, grade_candidate};
use super::{CliError, exit};
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::metrics::Bootstrap;
use crate::model::{Method, Rubric};
use crate::run::agreement::{choose_annotator, read_verdicts, run_agreement};
use crate::run::align::{self, Disagreement, Figures, Shares, Split};
use crate::store::Workspace;
use crate::store::labels::{self, annotators, dataset_key};

#[derive(Debug, clap::Args)]
pub(crate) struct AlignArgs {
    /// The labelled dataset: its file, or its name in the workspace.
    #[arg(long)]
    pub(crate) dataset: String,
    /// The rubric to align (a file or a registry name).
    #[arg(long)]
    pub(crate) rubric: String,
    /// Whose labels are the truth: an annotator, or `adjudicated` (default: the dataset's
    /// only annotator).
    #[arg(long)]
    pub(crate) annotator: Option<String>,
    /// The judge (default: the rubric's `judge.model`, else the workspace's).
    #[arg(long, value_name = "MODEL")]
    pub(crate) judge: Option<String>,
    /// The model that proposes rewordings (default: the judge).
    #[arg(long, value_name = "MODEL")]
    pub(crate) proposer: Option<String>,
    /// Train/dev/test shares of the labelled items, in percent.
    #[arg(long, default_value = "20/40/40", value_name = "T/D/T")]
    pub(crate) split: String,
    /// The split's seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Rounds of proposals per weak criterion (each starts from the round's winner).
    #[arg(long, default_value_t = 2, value_name = "K")]
    pub(crate) rounds: usize,
    /// Weak criteria worked on at most (those the judge disagrees on most, on dev).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub(crate) criteria: usize,
    /// Stop the search once it has cost this many dollars (judge and proposer; priced in
    /// rubricate.yaml); test is graded all the same.
    #[arg(long, value_name = "DOLLARS")]
    pub(crate) max_cost: Option<f64>,
    /// Keep the winner as the rubric's next minor version in the workspace's registry,
    /// with the test figures and the split's seed in the version's note.
    #[arg(long)]
    pub(crate) adopt: bool,
    /// Bootstrap resamples for the 95 % intervals.
    #[arg(long, default_value_t = 1000)]
    pub(crate) bootstrap: usize,
    #[arg(long, value_enum, default_value_t = super::metrics::MetricsFormat::Table)]
    pub(crate) format: super::metrics::MetricsFormat,
}

/// What the search does with the workspace: grade, measure, propose, add up the cost.
struct Search<'a> {
    ws: &'a Workspace,
    dataset: &'a Path,
    key: String,
    annotator: String,
    /// Dataset position of every labelled item.
    positions: HashMap<String, usize>,
    judge: crate::run::JudgeSettings,
    bootstrap: Bootstrap,
    spent: f64,
    max_cost: Option<f64>,
}

/// One candidate for one criterion, as ranked on dev.
#[derive(Debug, Clone, serde::Serialize)]
struct Tried {
    criterion: String,
    round: usize,
    label: String,
    requirement: String,
    /// Examples the judge is shown for the criterion.
    examples: usize,
    run: String,
    dev: Figures,
    /// κ's interval overlaps the best's both ways.
    indistinguishable: bool,
}

pub(crate) fn run(args: &AlignArgs, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    let shares = Shares::parse(&args.split).map_err(CliError::input)?;
    if args.max_cost.is_some_and(|c| !(c.is_finite() && c > 0.0)) {
        return Err(CliError::input(
            "--max-cost must be a positive number of dollars",
        ));
    }
    let dataset = dataset_path(&ws, &args.dataset)?;
    let key = dataset_key(&dataset);
    let annotator = choose_annotator(
        &key,
        &annotators(&ws.labels_dir(), &key),
        args.annotator.as_deref(),
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    let original = crate::formats::load_rubric(&args.rubric)?;
    let labels = read_verdicts(&ws.labels_dir(), &key, &annotator)
        .map_err(|e| CliError::input(e.to_string()))?;
    let notes: BTreeMap<(String, String), String> = labels::current_kept(
        &labels::journal_path(&ws.labels_dir(), &key, &annotator),
        |l| l.note,
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    let split = split_labelled(&labels, &original.rubric, shares, args.seed)?;
    let (positions, submissions) = read_items(&dataset, &split)?;
    let mut search = Search {
        ws: &ws,
        dataset: &dataset,
        key,
        annotator,
        positions,
        judge: crate::run::JudgeSettings {
            judge: args.judge.iter().cloned().collect(),
            ..crate::run::JudgeSettings::default()
        },
        bootstrap: Bootstrap {
            resamples: args.bootstrap.max(1),
            seed: args.seed,
            level: 0.95,
        },
        spent: 0.0,
        max_cost: args.max_cost,
    };
    eprintln!(
        "split (seed {}): {} train, {} dev, {} test items",
        split.seed,
        split.train.len(),
        split.dev.len(),
        split.test.len()
    );
    let rubric_id = original.rubric.id.clone();
    let (base_train, _) = search.grade_within(
        &original,
        &split.train,
        &format!("align {rubric_id}: original · train"),
        true,
    )?;
    let (base_dev_run, base_dev) = search.grade_within(
        &original,
        &split.dev,
        &format!("align {rubric_id}: original · dev"),
        true,
    )?;
    let weak = weak_criteria(&original.rubric, &base_dev, args.criteria);
    let proposer = search.proposer(
        args.proposer.as_deref().or(args.judge.as_deref()),
        &original,
    )?;
    let mut tried: Vec<Tried> = Vec::new();
    let mut winner = (*original.rubric).clone();
    let mut stopped: Option<String> = None;
    for criterion in &weak {
        let wrong = disagreements(
            &search,
            &base_train,
            criterion,
            &labels,
            &notes,
            &submissions,
        )?;
        let start = Tried {
            criterion: criterion.clone(),
            round: 0,
            label: "original".into(),
            requirement: requirement(&original.rubric, criterion),
            examples: 0,
            run: base_dev_run.clone(),
            dev: align::figures(&base_dev, criterion),
            indistinguishable: false,
        };
        let (mut candidates, best) = search_criterion(
            &mut search,
            &Criterion {
                original: &original,
                base: &winner,
                id: criterion,
                wrong: &wrong,
                dev: &split.dev,
            },
            start,
            proposer.as_ref(),
            args.rounds,
            &mut stopped,
        )?;
        for t in &mut candidates {
            t.indistinguishable =
                t.run != best.0.run && align::indistinguishable(&t.dev, &best.0.dev);
        }
        tried.extend(candidates);
        winner = best.1;
        if stopped.is_some() {
            break;
        }
    }
    // The result: test, graded once by each.
    let changed = *original.rubric != winner;
    let (_, test_original) = search.grade(
        &original,
        &split.test,
        &format!("align {rubric_id}: original · test"),
    )?;
    let winner_loaded = as_loaded(&original, winner.clone());
    let test_winner = if changed {
        Some(
            search
                .grade(
                    &winner_loaded,
                    &split.test,
                    &format!("align {rubric_id}: winner · test"),
                )?
                .1,
        )
    } else {
        None
    };
    let result: Vec<Outcome> = original
        .rubric
        .criteria
        .iter()
        .map(|c| Outcome {
            criterion: c.id.clone(),
            worked_on: weak.contains(&c.id),
            before: align::figures(&test_original, &c.id),
            after: align::figures(test_winner.as_ref().unwrap_or(&test_original), &c.id),
        })
        .collect();
    let adopted = match (args.adopt, changed) {
        (true, true) => Some(adopt(&ws, &winner, &search, &split, &result)?),
        (true, false) => {
            eprintln!("nothing adopted: no candidate beat the original on dev");
            None
        }
        _ => None,
    };
    let doc = json!({
        "rubric": original.rubric.id,
        "rubric_version": original.rubric.version,
        "dataset": search.key,
        "annotator": search.annotator,
        "created_at": jiff::Timestamp::now().to_string(),
        "split": split,
        "weak_criteria": weak,
        "candidates": tried,
        "test": result,
        "changed": changed,
        "cost": search.spent,
        "stopped": stopped,
        "adopted": adopted,
        "winner": changed.then_some(&winner),
    });
    let kept = keep(&ws, &original.rubric.id, &doc)?;
    match args.format {
        super::metrics::MetricsFormat::Json => {
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        super::metrics::MetricsFormat::Table => {
            out!(
                "{}",
                table(
                    &search,
                    &split,
                    &tried,
                    &result,
                    stopped.as_deref(),
                    adopted.as_deref()
                )
            );
        }
    }
    eprintln!("kept as {}", kept.display());
    Ok(exit::OK)
}

/// One weak criterion's search, and where it starts from.
struct Criterion<'a> {
    original: &'a LoadedRubric,
    /// The rubric so far (earlier criteria's winners in it).
    base: &'a Rubric,
    id: &'a str,
    /// The train items the original judge got wrong on it.
    wrong: &'a [Disagreement],
    dev: &'a [String],
}

/// Rounds of candidates for one criterion, each graded on dev: a rewording by the
/// proposer, few-shot examples from the train disagreements, and both together; the next
/// round starts from the round's best when it beats the one before, else the search ends.
/// Every candidate tried (the start first), and the best with its rubric.
fn search_criterion(
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

/// A criterion's figures on test, before (the original) and after (the winner).
#[derive(Debug, Clone, serde::Serialize)]
struct Outcome {
    criterion: String,
    worked_on: bool,
    before: Figures,
    after: Figures,
}

impl Search<'_> {
    /// Grades `ids` with `rubric` as a saved run; the run and its agreement with the labels.
    fn grade(
        &mut self,
        rubric: &LoadedRubric,
        ids: &[String],
        name: &str,
    ) -> Result<(String, crate::metrics::MetricsReport), CliError> {
        self.grade_within(rubric, ids, name, false)
    }

    /// [`grade`](Self::grade); `budgeted`: the run is part of the search, bounded by what
    /// is left of `--max-cost` (test is graded whatever the search cost).
    fn grade_within(
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

    fn over_budget(&self) -> Option<String> {
        self.max_cost
            .filter(|max| self.spent >= *max)
            .map(|max| format!("--max-cost ${max:.4} reached (${:.4} spent)", self.spent))
    }

    /// The proposer's client; `None` when no model is named anywhere.
    fn proposer(
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
            .with_meter(Arc::clone(&meter), config.prices.get(&id).copied());
        Ok(Some(Proposer {
            client,
            model,
            meter,
        }))
    }

    /// One proposal for `criterion` of `rubric`, from the train disagreements.
    fn propose(
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
        let outcome = runtime.block_on(p.client.complete(&req, None));
        self.spent += p.meter.snapshot().cost - before;
        let reply = outcome.map_err(|(e, _)| format!("the proposer failed: {e}"))?;
        align::read_proposal(&reply.response.text)
    }
}

/// The proposer: a client, its model's own name, and what it has cost.
struct Proposer {
    client: crate::llm::Client,
    model: String,
    meter: Arc<crate::llm::Meter>,
}

/// A candidate rubric loaded as the original was (same file and folder for messages and
/// relative paths).
fn as_loaded(original: &LoadedRubric, rubric: Rubric) -> LoadedRubric {
    LoadedRubric {
        rubric: Arc::new(rubric),
        ..original.clone()
    }
}

fn requirement(rubric: &Rubric, criterion: &str) -> String {
    rubric
        .criterion(criterion)
        .map(|c| c.requirement.clone())
        .unwrap_or_default()
}

/// A candidate is better when its κ is higher (a κ beats none), else when it disagrees
/// less.
fn better(a: &Figures, b: &Figures) -> bool {
    match (a.kappa, b.kappa) {
        (Some(x), Some(y)) if (x - y).abs() > 1e-9 => x > y,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => a.disagreements < b.disagreements,
    }
}

/// The judged criteria the judge disagrees on, most disagreements first (lowest κ next),
/// at most `n`.
fn weak_criteria(rubric: &Rubric, dev: &crate::metrics::MetricsReport, n: usize) -> Vec<String> {
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
fn split_labelled(
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
type Positions = HashMap<String, usize>;
/// Submissions by item id.
type Submissions = HashMap<String, String>;

/// Every labelled item's position in the dataset, and the train items' submissions (the
/// only ones a proposer may read).
fn read_items(dataset: &Path, split: &Split) -> Result<(Positions, Submissions), CliError> {
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
fn disagreements(
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

/// Keeps the winner as the rubric's next minor version, with the test figures and the
/// split's seed in the version's note; the new version.
fn adopt(
    ws: &Workspace,
    winner: &Rubric,
    search: &Search<'_>,
    split: &Split,
    result: &[Outcome],
) -> Result<String, CliError> {
    let figures: Vec<String> = result
        .iter()
        .filter(|o| o.worked_on)
        .map(|o| {
            format!(
                "{} κ {} → {}",
                o.criterion,
                num(o.before.kappa),
                num(o.after.kappa)
            )
        })
        .collect();
    let note = format!(
        "align: against {}'s labels of '{}' (split {}/{}/{} items, seed {}); on test: {}; search cost ${:.4}",
        search.annotator,
        search.key,
        split.train.len(),
        split.dev.len(),
        split.test.len(),
        split.seed,
        figures.join(", "),
        search.spent
    );
    let version = crate::store::registry::Registry::new(&ws.root)
        .save_next_minor(winner, &note)
        .map_err(|e| CliError::input(e.to_string()))?;
    Ok(format!("{}@{version}", winner.id))
}

/// Keeps the search's report (and the winning rubric, to adopt later) as
/// `aligns/<time>-<rubric>.json` in the workspace, replaced whole or not at all.
fn keep(
    ws: &Workspace,
    rubric: &str,
    doc: &serde_json::Value,
) -> Result<std::path::PathBuf, CliError> {
    let dir = ws.path("aligns");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display())))?;
    let stamp = jiff::Zoned::now().strftime("%Y%m%d-%H%M%S").to_string();
    let name = format!("{stamp}-{}.json", crate::model::slugify(rubric));
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(doc).unwrap_or_default();
    crate::store::AtomicFile::write_whole(&path, text.as_bytes())
        .map_err(|e| CliError::from(crate::store::StoreError::io(&path, e)))?;
    Ok(path)
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn ci(c: Option<crate::metrics::Ci>) -> String {
    c.map_or_else(String::new, |c| format!(" [{:.2}, {:.2}]", c.low, c.high))
}

fn table(
    search: &Search<'_>,
    split: &Split,
    tried: &[Tried],
    result: &[Outcome],
    stopped: Option<&str>,
    adopted: Option<&str>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "align against {}'s labels of '{}': {} train · {} dev · {} test items (seed {})\n",
        search.annotator,
        search.key,
        split.train.len(),
        split.dev.len(),
        split.test.len(),
        split.seed
    );
    if tried.is_empty() {
        let _ = writeln!(
            out,
            "the judge agrees with the people on every judged criterion of dev: nothing to align\n"
        );
    } else {
        let _ = writeln!(out, "candidates on dev (ranking only; not the result):");
        for t in tried {
            let _ = writeln!(
                out,
                "  {:<20} {:<22} κ {}{}  disagreements {}{}",
                crate::core::text::clipped(&t.criterion, 20),
                t.label,
                num(t.dev.kappa),
                ci(t.dev.kappa_ci),
                t.dev.disagreements,
                if t.indistinguishable {
                    "  (not distinguishable from the best)"
                } else {
                    ""
                }
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "the result, on test (graded once by the original and the winner):"
    );
    let _ = writeln!(
        out,
        "  {:<20} {:>22} {:>22} {:>17}",
        "CRITERION", "κ BEFORE", "κ AFTER", "LENIENCY B → A"
    );
    for o in result {
        let _ = writeln!(
            out,
            "  {:<20} {:>22} {:>22} {:>17}{}",
            crate::core::text::clipped(&o.criterion, 20),
            format!("{}{}", num(o.before.kappa), ci(o.before.kappa_ci)),
            format!("{}{}", num(o.after.kappa), ci(o.after.kappa_ci)),
            format!(
                "{} → {}",
                o.before
                    .leniency
                    .map_or_else(|| "-".into(), |l| format!("{l:+.1}")),
                o.after
                    .leniency
                    .map_or_else(|| "-".into(), |l| format!("{l:+.1}"))
            ),
            if o.worked_on { "  *" } else { "" }
        );
    }
    let _ = writeln!(out, "  (* worked on)\n\nsearch cost: ${:.4}", search.spent);
    if let Some(why) = stopped {
        let _ = writeln!(out, "stopped early: {why}");
    }
    if let Some(v) = adopted {
        let _ = writeln!(out, "adopted: {v}");
    }
    out
}
