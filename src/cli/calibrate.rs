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
use crate::metrics::{Bootstrap, Ci, MetricsReport};
use crate::run::agreement::{RunAgreement, choose_annotator, read_labels, run_agreement};
use crate::run::{self, Control, Env, NewRun, RunSettings};
use crate::store::labels::{annotators, dataset_key};

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The labelled dataset: its file, or its name in the workspace.
    #[arg(long)]
    pub dataset: String,
    /// The rubric the candidate judges grade with (a file or a registry name); needed with
    /// `--judge`.
    #[arg(long)]
    pub rubric: Option<String>,
    /// Whose labels are the truth (default: the dataset's only annotator).
    #[arg(long)]
    pub annotator: Option<String>,
    /// Runs already made over this dataset, added as candidates.
    #[arg(long = "run", value_name = "ID")]
    pub runs: Vec<String>,
    /// Bootstrap resamples for the 95 % intervals.
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// The bootstrap's seed.
    #[arg(long = "bootstrap-seed", default_value_t = 0)]
    pub bootstrap_seed: u64,
    #[arg(long, value_enum, default_value_t = super::metrics::MetricsFormat::Table)]
    pub format: super::metrics::MetricsFormat,
    /// Write the best candidate's judge (model, strategy, system prompt, temperature) into
    /// the rubric's `judge:` block as a new version in the workspace's registry, with the
    /// calibration's figures in the version's note.
    #[arg(long)]
    pub adopt: bool,
    /// Each `--judge` is a candidate (graded alone); the other judge options apply to all.
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// One candidate's figures.
struct Candidate {
    label: String,
    agreement: RunAgreement,
}

pub fn run(args: &CalibrateArgs, ws_flag: Option<&Path>) -> Result<u8, CliError> {
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
        .map_err(|e| CliError::input(e.message))?;
    let labelled: HashSet<String> = read_labels(&ws.labels_dir(), &key, &annotator)
        .map_err(|e| CliError::input(e.message))?
        .into_keys()
        .map(|(item, _)| item)
        .collect();
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
        if args.judge.dry_run {
            return dry_run(&ws, &dataset, spec, &args.judge, &only);
        }
        for model in &args.judge.judge {
            let id = grade_candidate(&ws, &dataset, spec, model, &args.judge, &only)?;
            run_ids.push((model.clone(), id));
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
    let mut candidates = Vec::new();
    for (label, id) in run_ids {
        let agreement = run_agreement(
            &ws.runs_dir(),
            &ws.labels_dir(),
            &id,
            Some(&annotator),
            bootstrap.as_ref(),
        )
        .map_err(|e| CliError::input(format!("{label}: {}", e.message)))?;
        candidates.push(Candidate { label, agreement });
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
    let verdict = distinguishable(&candidates);
    let adopted = match (args.adopt, candidates.first()) {
        (true, Some(best)) => Some(adopt(&ws, best, &key, labelled.len(), verdict.as_deref())?),
        _ => None,
    };
    match args.format {
        super::metrics::MetricsFormat::Json => {
            let doc = json!({
                "dataset": key,
                "annotator": annotator,
                "labelled_items": labelled.len(),
                "candidates": candidates.iter().map(candidate_json).collect::<Vec<_>>(),
                "best": candidates.first().map(|c| c.label.clone()),
                "best_per_criterion": best_per_criterion(&candidates),
                "distinguishable": verdict.is_none(),
                "note": verdict,
                "adopted": adopted,
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        super::metrics::MetricsFormat::Table => {
            print!(
                "{}",
                table(
                    &key,
                    &annotator,
                    labelled.len(),
                    &candidates,
                    verdict.as_deref()
                )
            );
            if let Some(a) = &adopted {
                println!(
                    "\nadopted: {}@{} now judges with {}",
                    a["rubric"].as_str().unwrap_or_default(),
                    a["version"].as_str().unwrap_or_default(),
                    a["model"].as_str().unwrap_or_default()
                );
            }
        }
    }
    Ok(exit::OK)
}

/// The dataset's file: the path given (or that path in the workspace), else the
/// workspace's dataset of that name.
fn dataset_path(ws: &crate::store::Workspace, given: &str) -> Result<PathBuf, CliError> {
    let p = Path::new(given);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    // A path inside the workspace, from wherever the command runs.
    let inside = ws.root.join(p);
    if p.is_relative() && inside.is_file() {
        return Ok(inside);
    }
    let registry = crate::store::datasets::Datasets::new(&ws.root);
    let entry = registry
        .get(given)
        .map_err(|e| CliError::input(e.to_string()))?;
    Ok(registry.resolve(&entry))
}

/// The positions of the labelled items in the dataset.
fn positions_of(dataset: &Path, labelled: &HashSet<String>) -> Result<HashSet<usize>, CliError> {
    let ds = open_dataset(dataset, ReadOptions::default())?;
    let mut out = HashSet::new();
    for (i, item) in ds.items.enumerate() {
        if labelled.contains(&item.map_err(|d| CliError::input(d.to_string()))?.id) {
            out.insert(i);
        }
    }
    Ok(out)
}

/// Writes `best`'s judge into its rubric's `judge:` block as the next minor version in the
/// registry, the figures in the note; what was written.
fn adopt(
    ws: &crate::store::Workspace,
    best: &Candidate,
    dataset: &str,
    labelled: usize,
    note: Option<&str>,
) -> Result<Value, CliError> {
    if overall(&best.agreement.report).is_none() {
        return Err(CliError::input(format!(
            "nothing adopted: no candidate has a κ against the labels (the best, {}, has none: failed cells, or labels of one class)",
            best.label
        )));
    }
    let run = crate::run::record::Recording::open(&ws.runs_dir(), &best.agreement.manifest.id)?;
    let judge = run.settings()?.judge;
    let Some(model) = judge.judge.first().cloned() else {
        return Err(CliError::input(format!(
            "{}: the run names no judge model (it used the rubric's or the workspace's); nothing to adopt",
            best.label
        )));
    };
    let mut rubric = best.agreement.rubric.clone();
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
            CliError::input(format!("{}: the system prompt to adopt: {e}", p.display()))
        })?;
        settings.system_prompt = Some(text);
    }
    rubric.judge = Some(settings);
    let reg = crate::store::registry::Registry::new(&ws.root);
    let current = reg.get(&rubric.id, None).ok().map(|s| s.rubric.version);
    let base = current.as_deref().unwrap_or(&rubric.version);
    rubric.version = match semver::Version::parse(base) {
        Ok(v) => format!("{}.{}.0", v.major, v.minor + 1),
        Err(_) => "1.1.0".into(),
    };
    let r = &best.agreement.report;
    let figures = format!(
        "calibrate: judge {model} adopted from {} (κ {}{}, macro-F1 {}, leniency {}) against {}'s labels of {labelled} items in '{dataset}'{}",
        best.label,
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
        best.agreement.annotator,
        note.map_or_else(String::new, |n| format!("; {n}"))
    );
    let event = reg
        .save(&rubric, &figures)
        .map_err(|e| CliError::input(e.to_string()))?;
    Ok(json!({
        "rubric": event.id,
        "version": event.version,
        "model": model,
        "note": figures,
    }))
}

/// `--dry-run`: each candidate's calls, tokens and cost over the labelled items; nothing
/// is sent.
fn dry_run(
    ws: &crate::store::Workspace,
    dataset: &Path,
    rubric: &str,
    judge: &JudgeArgs,
    only: &HashSet<usize>,
) -> Result<u8, CliError> {
    let (config, _) = crate::store::load_config(&ws.root)?;
    let loaded = crate::formats::load_rubric(rubric)?;
    for model in &judge.judge {
        let mut settings = judge.settings();
        settings.judge = vec![model.clone()];
        let judges = run::judges::build(
            &settings,
            Some(&loaded),
            &run::JudgeEnv {
                config: &config,
                concurrency: None,
                cache_from: &ws.root,
                gate: None,
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
        println!("{model}:");
        super::dry_run::run(ds, Some(&loaded), true, judges.as_ref())?;
    }
    Ok(exit::OK)
}

/// Grades the labelled items with one candidate judge as a saved run; its id.
fn grade_candidate(
    ws: &crate::store::Workspace,
    dataset: &Path,
    rubric: &str,
    model: &str,
    judge: &JudgeArgs,
    only: &HashSet<usize>,
) -> Result<String, CliError> {
    let mut settings = judge.settings();
    settings.judge = vec![model.to_owned()];
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
            rubric: Some(crate::formats::load_rubric(rubric)?),
            settings: RunSettings {
                judge: settings,
                ..RunSettings::default()
            },
            record: Some((run::RunsHome::of(ws), Some(format!("calibrate {model}")))),
            cell_events: false,
            copied: Vec::new(),
            only: Some(only.clone()),
        },
        env,
        &Control::default(),
    )?;
    let outcome = super::grade::drive(session, &config, |_| Ok(()))?;
    let id = outcome
        .run_id
        .ok_or_else(|| CliError::input(format!("{model}: the run was not recorded")))?;
    eprintln!(
        "{model}: run {id} ({} calls, ${:.4})",
        outcome.usage.requests, outcome.usage.cost
    );
    Ok(id)
}

/// The figure candidates are ranked by: pooled κ over the binary criteria, else the mean κ
/// of the criteria that have one.
fn overall(r: &MetricsReport) -> Option<f64> {
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

fn overall_ci(r: &MetricsReport) -> Option<Ci> {
    r.pooled.as_ref()?.ci.as_ref()?.kappa
}

fn macro_f1(r: &MetricsReport) -> Option<f64> {
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

/// Per criterion, the candidate with the highest κ.
fn best_per_criterion(candidates: &[Candidate]) -> Value {
    let mut out = serde_json::Map::new();
    let Some(first) = candidates.first() else {
        return Value::Object(out);
    };
    for (i, c) in first.agreement.report.criteria.iter().enumerate() {
        let best = candidates
            .iter()
            .filter_map(|cand| {
                let k = cand.agreement.report.criteria.get(i)?.kappa()?;
                Some((cand.label.clone(), k))
            })
            // The first of equals (the better ranked) wins a tie.
            .fold(None::<(String, f64)>, |best, (label, k)| match best {
                Some((_, b)) if b >= k => best,
                _ => Some((label, k)),
            });
        if let Some((label, kappa)) = best {
            out.insert(
                c.criterion.clone(),
                json!({"candidate": label, "kappa": kappa}),
            );
        }
    }
    Value::Object(out)
}

/// Calls made (cache hits not counted), tokens and cost of a candidate's run, and the
/// median judge latency of the calls made.
fn usage(a: &RunAgreement) -> (usize, u64, f64, Option<u64>) {
    let mut latencies: Vec<u64> = a
        .cells
        .iter()
        .filter_map(|c| c.result.invocation.as_ref())
        .filter(|inv| !inv.cache_hit)
        .map(|inv| inv.latency_ms)
        .collect();
    latencies.sort_unstable();
    let median = latencies.get(latencies.len() / 2).copied();
    let totals = a.manifest.totals.unwrap_or_default();
    (
        latencies.len(),
        totals.input_tokens + totals.output_tokens,
        totals.cost,
        median,
    )
}

fn candidate_json(c: &Candidate) -> Value {
    let r = &c.agreement.report;
    let (calls, tokens, cost, latency) = usage(&c.agreement);
    json!({
        "candidate": c.label,
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

fn table(
    key: &str,
    annotator: &str,
    labelled: usize,
    candidates: &[Candidate],
    note: Option<&str>,
) -> String {
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
    }
    if let Some(best) = candidates.first() {
        let _ = writeln!(out, "\nbest overall: {}", best.label);
    }
    if let Value::Object(per) = best_per_criterion(candidates) {
        for (criterion, b) in per {
            let _ = writeln!(
                out,
                "best on {criterion}: {} (κ {:.3})",
                b["candidate"].as_str().unwrap_or_default(),
                b["kappa"].as_f64().unwrap_or(f64::NAN)
            );
        }
    }
    if let Some(n) = note {
        let _ = writeln!(out, "\n{n}");
    }
    out
}
