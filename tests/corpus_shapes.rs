//! The shapes of autorubric files too large to collect whole (see
//! `tests/fixtures/corpus_shapes/README.md`): each loads, or is named for what it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

const SHAPES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/corpus_shapes");

fn rubricate(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.path().join(".config"))
        .args(args)
        .output()
        .unwrap()
}

fn inspect(name: &str) -> (Option<i32>, String) {
    let out = rubricate(&["inspect", &format!("{SHAPES}/{name}")]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn every_uncollected_shape_loads_or_is_named() {
    for (file, wants) in [
        (
            "hashemi_etal_2024_dataset.json",
            &[
                "dataset (json)",
                "relevance",
                "options(5)",
                "efficiency",
                "options(2)",
            ][..],
        ),
        (
            "charm100.json",
            &[
                "dataset (json)",
                "tone",
                "options(3)",
                "factual_accuracy",
                "binary",
            ][..],
        ),
        (
            "sharma_etal_2025_research_rubrics.json",
            &["dataset (json)", "1 with their own rubric"][..],
        ),
        (
            "researcher_bench_user_data.json",
            &["dataset (json)", "items: 2"][..],
        ),
    ] {
        let (code, said) = inspect(file);
        assert_eq!(code, Some(0), "{file}: {said}");
        for w in wants {
            assert!(said.contains(w), "{file}: no {w:?} in {said}");
        }
    }
    let (code, said) = inspect("golden_meta_with_guidelines.json");
    assert_eq!(code, Some(2));
    assert!(said.contains("recorded meta-judge prompts"), "{said}");
}

#[test]
fn a_mixed_dataset_scores_its_ground_truth() {
    // charm100's shape: an ordinal option picked by label beside a binary criterion.
    let out = rubricate(&[
        "score",
        &format!("{SHAPES}/charm100.json"),
        "--format",
        "jsonl",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["criteria"][0]["verdict"], "Good");
    assert_eq!(v["criteria"][1]["verdict"], "MET");
    assert!((v["score"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{v}");
    // hashemi's: options with `na` on every one, ground truth by label.
    let out = rubricate(&[
        "score",
        &format!("{SHAPES}/hashemi_etal_2024_dataset.json"),
        "--format",
        "jsonl",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    // relevance "3" (0.67) and efficiency "2" (1.0), weights 10 and 10.
    assert!((v["score"].as_f64().unwrap() - 0.835).abs() < 1e-9, "{v}");
}
