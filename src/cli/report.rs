//! `rubricate report`: a saved run as one self-contained HTML page.

use std::path::Path;

use super::{CliError, exit, workspace};
use crate::run::agreement::{RunAgreement, run_agreement};
use crate::run::record::Recording;
use crate::run::report::{Embed, write_html};
use crate::store::Workspace;

pub(crate) fn run(
    id: &str,
    output: &Path,
    annotator: Option<&str>,
    embed: Embed,
    flag: Option<&Path>,
) -> Result<u8, CliError> {
    let ws = workspace(flag)?;
    let rec = Recording::open(&ws.runs_dir(), id)?;
    let agreement = page_agreement(&ws, &rec, annotator)?;
    let mut page = Vec::new();
    let written = write_html(&rec, agreement.as_ref(), embed, &mut page)?;
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
