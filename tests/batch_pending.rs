//! A batch run read while some of its cells are still at the provider: every item with a
//! cell to come is incomplete and not passed (`runs show`, its JSONL, `metrics`), the run
//! says it is in batches (`runs list`, `runs show`, `runs compare`, `metrics`), and
//! comparing it with a finished run calls no missing cell a regression. Once the batches
//! end, the same run reads finished and complete.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::LlmServer;
use support::batch_run::*;

const ITEMS: usize = 8;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The command's stdout, once it exited with `code`.
fn ran(ws: &Workspace, url: &str, args: &[&str], code: i32) -> String {
    let out = ws.command(url, args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

#[test]
fn cells_still_in_a_batch_leave_their_items_incomplete_and_the_run_in_batches() {
    let ws = Workspace::new(ITEMS, 1_000);
    // The `b` requests are in a second batch, still at the provider.
    let (batch, id) = with_a_batch_in_flight(&ws);
    assert_eq!(ws.cells(&id).len(), ITEMS, "every item's `a` cell, no `b`");
    assert!(ws.cells(&id).keys().all(|(_, c)| c == "a"));

    let listed = ran(&ws, &batch.url, &["runs", "list"], 0);
    assert!(listed.contains("in batches (1 of 2 in flight)"), "{listed}");

    let shown = ran(&ws, &batch.url, &["runs", "show", &id], 0);
    assert!(
        shown.contains(
            "in batches (1 of 2 in flight): items still waiting for cells are INCOMPLETE"
        ),
        "{shown}"
    );
    let rows: Vec<&str> = shown.lines().filter(|l| l.starts_with('i')).collect();
    assert_eq!(rows.len(), ITEMS, "{shown}");
    for row in &rows {
        assert!(row.ends_with("INCOMPLETE (still to come: b)"), "{shown}");
    }
    assert!(
        shown.contains("8 items: 0 passed, 0 failed, 8 incomplete (8 with cells still to come)"),
        "{shown}"
    );

    let jsonl = ran(
        &ws,
        &batch.url,
        &["runs", "show", &id, "--format", "jsonl"],
        0,
    );
    for line in jsonl.lines() {
        let item: Value = serde_json::from_str(line).unwrap();
        assert_eq!(item["incomplete"], true, "{line}");
        assert_eq!(item["passed"], false, "{line}");
        assert_eq!(item["pending"], serde_json::json!(["b"]), "{line}");
    }
    assert_eq!(jsonl.lines().count(), ITEMS);

    // A finished run of the same items, graded live: items 2 and 3 (bananas) would look
    // worse in the batch run on `a` alone if missing cells counted.
    let live = LlmServer::start(Duration::ZERO, live_rule);
    let graded = ws
        .grade(&live.url, "openai/j", &["--save", "--out", "live.jsonl"])
        .output()
        .unwrap();
    assert!(
        graded.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&graded)
    );
    let live_id = run_id(&stderr(&graded));
    let compared = ran(&ws, &batch.url, &["runs", "compare", &live_id, &id], 0);
    assert!(
        compared.contains(
            "B is in batches (1 of 2 in flight): its cells still to come are not compared"
        ),
        "{compared}"
    );
    assert!(
        compared.contains(
            "8 items with cells still to come: compared per criterion on the cells both runs have, not by score"
        ),
        "{compared}"
    );
    assert!(!compared.contains("REGRESSION"), "{compared}");
    assert!(compared.contains("0 items changed"), "{compared}");
    // Criterion a is in both runs and agrees; b is in one only and is not compared.
    let a_row = compared.lines().find(|l| l.starts_with("a ")).unwrap();
    assert!(a_row.trim_end().ends_with(" 0"), "{compared}");
    assert!(!compared.lines().any(|l| l.starts_with("b ")), "{compared}");

    // metrics against a person's labels: the run's state is said, and items waiting for a
    // cell give no item score.
    let dataset = ws.dir.path().join("items.jsonl");
    let dataset = dataset.to_str().unwrap();
    for cell in [
        ["i1", "a", "MET"],
        ["i1", "b", "UNMET"],
        ["i2", "a", "UNMET"],
    ] {
        let mut label = vec![
            "labels",
            "set",
            "--dataset",
            dataset,
            "--annotator",
            "ana",
            "-r",
            "rubric.yaml",
        ];
        label.extend(cell);
        ran(&ws, &batch.url, &label, 0);
    }
    let metrics_json = || -> Value {
        let args = [
            "metrics",
            "--run",
            &id,
            "--bootstrap",
            "0",
            "--format",
            "json",
        ];
        serde_json::from_str(&ran(&ws, &batch.url, &args, 0)).unwrap()
    };
    let doc = metrics_json();
    assert_eq!(doc["run_state"], "in batches (1 of 2 in flight)", "{doc}");
    assert_eq!(doc["item_scores"]["n"], 0, "{doc}");
    let table = ran(
        &ws,
        &batch.url,
        &["metrics", "--run", &id, "--bootstrap", "0"],
        0,
    );
    assert!(
        table.contains(
            "the run is in batches (1 of 2 in flight): cells still to come are not compared"
        ),
        "{table}"
    );

    // The batches end: the same run reads finished and complete.
    ws.finish(&batch.url, &id);
    assert_eq!(ws.cells(&id).len(), 2 * ITEMS);
    let shown = ran(&ws, &batch.url, &["runs", "show", &id], 0);
    assert!(!shown.contains("INCOMPLETE"), "{shown}");
    assert!(
        shown.contains("\nstarted ") && shown.contains(" · finished "),
        "{shown}"
    );
    let compared = ran(&ws, &batch.url, &["runs", "compare", &live_id, &id], 0);
    assert!(!compared.contains("still to come"), "{compared}");
    assert!(compared.contains("0 items changed"), "{compared}");
    let doc = metrics_json();
    assert_eq!(doc["run_state"], "finished");
    assert_eq!(
        doc["item_scores"]["n"], 1,
        "i1 is labelled on every criterion"
    );
}
