//! `rubricate split`: a seeded train/test split, stratified by ground truth, written in
//! the dataset's own shape (JSON with its header, else JSONL).

use std::path::{Path, PathBuf};

use super::{CliError, exit};
use crate::core::atomic::AtomicFile;
use crate::formats::dataset::split::{signature, split_indices};
use crate::formats::dataset::write::{RubricStyle, dataset_json, jsonl};
use crate::formats::dataset::{DatasetFormat, ReadOptions, open_dataset};
use crate::model::Item;

pub(crate) fn run(
    dataset: &Path,
    train: usize,
    seed: u64,
    stratify: bool,
    out: &[PathBuf],
) -> Result<u8, CliError> {
    let [train_out, test_out] = out else {
        return Err(CliError::input(format!(
            "give two outputs: -o TRAIN -o TEST (got {})",
            out.len()
        )));
    };
    let ds = open_dataset(dataset, ReadOptions::default())?;
    let format = ds.format;
    let header = ds.header;
    let mut items = Vec::new();
    for item in ds.items {
        items.push(item.map_err(|d| CliError::input(d.to_string()))?);
    }
    let sigs: Vec<String> = items.iter().map(signature).collect();
    let (train_ix, test_ix) =
        split_indices(&sigs, train, seed, stratify).map_err(CliError::input)?;
    let pick = |ix: &[usize]| -> Vec<Item> { ix.iter().map(|&i| items[i].clone()).collect() };
    let (train_items, test_items) = (pick(&train_ix), pick(&test_ix));
    let shared = header.rubric.as_ref().map(|r| &*r.rubric);
    for (path, part) in [(train_out, &train_items), (test_out, &test_items)] {
        let json_out = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            || (format == DatasetFormat::Json
                && !path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("jsonl")));
        let text = if json_out {
            let mut s =
                serde_json::to_string_pretty(&dataset_json(&header, part, RubricStyle::Native))
                    .unwrap_or_default();
            s.push('\n');
            s
        } else {
            jsonl(part, shared)
        };
        write(path, &text)?;
    }
    let strata = {
        let mut s = sigs.clone();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    eprintln!(
        "split {} items: {} train → {}, {} test → {} (seed {seed}, {})",
        items.len(),
        train_items.len(),
        train_out.display(),
        test_items.len(),
        test_out.display(),
        if stratify {
            format!("stratified over {strata} ground-truth signatures")
        } else {
            "not stratified".into()
        }
    );
    Ok(exit::OK)
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    AtomicFile::write_whole(path, text.as_bytes())
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
}
