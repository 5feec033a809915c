//! `rubricate datasets`: datasets registered in the workspace (read in place, hashed), with
//! a line index for JSONL and CSV so any window of items is read without loading the file.

use crate::core::text::{cell, visible};
use std::path::{Path, PathBuf};

use super::{CliError, exit};
use crate::formats::dataset::index::LineIndex;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::store::datasets::{Datasets, indexable};
use crate::store::runs::file_hash;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum DatasetsAction {
    /// Registers a dataset file (or refreshes its hash, count and index).
    Add {
        file: PathBuf,
        /// Its name in the workspace (default: the file name without extension).
        #[arg(long)]
        name: Option<String>,
    },
    /// Every registered dataset: name, items, size, path, and whether it changed since.
    List,
    /// Items `--start`.. of a dataset, one line each (id and a submission preview).
    Show {
        name: String,
        #[arg(long, default_value_t = 0)]
        start: usize,
        #[arg(long, default_value_t = 20)]
        count: usize,
    },
}

pub(crate) fn run(action: &DatasetsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    let datasets = Datasets::new(&ws.root);
    match action {
        DatasetsAction::Add { file, name } => {
            let name = name
                .clone()
                .unwrap_or_else(|| crate::store::labels::dataset_key(file));
            let entry = datasets.register(&name, file)?;
            outln!(
                "{}: {} items ({})",
                cell(&entry.name),
                entry.items.unwrap_or(0),
                cell(&entry.path)
            );
            Ok(exit::OK)
        }
        DatasetsAction::List => {
            let all = datasets.list()?;
            // Files in datasets/ are found by name too (as the UI lists them): listed after.
            let unregistered: Vec<PathBuf> = datasets
                .in_folder()
                .into_iter()
                .filter(|p| !all.iter().any(|d| datasets.resolve(d) == *p))
                .collect();
            if all.is_empty() && unregistered.is_empty() {
                outln!("no datasets registered; `rubricate datasets add FILE` adds one");
            }
            for d in &all {
                let file = datasets.resolve(d);
                let state = match file_hash(&file) {
                    Ok(h) if h == d.hash => "",
                    Ok(_) => "  (changed since added)",
                    Err(_) => "  (missing)",
                };
                outln!(
                    "{:<24} {:>9} items {:>10} bytes  {}{state}",
                    cell(&d.name),
                    d.items.map_or_else(|| "?".into(), |n| n.to_string()),
                    d.bytes,
                    cell(&d.path)
                );
            }
            for file in unregistered {
                let shown = file.strip_prefix(&ws.root).unwrap_or(&file);
                outln!(
                    "{:<24} {:>9} items {:>10} bytes  {}  (in datasets/; `datasets add` counts and indexes it)",
                    cell(&crate::store::labels::dataset_key(&file)),
                    "?",
                    std::fs::metadata(&file).map_or(0, |m| m.len()),
                    cell(&shown.display().to_string())
                );
            }
            Ok(exit::OK)
        }
        DatasetsAction::Show { name, start, count } => {
            let entry = datasets.get(name)?;
            let file = datasets.resolve(&entry);
            let shown = file.display().to_string();
            let items = if indexable(&file) {
                let ix = LineIndex::open_or_build(&datasets.index_path(name), &file)
                    .map_err(|e| CliError::input(format!("{shown}: {e}")))?;
                ix.window(&file, &shown, *start, *count)
                    .map_err(|e| CliError::input(format!("{shown}: {e}")))?
            } else {
                open_dataset(&file, ReadOptions::default())?
                    .items
                    .skip(*start)
                    .take(*count)
                    .collect()
            };
            for item in items {
                match item {
                    Ok(i) => outln!("{:<16} {}", cell(&i.id), cell(&preview(&i.submission, 100))),
                    Err(d) => outln!("{}", visible(&d.to_string())),
                }
            }
            Ok(exit::OK)
        }
    }
}

/// The first `n` characters on one line.
fn preview(text: &str, n: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > n {
        format!("{}…", one.chars().take(n).collect::<String>())
    } else {
        one
    }
}
