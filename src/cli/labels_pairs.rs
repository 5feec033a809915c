//! `labels set` / `labels import` against a pairwise rubric: a person's preference per
//! written criterion, naming the better candidate by its id (or `tie`). The ids are the
//! item's own, so the dataset is read once to know each item's candidates.

use std::collections::HashMap;
use std::path::Path;

use super::CliError;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::metrics::preference::parse_preference;
use crate::model::Rubric;

/// Each pair item's candidates' ids, read from the dataset when first needed.
#[derive(Default)]
pub(crate) struct PairCandidates {
    read: Option<HashMap<String, Vec<String>>>,
}

impl PairCandidates {
    /// The preference `verdict` of `item` on `criterion` of a pairwise `rubric`, as a label
    /// stores it (the candidate's id as the item writes it, or `tie`).
    pub(crate) fn preference(
        &mut self,
        dataset: &Path,
        rubric: &Rubric,
        item: &str,
        criterion: &str,
        verdict: &str,
    ) -> Result<String, CliError> {
        if !rubric.criteria.iter().any(|c| c.id == criterion) {
            return Err(CliError::input(format!(
                "rubric '{}' has no criterion '{criterion}'; a preference is labelled per written criterion ({})",
                rubric.id,
                rubric
                    .criteria
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let items = match &mut self.read {
            Some(items) => items,
            empty => empty.insert(read_candidates(dataset)?),
        };
        let candidates = items.get(item).ok_or_else(|| {
            CliError::input(format!(
                "{}: no pair item '{item}' (rubric '{}' is pairwise: label items that carry candidates)",
                dataset.display(),
                rubric.id
            ))
        })?;
        parse_preference(candidates, verdict)
            .map_err(|e| CliError::input(format!("item '{item}', criterion '{criterion}': {e}")))
    }
}

fn read_candidates(dataset: &Path) -> Result<HashMap<String, Vec<String>>, CliError> {
    let opened = open_dataset(dataset, ReadOptions::default()).map_err(|d| {
        CliError::input(format!(
            "a pairwise rubric's labels name candidates, so the dataset is read to know them: {d}"
        ))
    })?;
    let mut out = HashMap::new();
    for item in opened.items {
        let item = item.map_err(|d| CliError::input(d.to_string()))?;
        if !item.candidates.is_empty() {
            out.insert(item.id, item.candidates.into_iter().map(|c| c.id).collect());
        }
    }
    Ok(out)
}
