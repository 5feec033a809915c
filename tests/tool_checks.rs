//! Checks over tool use through the real binary: every tool check and trajectory mode on
//! tests/fixtures/tools/calls.jsonl gets the outcome tests/fixtures/tools/expected.json
//! gives it (worked out by hand: see tool-rubric.yaml), with evidence naming the call that
//! failed; an item without a conversation fails every tool check with a clear reason, and
//! bad arguments are refused with their file, line and column.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools")
}

fn rubricate(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// The criteria's results of each item, by item id and criterion id.
fn graded() -> BTreeMap<String, BTreeMap<String, Value>> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rubricate.yaml"), "").unwrap();
    for f in ["calls.jsonl", "tool-rubric.yaml"] {
        std::fs::copy(fixtures().join(f), dir.path().join(f)).unwrap();
    }
    let out = rubricate(
        dir.path(),
        &[
            "grade",
            "calls.jsonl",
            "--rubric",
            "tool-rubric.yaml",
            "--format",
            "jsonl",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The item without a conversation fails every criterion: above the error rate (3).
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let mut items = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(item) = v["item"].as_str() else {
            continue;
        };
        let criteria = v["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_owned(), c.clone()))
            .collect();
        items.insert(item.to_owned(), criteria);
    }
    items
}

#[test]
fn every_tool_check_and_mode_gets_its_expected_outcome() {
    let expected: BTreeMap<String, BTreeMap<String, Value>> =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap())
            .unwrap();
    let got = graded();
    assert_eq!(got.len(), expected.len());
    for (item, want) in &expected {
        for (criterion, want) in want {
            let r = &got[item][criterion];
            match want {
                Value::String(s) if s == "failed" => {
                    assert!(
                        r["failure"].is_object(),
                        "{item}/{criterion} should fail: {r}"
                    );
                }
                _ => {
                    let (w, v) = (want.as_f64().unwrap(), r["value"].as_f64());
                    assert!(
                        v.is_some_and(|v| (v - w).abs() < 1e-12),
                        "{item}/{criterion}: expected {w}, got {r}"
                    );
                }
            }
        }
    }
}

#[test]
fn evidence_names_the_call_and_where_it_failed() {
    let got = graded();
    let evidence = |item: &str, c: &str| got[item][c]["evidence"].to_string();
    let schema = evidence("book-first", "book_args");
    assert!(
        schema.contains("call #1") && schema.contains("/seats"),
        "{schema}"
    );
    let exact = evidence("book-first", "exact");
    assert!(
        exact.contains("expected 3 tool calls, got 2")
            && exact.contains("call #1: expected search_flights, got book("),
        "{exact}"
    );
    let in_order = evidence("book-first", "in_order");
    assert!(
        in_order.contains("expected call 2 (book) not found after call #2"),
        "{in_order}"
    );
    let not_called = evidence("search-then-book", "no_price");
    assert!(not_called.contains("first as call #2"), "{not_called}");
    assert_eq!(got["book-first"]["in_order"]["verdict"], 0.5);
    let plain = got["plain"]["exact"]["failure"].to_string();
    assert!(
        plain.contains("no conversation") && plain.contains("messages"),
        "{plain}"
    );
}

#[test]
fn bad_tool_check_arguments_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = "\
id: bad
name: Bad
criteria:
  - id: t
    requirement: x
    method: {check: tool_trajectory, args: {mode: sideways, expected: [a]}}
  - id: u
    requirement: y
    method: {check: tool_called, args: {name: a, count: 1, max: 3}}
  - id: v
    requirement: z
    method: {check: tool_args, args: {name: a, equals: {x: 1}, match: nearly}}
  - id: w
    requirement: z
    method: {check: tool_trajectory, args: {expected: [{tool: a, arg: {}}]}}
  - id: m
    requirement: z
    method: {check: tool_trajectory, args: {mode: in_order, minimums: {a: 1}, expected: [a]}}
";
    std::fs::write(dir.path().join("r.yaml"), rubric).unwrap();
    for command in ["validate", "lint"] {
        let out = rubricate(dir.path(), &[command, "r.yaml"]);
        assert!(!out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        for want in [
            "r.yaml:6:51: criterion 't': 'sideways' is not a mode",
            "r.yaml:9:40: criterion 'u': give `count`, or `min`/`max`, not both",
            "r.yaml:12:71: criterion 'v': 'nearly' is not a way to match arguments",
            "r.yaml:15:71: criterion 'w': unknown field `arg`",
            "criterion 'm': `minimums` goes with mode any_order",
        ] {
            assert!(text.contains(want), "{command}: {want} not in {text}");
        }
    }
}

#[test]
fn the_rubric_schema_knows_the_tool_checks_arguments() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("assets/rubric.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let as_json = |name: &str, text: &str| {
        rubricate::formats::parse_document(name, text)
            .unwrap()
            .to_json()
    };
    for file in [
        fixtures().join("tool-rubric.yaml"),
        root.join("examples/conversation-rubric.yaml"),
    ] {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc = as_json(&file.display().to_string(), &text);
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
    for bad in [
        "{check: tool_trajectory, args: {mode: sideways, expected: [a]}}",
        "{check: tool_called, args: {count: 1}}",
        "{check: tool_args, args: {name: a, equals: {x: 1}, match: nearly}}",
        "{check: tool_trajectory, args: {expected: [{tool: a, arg: {}}]}}",
    ] {
        let rubric = format!(
            "id: r\nname: R\ncriteria:\n  - id: c\n    requirement: x\n    method: {bad}\n"
        );
        let doc = as_json("r.yaml", &rubric);
        assert!(!validator.is_valid(&doc), "the schema let through {bad}");
    }
}
