//! `rubricate labels assign` (who labels which items, with an overlap between people) and
//! `rubricate labels agreement` (people against people, beside the judge against each).

use std::fmt::Write as _;
use std::path::Path;

use super::metrics::MetricsFormat;
use super::{CliError, exit};
use crate::core::text::clipped;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::metrics::MetricsReport;
use crate::run::people::{PeopleReport, people};
use crate::store::Workspace;
use crate::store::assignments::{self, Assignment};
use crate::store::labels::dataset_key;

/// Assigns the dataset's items among `annotators` with `overlap` of them to two people.
pub(crate) fn assign(
    ws: &Workspace,
    dataset: &Path,
    annotators: &[String],
    overlap: f64,
    seed: u64,
) -> Result<u8, CliError> {
    let key = dataset_key(dataset);
    let mut ids = Vec::new();
    for item in open_dataset(dataset, ReadOptions::default())?.items {
        ids.push(item.map_err(|d| CliError::input(d.to_string()))?.id);
    }
    if ids.is_empty() {
        return Err(CliError::input(format!(
            "{}: no items to assign",
            dataset.display()
        )));
    }
    let a = Assignment::new(&key, &ids, annotators, overlap, seed)?;
    let file = assignments::write(&ws.labels_dir(), &a)?;
    outln!(
        "{} items of '{key}' assigned ({} to two people), in {}:",
        ids.len(),
        a.shared.len(),
        file.display()
    );
    for p in &a.annotators {
        let mine = a.of(p).unwrap_or_default();
        let shared = a.shared.iter().filter(|i| mine.contains(*i)).count();
        outln!(
            "  {:<20} {:>6} items ({shared} shared)",
            clipped(p, 20),
            mine.len()
        );
    }
    outln!(
        "each labels their own: the Label pane's queues and `labels next` keep to them; `labels agreement` compares people on the shared ones"
    );
    Ok(exit::OK)
}

/// People against people, and the judge against each.
pub(crate) fn agreement(
    ws: &Workspace,
    dataset: &Path,
    resamples: usize,
    format: MetricsFormat,
) -> Result<u8, CliError> {
    let bootstrap = (resamples > 0).then(|| crate::metrics::Bootstrap {
        resamples,
        ..crate::metrics::Bootstrap::default()
    });
    let report =
        people(ws, dataset, bootstrap.as_ref()).map_err(|e| CliError::input(e.to_string()))?;
    match format {
        MetricsFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        MetricsFormat::Table => out!("{}", table(&report)),
    }
    Ok(exit::OK)
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "undef".into(), |v| format!("{v:.3}"))
}

/// A criterion's κ and pairs counted, with its interval when there is one.
fn kappa_cell(r: &MetricsReport, criterion: &str) -> (String, String, String) {
    let Some(c) = r.criteria.iter().find(|c| c.criterion == criterion) else {
        return ("-".into(), "0".into(), String::new());
    };
    let support = match &c.metrics {
        crate::metrics::CriterionMetrics::Binary(b) => b.metrics.support,
        crate::metrics::CriterionMetrics::Nominal(m)
        | crate::metrics::CriterionMetrics::Ordinal(m) => m.metrics.support,
        crate::metrics::CriterionMetrics::Interval(s) => s.metrics.n as u64,
    };
    let ci = match &c.metrics {
        crate::metrics::CriterionMetrics::Binary(b) => {
            b.ci.as_ref()
                .and_then(|ci| ci.kappa)
                .map(|k| (k.low, k.high))
        }
        _ => None,
    };
    (
        num(c.kappa()),
        support.to_string(),
        ci.map(|(l, h)| format!("[{l:.3}, {h:.3}]"))
            .unwrap_or_default(),
    )
}

fn table(r: &PeopleReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "people against people on '{}' ({})\nthe judge: run {} ({})\n",
        r.dataset,
        crate::engine::checks::plural(r.annotators.len(), "annotator"),
        r.run,
        r.rubric
    );
    let _ = writeln!(
        out,
        "{:<20} {:<26} {:>6} {:>7}  95% CI",
        "CRITERION", "WHO", "N", "AGREE"
    );
    for a in &r.alpha {
        let _ = writeln!(
            out,
            "{:<20} {:<26} {:>6} {:>7}",
            clipped(&a.criterion, 20),
            format!("α ({}, all people)", a.level),
            a.items,
            num(a.alpha)
        );
        for p in &r.pairs {
            let (k, n, ci) = kappa_cell(&p.report, &a.criterion);
            let _ = writeln!(
                out,
                "{:<20} {:<26} {:>6} {:>7}  {ci}",
                "",
                clipped(&format!("κ {} ~ {}", p.a, p.b), 26),
                n,
                k
            );
        }
        for j in &r.judge {
            let (k, n, ci) = kappa_cell(&j.report, &a.criterion);
            let _ = writeln!(
                out,
                "{:<20} {:<26} {:>6} {:>7}  {ci}",
                "",
                clipped(&format!("κ judge ~ {}", j.annotator), 26),
                n,
                k
            );
        }
    }
    if r.annotators.len() < 2 {
        let _ = writeln!(
            out,
            "\nonly one annotator: people can be compared once two label the same items (`rubricate labels assign --overlap 0.2`)"
        );
    }
    out
}
