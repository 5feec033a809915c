//! The differential check for agentv's tool-trajectory graders: rubricate grades
//! `tests/fixtures/agentv_tools/trajectory.eval.yaml` (recorded agent runs, every mode and
//! way of matching arguments agentv has) and each grader's score equals the score
//! @agentv/core 4.42.4 itself gave it (`agentv-scores.json`, recorded by
//! `scripts/difftest/agentv-tools.mjs`), to 1e-9; a grader agentv skips is left out here too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

#[test]
fn tool_trajectory_graders_score_as_agentv_scores_them() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agentv_tools");
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("agentv-scores.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["agentv_core"], "4.42.4");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rubricate.yaml"), "").unwrap();
    std::fs::copy(
        fixtures.join("trajectory.eval.yaml"),
        dir.path().join("trajectory.eval.yaml"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir.path())
        .args(["grade", "trajectory.eval.yaml", "--format", "jsonl"])
        .env("NO_COLOR", "1")
        .env("RUBRICATE_CACHE_DIR", dir.path().join("cache"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{stderr}");
    let mut graded: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(item) = v["item"].as_str() else {
            continue;
        };
        let graders = v["graders"].as_array().unwrap();
        graded.insert(
            item.to_owned(),
            graders
                .iter()
                .filter_map(|g| Some((g["id"].as_str()?.to_owned(), g["score"].as_f64()?)))
                .collect(),
        );
    }
    let want = recorded["scores"].as_object().unwrap();
    assert_eq!(graded.len(), want.len(), "{graded:?}");
    let mut compared = 0;
    for (test, graders) in want {
        for (grader, score) in graders.as_object().unwrap() {
            let got = graded[test.as_str()].get(grader.as_str());
            let want = score.as_f64().unwrap();
            assert!(
                got.is_some_and(|g| (g - want).abs() <= 1e-9),
                "{test}/{grader}: agentv {want}, rubricate {got:?}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 12);
    // agentv skips the grader with an unknown mode; rubricate leaves it out too, saying so.
    assert!(!graded["no-tools"].contains_key("bad-mode"), "{graded:?}");
}

#[test]
fn a_skipped_trajectory_grader_is_noted_where_it_stands() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agentv_tools/trajectory.eval.yaml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(["validate", file.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("trajectory.eval.yaml:56:9:")
            && text.contains("mode 'sideways'")
            && text.contains("agentv skips it"),
        "{text}"
    );
    assert!(!text.contains("tool-trajectory' is not"), "{text}");
}
