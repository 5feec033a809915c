//! Subsets for quick runs through the real binary: `grade --limit N`, `--sample N --seed
//! S` (reproducible, stratified by ground truth) and `--items ID,ID|@FILE`; their errors;
//! the saved run records the subset and `runs resume` grades the same one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::checked::{ok, rubricate, run_ids, text};

fn workspace() -> tempfile::TempDir {
    support::checked::workspace(&[("a", "yes"), ("b", "no"), ("c", "yes"), ("d", "no")])
}

fn grade(d: &Path, dataset: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "grade",
        "--rubric",
        "rubric.yaml",
        dataset,
        "--format",
        "jsonl",
    ];
    args.extend_from_slice(extra);
    rubricate(d, &args)
}

/// The ids of the items `grade --format jsonl` printed, in order.
fn graded(o: &Output) -> Vec<String> {
    ok(o)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["item"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn manifest(d: &Path, id: &str) -> Value {
    let text = std::fs::read_to_string(d.join("runs").join(id).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn limit_grades_the_first_n_items() {
    let dir = workspace();
    let d = dir.path();
    assert_eq!(
        graded(&grade(d, "items.jsonl", &["--limit", "2"])),
        ["a", "b"]
    );
    // More than there are: all of them.
    assert_eq!(graded(&grade(d, "items.jsonl", &["--limit", "9"])).len(), 4);
}

#[test]
fn items_by_list_and_by_file_in_dataset_order() {
    let dir = workspace();
    let d = dir.path();
    assert_eq!(
        graded(&grade(d, "items.jsonl", &["--items", "d,b"])),
        ["b", "d"]
    );
    std::fs::write(d.join("ids.txt"), "c\n\na\n").unwrap();
    assert_eq!(
        graded(&grade(d, "items.jsonl", &["--items", "@ids.txt"])),
        ["a", "c"]
    );
}

#[test]
fn a_sample_is_reproducible_and_stratified_by_ground_truth() {
    let dir = workspace();
    let d = dir.path();
    let mut lines = String::new();
    for i in 0..6 {
        writeln!(
            lines,
            "{{\"id\": \"m{i}\", \"submission\": \"yes\", \"ground_truth\": [\"MET\"]}}"
        )
        .unwrap();
    }
    for i in 0..12 {
        writeln!(
            lines,
            "{{\"id\": \"u{i}\", \"submission\": \"no\", \"ground_truth\": [\"UNMET\"]}}"
        )
        .unwrap();
    }
    std::fs::write(d.join("gt.jsonl"), lines).unwrap();
    let first = graded(&grade(d, "gt.jsonl", &["--sample", "6", "--seed", "7"]));
    let again = graded(&grade(d, "gt.jsonl", &["--sample", "6", "--seed", "7"]));
    assert_eq!(first, again, "the same seed picks the same items");
    assert_eq!(first.len(), 6);
    // A third of the items are MET: so is a third of the sample, whatever the seed.
    for seed in ["1", "2", "3"] {
        let picked = graded(&grade(d, "gt.jsonl", &["--sample", "6", "--seed", seed]));
        let met = picked.iter().filter(|id| id.starts_with('m')).count();
        assert_eq!(met, 2, "seed {seed}: {picked:?}");
    }
}

#[test]
fn bad_subsets_are_clear_errors() {
    let dir = workspace();
    let d = dir.path();
    let unknown = grade(d, "items.jsonl", &["--items", "a,zz,q"]);
    assert_eq!(unknown.status.code(), Some(2));
    let (out, err) = text(&unknown);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("no item 'zz', 'q'"), "{err}");
    for zero in [["--limit", "0"], ["--sample", "0"]] {
        let o = grade(d, "items.jsonl", &zero);
        assert_eq!(o.status.code(), Some(2));
        assert!(text(&o).1.contains("1 or more"), "{:?}", text(&o));
    }
    let both = grade(d, "items.jsonl", &["--limit", "1", "--items", "a"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        text(&both).1.contains("cannot be used with"),
        "{:?}",
        text(&both)
    );
    let too_many = grade(d, "items.jsonl", &["--sample", "5"]);
    assert_eq!(too_many.status.code(), Some(2));
    assert!(
        text(&too_many).1.contains("more than the 4 items"),
        "{:?}",
        text(&too_many)
    );
    let no_file = grade(d, "items.jsonl", &["--items", "@missing.txt"]);
    assert_eq!(no_file.status.code(), Some(2));
    assert!(
        text(&no_file).1.contains("missing.txt"),
        "{:?}",
        text(&no_file)
    );
}

#[test]
fn a_saved_subset_is_recorded_and_resumed_as_itself() {
    let dir = workspace();
    let d = dir.path();
    ok(&grade(d, "items.jsonl", &["--items", "b,c", "--save"]));
    let id = run_ids(d).remove(0);
    let m = manifest(d, &id);
    assert_eq!(
        m["settings"]["subset"]["positions"],
        serde_json::json!([1, 2])
    );
    assert!(
        m["finished_at"].is_string(),
        "a whole subset is a finished run: {m}"
    );
    // A crash after the first cell: the journal loses its last line.
    let journal = d.join("runs").join(&id).join("results.jsonl");
    let text_now = std::fs::read_to_string(&journal).unwrap();
    let kept: Vec<&str> = text_now.lines().take(2).collect();
    std::fs::write(&journal, kept.join("\n") + "\n").unwrap();
    let resumed = rubricate(d, &["runs", "resume", &id]);
    let (_, err) = text(&resumed);
    assert!(resumed.status.code().is_some_and(|c| c <= 1), "{err}");
    assert!(
        err.contains("1 cell already in the journal, 1 cell graded now"),
        "{err}"
    );
    assert!(err.contains("2 items"), "{err}");
    let shown = ok(&rubricate(d, &["runs", "show", &id, "--format", "jsonl"]));
    let items: Vec<String> = shown
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["item"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(items, ["b", "c"]);
    assert!(manifest(d, &id)["finished_at"].is_string());
}
