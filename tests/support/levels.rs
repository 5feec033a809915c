//! A workspace in `root` with one levels criterion (short / medium / long by word count),
//! a saved run of 7 items and an annotator's labels that disagree with it on two: made
//! through the real binary `bin`, as a user would. Returns the κ `rubricate metrics` gives.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;

pub fn workspace(root: &Path, bin: &str) -> f64 {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin)
            .current_dir(root)
            .args(args)
            .output()
            .unwrap();
        // `grade` exits 1 when items fall below the threshold: still a finished run.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["init", "."]);
    std::fs::write(root.join("rubricate.yaml"), "annotator: ann\n").unwrap();
    std::fs::write(
        root.join("rubrics/len.yaml"),
        "id: len\nname: Length\ncriteria:\n  - id: length\n    requirement: Length of the answer\n    levels:\n      - { id: short, label: Short, score: 0 }\n      - { id: medium, label: Medium, score: 0.5 }\n      - { id: long, label: Long, score: 1 }\n    method:\n      check: map_levels\n      args: { of: { check: word_count }, thresholds: [{ at_least: 2, level: medium }, { at_least: 5, level: long }], otherwise: short }\n",
    )
    .unwrap();
    let words = [
        "a",
        "a b c",
        "a b c d e f",
        "x",
        "a b",
        "p q r s t u v",
        "m n o",
    ];
    let lines: String = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            serde_json::json!({"id": format!("i{i}"), "submission": w}).to_string() + "\n"
        })
        .collect();
    std::fs::write(root.join("datasets/ans.jsonl"), lines).unwrap();
    run(&[
        "grade",
        "--rubric",
        "rubrics/len.yaml",
        "datasets/ans.jsonl",
        "--save",
    ]);
    for (item, level) in [
        ("i0", "short"),
        ("i1", "short"),
        ("i2", "long"),
        ("i3", "short"),
        ("i4", "medium"),
        ("i5", "medium"),
        ("i6", "medium"),
    ] {
        run(&[
            "labels",
            "set",
            "--dataset",
            "datasets/ans.jsonl",
            "--annotator",
            "ann",
            "--rubric",
            "rubrics/len.yaml",
            item,
            "length",
            level,
        ]);
    }
    let id = std::fs::read_dir(root.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let metrics: serde_json::Value = serde_json::from_str(&run(&[
        "metrics",
        "--run",
        &id,
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]))
    .unwrap();
    metrics["report"]["criteria"][0]["kappa"].as_f64().unwrap()
}
