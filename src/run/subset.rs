//! Subsets for quick runs: `grade --limit N` (the first N items), `--sample N --seed S` (a
//! seeded sample, stratified by ground truth as `split` does) and `--items ID,…`. The chosen
//! positions are recorded in the run's settings, so `runs resume` grades the same subset.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Error;
use crate::formats::dataset::split::{signature, split_indices};
use crate::formats::dataset::{ReadOptions, open_dataset};

/// Which items to grade, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The first N.
    Limit(usize),
    /// N at random (seeded), stratified by ground truth when items have it.
    Sample { n: usize, seed: u64 },
    /// These ids.
    Items(Vec<String>),
}

/// The items a run grades: how they were chosen, and their positions in the dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subset {
    /// How they were chosen, as people read it (`--sample 5 --seed 1`).
    pub how: String,
    /// Their positions (0-based), ascending.
    pub positions: Vec<usize>,
}

/// Reads the dataset's items and picks the subset `choice` asks for.
pub fn choose(dataset: &Path, options: ReadOptions, choice: &Choice) -> Result<Subset, Error> {
    if let Choice::Limit(0) | Choice::Sample { n: 0, .. } = choice {
        return Err(Error::input(
            "--limit and --sample take a number of items of 1 or more",
        ));
    }
    let ds = open_dataset(dataset, options)?;
    // The first N need only the first N read.
    let wanted = match choice {
        Choice::Limit(n) => *n,
        _ => usize::MAX,
    };
    let mut ids = Vec::new();
    let mut strata = Vec::new();
    for item in ds.items.take(wanted) {
        let item = item.map_err(|d| Error::input(d.to_string()))?;
        strata.push(signature(&item));
        ids.push(item.id);
    }
    let (how, positions) = match choice {
        Choice::Limit(n) => (format!("--limit {n}"), (0..ids.len().min(*n)).collect()),
        Choice::Sample { n, seed } => {
            let stratified = strata.iter().any(|s| !s.is_empty());
            let (chosen, _) = split_indices(&strata, *n, *seed, stratified).map_err(|e| {
                Error::input(format!(
                    "--sample {}: it is more than the {} items in {}",
                    e.wanted,
                    e.items,
                    dataset.display()
                ))
            })?;
            let by = if stratified {
                ", stratified by ground truth"
            } else {
                ""
            };
            (format!("--sample {n} --seed {seed}{by}"), chosen)
        }
        Choice::Items(wanted) => {
            let at: HashMap<&str, usize> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| (id.as_str(), i))
                .collect();
            let unknown: Vec<&str> = wanted
                .iter()
                .map(String::as_str)
                .filter(|id| !at.contains_key(id))
                .collect();
            if !unknown.is_empty() {
                return Err(Error::input(format!(
                    "--items: {} has no item {}; `rubricate datasets show` lists the ids",
                    dataset.display(),
                    unknown
                        .iter()
                        .map(|id| format!("'{id}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let mut positions: Vec<usize> = wanted
                .iter()
                .filter_map(|id| at.get(id.as_str()).copied())
                .collect();
            positions.sort_unstable();
            positions.dedup();
            (format!("--items ({} ids)", positions.len()), positions)
        }
    };
    Ok(Subset { how, positions })
}

/// The ids of `--items`: `ID,ID,…`, or `@FILE` with one id a line (blank lines skipped).
pub fn parse_items(arg: &str) -> Result<Vec<String>, Error> {
    let ids: Vec<String> = match arg.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|e| Error::input(format!("--items @{file}: {e}")))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        None => arg
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
    };
    if ids.is_empty() {
        return Err(Error::input(format!("--items {arg}: no item ids given")));
    }
    Ok(ids)
}
