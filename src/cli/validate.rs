//! `rubricate validate`: load and compile rubrics, read datasets through, and report every
//! problem located.

use std::path::Path;

use super::{CliError, exit, style};
use crate::engine::compile;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::formats::{Diagnostics, is_bare_name, load_rubric};

/// At most this many problems are listed per dataset.
const MAX_DATASET_PROBLEMS: usize = 50;

pub fn run(files: &[String]) -> Result<u8, CliError> {
    let color = style::color_enabled(style::stdout_is_terminal());
    let mut failed = 0;
    for spec in files {
        let outcome = if !is_bare_name(spec) && is_dataset(Path::new(spec)) {
            dataset(spec)
        } else {
            rubric(spec)
        };
        match outcome {
            Ok(what) => println!("{} {spec} ({what})", style::green("ok", color)),
            Err(d) => {
                failed += 1;
                eprintln!("{d}");
            }
        }
    }
    if failed > 0 {
        return Err(CliError {
            code: exit::INPUT,
            message: format!("{failed} of {} files are not valid", files.len()),
        });
    }
    Ok(exit::OK)
}

fn rubric(spec: &str) -> Result<String, Diagnostics> {
    let loaded = load_rubric(spec)?;
    compile(&loaded)?;
    let r = &loaded.rubric;
    Ok(format!(
        "rubric '{}' {}, {} criteria",
        r.id,
        r.version,
        r.criteria.len()
    ))
}

fn dataset(spec: &str) -> Result<String, Diagnostics> {
    let ds = open_dataset(Path::new(spec), ReadOptions::default())?;
    let mut problems = Vec::new();
    let mut count = 0usize;
    let header_rubric = ds
        .header
        .rubric
        .as_ref()
        .map(|r| std::sync::Arc::clone(&r.rubric));
    for item in ds.items {
        match item {
            Ok(item) => {
                count += 1;
                let rubric = item.rubric.clone().or_else(|| header_rubric.clone());
                if let (Some(gt), Some(r)) = (&item.ground_truth, rubric)
                    && let Err(m) = gt.resolve(&r)
                {
                    problems.push(crate::formats::Diagnostic::whole(
                        &item.origin,
                        format!("item '{}': {m}", item.id),
                    ));
                }
            }
            Err(d) => problems.push(d),
        }
        if problems.len() >= MAX_DATASET_PROBLEMS {
            break;
        }
    }
    if problems.is_empty() {
        Ok(format!("dataset, {count} items"))
    } else {
        Err(Diagnostics(problems))
    }
}

/// JSONL and CSV are datasets; a JSON file is one when it holds `items` or is a list.
fn is_dataset(path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "jsonl" | "ndjson" | "csv" => true,
        "json" => {
            #[derive(serde::Deserialize)]
            struct Probe {
                items: Option<serde::de::IgnoredAny>,
            }
            let Ok(f) = std::fs::File::open(path) else {
                return false;
            };
            let mut reader = std::io::BufReader::new(f);
            let mut first = [0u8; 1];
            loop {
                if std::io::Read::read(&mut reader, &mut first).unwrap_or(0) == 0 {
                    return false;
                }
                if !first[0].is_ascii_whitespace() {
                    break;
                }
            }
            if first[0] == b'[' {
                return true;
            }
            let Ok(f) = std::fs::File::open(path) else {
                return false;
            };
            serde_json::from_reader::<_, Probe>(std::io::BufReader::new(f))
                .is_ok_and(|p| p.items.is_some())
        }
        _ => false,
    }
}
