//! `rubricate report`: a saved run as one self-contained HTML page — with a second run, that
//! run compared with the first (its baseline), as `runs compare A B` compares them; and the
//! dataset's runs ranked against the labels, as `calibrate` ranks them, when there are labels.

use std::path::Path;

use serde_json::{Value, json};

use super::{CliError, exit, workspace};
use crate::metrics::Bootstrap;
use crate::run::agreement::{RunAgreement, run_agreement};
use crate::run::calibration::{self, macro_f1, overall, overall_ci};
use crate::run::record::Recording;
use crate::run::report::{Embed, Extras, write_html};
use crate::store::Workspace;

/// Runs ranked on a page at most (the newest of the dataset's).
const RANKED: usize = 8;

pub(crate) fn run(
    id: &str,
    then: Option<&str>,
    output: &Path,
    annotator: Option<&str>,
    embed: Embed,
    flag: Option<&Path>,
) -> Result<u8, CliError> {
    let ws = workspace(flag)?;
    let first = Recording::open(&ws.runs_dir(), id)?;
    // `report A B` shows B, compared with A.
    let (rec, baseline) = match then {
        Some(b) => (Recording::open(&ws.runs_dir(), b)?, Some(first)),
        None => (first, None),
    };
    let agreement = page_agreement(&ws, &rec, annotator)?;
    let comparison = match &baseline {
        Some(a) => Some(super::runs::compare::comparison_json(
            a,
            &rec,
            embed.worst.max(20),
        )?),
        None => None,
    };
    let extras = Extras {
        comparison,
        calibration: agreement.as_ref().and_then(|a| ranked(&ws, &rec, a)),
    };
    let mut page = Vec::new();
    let written = write_html(&rec, agreement.as_ref(), embed, &extras, &mut page)?;
    // Whole or not at all: a page cut by a full disk never replaces a good one.
    crate::store::AtomicFile::write_whole(output, &page)
        .map_err(|e| CliError::from(crate::store::StoreError::io(output, e)))?;
    eprintln!(
        "wrote {} ({} items; {} held whole)",
        output.display(),
        written.items,
        written.embedded
    );
    Ok(exit::OK)
}

/// The dataset's newest runs ranked against the same labels, as `calibrate` ranks them —
/// when there are two or more; `None` otherwise (or when ranking fails: the page goes on
/// without it, saying why on stderr).
fn ranked(ws: &Workspace, rec: &Recording, a: &RunAgreement) -> Option<Value> {
    let runs: Vec<(String, String)> = calibration::dataset_runs(ws, &rec.dataset_path())
        .into_iter()
        .take(RANKED)
        .collect();
    if runs.len() < 2 {
        return None;
    }
    let key = crate::store::labels::dataset_key(Path::new(&rec.manifest.dataset.path));
    let bootstrap = Bootstrap::default();
    let cal = match calibration::rank(ws, &key, &a.annotator, runs, Some(&bootstrap)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no ranking of the dataset's runs on the page: {e}");
            return None;
        }
    };
    let candidates: Vec<Value> = cal
        .candidates
        .iter()
        .map(|c| {
            let r = &c.agreement.report;
            json!({
                "label": c.label,
                "run": c.agreement.manifest.id,
                "this": c.agreement.manifest.id == rec.manifest.id,
                "kappa": overall(r),
                "ci": overall_ci(r),
                "macro_f1": macro_f1(r),
                "leniency": r.pooled.as_ref().and_then(|p| p.metrics.leniency),
            })
        })
        .collect();
    Some(json!({
        "annotator": cal.annotator,
        "labelled": cal.labelled,
        "candidates": candidates,
        "note": cal.note,
    }))
}

/// The judge against the people for a run's page, when the dataset has labels (whose:
/// `annotator`, else the adjudicated ones, else its only annotator); `None` without. Also
/// `runs show --format html`'s.
pub(crate) fn page_agreement(
    ws: &Workspace,
    rec: &Recording,
    annotator: Option<&str>,
) -> Result<Option<RunAgreement>, CliError> {
    match run_agreement(
        &ws.runs_dir(),
        &ws.labels_dir(),
        &rec.manifest.id,
        annotator,
        None,
    ) {
        Ok(a) if a.report.criteria.iter().any(|c| c.pairs > 0) => Ok(Some(a)),
        Ok(_) => Ok(None),
        Err(e) => {
            if annotator.is_some() {
                return Err(e.into());
            }
            eprintln!("no agreement on the page: {e}");
            Ok(None)
        }
    }
}
