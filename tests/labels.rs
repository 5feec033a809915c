//! Human labels through the real binary: a writer killed mid-stream loses no acknowledged
//! label; undo, compaction, import (ground truth and CSV) and export round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng};
use serde_json::Value;

const RUBRIC: &str = "id: r\nname: R\ncriteria:\n  - { id: a, requirement: A, weight: 1 }\n  - { id: b, requirement: B, weight: 1 }\n  - id: tone\n    requirement: Tone\n    options:\n      - { label: Warm, value: 1 }\n      - { label: Cold, value: 0 }\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rubricate.yaml"), "").unwrap();
    std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
    std::fs::write(
        dir.path().join("items.jsonl"),
        "{\"id\": \"x1\", \"submission\": \"s1\", \"ground_truth\": [\"MET\", \"UNMET\", \"Warm\"]}\n{\"id\": \"x2\", \"submission\": \"s2\", \"ground_truth\": [\"UNMET\", \"MET\", \"Cold\"]}\n",
    )
    .unwrap();
    dir
}

fn rubricate(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn journal(dir: &Path, annotator: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("labels/items/{annotator}.jsonl")))
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `labels set --stdin` for annotator `ann`, its input and acknowledgements piped.
fn labels_from_stdin(dir: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args([
            "labels",
            "set",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "ann",
            "--stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A writer that waits for each acknowledgement before it sends the next label (a person,
/// or a script pacing itself) gets each one at once: group commit never holds a label back
/// for company.
#[test]
fn a_paced_writer_gets_each_label_acknowledged_before_it_sends_the_next() {
    let dir = workspace();
    let mut child = labels_from_stdin(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut acks = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for i in 1..=30u64 {
        writeln!(stdin, "p{i} a MET").unwrap();
        stdin.flush().unwrap();
        line.clear();
        acks.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), format!("saved {i}"));
        assert_eq!(
            journal(dir.path(), "ann").len() as u64,
            i,
            "on disk when acknowledged"
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_writer_killed_mid_stream_loses_no_acknowledged_label() {
    let dir = workspace();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut acked: Vec<u64> = Vec::new();
    for round in 0..20 {
        let mut child = labels_from_stdin(dir.path());
        let mut stdin = child.stdin.take().unwrap();
        let mut acks = BufReader::new(child.stdout.take().unwrap());
        let stop_after = rng.random_range(1..1_500);
        // Feed more lines than will be acknowledged, so the kill lands mid-stream (many
        // arrive together: they are synced as a group, then acknowledged).
        let writer = std::thread::spawn(move || {
            for i in 0..2_000 {
                if writeln!(stdin, "r{round}-{i} a MET").is_err() {
                    break;
                }
            }
        });
        let mut line = String::new();
        for _ in 0..stop_after {
            line.clear();
            if acks.read_line(&mut line).unwrap() == 0 {
                break;
            }
            let seq: u64 = line.trim().strip_prefix("saved ").unwrap().parse().unwrap();
            acked.push(seq);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = writer.join();
        let on_disk: std::collections::HashSet<u64> = journal(dir.path(), "ann")
            .iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect();
        for seq in &acked {
            assert!(
                on_disk.contains(seq),
                "round {round}: acknowledged label {seq} lost"
            );
        }
    }
    // The journal is still readable and appendable after twenty kills.
    let out = rubricate(
        dir.path(),
        &[
            "labels",
            "set",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "ann",
            "last",
            "a",
            "UNMET",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seqs: Vec<u64> = journal(dir.path(), "ann")
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "sequence numbers stay consecutive: {seqs:?}"
    );
}

#[test]
fn import_undo_compact_and_export_round_trip() {
    let dir = workspace();
    let ok = |args: &[&str]| {
        let out = rubricate(dir.path(), args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = ok(&[
        "labels",
        "import",
        "items.jsonl",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
        "--rubric",
        "rubric.yaml",
    ]);
    assert!(said.starts_with("imported 6 labels"), "{said}");
    ok(&[
        "labels",
        "set",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
        "--rubric",
        "rubric.yaml",
        "x1",
        "tone",
        "cold",
    ]);
    let csv = ok(&["labels", "export", "--dataset", "items.jsonl"]);
    assert!(csv.contains("x1,tone,Cold,amy"), "{csv}");
    ok(&[
        "labels",
        "undo",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
        "7",
    ]);
    let csv = ok(&["labels", "export", "--dataset", "items.jsonl"]);
    assert!(
        csv.contains("x1,tone,Warm,amy"),
        "undo restores the earlier label: {csv}"
    );
    let compacted = ok(&[
        "labels",
        "compact",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
    ]);
    assert!(compacted.contains("6 current labels kept"), "{compacted}");
    assert_eq!(journal(dir.path(), "amy").len(), 6);

    // A CSV import, then the autorubric form out again.
    std::fs::write(
        dir.path().join("more.csv"),
        "item,criterion,verdict,note\nx2,a,MET,changed my mind\n",
    )
    .unwrap();
    ok(&[
        "labels",
        "import",
        "more.csv",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
        "--rubric",
        "rubric.yaml",
    ]);
    let doc: Value = serde_json::from_str(&ok(&[
        "labels",
        "export",
        "--dataset",
        "items.jsonl",
        "--annotator",
        "amy",
        "--as",
        "autorubric",
        "--rubric",
        "rubric.yaml",
    ]))
    .unwrap();
    assert_eq!(
        doc["items"][0]["ground_truth"],
        serde_json::json!(["MET", "UNMET", "Warm"])
    );
    assert_eq!(
        doc["items"][1]["ground_truth"],
        serde_json::json!(["MET", "MET", "Cold"])
    );

    // Bad input is refused with its place, and nothing is written.
    let before = journal(dir.path(), "amy").len();
    let out = rubricate(
        dir.path(),
        &[
            "labels",
            "set",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "amy",
            "--rubric",
            "rubric.yaml",
            "x1",
            "tone",
            "Lukewarm",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Lukewarm"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rubricate(
        dir.path(),
        &[
            "labels",
            "set",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "../evil",
            "x1",
            "a",
            "MET",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(journal(dir.path(), "amy").len(), before);
}
