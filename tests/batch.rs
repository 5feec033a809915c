//! Batch runs through the providers' batch engines (a loopback server speaking `OpenAI`'s
//! and Anthropic's batch wire formats): a run in batches equals the same run graded live,
//! cell for cell; killed (SIGKILL) while uploading, while the provider creates the batch,
//! between polls and while downloading, then resumed, it loses no cell and submits none
//! twice (the server counts); expired and failed requests are sent again; the manifest
//! names every batch the provider made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::LlmServer;
use support::batch::{BatchServer, Outcome, Request, Stage};
use support::batch_run::*;

#[test]
fn a_run_in_batches_equals_the_same_run_graded_live() {
    const ITEMS: usize = 2_000;
    let ws = Workspace::new(ITEMS, 1_500);
    let batch = BatchServer::start(2, answer_all);
    let live = LlmServer::start(Duration::ZERO, live_rule);

    let sent = ws
        .grade(&batch.url, "openai/j", &["--batch"])
        .output()
        .unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    let id = run_id(&stderr(&sent));
    assert!(
        stderr(&sent).contains("3 batches sent (4000 requests)"),
        "{}",
        stderr(&sent)
    );
    let m = ws.manifest(&id);
    assert_eq!(m["batches"].as_array().unwrap().len(), 3);
    assert!(m["finished_at"].is_null());
    assert!(
        ws.cells(&id).is_empty(),
        "nothing is journalled before the answers"
    );

    let listed = ws.command(&batch.url, &["runs", "list"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("in batches (3 of 3 in flight)"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );

    // Not ended yet: the step says so and exits "pending".
    let asked = ws.resume(&batch.url, &id, &[]).output().unwrap();
    assert_eq!(asked.status.code(), Some(4), "{}", stderr(&asked));

    let done = ws.finish(&batch.url, &id);
    assert!(done.contains("4000 of 4000 requests answered"), "{done}");
    sent_once(&batch, &ws, &id, 4_000);
    let m = ws.manifest(&id);
    let batch_cost: f64 = m["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["cost"].as_f64().unwrap())
        .sum();
    // 4,000 answers of 100 tokens in and 20 out at half of $1 / $4 per million.
    assert!(
        (batch_cost - 4_000.0 * (100.0 * 0.5 + 20.0 * 2.0) / 1e6).abs() < 1e-9,
        "{batch_cost}"
    );
    assert!(
        (m["totals"]["cost"].as_f64().unwrap() - batch_cost).abs() < 1e-9,
        "{m}"
    );

    let graded = ws
        .grade(
            &live.url,
            "openai/j",
            &[
                "--save",
                "--no-cache",
                "--concurrency",
                "16",
                "--out",
                "live.jsonl",
            ],
        )
        .output()
        .unwrap();
    assert!(
        graded.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&graded)
    );
    let live_id = run_id(&stderr(&graded));
    assert_eq!(
        ws.cells(&id),
        ws.cells(&live_id),
        "batch and live runs differ"
    );
    assert_eq!(ws.shown(&batch.url, &id), ws.shown(&live.url, &live_id));
    let shown = ws
        .command(&batch.url, &["runs", "show", &id])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(
            "batch b0001 · openai/j · 1500 requests · downloaded · 1500 answered, 0 failed · batch_"
        ),
        "{shown}"
    );
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));

    // Every answer went into the cache (keyed by the endpoint the batch went to): grading
    // again live there sends nothing.
    let again = ws
        .grade(&batch.url, "openai/j", &["--out", "again.jsonl"])
        .output()
        .unwrap();
    assert!(
        stderr(&again).contains("0 requests sent, 4000 answered from the cache"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn expired_and_failed_requests_are_sent_again_anthropic() {
    const ITEMS: usize = 120;
    let ws = Workspace::new(ITEMS, 100);
    // The first time, every 7th request expires and every 11th fails with a server error;
    // sent again, each is answered. A request refused as invalid stays refused.
    let batch = BatchServer::start(1, |r: &Request| {
        let n: u64 = r
            .prompt
            .split("Basket ")
            .nth(1)
            .and_then(|t| t.split(':').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        if r.earlier == 0 && n.is_multiple_of(7) {
            Outcome::Expired
        } else if r.earlier == 0 && n.is_multiple_of(11) {
            Outcome::Error(500, "overloaded".into())
        } else if n == 5 {
            Outcome::Error(400, "this request is not valid".into())
        } else {
            Outcome::Text(reply_text(&r.prompt))
        }
    });
    // At two requests a minute a live run would take an hour; limits are for live calls.
    let sent = ws
        .grade(&batch.url, "anthropic/claude-j", &["--batch", "--rpm", "2"])
        .output()
        .unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    let id = run_id(&stderr(&sent));
    let done = ws
        .resume(&batch.url, &id, &["--wait", "--poll", "0"])
        .output()
        .unwrap();
    assert!(
        done.status.code().is_some_and(|c| c <= 3),
        "{}",
        stderr(&done)
    );
    let submitted = batch.submitted();
    let resent: Vec<&String> = submitted.keys().filter(|k| k.ends_with("-1")).collect();
    let first_failed = (0..ITEMS as u64)
        .filter(|n| *n % 7 == 0 || *n % 11 == 0)
        .count()
        * 2;
    assert_eq!(
        resent.len(),
        first_failed,
        "each expired or failed request sent once more"
    );
    assert!(submitted.values().all(|n| *n == 1), "no id twice");
    let cells = ws.cells(&id);
    assert_eq!(cells.len(), ITEMS * 2, "every cell journalled");
    // Item 5 was refused: its cells are failures, journalled and not sent again (the
    // count of re-sent ids above has no room for them).
    assert!(cells[&(5, "a".to_owned())].0.is_null());
    let mut want = expected(ITEMS);
    want.remove(&(5, "a".to_owned()));
    want.remove(&(5, "b".to_owned()));
    let mut got = verdicts(&ws, &id);
    got.remove(&(5, "a".to_owned()));
    got.remove(&(5, "b".to_owned()));
    assert_eq!(got, want);
    let m = ws.manifest(&id);
    assert!(
        m["batches"].as_array().unwrap().len() >= 3,
        "new batches for the re-sent requests"
    );
    assert!(m["finished_at"].is_string());
}

/// Kills the client while it is held at `stage`, then resumes to the end.
fn killed_at(stage: Stage, judge: &str) {
    const ITEMS: usize = 300;
    let ws = Workspace::new(ITEMS, 250);
    let batch = BatchServer::start(3, answer_all);
    let id = if stage == Stage::Upload || stage == Stage::Create {
        batch.hold(stage);
        let (id, child) = spawn(ws.grade(&batch.url, judge, &["--batch"]));
        until("the held call", || batch.held(stage) > 0);
        kill(child);
        batch.release();
        id
    } else {
        let id = ws.send(&batch.url, judge, &[]);
        if stage == Stage::Status {
            // Between polls: asked once (not ended yet), now waiting a minute to ask again.
            let child = ws
                .resume(&batch.url, &id, &["--wait", "--poll", "60"])
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            until("the first poll", || {
                batch
                    .calls()
                    .iter()
                    .any(|c| c.starts_with("GET /v1/batches/"))
            });
            kill(child);
        } else {
            batch.hold(stage);
            let child = ws
                .resume(&batch.url, &id, &["--wait", "--poll", "0"])
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            until("the held call", || batch.held(stage) > 0);
            kill(child);
            batch.release();
        }
        id
    };
    ws.finish(&batch.url, &id);
    sent_once(&batch, &ws, &id, ITEMS * 2);
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));
}

#[test]
fn killed_during_upload_resumes_sending_nothing_twice() {
    killed_at(Stage::Upload, "openai/j");
}

#[test]
fn killed_while_the_provider_creates_the_batch_finds_it_again() {
    killed_at(Stage::Create, "openai/j");
}

#[test]
fn killed_while_anthropic_creates_the_batch_finds_it_again() {
    killed_at(Stage::Create, "anthropic/claude-j");
}

#[test]
fn killed_between_polls_resumes() {
    killed_at(Stage::Status, "openai/j");
}

#[test]
fn killed_during_download_downloads_again() {
    killed_at(Stage::Download, "openai/j");
}

#[test]
fn a_batch_run_needs_what_a_batch_can_do() {
    let ws = Workspace::new(4, 10);
    let batch = BatchServer::start(1, answer_all);
    let out = ws
        .grade(&batch.url, "openai/j", &["--batch", "--max-cost", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a batch is paid as a whole"),
        "{}",
        stderr(&out)
    );
    assert!(
        !ws.dir.path().join("runs").exists()
            || std::fs::read_dir(ws.dir.path().join("runs"))
                .unwrap()
                .next()
                .is_none(),
        "nothing recorded"
    );
    // A live run is not resumed as a batch run, nor the other way round.
    let live = ws
        .grade(
            &batch.url,
            "openai/j",
            &["--save", "--out", "o.jsonl", "--max-retries", "0"],
        )
        .output()
        .unwrap();
    let live_id = run_id(&stderr(&live));
    let out = ws
        .resume(&batch.url, &live_id, &["--wait"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("graded live"), "{}", stderr(&out));
}

#[test]
fn a_server_without_a_batch_api_is_named_and_nothing_is_lost() {
    let ws = Workspace::new(6, 10);
    // A plain chat server: no /v1/files.
    let live = LlmServer::start(Duration::ZERO, live_rule);
    let out = ws
        .grade(&live.url, "openai/j", &["--batch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has no batch API (HTTP 404); `rubricate runs resume ID --live`"),
        "{}",
        stderr(&out)
    );
    let id = run_id(&stderr(&out));
    // The batch stays prepared (nothing was sent), and `--live` grades it instead.
    let m = ws.manifest(&id);
    assert_eq!(m["batches"][0]["stage"], "prepared");
    let done = ws.resume(&live.url, &id, &["--live"]).output().unwrap();
    assert!(
        done.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&done)
    );
    assert_eq!(verdicts(&ws, &id), expected(6));
    assert_eq!(live.seen().len(), 12, "every request sent live once");
    let m = ws.manifest(&id);
    assert!(m["finished_at"].is_string());
    assert!(
        m.get("batches").is_none(),
        "the unsent batch is given up: {m}"
    );
}

/// The criterion ids a one-shot prompt lists.
fn ids_in(prompt: &str) -> Vec<String> {
    prompt
        .split("Criterion id \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// A one-shot answer for `ids` of `prompt`'s submission.
fn one_shot_text(prompt: &str, ids: &[String]) -> String {
    let submission = prompt.split("<<<SUBMISSION").nth(1).unwrap_or_default();
    let mut map = serde_json::Map::new();
    for id in ids {
        let fruit = if id == "a" { "apples" } else { "bananas" };
        let met = submission.contains(fruit);
        map.insert(
            id.clone(),
            json!({"reason": format!("looked for {fruit}"), "verdict": if met { "MET" } else { "UNMET" }}),
        );
    }
    Value::Object(map).to_string()
}

#[test]
fn one_shot_repairs_go_in_a_later_batch() {
    const ITEMS: usize = 40;
    let ws = Workspace::new(ITEMS, 1_000);
    // The first answer leaves out criterion b; the repair asks for it alone.
    let batch = BatchServer::start(1, |r: &Request| {
        let ids = ids_in(&r.prompt);
        let answered: Vec<String> = if r.prompt.contains("for these criteria only") {
            ids
        } else {
            ids.into_iter().filter(|id| id == "a").collect()
        };
        Outcome::Text(one_shot_text(&r.prompt, &answered))
    });
    let sent = ws
        .grade(
            &batch.url,
            "openai/j",
            &["--batch", "--strategy", "one-shot"],
        )
        .output()
        .unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    let id = run_id(&stderr(&sent));
    let done = ws.finish(&batch.url, &id);
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));
    let mut attempts: BTreeMap<String, usize> = BTreeMap::new();
    for k in batch.submitted().keys() {
        *attempts
            .entry(k.rsplit('-').next().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(
        batch.batches().len(),
        2,
        "the first calls, then the repairs: {attempts:?} {done}"
    );
    assert_eq!(
        batch.submitted().len(),
        ITEMS * 2,
        "one call and one repair an item"
    );
    assert!(batch.submitted().values().all(|n| *n == 1));
}

#[test]
fn ensembles_of_samples_wait_for_every_vote() {
    const ITEMS: usize = 30;
    let ws = Workspace::new(ITEMS, 1_000);
    // About half the votes expire the first time: their cells wait for them (a later
    // batch) instead of being decided by the votes already in.
    let batch = BatchServer::start(1, |r: &Request| {
        if r.earlier == 0
            && r.custom_id
                .starts_with(['0', '1', '2', '3', '4', '5', '6', '7'])
        {
            Outcome::Expired
        } else {
            Outcome::Text(reply_text(&r.prompt))
        }
    });
    let sent = ws
        .grade(
            &batch.url,
            "openai/j",
            &[
                "--batch",
                "--judge",
                "openai/k",
                "--samples",
                "2",
                "--temperature",
                "0.7",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    let id = run_id(&stderr(&sent));
    ws.finish(&batch.url, &id);
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));
    // Every cell has all four votes (two judges × two samples).
    let text = std::fs::read_to_string(ws.run_dir(&id).join("results.jsonl")).unwrap();
    for line in text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            v["result"]["ensemble"]["votes"].as_array().map(Vec::len),
            Some(4),
            "{line}"
        );
    }
    assert!(batch.submitted().values().all(|n| *n == 1));
    // Each batch holds one model's requests (OpenAI takes one model a batch).
    let m = ws.manifest(&id);
    let models: BTreeSet<&str> = m["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, BTreeSet::from(["openai/j", "openai/k"]));
    // Each batch holds one model's requests (OpenAI takes one model a batch).
    let m = ws.manifest(&id);
    let models: BTreeSet<&str> = m["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, BTreeSet::from(["openai/j", "openai/k"]));
}
