//! `rubricate report`: a saved run as one self-contained HTML page.

use std::path::Path;

use super::{CliError, exit, workspace};
use crate::run::record::Recording;
use crate::run::report::{Embed, write_html};

pub(crate) fn run(
    id: &str,
    output: &Path,
    embed: Embed,
    flag: Option<&Path>,
) -> Result<u8, CliError> {
    let ws = workspace(flag)?;
    let rec = Recording::open(&ws.runs_dir(), id)?;
    let mut page = Vec::new();
    let written = write_html(&rec, embed, &mut page)?;
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
