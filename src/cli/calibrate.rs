//! `rubricate calibrate`: which judge agrees with your people. Every candidate judge grades
//! the items an annotator labelled (each a saved run, so the cache and `runs resume`
//! apply; `--run` adds runs already made), and the candidates are ranked by their
//! agreement with the labels: pooled κ (binary criteria together) with its bootstrap
//! interval, macro-F1, accuracy, leniency, item-score bias and correlation, tokens and cost.
//! It names the best per criterion and overall, and says when the intervals overlap too
//! much to tell.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{CliError, JudgeArgs, exit};
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::metrics::Bootstrap;
use crate::run::agreement::choose_annotator;
use crate::run::calibration::{self, Calibration, Candidate, overall, overall_ci, usage};
use crate::run::{self, Control, Env, NewRun, RunSettings};
use crate::store::labels::{annotators, dataset_key};

#[derive(Debug, clap::Args)]
pub(crate) struct CalibrateArgs {
    /// The labelled dataset: its file, or its name in the workspace.
    #[arg(long)]
    pub(crate) dataset: String,
    /// The rubric the candidate judges grade with (a file or a registry name); needed with
    /// `--judge`.
    #[arg(long)]
    pub(crate) rubric: Option<String>,
    /// Whose labels are the truth (default: the dataset's only annotator).
    #[arg(long)]
    pub(crate) annotator: Option<String>,
    /// Runs already made over this dataset, added as candidates.
    #[arg(long = "run", value_name = "ID")]
    pub(crate) runs: Vec<String>,
    /// Bootstrap resamples for the 95 % intervals.
    #[arg(long, default_value_t = 1000)]
    pub(crate) bootstrap: usize,
    /// The bootstrap's seed.
    #[arg(long = "bootstrap-seed", default_value_t = 0)]
    pub(crate) bootstrap_seed: u64,
    #[arg(long, value_enum, default_value_t = super::metrics::MetricsFormat::Table)]
    pub(crate) format: super::metrics::MetricsFormat,
    /// Write the best candidate's judge (model, strategy, system prompt, temperature) into
    /// the rubric's `judge:` block as a new version in the workspace's registry, with the
    /// calibration's figures in the version's note.
    #[arg(long)]
    pub(crate) adopt: bool,
    /// Each `--judge` is a candidate (graded alone); the other judge options apply to all.
    #[command(flatten)]
    pub(crate) judge: JudgeArgs,
}

pub(crate) fn run(args: &CalibrateArgs, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    if args.judge.judge.is_empty() && args.runs.is_empty() {
        return Err(CliError::input(
            "nothing to compare: give candidate judges (--judge MODEL, repeated) or runs already made (--run ID)",
        ));
    }
    let dataset = dataset_path(&ws, &args.dataset)?;
    let key = dataset_key(&dataset);
    let people = annotators(&ws.labels_dir(), &key);
    let annotator = choose_annotator(&key, &people, args.annotator.as_deref())
        .map_err(|e| CliError::input(e.to_string()))?;
    let labelled = calibration::labelled_items(&ws, &key, &annotator)
        .map_err(|e| CliError::input(e.to_string()))?;
    if labelled.is_empty() {
        return Err(CliError::input(format!(
            "{annotator} has labelled nothing in '{key}' yet; label some items first (`rubricate labels set`, or the Label pane)"
        )));
    }
    let mut run_ids: Vec<(String, String)> = Vec::new();
    if !args.judge.judge.is_empty() {
        let spec = args.rubric.as_deref().ok_or_else(|| {
            CliError::input("--judge candidates grade with a rubric: give --rubric FILE or NAME")
        })?;
        let only = positions_of(&dataset, &labelled)?;
        let candidates = candidate_settings(&args.judge);
        if args.judge.dry_run {
            return dry_run(&ws, &dataset, spec, &candidates, &only);
        }
        let rubric = super::rubric_arg::load(spec, None, Some(&ws.root))?;
        for (label, settings) in candidates {
            let name = format!("calibrate {label}");
            let graded = grade_candidate(&ws, &dataset, rubric.clone(), &name, settings, &only)?;
            if let Some(why) = graded.stopped {
                return Err(CliError::input(format!(
                    "{name}: run {} stopped: {why}; `rubricate runs resume {}` finishes it",
                    graded.run, graded.run
                )));
            }
            let id = graded.run;
            run_ids.push((label, id));
        }
    }
    for r in &args.runs {
        run_ids.push((format!("run {r}"), r.clone()));
    }
    let bootstrap = (args.bootstrap > 0).then_some(Bootstrap {
        resamples: args.bootstrap,
        seed: args.bootstrap_seed,
        level: 0.95,
    });
    let cal = calibration::rank(&ws, &key, &annotator, run_ids, bootstrap.as_ref())
        .map_err(|e| CliError::input(e.to_string()))?;
    let adopted = match (args.adopt, cal.candidates.first()) {
        (true, Some(best)) => {
            Some(calibration::adopt(&ws, &cal, best).map_err(|e| CliError::input(e.to_string()))?)
        }
        _ => None,
    };
    match args.format {
        super::metrics::MetricsFormat::Json => {
            let doc = json!({
                "dataset": cal.dataset,
                "annotator": cal.annotator,
                "labelled_items": cal.labelled,
                "candidates": cal.candidates.iter().map(candidate_json).collect::<Vec<_>>(),
                "best": cal.candidates.first().map(|c| c.label.clone()),
                "best_per_criterion": best_json(&cal),
                "distinguishable": cal.note.is_none(),
                "note": cal.note,
                "adopted": adopted,
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        super::metrics::MetricsFormat::Table => {
            out!("{}", table(&cal));
            if let Some(a) = &adopted {
                outln!(
                    "\nadopted: {}@{} now judges with {}",
                    a.rubric,
                    a.version,
                    a.model
                );
            }
        }
    }
    Ok(exit::OK)
}

/// Every candidate the judge flags make: each `--judge` with each `--strategy` and each
/// `--system-prompt` (those not repeated apply to all), labelled by what tells them apart.
fn candidate_settings(args: &JudgeArgs) -> Vec<(String, crate::run::JudgeSettings)> {
    let strategies: Vec<Option<crate::engine::judge::Strategy>> = if args.strategy.is_empty() {
        vec![None]
    } else {
        args.strategy.iter().copied().map(Some).collect()
    };
    let prompts: Vec<Option<&PathBuf>> = if args.system_prompt.is_empty() {
        vec![None]
    } else {
        args.system_prompt.iter().map(Some).collect()
    };
    let mut out = Vec::new();
    for model in &args.judge {
        for strategy in &strategies {
            for prompt in &prompts {
                let mut settings = args.settings();
                settings.judge = vec![model.clone()];
                settings.strategy = *strategy;
                settings.system_prompt = prompt.cloned();
                let mut label = model.clone();
                if let (true, Some(s)) = (strategies.len() > 1, strategy) {
                    // As it is typed (`one-shot`).
                    let _ = write!(label, " {}", s.to_string().replace('_', "-"));
                }
                if let (true, Some(p)) = (prompts.len() > 1, prompt) {
                    let stem = p.file_stem().map_or_else(
                        || p.display().to_string(),
                        |s| s.to_string_lossy().into_owned(),
                    );
                    let _ = write!(label, " +{stem}");
                }
                out.push((label, settings));
            }
        }
    }
    out
}

/// The dataset's file: the path given (or that path in the workspace), else the
/// workspace's dataset of that name (registered, or a file in `datasets/`).
pub(crate) fn dataset_path(ws: &crate::store::Workspace, given: &str) -> Result<PathBuf, CliError> {
    let p = Path::new(given);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    // A path inside the workspace, from wherever the command runs.
    let inside = ws.root.join(p);
    if p.is_relative() && inside.is_file() {
        return Ok(inside);
    }
    crate::store::datasets::Datasets::new(&ws.root)
        .find(given)
        .map_err(|e| CliError::input(e.to_string()))
}

/// The positions of the labelled items in the dataset.
pub(crate) fn positions_of(
    dataset: &Path,
    labelled: &HashSet<String>,
) -> Result<HashSet<usize>, CliError> {
    let ds = open_dataset(dataset, ReadOptions::default())?;
    let mut out = HashSet::new();
    for (i, item) in ds.items.enumerate() {
        if labelled.contains(&item.map_err(|d| CliError::input(d.to_string()))?.id) {
            out.insert(i);
        }
    }
    Ok(out)
}

/// `--dry-run`: each candidate's calls, tokens and cost over the labelled items; nothing
/// is sent.
fn dry_run(
    ws: &crate::store::Workspace,
    dataset: &Path,
    rubric: &str,
    candidates: &[(String, crate::run::JudgeSettings)],
    only: &HashSet<usize>,
) -> Result<u8, CliError> {
    let (config, _) = crate::store::load_config(&ws.root)?;
    let loaded = super::rubric_arg::load(rubric, None, Some(&ws.root))?;
    for (label, settings) in candidates {
        let judges = run::judges::build(
            settings,
            Some(&loaded),
            &run::JudgeEnv {
                config: &config,
                concurrency: None,
                cache_from: &ws.root,
                gate: None,
                batch: None,
            },
        )?;
        let mut ds = open_dataset(dataset, ReadOptions::default())?;
        let only = only.clone();
        ds.items = Box::new(
            ds.items
                .enumerate()
                .filter(move |(i, _)| only.contains(i))
                .map(|(_, item)| item),
        );
        outln!("{label}:");
        super::dry_run::run(ds, Some(&loaded), true, judges.as_ref())?;
    }
    Ok(exit::OK)
}

/// A candidate's saved run, what it cost, and why it stopped early if it did.
pub(crate) struct Graded {
    pub(crate) run: String,
    pub(crate) cost: f64,
    pub(crate) stopped: Option<String>,
}

/// Grades the items at `only` with one candidate (a judge, a rubric) as a saved run named
/// `name` (or `name (2)`… when taken); its id and what it cost.
pub(crate) fn grade_candidate(
    ws: &crate::store::Workspace,
    dataset: &Path,
    rubric: crate::formats::LoadedRubric,
    name: &str,
    settings: crate::run::JudgeSettings,
    only: &HashSet<usize>,
) -> Result<Graded, CliError> {
    let (config, warnings) = crate::store::load_config(&ws.root)?;
    for w in warnings {
        eprintln!("warning: {}", crate::core::text::visible(&w.to_string()));
    }
    let env = Env {
        config: &config,
        cache_from: &ws.root,
    };
    let session = run::start(
        NewRun {
            dataset,
            rubric: Some(rubric),
            settings: RunSettings {
                judge: settings,
                ..RunSettings::default()
            },
            // A made-up name: taken already (an earlier calibration), it gets ` (2)`….
            record: Some((
                run::RunsHome::of(ws),
                Some(crate::store::runs::RunDir::unused_name(
                    &ws.runs_dir(),
                    name,
                )),
            )),
            cell_events: false,
            copied: Vec::new(),
            only: Some(only.clone()),
        },
        env,
        &Control::default(),
    )?;
    let outcome = super::grade::drive(session, &config, |_, _, _| Ok(()))?;
    let id = outcome
        .run_id
        .ok_or_else(|| CliError::input(format!("{name}: the run was not recorded")))?;
    eprintln!(
        "{name}: run {id} ({} calls, ${:.4})",
        outcome.usage.requests, outcome.usage.cost
    );
    Ok(Graded {
        run: id,
        cost: outcome.usage.cost,
        stopped: outcome.ended.stop.as_ref().map(ToString::to_string),
    })
}

fn best_json(cal: &Calibration) -> Value {
    Value::Object(
        cal.best_per_criterion()
            .into_iter()
            .map(|b| {
                (
                    b.criterion,
                    json!({"candidate": b.candidate, "kappa": b.kappa}),
                )
            })
            .collect(),
    )
}

fn candidate_json(c: &Candidate) -> Value {
    let r = &c.agreement.report;
    let (calls, tokens, cost, latency) = usage(&c.agreement);
    json!({
        "candidate": c.label,
        "about": c.about,
        "run": c.agreement.manifest.id,
        "kappa": overall(r),
        "kappa_ci": overall_ci(r),
        "pooled": r.pooled,
        "criteria": r.criteria,
        "item_scores": c.agreement.item_scores,
        "calls": calls,
        "tokens": tokens,
        "cost": cost,
        "median_latency_ms": latency,
    })
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn table(cal: &Calibration) -> String {
    let (key, annotator, labelled, candidates) =
        (&cal.dataset, &cal.annotator, cal.labelled, &cal.candidates);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} against {annotator}'s labels of {labelled} items in '{key}' (best first)\n",
        crate::engine::checks::plural(candidates.len(), "candidate")
    );
    let _ = writeln!(
        out,
        "{:<28} {:>6} {:>15} {:>6} {:>6} {:>8} {:>7} {:>6} {:>6} {:>8}",
        "CANDIDATE", "KAPPA", "95% CI", "M-F1", "ACC", "LENIENT", "BIAS", "R", "CALLS", "COST"
    );
    for c in candidates {
        let r = &c.agreement.report;
        let pooled = r.pooled.as_ref().map(|p| &p.metrics);
        let ci = overall_ci(r).map_or_else(
            || "-".into(),
            |ci| format!("[{:.2}, {:.2}]", ci.low, ci.high),
        );
        let (calls, _, cost, _) = usage(&c.agreement);
        let _ = writeln!(
            out,
            "{:<28} {:>6} {:>15} {:>6} {:>6} {:>8} {:>7} {:>6} {:>6} {:>8}",
            crate::core::text::clipped(&c.label, 28),
            num(overall(r)),
            ci,
            num(pooled.and_then(|p| p.macro_f1)),
            num(pooled.and_then(|p| p.accuracy)),
            pooled
                .and_then(|p| p.leniency)
                .map_or_else(|| "-".into(), |l| format!("{l:+.1}pp")),
            num(c.agreement.item_scores.bias),
            num(c.agreement.item_scores.pearson),
            calls,
            format!("${cost:.4}"),
        );
        // Which run it is, under its figures (candidates may share a name).
        let _ = writeln!(out, "  {}", crate::core::text::clipped(&c.about, 78));
    }
    if let Some(best) = candidates.first() {
        let _ = writeln!(out, "\nbest overall: {}", best.label);
    }
    for b in cal.best_per_criterion() {
        let _ = writeln!(
            out,
            "best on {}: {} (κ {:.3})",
            b.criterion, b.candidate, b.kappa
        );
    }
    if let Some(n) = &cal.note {
        let _ = writeln!(out, "\n{n}");
    }
    out
}
