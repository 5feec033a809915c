//! `rubricate convert`: any supported file → any format, saying on stderr what the target
//! cannot hold (and refusing with `--strict`).

use std::io::Write as _;
use std::path::Path;

use super::{CliError, exit};
use crate::core::atomic::AtomicFile;
use crate::formats::dataset::DatasetHeader;
use crate::formats::dataset::write::{RubricStyle, dataset_json};
use crate::formats::export::{Exported, Syntax, export_rubric};
use crate::formats::import::split_pick;
use crate::formats::{
    Format, Imported, agentv, dataknobs, import_file, is_bare_name, load_rubric_as,
};

pub(crate) struct ConvertArgs<'a> {
    pub(crate) input: &'a str,
    pub(crate) to: Format,
    pub(crate) from: Option<Format>,
    pub(crate) out: Option<&'a Path>,
    pub(crate) strict: bool,
}

pub(crate) fn run(a: &ConvertArgs<'_>) -> Result<u8, CliError> {
    let (path, pick) = split_pick(a.input);
    let syntax = match a.out {
        Some(p) => Syntax::for_path(p),
        None if Path::new(path)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json")) =>
        {
            Syntax::Json
        }
        None => Syntax::Yaml,
    };
    let exported = if is_bare_name(a.input) || pick.is_some() {
        let r = load_rubric_as(a.input, a.from)?;
        export_rubric(&r.rubric, a.to, syntax)
            .map_err(|m| CliError::input(format!("{}: {m}", a.input)))?
    } else {
        convert_file(&import_file(Path::new(path), a.from)?, a.to, syntax)?
    };
    for l in &exported.lost {
        eprintln!("note: {} cannot hold {l}", a.to);
    }
    if a.strict && !exported.lost.is_empty() {
        return Err(CliError::input(format!(
            "{} would lose {} things (listed above); nothing written (drop --strict to write anyway)",
            a.to,
            exported.lost.len()
        )));
    }
    write_out(a.out, &exported.text)?;
    Ok(exit::OK)
}

fn convert_file(i: &Imported, to: Format, syntax: Syntax) -> Result<Exported, CliError> {
    for n in &i.notes {
        eprintln!("note: {n}");
    }
    if !i.expectations.is_empty() {
        // rubricate reads agentv's grader-score lists as they are, so both write the same.
        let list: Vec<serde_json::Value> = i
            .expectations
            .iter()
            .map(|e| {
                let mut range = serde_json::Map::new();
                if let Some(x) = e.min {
                    range.insert("min".into(), x.into());
                }
                if let Some(x) = e.max {
                    range.insert("max".into(), x.into());
                }
                serde_json::json!({"test_id": e.item, "grader": e.grader, "range": range})
            })
            .collect();
        if !matches!(to, Format::Native | Format::Agentv) {
            return Err(CliError::input(format!(
                "{}: expected grader scores can be written as native or agentv, not {to}",
                i.file
            )));
        }
        return Ok(Exported {
            text: syntax
                .render(&serde_json::Value::Array(list))
                .map_err(|e| CliError::input(format!("{}: {e}", i.file)))?,
            lost: Vec::new(),
            syntax,
        });
    }
    if !i.items.is_empty() {
        return dataset(i, to, syntax);
    }
    match (i.rubrics.len(), to) {
        (0, _) => Err(CliError::input(format!(
            "{}: the file holds no rubric to convert",
            i.file
        ))),
        (1, _) => export_rubric(&i.rubrics[0].rubric, to, syntax)
            .map_err(|m| CliError::input(format!("{}: {m}", i.file))),
        (_, Format::Dataknobs) => {
            let rubrics: Vec<_> = i.rubrics.iter().map(|r| (*r.rubric).clone()).collect();
            let (value, lost) = dataknobs::write(&rubrics);
            Ok(Exported {
                text: syntax
                    .render(&value)
                    .map_err(|e| CliError::input(format!("{}: {e}", i.file)))?,
                lost,
                syntax,
            })
        }
        (n, _) => Err(CliError::input(format!(
            "{}: the file holds {n} rubrics ({}); {to} holds one per file: convert one with {}#ID",
            i.file,
            i.rubrics
                .iter()
                .map(|r| r.rubric.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            i.file
        ))),
    }
}

/// Items with their rubrics: agentv eval files and autorubric-shaped JSON datasets hold
/// them; other formats get the shared rubric alone, and say so.
fn dataset(i: &Imported, to: Format, syntax: Syntax) -> Result<Exported, CliError> {
    // The rubric most items share is the dataset's; the others stay on their items.
    let shared = i
        .rubrics
        .first()
        .filter(|r| {
            i.items
                .iter()
                .all(|x| x.rubric.as_ref().is_none_or(|own| extends(own, &r.rubric)))
        })
        .map(|r| (*r.rubric).clone())
        .or_else(|| {
            let first = i.items.first().and_then(|x| x.rubric.clone())?;
            i.items
                .iter()
                .all(|x| x.rubric.as_ref().is_some_and(|r| **r == *first))
                .then(|| (*first).clone())
        });
    match to {
        Format::Native | Format::Autorubric => {
            let header = DatasetHeader {
                rubric: shared.map(|r| crate::formats::LoadedRubric::detached(r, &i.file)),
                ..DatasetHeader::default()
            };
            let style = if to == Format::Native {
                RubricStyle::Native
            } else {
                RubricStyle::Autorubric
            };
            let mut lost = Vec::new();
            if to == Format::Autorubric
                && let Some(r) = &header.rubric
            {
                lost = crate::formats::autorubric::write(&r.rubric).1;
            }
            Ok(Exported {
                text: syntax
                    .render(&dataset_json(&header, &i.items, style))
                    .map_err(|e| CliError::input(format!("{}: {e}", i.file)))?,
                lost,
                syntax,
            })
        }
        Format::Agentv => {
            // With no shared rubric, each case carries its whole rubric.
            let r = shared.unwrap_or_else(|| crate::model::Rubric::new("cases", Vec::new()));
            let (value, lost) = agentv::write(&r, &i.items);
            Ok(Exported {
                text: Syntax::Yaml
                    .render(&value)
                    .map_err(|e| CliError::input(format!("{}: {e}", i.file)))?,
                lost,
                syntax: Syntax::Yaml,
            })
        }
        _ => {
            let Some(r) = &shared else {
                return Err(CliError::input(format!(
                    "{}: its {} items have different rubrics and {to} files hold one rubric; convert one with {}#ID",
                    i.file,
                    i.items.len(),
                    i.file
                )));
            };
            let mut e = export_rubric(r, to, syntax)
                .map_err(|m| CliError::input(format!("{}: {m}", i.file)))?;
            e.lost.push(format!(
                "the {} items ({to} files hold a rubric, not a dataset)",
                i.items.len()
            ));
            Ok(e)
        }
    }
}

/// Whether `own` is `shared` with criteria added after it (an agentv case's rubric).
fn extends(own: &crate::model::Rubric, shared: &crate::model::Rubric) -> bool {
    let n = shared.criteria.len();
    own.criteria.len() >= n && own.criteria[..n] == shared.criteria[..]
}

fn write_out(out: Option<&Path>, text: &str) -> Result<(), CliError> {
    if let Some(p) = out {
        AtomicFile::write_whole(p, text.as_bytes())
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", p.display())))
    } else {
        // A failure is the sink's to report when the command ends (a closed pipe quietly).
        let _ = super::out::Stdout.write_all(text.as_bytes());
        Ok(())
    }
}
