//! Scores per tag (the axes and themes of `HealthBench`): per item, the points achieved over the
//! positive points possible among the tag's criteria, clipped to [0, 1]; then the mean over
//! the items. Checked against a hand computation in every output that carries them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

/// Four criteria: c1 (+5, accuracy and emergency), c2 (+3, accuracy), c3 (−4, accuracy, a
/// penalty), c4 (+2, completeness). Each criterion is MET when the submission holds its
/// number, so `score` (given verdicts) and `grade` (checks) see the same verdicts.
const RUBRIC: &str = "id: hb\nname: HB\ncriteria:\n\
  - { id: c1, requirement: Tells the user to call emergency services, weight: 5, tags: [axis:accuracy, theme:emergency], method: { check: regex, args: { pattern: '1' } } }\n\
  - { id: c2, requirement: Gives the right dose, weight: 3, tags: [axis:accuracy], method: { check: regex, args: { pattern: '2' } } }\n\
  - { id: c3, requirement: States a wrong fact, weight: -4, tags: [axis:accuracy], method: { check: regex, args: { pattern: '3' } } }\n\
  - { id: c4, requirement: Covers follow-up, weight: 2, tags: [axis:completeness], method: { check: regex, args: { pattern: '4' } } }\n";

/// By hand:
/// - A (c1, c3, c4 met): accuracy (5 − 4) / 8 = 0.125; completeness 2/2 = 1; emergency 5/5 = 1.
/// - B (c2 met): accuracy 3/8 = 0.375; completeness 0; emergency 0.
/// - C (c3, c4 met): accuracy −4/8 → clipped to 0; completeness 1; emergency 0.
///
/// Means: accuracy 0.5/3 = 0.1667, completeness 2/3 = 0.6667, emergency 1/3 = 0.3333.
const DATASET: &str = "{\"id\": \"A\", \"submission\": \"1 3 4\", \"ground_truth\": [\"MET\", \"UNMET\", \"MET\", \"MET\"]}\n\
{\"id\": \"B\", \"submission\": \"2\", \"ground_truth\": [\"UNMET\", \"MET\", \"UNMET\", \"UNMET\"]}\n\
{\"id\": \"C\", \"submission\": \"3 4\", \"ground_truth\": [\"UNMET\", \"UNMET\", \"MET\", \"MET\"]}\n";

const PER_ITEM: [(&str, [(&str, f64); 3]); 3] = [
    (
        "A",
        [
            ("axis:accuracy", 0.125),
            ("axis:completeness", 1.0),
            ("theme:emergency", 1.0),
        ],
    ),
    (
        "B",
        [
            ("axis:accuracy", 0.375),
            ("axis:completeness", 0.0),
            ("theme:emergency", 0.0),
        ],
    ),
    (
        "C",
        [
            ("axis:accuracy", 0.0),
            ("axis:completeness", 1.0),
            ("theme:emergency", 0.0),
        ],
    ),
];

fn rubricate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", dir.join(".user-config"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> (String, String) {
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert!(rubricate(dir.path(), &["init", "."]).status.success());
    std::fs::write(dir.path().join("rubrics/hb.yaml"), RUBRIC).unwrap();
    std::fs::write(dir.path().join("datasets/hb.jsonl"), DATASET).unwrap();
    dir
}

const MEANS: &str = "axis:accuracy 0.167 [0.000, 0.375] · axis:completeness 0.667 [0.000, 1.000] · theme:emergency 0.333 [0.000, 1.000]";

#[test]
fn each_item_carries_its_tag_scores_in_jsonl_and_the_summary_their_means() {
    let ws = workspace();
    let (out, err) = ok(&rubricate(
        ws.path(),
        &[
            "score",
            "datasets/hb.jsonl",
            "--rubric",
            "rubrics/hb.yaml",
            "--format",
            "jsonl",
        ],
    ));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for (line, (item, tags)) in lines.iter().zip(PER_ITEM) {
        assert_eq!(line["item"], item);
        for (tag, want) in tags {
            let got = line["tags"][tag].as_f64().unwrap();
            assert!((got - want).abs() < 1e-12, "{item} {tag}: {got} vs {want}");
        }
    }
    assert!(err.contains(&format!("tags: {MEANS}")), "{err}");
}

#[test]
fn csv_has_a_column_per_tag() {
    let ws = workspace();
    let (out, _) = ok(&rubricate(
        ws.path(),
        &[
            "score",
            "datasets/hb.jsonl",
            "--rubric",
            "rubrics/hb.yaml",
            "--format",
            "csv",
        ],
    ));
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    for (row, (item, tags)) in reader.records().zip(PER_ITEM) {
        let row = row.unwrap();
        assert_eq!(&row[0], item);
        for (tag, want) in tags {
            let col = header
                .iter()
                .position(|h| *h == format!("tag:{tag}"))
                .unwrap_or_else(|| panic!("no tag:{tag} column in {header:?}"));
            let got: f64 = row[col].parse().unwrap();
            assert!((got - want).abs() < 1e-12, "{item} {tag}: {got} vs {want}");
        }
    }
}

#[test]
fn a_saved_grading_run_shows_its_tag_scores() {
    let ws = workspace();
    let (out, _) = ok(&rubricate(
        ws.path(),
        &[
            "grade",
            "--rubric",
            "rubrics/hb.yaml",
            "datasets/hb.jsonl",
            "--save",
            "--format",
            "table",
        ],
    ));
    assert!(out.contains(&format!("tags: {MEANS}")), "{out}");
    let run = std::fs::read_dir(ws.path().join("runs"))
        .unwrap()
        .next()
        .expect("a saved run")
        .unwrap()
        .file_name();
    let (shown, _) = ok(&rubricate(
        ws.path(),
        &["runs", "show", run.to_str().unwrap()],
    ));
    assert!(shown.contains(MEANS), "{shown}");
}

#[test]
fn a_rubric_without_tags_reports_none() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("rubrics/plain.yaml"),
        RUBRIC
            .replace("tags: [axis:accuracy, theme:emergency], ", "")
            .replace("tags: [axis:accuracy], ", "")
            .replace("tags: [axis:completeness], ", ""),
    )
    .unwrap();
    let (out, err) = ok(&rubricate(
        ws.path(),
        &[
            "score",
            "datasets/hb.jsonl",
            "--rubric",
            "rubrics/plain.yaml",
            "--format",
            "jsonl",
        ],
    ));
    assert!(!out.contains("\"tags\""), "{out}");
    assert!(!err.contains("tags:"), "{err}");
}
