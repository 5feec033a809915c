//! Exporting a run from the Results pane: every item's result, in dataset order, as CSV or
//! JSONL (the shapes `rubricate grade` writes) or as a Markdown table, or the run as one
//! HTML page (`rubricate report`'s), into the workspace's
//! `exports/<run-id>.<ext>` (replaced atomically; the journal is read as a stream).

use std::io::Write as _;

use crate::formats::results::{
    csv_header, csv_row, item_json, markdown_header, markdown_row, write_csv_row,
};
use crate::run::Recording;
use crate::run::agreement::run_agreement;
use crate::run::report::{Embed, write_html};
use crate::store::{AtomicFile, Workspace};
use crate::tui::export::ExportFormat;

/// Writes the run — only the items at the (sorted) dataset positions `only` when given (the
/// Results pane's filtered list,
/// to `exports/<run-id>-filtered.<ext>`) — and says where (or why not).
pub(super) fn export(
    ws: &Workspace,
    run_id: &str,
    format: ExportFormat,
    only: Option<&[usize]>,
) -> Result<String, String> {
    let rec = Recording::open(&ws.runs_dir(), run_id).map_err(|e| e.to_string())?;
    if format == ExportFormat::Html {
        return page(ws, &rec);
    }
    let rubric = rec.rubric().map_err(|e| e.to_string())?;
    let columns = crate::formats::results::CsvColumns::of(rubric.as_ref().map(|r| &*r.rubric));
    let criteria = columns.criteria.clone();
    let dir = ws.path("exports");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let suffix = if only.is_some() { "-filtered" } else { "" };
    let path = dir.join(format!("{}{suffix}.{}", rec.id(), format.extension()));
    let mut written_items = 0usize;
    let mut out = AtomicFile::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut failed: Option<std::io::Error> = None;
    let header = match format {
        ExportFormat::Csv => write_csv_row(&mut out, &csv_header(&columns)),
        ExportFormat::Markdown => out.write_all(
            format!(
                "# Run {} · {}\n\n{}",
                rec.id(),
                rec.manifest.rubric_label(),
                markdown_header(&criteria)
            )
            .as_bytes(),
        ),
        ExportFormat::Jsonl | ExportFormat::Html => Ok(()),
    };
    if let Err(e) = header {
        return Err(format!("{}: {e}", path.display()));
    }
    let replay = rec
        .replay(|position, e| {
            if failed.is_some() || only.is_some_and(|ps| ps.binary_search(&position).is_err()) {
                return;
            }
            written_items += 1;
            let written = match format {
                ExportFormat::Csv => write_csv_row(&mut out, &csv_row(e, &columns)),
                ExportFormat::Markdown => out.write_all(markdown_row(e, &criteria).as_bytes()),
                ExportFormat::Jsonl | ExportFormat::Html => {
                    serde_json::to_writer(&mut out, &item_json(e))
                        .map_err(std::io::Error::other)
                        .and_then(|()| out.write_all(b"\n"))
                }
            };
            failed = written.err();
        })
        .map_err(|e| e.to_string())?;
    if let Some(e) = failed {
        return Err(format!("{}: {e}", path.display()));
    }
    out.commit()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!(
        "exported {written_items}{} items of run {} to {}",
        if only.is_some() {
            format!(" of {}", replay.summary.items)
        } else {
            String::new()
        },
        rec.id(),
        path.strip_prefix(&ws.root).unwrap_or(&path).display()
    ))
}

/// The run as one HTML page (`rubricate report`'s, with the judge against the labels when
/// the dataset has one annotator or adjudicated labels), to `exports/<run-id>.html`.
fn page(ws: &Workspace, rec: &Recording) -> Result<String, String> {
    let dir = ws.path("exports");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.html", rec.id()));
    let agreement = run_agreement(&ws.runs_dir(), &ws.labels_dir(), rec.id(), None, None)
        .ok()
        .filter(|a| a.report.criteria.iter().any(|c| c.pairs > 0));
    let mut bytes = Vec::new();
    let written = write_html(
        rec,
        agreement.as_ref(),
        Embed::default(),
        &crate::run::report::Extras::default(),
        &mut bytes,
    )
    .map_err(|e| e.to_string())?;
    AtomicFile::write_whole(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!(
        "exported run {} as a page ({} items, {} held whole) to {}",
        rec.id(),
        written.items,
        written.embedded,
        path.strip_prefix(&ws.root).unwrap_or(&path).display()
    ))
}
