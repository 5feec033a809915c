//! `rubricate metrics --run ID`: the run's judge against the humans' labels of its dataset
//! (SCORING.md "Metrics"): per criterion and pooled, item scores, bootstrap intervals, and
//! agreement between annotators when there are several.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{CliError, exit};
use crate::engine::executor::build_evaluation;
use crate::metrics::{
    AlphaLevel, Bootstrap, CriterionMetrics, MetricsReport, ScoreMetrics, fleiss_kappa,
    judge_vs_human, krippendorff_alpha, score_metrics,
};
use crate::model::{CriterionResult, Item, MethodKind, Rubric, Verdict};
use crate::store::labels::{self, annotators, dataset_key, fold};
use crate::store::runs::{Manifest, RunDir};

#[derive(Debug, clap::Args)]
pub struct MetricsArgs {
    /// The run whose verdicts are compared (an id or a unique prefix).
    #[arg(long)]
    pub run: String,
    /// Whose labels are the truth (default: the only annotator of the run's dataset).
    #[arg(long)]
    pub annotator: Option<String>,
    /// Bootstrap resamples for 95 % intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = MetricsFormat::Table)]
    pub format: MetricsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsFormat {
    Table,
    Json,
}

pub fn run(args: &MetricsArgs, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    let run = RunDir::find(&ws.runs_dir(), &args.run)?;
    let m = run.read_manifest()?;
    let rubric: Rubric = if m.rubric.is_null() {
        return Err(CliError::input(format!(
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
    let people = annotators(&ws.labels_dir(), &key);
    let annotator = match (&args.annotator, people.as_slice()) {
        (Some(a), _) if people.contains(a) => a.clone(),
        (Some(a), _) => {
            return Err(CliError::input(format!(
                "no labels by '{a}' for dataset '{key}'; annotators: {}",
                if people.is_empty() {
                    "none".into()
                } else {
                    people.join(", ")
                }
            )));
        }
        (None, [one]) => one.clone(),
        (None, []) => {
            return Err(CliError::input(format!(
                "no human labels for dataset '{key}' yet; `rubricate labels set` or `labels import` adds some"
            )));
        }
        (None, many) => {
            return Err(CliError::input(format!(
                "dataset '{key}' has several annotators ({}); pick one with --annotator",
                many.join(", ")
            )));
        }
    };
    let read = |a: &str| -> Result<BTreeMap<(String, String), labels::Label>, CliError> {
        let (events, _) = labels::read(&labels::journal_path(&ws.labels_dir(), &key, a))?;
        Ok(fold(&events))
    };
    let human = read(&annotator)?;
    let (cells, _) = run.read_cells(&m)?;
    // The judge's verdict per (item id, criterion).
    let mut judged: BTreeMap<(String, String), Verdict> = BTreeMap::new();
    let mut judge_results: BTreeMap<String, Vec<CriterionResult>> = BTreeMap::new();
    let judges_agree = between_judges(cells.values().map(|c| &c.result));
    for cell in cells.into_values() {
        if let Some(v) = &cell.result.verdict {
            judged.insert(
                (cell.item_id.clone(), cell.result.criterion_id.clone()),
                v.clone(),
            );
        }
        judge_results
            .entry(cell.item_id)
            .or_default()
            .push(cell.result);
    }
    let human_verdicts = judge_vs_human::human_verdicts(
        &rubric,
        human.iter().map(|(cell, label)| (cell, &label.verdict)),
    );
    let bootstrap = (args.bootstrap > 0).then_some(Bootstrap {
        resamples: args.bootstrap,
        seed: args.seed,
        level: 0.95,
    });
    let report = judge_vs_human::agreement(&rubric, &human_verdicts, &judged, bootstrap.as_ref());
    // Item scores: the judge's against the human's, for items labelled on every criterion.
    let mut score_pairs = Vec::new();
    for (item, results) in &judge_results {
        let mut human_results = Vec::new();
        for c in &rubric.criteria {
            let Some(v) = human_verdicts.get(&(item.clone(), c.id.clone())) else {
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
        let h = build_evaluation(&rubric, &stub, human_results, "human");
        let j = build_evaluation(&rubric, &stub, results.clone(), "judge");
        if let (Some(hs), Some(js)) = (h.score, j.score) {
            score_pairs.push((js, hs));
        }
    }
    let item_scores = score_metrics(&score_pairs);
    // Agreement between annotators (each criterion's labels, all annotators).
    let between = if people.len() > 1 {
        let all: Vec<_> = people.iter().map(|a| read(a)).collect::<Result<_, _>>()?;
        Some(between_annotators(&rubric, &all))
    } else {
        None
    };
    match args.format {
        MetricsFormat::Json => {
            let doc = serde_json::json!({
                "run": m.id,
                "annotator": annotator,
                "report": report,
                "item_scores": item_scores,
                "between_annotators": between,
                "between_judges": judges_agree,
            });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        MetricsFormat::Table => {
            print!(
                "{}",
                table(&m, &annotator, &report, &item_scores, between.as_ref())
            );
            if let Some(j) = &judges_agree {
                println!("\nbetween judges (ensemble votes): {j}");
            }
        }
    }
    Ok(exit::OK)
}

/// An ensemble's votes on one criterion, as raters × items.
#[derive(Default)]
struct Votes {
    raters: BTreeMap<String, usize>,
    units: Vec<Vec<Option<f64>>>,
    codes: BTreeMap<String, f64>,
}

/// Krippendorff's α (nominal) and Fleiss' κ per criterion between the votes of an ensemble
/// (each judge and sample a rater); `None` when the run had no ensemble.
fn between_judges<'a>(
    results: impl Iterator<Item = &'a CriterionResult>,
) -> Option<serde_json::Value> {
    // Per criterion: each rater's column, one unit (row of votes) per item, category codes.
    let mut per: BTreeMap<String, Votes> = BTreeMap::new();
    for r in results {
        let Some(e) = &r.ensemble else { continue };
        let Votes {
            raters,
            units,
            codes,
        } = per.entry(r.criterion_id.clone()).or_default();
        let mut unit: Vec<Option<f64>> = Vec::new();
        for v in &e.votes {
            let rater = format!("{}#{}", v.judge, v.sample);
            let next = raters.len();
            let k = *raters.entry(rater).or_insert(next);
            if unit.len() <= k {
                unit.resize(k + 1, None);
            }
            if let Some(verdict) = &v.verdict {
                let next = codes.len() as f64;
                unit[k] = Some(*codes.entry(verdict.to_string()).or_insert(next));
            }
        }
        units.push(unit);
    }
    if per.is_empty() {
        return None;
    }
    let mut out = serde_json::Map::new();
    for (
        criterion,
        Votes {
            raters, mut units, ..
        },
    ) in per
    {
        for u in &mut units {
            u.resize(raters.len(), None);
        }
        out.insert(
            criterion,
            serde_json::json!({
                "raters": raters.len(),
                "krippendorff_alpha": krippendorff_alpha(&units, AlphaLevel::Nominal),
                "fleiss_kappa": fleiss_kappa(&units),
            }),
        );
    }
    Some(serde_json::Value::Object(out))
}

/// Krippendorff's α (nominal) and Fleiss' κ per criterion over every annotator's labels.
fn between_annotators(
    rubric: &Rubric,
    all: &[BTreeMap<(String, String), labels::Label>],
) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for c in &rubric.criteria {
        // Each label's category as a number: its position among the values seen.
        let mut codes: BTreeMap<String, f64> = BTreeMap::new();
        let mut units: BTreeMap<&String, Vec<Option<f64>>> = BTreeMap::new();
        for (k, labels) in all.iter().enumerate() {
            for ((item, crit), label) in labels {
                if crit != &c.id {
                    continue;
                }
                let text = label.verdict.to_string();
                let next = codes.len() as f64;
                let code = *codes.entry(text).or_insert(next);
                units.entry(item).or_insert_with(|| vec![None; all.len()])[k] = Some(code);
            }
        }
        let units: Vec<Vec<Option<f64>>> = units.into_values().collect();
        out.insert(
            c.id.clone(),
            serde_json::json!({
                "krippendorff_alpha": krippendorff_alpha(&units, AlphaLevel::Nominal),
                "fleiss_kappa": fleiss_kappa(&units),
            }),
        );
    }
    serde_json::Value::Object(out)
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "undef".into(), |v| format!("{v:.3}"))
}

fn table(
    m: &Manifest,
    annotator: &str,
    report: &MetricsReport,
    items: &ScoreMetrics,
    between: Option<&serde_json::Value>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {} ({}@{}) against {annotator}'s labels\n",
        m.id, m.rubric_id, m.rubric_version
    );
    let _ = writeln!(
        out,
        "{:<22} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>7} {:>9}",
        "CRITERION", "SUPPORT", "ACCURACY", "F1", "M-F1", "KAPPA", "PHI", "LENIENT", "ABSTAINED"
    );
    for c in &report.criteria {
        match &c.metrics {
            CriterionMetrics::Binary(b) => {
                let k = &b.metrics;
                let _ = writeln!(
                    out,
                    "{:<22} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>7} {:>9}",
                    c.criterion,
                    k.support,
                    num(k.accuracy),
                    num(k.f1),
                    num(k.macro_f1),
                    num(k.kappa),
                    num(k.phi),
                    k.leniency
                        .map_or_else(|| "undef".into(), |l| format!("{l:+.1}")),
                    b.abstained
                );
                if let Some(ci) = &b.ci
                    && let Some(kappa) = ci.kappa
                {
                    let _ = writeln!(
                        out,
                        "{:<22} κ 95% CI [{:.3}, {:.3}]",
                        "", kappa.low, kappa.high
                    );
                }
            }
            CriterionMetrics::Nominal(r) | CriterionMetrics::Ordinal(r) => {
                let _ = writeln!(
                    out,
                    "{:<22} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>7} {:>9}",
                    c.criterion,
                    r.metrics.support,
                    num(r.metrics.accuracy),
                    "-",
                    "-",
                    num(r.metrics.kappa),
                    "-",
                    "-",
                    r.abstained
                );
            }
            CriterionMetrics::Interval(s) => {
                let _ = writeln!(
                    out,
                    "{:<22} {:>7} rmse {} mae {} pearson {} bias {}",
                    c.criterion,
                    s.metrics.n,
                    num(s.metrics.rmse),
                    num(s.metrics.mae),
                    num(s.metrics.pearson),
                    num(s.metrics.bias)
                );
            }
        }
    }
    if let Some(p) = &report.pooled {
        let k = &p.metrics;
        let _ = writeln!(
            out,
            "{:<22} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>7} {:>9}",
            "(pooled binary)",
            k.support,
            num(k.accuracy),
            num(k.f1),
            num(k.macro_f1),
            num(k.kappa),
            num(k.phi),
            k.leniency
                .map_or_else(|| "undef".into(), |l| format!("{l:+.1}")),
            p.abstained
        );
        let c = &p.confusion;
        let _ = writeln!(
            out,
            "\nconfusion (rows human, columns judge): MET→MET {} MET→UNMET {} UNMET→MET {} UNMET→UNMET {}",
            c.tp, c.fn_, c.fp, c.tn
        );
    }
    let _ = writeln!(
        out,
        "\nitem scores ({} items labelled on every criterion): RMSE {} MAE {} Pearson {} Spearman {} Kendall τ-b {} bias {} (p {}, Cohen's d {})",
        items.n,
        num(items.rmse),
        num(items.mae),
        num(items.pearson),
        num(items.spearman),
        num(items.kendall_tau_b),
        num(items.bias),
        num(items.bias_p_value),
        num(items.cohen_d)
    );
    if let Some(b) = between {
        let _ = writeln!(out, "\nbetween annotators: {b}");
    }
    out
}
