//! `rubricate runs show RUN`: a saved run written from its journal as `grade` would have
//! written it — table, JSON, JSONL, CSV, `JUnit` or Markdown, through grade's own [`Sink`] —
//! or as the HTML page `rubricate report` writes. The journal is read one item at a time, so
//! memory does not grow with the run.

use std::io::Write as _;
use std::path::Path;

use super::super::output::{Sink, summary_line};
use super::super::{CliError, OutputFormat, exit, style};
use crate::core::text::cell;
use crate::engine::checks::plural;
use crate::run::Recording;
use crate::run::report::{Embed, write_html};
use crate::store::Workspace;
use crate::store::runs::{Manifest, RunState};

/// `grade`'s formats that fit a saved run (mapped onto them by [`ShowFormat::as_grade`]),
/// and the HTML page; a list of its own, since `grade` has formats only a live run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ShowFormat {
    /// `grade`'s table, after lines naming the run (and its batches).
    Table,
    /// One document: the items and the summary.
    Json,
    /// One item a line.
    Jsonl,
    /// One row an item, a verdict and a value column per criterion.
    Csv,
    /// One test case an item.
    Junit,
    /// Markdown: the figures and the worst items (as `grade --format md`).
    Md,
    /// The self-contained page `rubricate report` writes.
    Html,
}

impl ShowFormat {
    /// `grade`'s format of the same name; `None` for the HTML page.
    fn as_grade(self) -> Option<OutputFormat> {
        Some(match self {
            Self::Table => OutputFormat::Table,
            Self::Json => OutputFormat::Json,
            Self::Jsonl => OutputFormat::Jsonl,
            Self::Csv => OutputFormat::Csv,
            Self::Junit => OutputFormat::Junit,
            Self::Md => OutputFormat::Md,
            Self::Html => return None,
        })
    }
}

/// Writes run `id` in `format` to `out` (a file, replaced atomically once whole) or stdout.
/// Exits 0 once written, whatever the run's results: gating is `grade`'s and `runs
/// compare`'s job.
pub(crate) fn show(
    ws: &Workspace,
    id: &str,
    format: ShowFormat,
    out: Option<&Path>,
) -> Result<u8, CliError> {
    let run = Recording::open(&ws.runs_dir(), id)?;
    // `-o -` is stdout, as for `grade`.
    let out = out.filter(|p| p.as_os_str() != "-");
    let Some(grade_format) = format.as_grade() else {
        return html(ws, &run, out);
    };
    // Opened first: a rubric, settings or journal that cannot be read writes nothing.
    let mut all = run.evaluations()?;
    let rubric = run.rubric()?;
    let m = &run.manifest;
    // `grade` names its suite (JUnit, Markdown) after the rubric, else the dataset.
    let suite = crate::cli::output::suite_name(
        rubric.as_ref().map(|r| &*r.rubric),
        std::path::Path::new(&m.dataset.path),
    );
    let head = if format == ShowFormat::Table {
        table_head(m)
    } else {
        String::new()
    };
    let mut sink = Sink::open_after(
        &head,
        grade_format,
        out,
        rubric.as_ref().map(|r| &*r.rubric),
        &suite,
    )?;
    // On an error the sink is dropped unfinished: a file is left as it was.
    for next in &mut all {
        let (_, e) = next?;
        sink.write(&e)?;
    }
    let prints = sink.prints_summary();
    let summary = sink.finish(&crate::cli::gates::Findings::default())?;
    if !prints {
        let color = style::color_enabled(std::io::IsTerminal::is_terminal(&std::io::stderr()));
        eprintln!("{}", summary_line(&summary, color));
        if let Some(tags) = summary.tags_line(1000) {
            eprintln!("{}", crate::core::text::visible(&tags));
        }
    }
    let replay = all.finish();
    if replay.without_rubric > 0 {
        eprintln!(
            "warning: {} left out: their own rubric is no longer in the dataset {} (it changed since the run)",
            plural(replay.without_rubric, "item"),
            cell(&m.dataset.path)
        );
    }
    say_unfinished(m, Some(summary.pending));
    Ok(exit::OK)
}

/// An unfinished run, said on stderr: that items with cells still to come (`pending` of
/// them, when counted) are incomplete rather than failed, that items not started are not
/// listed, and how to finish it.
fn say_unfinished(m: &Manifest, pending: Option<usize>) {
    let state = m.state();
    if state.is_finished() {
        return;
    }
    let waiting = match pending {
        Some(1) => "1 item with cells still to come is".to_owned(),
        Some(n) => format!("{n} items with cells still to come are"),
        None => "items with cells still to come are".to_owned(),
    };
    eprintln!(
        "run {id} is {state}: {waiting} incomplete, not failed, and items with no cell yet are not listed; `rubricate runs resume {id}` grades what is missing",
        id = cell(&m.id),
    );
}

/// The page `rubricate report` writes, with its defaults (agreement with the dataset's
/// labels when it has some; the worst 1,000 items and a sample of 1,000 held whole).
fn html(ws: &Workspace, run: &Recording, out: Option<&Path>) -> Result<u8, CliError> {
    let agreement = super::super::report::page_agreement(ws, run, None)?;
    if let Some(path) = out {
        let named =
            |e: std::io::Error| CliError::input(format!("{}: cannot write: {e}", path.display()));
        // Whole or not at all: a page cut short never replaces a good one.
        let mut file = crate::store::AtomicFile::create(path).map_err(named)?;
        let written = write_html(
            run,
            agreement.as_ref(),
            Embed::default(),
            &crate::run::report::Extras::default(),
            &mut file,
        )?;
        file.commit().map_err(named)?;
        eprintln!(
            "wrote {} ({} items; {} held whole)",
            path.display(),
            written.items,
            written.embedded
        );
    } else {
        let mut page = std::io::BufWriter::new(super::super::out::Stdout);
        write_html(
            run,
            agreement.as_ref(),
            Embed::default(),
            &crate::run::report::Extras::default(),
            &mut page,
        )?;
        // A failed write is the output sink's to report when the command ends.
        let _ = page.flush();
    }
    say_unfinished(&run.manifest, None);
    Ok(exit::OK)
}

/// The lines naming the run above its table: id, name, rubric, dataset, when, its state,
/// and its batches with where each stands.
fn table_head(m: &Manifest) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let name = m
        .name
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let head = format!(
        "run {}{name} · {} · {}",
        m.id,
        m.rubric_label(),
        m.dataset.path
    );
    let _ = writeln!(out, "{}", cell(&head));
    let _ = writeln!(
        out,
        "started {} · {}",
        m.started_at,
        match (m.state(), m.finished_at.as_deref()) {
            (RunState::Finished, Some(f)) => format!("finished {f}"),
            (state, _) => format!("{state}: items still waiting for cells are INCOMPLETE"),
        }
    );
    for b in &m.batches {
        let _ = writeln!(
            out,
            "batch {} · {} · {} requests · {} · {} answered, {} failed{}",
            b.name,
            cell(&b.model),
            b.requests,
            cell(&batch_stage(b)),
            b.answered,
            b.failed,
            b.batch_id
                .as_deref()
                .map(|id| format!(" · {}", cell(id)))
                .unwrap_or_default()
        );
        for o in &b.others {
            let _ = writeln!(
                out,
                "  also at the provider: {}{} (the same requests, from a create cut short) · {}",
                cell(&o.batch_id),
                o.created_at
                    .as_deref()
                    .map(|t| format!(" made {t}"))
                    .unwrap_or_default(),
                cell(&o.fate)
            );
        }
    }
    out
}

/// Where a batch stands, in words: the stage, and the provider's last word on it.
fn batch_stage(b: &crate::store::runs::BatchRecord) -> String {
    use crate::store::runs::BatchStage;
    let stage = match b.stage {
        BatchStage::Prepared | BatchStage::Uploaded => "not sent yet",
        BatchStage::Creating => "being created",
        BatchStage::Submitted => "with the provider",
        BatchStage::Downloaded => "downloaded",
    };
    match (b.stage, b.status.as_deref()) {
        (BatchStage::Submitted, Some(s)) => format!("{stage} ({s})"),
        // How it ended, when that was not by answering everything.
        (BatchStage::Downloaded, Some(s @ ("expired" | "cancelled" | "canceling" | "failed"))) => {
            format!("{s}, {stage}")
        }
        _ => stage.to_owned(),
    }
}
