//! `rubricate rubrics`: the workspace's rubric registry — every saved version of every
//! rubric, with its history and diffs between versions.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;
use unicode_width::UnicodeWidthStr;

use super::{CliError, LintFormat, exit, style};
use crate::formats::load_rubric_as;
use crate::formats::native::rubric_to_json;
use crate::store::registry::{EventKind, Registry, RegistryError};

#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum RubricsAction {
    /// The current version of every registered rubric.
    List {
        /// Only rubrics whose `target_type` is this.
        #[arg(long, value_name = "TYPE")]
        target_type: Option<String>,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
    /// Print a saved version's snapshot (native YAML): the current one, or ID@VERSION.
    Show {
        /// ID or ID@VERSION.
        spec: String,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
    /// A rubric's registered / updated / deleted events, oldest first.
    History {
        id: String,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
    /// A unified diff from version A's snapshot to version B's.
    Diff { id: String, a: String, b: String },
    /// Remove a rubric's current version pointer; every saved version stays (ID@VERSION).
    Delete {
        id: String,
        /// Why, recorded in the history.
        #[arg(long)]
        note: Option<String>,
    },
    /// Register a rubric file (any supported format, or a built-in name), or save it as a
    /// new version when its id is registered (its `version` must be higher).
    Add {
        file: String,
        /// What changed, recorded in the history (default: the file it came from).
        #[arg(long)]
        note: Option<String>,
    },
}

pub(crate) fn run(action: &RubricsAction, root: &Path) -> Result<u8, CliError> {
    let reg = Registry::new(root);
    match action {
        RubricsAction::List {
            target_type,
            format,
        } => list(&reg, target_type.as_deref(), *format),
        RubricsAction::Show { spec, format } => show(&reg, spec, *format),
        RubricsAction::History { id, format } => history(&reg, id, *format),
        RubricsAction::Diff { id, a, b } => diff(&reg, id, a, b),
        RubricsAction::Delete { id, note } => {
            let e = reg.delete(id, note.as_deref().unwrap_or(""))?;
            let kept = reg.versions(id)?.len();
            emit(&format!(
                "deleted {id} (current version was {v}); its {kept} saved version{s} stay readable, e.g. `rubricate rubrics show {id}@{v}`\n",
                v = e.version,
                s = if kept == 1 { "" } else { "s" }
            ))
        }
        RubricsAction::Add { file, note } => add(&reg, file, note.as_deref()),
    }
}

impl From<RegistryError> for CliError {
    fn from(e: RegistryError) -> Self {
        crate::run::Error::from(e).into()
    }
}

fn add(reg: &Registry, file: &str, note: Option<&str>) -> Result<u8, CliError> {
    let loaded = load_rubric_as(file, None)?;
    let rubric = &loaded.rubric;
    let before = reg.latest(&rubric.id).ok().map(|s| s.meta.version);
    let note = note.map_or_else(|| format!("from {file}"), str::to_owned);
    let e = reg.save(rubric, &note)?;
    emit(&match (e.event, before) {
        (EventKind::Updated, Some(prev)) => format!(
            "updated {} {prev} → {} (sha256 {})\n",
            e.id,
            e.version,
            short(&e.hash)
        ),
        _ => format!(
            "registered {} {} (sha256 {})\n",
            e.id,
            e.version,
            short(&e.hash)
        ),
    })
}

fn list(reg: &Registry, target_type: Option<&str>, format: LintFormat) -> Result<u8, CliError> {
    let entries = match target_type {
        Some(t) => reg.list_by_target_type(t),
        None => reg.list_latest(),
    }?;
    if format == LintFormat::Json {
        return emit_json(&entries);
    }
    if entries.is_empty() {
        let which = target_type.map_or_else(String::new, |t| format!(" with target type '{t}'"));
        eprintln!(
            "no rubrics{which} in the registry at {}; add one with `rubricate rubrics add FILE`",
            reg.dir().display()
        );
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                e.id.clone(),
                e.name.clone(),
                e.version.clone(),
                if e.target_type.is_empty() {
                    "-".into()
                } else {
                    e.target_type.clone()
                },
                when(e.saved),
            ]
        })
        .collect();
    emit(&table(&["ID", "NAME", "VERSION", "TARGET", "SAVED"], &rows))
}

/// `ID@VERSION` → (ID, Some(VERSION)) when what follows the last `@` starts like a version.
fn split_spec(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once('@') {
        Some((id, v)) if !id.is_empty() && v.starts_with(|c: char| c.is_ascii_digit()) => {
            (id, Some(v))
        }
        _ => (spec, None),
    }
}

fn show(reg: &Registry, spec: &str, format: LintFormat) -> Result<u8, CliError> {
    let (id, version) = split_spec(spec);
    let s = reg.get(id, version)?;
    match format {
        LintFormat::Text => emit(&crate::core::text::visible(&s.text)),
        LintFormat::Json => emit_json(&json!({
                "id": s.meta.id,
                "version": s.meta.version,
                "current": s.meta.current,
                "hash": s.meta.hash,
                "saved": s.meta.saved,
                "note": s.meta.note,
                "path": s.path,
            "rubric": rubric_to_json(&s.rubric),
        })),
    }
}

fn history(reg: &Registry, id: &str, format: LintFormat) -> Result<u8, CliError> {
    let events = reg.history(id)?;
    if format == LintFormat::Json {
        return emit_json(&events);
    }
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|e| {
            vec![
                when(e.time),
                e.event.name().to_owned(),
                e.version.clone(),
                short(&e.hash).to_owned(),
                e.note.clone(),
            ]
        })
        .collect();
    emit(&table(
        &["TIME", "EVENT", "VERSION", "SHA256", "NOTE"],
        &rows,
    ))
}

fn diff(reg: &Registry, id: &str, a: &str, b: &str) -> Result<u8, CliError> {
    let text = reg.diff(id, a, b)?;
    if text.is_empty() {
        eprintln!("{id}@{a} and {id}@{b} have the same snapshot");
        return Ok(exit::OK);
    }
    let color = style::color_enabled(style::stdout_is_terminal());
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = &*crate::core::text::cell(line);
        let painted = if line.starts_with("---") || line.starts_with("+++") {
            style::bold(line, color)
        } else if line.starts_with("@@") {
            style::yellow(line, color)
        } else if line.starts_with('+') {
            style::green(line, color)
        } else if line.starts_with('-') {
            style::red(line, color)
        } else {
            line.to_owned()
        };
        out.push_str(&painted);
        out.push('\n');
    }
    emit(&out)
}

/// Writes to stdout (through the sink, which reports a failure when the command ends).
#[expect(
    clippy::unnecessary_wraps,
    reason = "a command's last expression, beside `emit_json`, which can fail"
)]
fn emit(text: &str) -> Result<u8, CliError> {
    out!("{text}");
    Ok(exit::OK)
}

fn emit_json(value: &impl serde::Serialize) -> Result<u8, CliError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::input(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    emit(&text)
}

fn when(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%SZ").to_string()
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Columns padded to their widest cell (by display width), two spaces apart; the last
/// column is not padded.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Cells come from files: their control characters are shown, never sent.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                // A cell is cut at 120 characters: a table stays a table.
                .map(|c| crate::core::text::clipped(c, 120))
                .collect()
        })
        .collect();
    let rows = rows.as_slice();
    let mut widths: Vec<usize> = header.iter().map(|h| h.width()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|&h| h.to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i + 1 < row.len() {
                let _ = write!(line, "{cell}{:pad$}  ", "", pad = w - cell.width());
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_at_the_last_at_before_a_version() {
        assert_eq!(split_spec("answer"), ("answer", None));
        assert_eq!(split_spec("answer@1.2.0"), ("answer", Some("1.2.0")));
        assert_eq!(
            split_spec("team@x@2.0.0-rc.1"),
            ("team@x", Some("2.0.0-rc.1"))
        );
        assert_eq!(split_spec("team@x"), ("team@x", None));
    }

    #[test]
    fn tables_align_by_display_width() {
        let rows = vec![
            vec!["a".to_owned(), "Ünïcode".to_owned(), "x".to_owned()],
            vec!["long-id".to_owned(), "b".to_owned(), "y".to_owned()],
        ];
        assert_eq!(
            table(&["ID", "NAME", "V"], &rows),
            "ID       NAME     V\na        Ünïcode  x\nlong-id  b        y\n"
        );
    }
}
