//! A pairwise run goes where a run of single answers goes: through the providers' batch
//! engines (sent, answered, resumed to the end: cell for cell the run graded live, and the
//! same pairwise results), and through an ensemble of judges (each order's cell holds
//! every vote, combined by the run's rule — an A/B/tie answer is an option, so by
//! `--combine`; the pairs follow the combined verdicts).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::batch::{BatchServer, Outcome};
use support::batch_run::{run_id, stderr};
use support::pairs::*;
use support::{LlmServer, Seen};

/// `runs show ID --format json`'s pairwise summary.
fn shown_pairs(f: &Folder, url: &str, id: &str) -> Value {
    let o = binary(f.path(), url, &["runs", "show", id, "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["summary"]["pairwise"].clone()
}

#[test]
fn a_pairwise_run_in_batches_equals_the_same_run_graded_live() {
    // `a` is right on 5 of 8 items.
    let items = pair_items_where(8, |i| i < 5);
    let live = LlmServer::start(Duration::ZERO, prefers_right);
    let f = Folder::new(&live, &items);
    let batch = BatchServer::start(1, |r| Outcome::Text(right_reply(&r.prompt)));
    let grade = |url: &str, extra: &[&str]| {
        let mut args = vec!["--format", "jsonl", "--no-cache"];
        args.extend_from_slice(extra);
        f.grading_at(url, &args).output().unwrap()
    };
    let sent = grade(&batch.url, &["--batch"]);
    assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
    // 8 items × 2 criteria × both orders.
    assert!(stderr(&sent).contains("(32 requests)"), "{}", stderr(&sent));
    let id = run_id(&stderr(&sent));
    let done = binary(
        f.path(),
        &batch.url,
        &["runs", "resume", &id, "--wait", "--poll", "0"],
    )
    .output()
    .unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert!(
        stderr(&done).contains("32 of 32 requests answered"),
        "{}",
        stderr(&done)
    );

    let graded = grade(&live.url, &["--save"]);
    assert_eq!(graded.status.code(), Some(0), "{}", stderr(&graded));
    let live_id = run_id(&stderr(&graded));
    let cells =
        |id: &str| support::journal::cells(&f.path().join("runs").join(id).join("results.jsonl")).0;
    let (in_batches, graded_live) = (cells(&id), cells(&live_id));
    assert_eq!(in_batches.len(), 32);
    assert_eq!(in_batches, graded_live, "cell for cell");
    let pairs = shown_pairs(&f, &batch.url, &id);
    assert_eq!(pairs, shown_pairs(&f, &live.url, &live_id));
    let correct = &pairs["criteria"][0];
    assert_eq!(correct["pairs"], 8);
    assert_eq!(correct["position_consistency"]["rate"], 1.0);
    assert_eq!(correct["systems"][0]["wins"], 5);
    assert_eq!(correct["systems"][0]["losses"], 3);
}

/// Judge `openai/first` always prefers the answer shown first; every other the answer
/// that is right.
fn judges(seen: &Seen) -> support::Reply {
    if seen.body["model"] == "first" {
        first_always(seen)
    } else {
        prefers_right(seen)
    }
}

#[test]
fn an_ensemble_of_judges_votes_on_each_order_and_the_pairs_follow_the_combined_verdict() {
    // `a` is right on 3 of 4 items.
    let server = LlmServer::start(Duration::ZERO, judges);
    let folder = Folder::new(&server, &pair_items_where(4, |i| i < 3));
    let graded = folder.grade(&[
        // With the folder's `openai/j`: three judges.
        "--judge",
        "openai/first",
        "--judge",
        "openai/right",
        "--combine",
        "mode",
        "--format",
        "json",
        "--save",
    ]);
    assert_eq!(graded.status.code(), Some(0), "{}", stderr(&graded));
    let run: Value = serde_json::from_slice(&graded.stdout).unwrap();
    // Two judges that say which is right outvote the one that says the first shown: the
    // pairs are as they say.
    let pairs = &run["summary"]["pairwise"];
    let correct = &pairs["criteria"][0];
    assert_eq!(correct["position_consistency"]["rate"], 1.0, "{pairs}");
    assert_eq!(correct["systems"][0]["wins"], 3);
    assert_eq!(correct["systems"][1]["wins"], 1);
    // Every order's cell holds the three votes; where the right answer is shown second the
    // first judge differs (agreement 2 of 3 votes).
    let id = folder.only_run();
    let journal =
        std::fs::read_to_string(folder.path().join("runs").join(&id).join("results.jsonl"))
            .unwrap();
    let mut split = 0;
    let mut cells = 0;
    for line in journal.lines().skip(1) {
        let event: Value = serde_json::from_str(line).unwrap();
        let result = &event["result"];
        let votes = result["ensemble"]["votes"].as_array().unwrap();
        assert_eq!(votes.len(), 3, "{result}");
        cells += 1;
        if votes.iter().any(|v| v["verdict"] != votes[0]["verdict"]) {
            split += 1;
            let agreement = result["ensemble"]["agreement"].as_f64().unwrap();
            assert!((agreement - 2.0 / 3.0).abs() < 1e-9, "{result}");
        }
    }
    // 4 items × 2 criteria × 2 orders; in each pair one order shows the right answer second.
    assert_eq!(cells, 16);
    assert_eq!(split, 8);
    // People's preferences against the combined verdicts, and the votes as judges.
    set_preferences(
        folder.path(),
        "pairs.jsonl",
        "compare.yaml",
        "pat",
        "q0 correct a\nq1 correct a\nq2 correct a\nq3 correct b\n",
    );
    let shown = folder.run(&[
        "metrics",
        "--run",
        &id,
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let metrics: Value = serde_json::from_slice(&shown.stdout).unwrap();
    // The combined preferences are the people's on all four: κ 1.
    assert_eq!(
        metrics["report"]["criteria"][0]["kappa"],
        json!(1.0),
        "{metrics}"
    );
    assert_eq!(
        metrics["between_judges"]["correct.ab"]["raters"], 3,
        "{metrics}"
    );
}
