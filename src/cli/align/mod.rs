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

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::calibrate::dataset_path;
use super::{CliError, exit};
use crate::metrics::Bootstrap;
use crate::run::agreement::{choose_annotator, read_verdicts};
use crate::run::align::{self, Shares};
use crate::store::labels::{self, annotators, dataset_key};

mod report;
mod search;

use report::{Outcome, adopt, keep, table};
use search::{
    Criterion, Search, Tried, as_loaded, disagreements, read_items, requirement, search_criterion,
    split_labelled, weak_criteria,
};

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
    let original = crate::cli::rubric_arg::load(&args.rubric, None, ws_flag)?;
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
