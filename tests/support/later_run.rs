//! A later run of the demo's dataset, made from its saved run: the journal copied under a
//! new id with each line passed through `edit` (a changed verdict, a renamed item).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;

/// The demo's saved run.
pub const DEMO_RUN: &str = "20261122-141552-3353";

/// Writes run `new` in `runs` as a copy of [`DEMO_RUN`] with every journal line edited.
pub fn later_run(runs: &Path, new: &str, edit: impl Fn(&str) -> String) {
    std::fs::create_dir_all(runs.join(new)).unwrap();
    let manifest = std::fs::read_to_string(runs.join(DEMO_RUN).join("manifest.json"))
        .unwrap()
        .replace(DEMO_RUN, new);
    std::fs::write(runs.join(new).join("manifest.json"), manifest).unwrap();
    let journal: Vec<String> = std::fs::read_to_string(runs.join(DEMO_RUN).join("results.jsonl"))
        .unwrap()
        .replace(DEMO_RUN, new)
        .lines()
        .map(edit)
        .collect();
    std::fs::write(
        runs.join(new).join("results.jsonl"),
        journal.join("\n") + "\n",
    )
    .unwrap();
}

/// `line` with q01's verdict on the reset link (a required gate) turned to UNMET.
pub fn q01_loses_the_reset_link(line: &str) -> String {
    if line.contains("\"item_id\":\"q01\"") && line.contains("\"criterion_id\":\"reset-link\"") {
        line.replace("\"verdict\":\"MET\"", "\"verdict\":\"UNMET\"")
            .replace("\"value\":1.0", "\"value\":0.0")
    } else {
        line.to_owned()
    }
}
