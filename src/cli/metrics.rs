//! `rubricate metrics --run ID`: the run's judge against the humans' labels of its dataset
//! (SCORING.md "Metrics"): per criterion and pooled, item scores, bootstrap intervals, and
//! agreement between annotators when there are several.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{CliError, exit};
use crate::metrics::pairwise::PairwiseReport;
use crate::metrics::{AlphaLevel, Bootstrap, CriterionMetrics, MetricsReport, ScoreMetrics};
use crate::run::agreement::{CorrectedFigures, EnsembleVotes, RunAgreement, run_agreement};
use crate::run::people::{CriterionAlpha, between_people, people_verdicts};
use crate::store::labels::{self, dataset_key};
use crate::store::runs::Manifest;

#[derive(Debug, clap::Args)]
pub(crate) struct MetricsArgs {
    /// The run whose verdicts are compared (an id or a unique prefix).
    #[arg(long)]
    pub(crate) run: String,
    /// Whose labels are the truth: an annotator, or `adjudicated` (default: the
    /// adjudicated labels when there are some, else the dataset's only annotator).
    #[arg(long, visible_alias = "reference")]
    pub(crate) annotator: Option<String>,
    /// Bootstrap resamples for 95 % intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    pub(crate) bootstrap: usize,
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    #[arg(long, value_enum, default_value_t = MetricsFormat::Table)]
    pub(crate) format: MetricsFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MetricsFormat {
    Table,
    Json,
}

pub(crate) fn run(args: &MetricsArgs, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    let bootstrap = (args.bootstrap > 0).then_some(Bootstrap {
        resamples: args.bootstrap,
        seed: args.seed,
        level: 0.95,
    });
    let RunAgreement {
        manifest: m,
        rubric,
        annotator,
        annotators: people,
        report,
        item_scores,
        corrected,
        calls,
        pairs,
    } = run_agreement(
        &ws.runs_dir(),
        &ws.labels_dir(),
        &args.run,
        args.annotator.as_deref(),
        bootstrap.as_ref(),
    )
    .map_err(|e| CliError::input(e.to_string()))?;
    let key = dataset_key(Path::new(&m.dataset.path));
    let judges_agree = between_judges(&calls.ensembles);
    // Agreement between annotators (each criterion's labels, all annotators; the
    // adjudicated labels are a settled reference, not a rater).
    let people: Vec<String> = people
        .into_iter()
        .filter(|a| a != labels::ADJUDICATED)
        .collect();
    let between = if people.len() > 1 {
        let verdicts = people_verdicts(&ws.labels_dir(), &key, &rubric, &people)
            .map_err(|e| CliError::input(e.to_string()))?;
        Some(between_people(&rubric, &verdicts))
    } else {
        None
    };
    match args.format {
        MetricsFormat::Json => {
            let doc = serde_json::json!({
                "run": m.id,
                "run_state": m.state().to_string(),
                "annotator": annotator,
                "report": report,
                "item_scores": item_scores,
                "corrected": corrected,
                "between_annotators": between.as_deref().map(between_annotators),
                "between_judges": judges_agree,
                "position_bias": pairs.as_ref().map(position_bias_json),
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        MetricsFormat::Table => {
            out!(
                "{}",
                table(&m, &annotator, &report, &item_scores, between.as_deref())
            );
            if let Some(p) = &pairs {
                out!("{}", position_bias_lines(p));
            }
            out!("{}", corrected_lines(&corrected));
            if let Some(j) = &judges_agree {
                outln!("\nbetween judges (ensemble votes): {j}");
            }
        }
    }
    Ok(exit::OK)
}

/// Krippendorff's α (nominal) and Fleiss' κ per criterion between the votes of an ensemble
/// (each judge and sample a rater); `None` when the run had no ensemble.
fn between_judges(ensembles: &BTreeMap<String, EnsembleVotes>) -> Option<serde_json::Value> {
    if ensembles.is_empty() {
        return None;
    }
    let mut out = serde_json::Map::new();
    for (criterion, votes) in ensembles {
        out.insert(
            criterion.clone(),
            serde_json::json!({
                "raters": votes.raters.len(),
                "krippendorff_alpha": votes.units.alpha(AlphaLevel::Nominal),
                "fleiss_kappa": votes.units.fleiss(),
            }),
        );
    }
    Some(serde_json::Value::Object(out))
}

/// Krippendorff's α and Fleiss' κ per criterion between the annotators: the units
/// `labels agreement` counts ([`between_people`]), so both print the same α and N.
fn between_annotators(alphas: &[CriterionAlpha]) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for a in alphas {
        out.insert(
            a.criterion.clone(),
            serde_json::json!({
                "level": a.level,
                "items": a.items,
                "krippendorff_alpha": a.alpha,
                "fleiss_kappa": a.fleiss_kappa,
            }),
        );
    }
    serde_json::Value::Object(out)
}

/// A pairwise run's judge, position by position: per criterion, how often both orders
/// agree and, where they disagree, how often the answer shown first was named.
fn position_bias_json(p: &PairwiseReport) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for c in &p.criteria {
        out.insert(
            c.criterion.clone(),
            serde_json::json!({
                "pairs": c.pairs,
                "position_consistency": c.position_consistency,
                "first_shown_wins": c.first_shown_wins,
            }),
        );
    }
    serde_json::Value::Object(out)
}

fn position_bias_lines(p: &PairwiseReport) -> String {
    let mut out = format!(
        "\nposition bias (the judge over all {} pairs of the run; people label preferences):\n{:<22} {:<22} {}\n",
        p.criteria.first().map_or(0, |c| c.pairs + c.unjudged),
        "CRITERION",
        "BOTH ORDERS AGREE",
        "WHERE NOT, FIRST SHOWN WON"
    );
    for c in &p.criteria {
        let _ = writeln!(
            out,
            "{:<22} {:<22} {}",
            c.criterion,
            c.position_consistency.percent(0),
            c.first_shown_wins.percent(0),
        );
    }
    if p.systems.len() > 2 {
        let _ = writeln!(
            out,
            "people's preferences are compared on runs of two candidates; this run compares {}",
            p.systems.len()
        );
    }
    out
}

/// The judge's figures over the whole run next to the ones corrected by the labelled items.
fn corrected_lines(c: &CorrectedFigures) -> String {
    let mut out = String::new();
    for (what, figure) in [("mean score", &c.score), ("pass rate", &c.pass_rate)] {
        let Some(f) = figure else { continue };
        if out.is_empty() {
            let _ = writeln!(
                out,
                "\nthe figure to quote (prediction-powered: the judge over {} items, corrected by the {} items people labelled):",
                f.items, f.labelled
            );
        }
        let _ = writeln!(
            out,
            "{what:<11} judge {:.3} · corrected {:.3} 95% CI [{:.3}, {:.3}] · judge bias {:+.3} · people alone {:.3} [{:.3}, {:.3}]",
            f.raw,
            f.corrected,
            f.ci.low,
            f.ci.high,
            f.bias,
            f.people_only,
            f.people_only_ci.low,
            f.people_only_ci.high
        );
    }
    out
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "undef".into(), |v| format!("{v:.3}"))
}

fn table(
    m: &Manifest,
    annotator: &str,
    report: &MetricsReport,
    items: &ScoreMetrics,
    between: Option<&[CriterionAlpha]>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {} ({}@{}) against {annotator}'s labels\n",
        m.id, m.rubric_id, m.rubric_version
    );
    let state = m.state();
    if !state.is_finished() {
        let _ = writeln!(
            out,
            "the run is {state}: cells still to come are not compared, and items waiting for one have no item score yet\n"
        );
    }
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
                if let Some(kappa) = r.ci.and_then(|ci| ci.kappa) {
                    let _ = writeln!(
                        out,
                        "{:<22} κ 95% CI [{:.3}, {:.3}]",
                        "", kappa.low, kappa.high
                    );
                }
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
    if let Some(between) = between {
        let _ = writeln!(
            out,
            "\nbetween annotators (the adjudicated labels not a rater):"
        );
        for a in between {
            let _ = writeln!(
                out,
                "{:<22} α ({}, all people) {} over {} items · Fleiss' κ {}",
                a.criterion,
                a.level,
                num(a.alpha),
                a.items,
                num(a.fleiss_kappa.kappa)
            );
        }
    }
    out
}
