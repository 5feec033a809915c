//! Pairwise judging through the real binary against the loopback judge: pair datasets
//! (`a`/`b`, `candidates`), a rubric in `mode: pairwise` asked in both orders as ordinary
//! judged cells (journal, cache, resume), and the results per criterion: win/tie/loss,
//! position consistency and Bradley–Terry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::pairs::*;
use support::{LlmServer, Seen};

#[test]
fn both_orders_are_asked_blind_each_answer_in_its_own_block_and_journalled() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    let f = Folder::new(&server, &pair_items(2));
    let o = f.grade(&["--save", "--format", "jsonl"]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    let seen = server.seen();
    // 2 items × 2 criteria × 2 orders.
    assert_eq!(seen.len(), 8, "{}", stderr(&o));
    for s in &seen {
        let p = s.prompt();
        assert!(
            p.contains("Which answer meets this criterion better?"),
            "{p}"
        );
        assert_eq!(p.matches("<<<ANSWER A ").count(), 1, "{p}");
        assert_eq!(p.matches("<<<ANSWER B ").count(), 1, "{p}");
        assert!(p.contains("<<<TASK "), "{p}");
        // Blind: the candidates' ids never reach the judge.
        assert!(!p.contains("[a]") && !p.contains("[b]"), "{p}");
    }
    // Each order of q0's `correct` shows the other answer first.
    let q0: Vec<&Seen> = seen
        .iter()
        .filter(|s| {
            s.prompt().contains("Question 0?") && s.prompt().contains("Gives the right answer")
        })
        .collect();
    assert_eq!(q0.len(), 2);
    assert_ne!(answer(q0[0], "A"), answer(q0[1], "A"));
    let id = f.only_run();
    let (cells, _) = support::journal::cells(&f.path().join("runs").join(id).join("results.jsonl"));
    let ids: Vec<(u64, &str)> = cells.keys().map(|(i, c)| (*i, c.as_str())).collect();
    assert_eq!(
        ids,
        [
            (0, "brief.ab"),
            (0, "brief.ba"),
            (0, "correct.ab"),
            (0, "correct.ba"),
            (1, "brief.ab"),
            (1, "brief.ba"),
            (1, "correct.ab"),
            (1, "correct.ba"),
        ]
    );
    // Both orders' answers are kept: a is right in q0, so "A" first and "B" reversed.
    assert_eq!(
        cells[&(0, "correct.ab".to_owned())].0,
        json!({"choice": "A"})
    );
    assert_eq!(
        cells[&(0, "correct.ba".to_owned())].0,
        json!({"choice": "B"})
    );
    assert_eq!(cells[&(0, "correct.ba".to_owned())].2, json!("B is right"));
}

#[test]
fn the_cache_serves_a_second_pairwise_run_with_no_calls() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    let f = Folder::new(&server, &pair_items(3));
    let first = f.grade(&["--format", "jsonl"]);
    assert!(
        first.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&first)
    );
    let calls = server.seen().len();
    assert_eq!(calls, 12);
    let second = f.grade(&["--format", "jsonl"]);
    assert!(
        second.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&second)
    );
    assert_eq!(
        server.seen().len(),
        calls,
        "the second run asked the judge again"
    );
    let verdicts = |o: &Output| -> Vec<(Value, Vec<Value>)> {
        stdout(o)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| {
                let criteria = v["criteria"].as_array().unwrap().iter();
                (
                    v["item"].clone(),
                    criteria.map(|c| c["verdict"].clone()).collect(),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&first), verdicts(&second));
    assert!(stdout(&second).contains("\"cache_hit\":true"));
}

#[test]
fn a_killed_pairwise_run_resumes_without_losing_or_repeating_a_call() {
    let server = LlmServer::start(Duration::from_millis(5), prefers_right);
    let f = Folder::new(&server, &pair_items(60));
    let (id, mut child) = support::batch_run::spawn(f.grading(&[
        "--no-cache",
        "--concurrency",
        "2",
        "--save",
        "--format",
        "jsonl",
    ]));
    let journal = f.path().join("runs").join(&id).join("results.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
    let deadline = Instant::now() + Duration::from_secs(120);
    while lines() < 30 && child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the run never journalled 30 cells"
        );
        std::thread::yield_now();
    }
    let _ = child.kill();
    let _ = child.wait();
    let (before, _) = support::journal::cells(&journal);
    assert!(before.len() < 240, "the run finished before it was killed");
    let asked_before = server.seen().len();
    let o = f.run(&["runs", "resume", &id]);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    // Every cell once (a cell journalled twice fails `cells`), none lost.
    let (after, count) = support::journal::cells(&journal);
    assert_eq!(after.len(), 240);
    assert_eq!(count, 240);
    // The resume asked exactly the cells that were missing (calls in flight when killed
    // were asked, never journalled, and are asked again).
    let asked = server.seen().len() - asked_before;
    assert_eq!(asked, 240 - before.len());
    for (k, v) in &before {
        assert_eq!(&after[k], v, "cell {k:?} changed on resume");
    }
}

/// Runs `args` in `f`, which must exit 2 with every one of `says` in its stderr.
fn refused(f: &Folder, args: &[&str], says: &[&str]) {
    let o = f.run(args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for s in says {
        assert!(stderr(&o).contains(s), "no {s:?} in {}", stderr(&o));
    }
}

#[test]
fn bad_pair_shapes_and_mismatched_rubrics_are_refused_with_where_and_what_to_do() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    let f = Folder::new(&server, &[json!({"id": "q1", "a": "one"})]);
    let write = |name: &str, text: &str| std::fs::write(f.path().join(name), text).unwrap();
    refused(
        &f,
        &["validate", "pairs.jsonl"],
        &["pairs.jsonl:1:1: item 'q1' has an answer `a` but no `b`"],
    );
    // A pairwise rubric over answers of one: refused before any call.
    write(
        "single.jsonl",
        "{\"id\": \"s1\", \"submission\": \"one\"}\n",
    );
    let judged = |data: &'static str, rubric: &'static str| {
        ["grade", data, "--rubric", rubric, "--judge", "openai/j"]
    };
    refused(
        &f,
        &judged("single.jsonl", "compare.yaml"),
        &["single.jsonl:1: item 's1' has one answer, but rubric 'compare' is pairwise"],
    );
    // A pair dataset under a rubric of one answer: refused, naming the item.
    write(
        "one.yaml",
        "id: one\ncriteria:\n  - { id: c, requirement: Is right }\n",
    );
    write("ok.jsonl", &format!("{}\n", pair_items(1)[0]));
    refused(
        &f,
        &judged("ok.jsonl", "one.yaml"),
        &[
            "ok.jsonl:1: item 'q0' carries candidates to compare; grade it with a rubric in `mode: pairwise`",
        ],
    );
    // A pairwise rubric with a check: located.
    write(
        "bad.yaml",
        "id: bad\nmode: pairwise\ncriteria:\n  - { id: c, requirement: Says hi, method: { check: contains, args: { text: hi } } }\n",
    );
    refused(
        &f,
        &["validate", "bad.yaml"],
        &["bad.yaml:4:", "criterion 'c' is not judged"],
    );
    assert!(server.seen().is_empty());
}

/// The `summary.pairwise` of a `--format json` grade.
#[test]
fn a_judge_that_always_prefers_position_a_makes_every_pair_a_tie_and_consistency_zero() {
    let server = LlmServer::start(Duration::from_millis(0), first_always);
    let f = Folder::new(&server, &pair_items(6));
    let o = f.grade(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p = pairwise_summary(&o);
    assert_eq!(p["systems"], json!(["a", "b"]));
    for c in p["criteria"].as_array().unwrap() {
        assert_eq!(c["pairs"], 6);
        assert_eq!(c["position_consistency"]["count"], 0);
        assert_eq!(c["position_consistency"]["rate"], 0.0);
        for s in c["systems"].as_array().unwrap() {
            assert_eq!(s["ties"], 6, "{s}");
            assert_eq!(s["win_rate"]["rate"], 0.0);
            assert_eq!(s["tie_rate"]["rate"], 1.0);
        }
        assert!(
            c.get("bradley_terry").is_none(),
            "two candidates have no ratings"
        );
    }
}

#[test]
fn a_judge_that_prefers_the_better_answer_gives_the_right_win_rate() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    // `a` is right on 7 of 10 items.
    let f = Folder::new(&server, &pair_items_where(10, |i| i < 7));
    let o = f.grade(&["--format", "json", "--save"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p = pairwise_summary(&o);
    let correct = &p["criteria"][0];
    assert_eq!(correct["criterion"], "correct");
    assert_eq!(correct["position_consistency"]["rate"], 1.0);
    let a = &correct["systems"][0];
    assert_eq!(
        (a["wins"].as_u64(), a["losses"].as_u64()),
        (Some(7), Some(3))
    );
    assert_eq!(a["win_rate"]["rate"], 0.7);
    // Wilson 95 % for 7 of 10: 0.397–0.892.
    let ci = &a["win_rate"]["ci"];
    assert!((ci["low"].as_f64().unwrap() - 0.3968).abs() < 1e-3, "{ci}");
    assert!((ci["high"].as_f64().unwrap() - 0.8922).abs() < 1e-3, "{ci}");
    assert_eq!(correct["systems"][1]["win_rate"]["rate"], 0.3);
    // `runs show` reads the same figures back from the journal.
    let id = f.only_run();
    let shown = f.run(&["runs", "show", &id, "--format", "table"]);
    let text = stdout(&shown);
    assert!(
        text.contains("Pairwise: a vs b (both orders judged; orders that disagree are a tie)"),
        "{text}{}",
        stderr(&shown)
    );
    assert!(
        text.contains("correct: 10 pairs, both orders agree in 100% [72–100%]"),
        "{text}"
    );
    assert!(
        text.contains("a  wins 70% [40–89%]  ties 0% [0–28%]  losses 30% [11–60%]"),
        "{text}"
    );
    let md = stdout(&f.run(&["runs", "show", &id, "--format", "md"]));
    assert!(md.contains("| a | 70.0% [39.7–89.2%] |"), "{md}");
}

#[test]
fn three_candidates_are_judged_pair_by_pair_and_rated_by_bradley_terry() {
    let server = LlmServer::start(Duration::from_millis(0), more_plus);
    // x is best on most items, z worst; each candidate loses somewhere.
    let items: Vec<Value> = (0..6)
        .map(|i| {
            let (x, y, z) = match i {
                0..=2 => ("+++", "++", "+"),
                3 => ("+", "+++", "++"),
                4 => ("++", "+", "+++"),
                _ => ("+++", "+", "++"),
            };
            json!({"id": format!("t{i}"), "prompt": "Rate me", "candidates": [
                {"id": "x", "submission": x}, {"id": "y", "submission": y}, {"id": "z", "submission": z}]})
        })
        .collect();
    let f = Folder::new(&server, &items);
    let o = f.grade(&["--format", "json", "--no-cache"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // 6 items × 2 criteria × 3 pairs × 2 orders (items alike are asked again: no cache).
    assert_eq!(server.seen().len(), 72);
    let p = pairwise_summary(&o);
    let c = &p["criteria"][0];
    assert_eq!(c["pairs"], 18);
    let bt = c["bradley_terry"]["Ok"]
        .as_array()
        .unwrap_or_else(|| panic!("{c}"));
    let rating = |id: &str| {
        bt.iter()
            .find(|r| r["id"] == id)
            .and_then(|r| r["rating"].as_f64())
            .unwrap()
    };
    assert!(
        rating("x") > rating("y") && rating("x") > rating("z"),
        "{bt:?}"
    );
    assert!((rating("x") + rating("y") + rating("z")).abs() < 1e-9);
    let table = stdout(&f.grade(&["--format", "table", "--save"]));
    assert!(
        table.contains("Bradley–Terry (log-strength, 95% interval): x +"),
        "{table}"
    );
    // A preference names one of three: metrics says it compares people on pairs only.
    set_preferences(
        f.path(),
        "pairs.jsonl",
        "compare.yaml",
        "pat",
        "t0 correct x\n",
    );
    let metrics = f.run(&["metrics", "--run", &f.only_run(), "--bootstrap", "0"]);
    assert!(
        stdout(&metrics).contains(
            "people's preferences are compared on runs of two candidates; this run compares 3"
        ),
        "{}{}",
        stdout(&metrics),
        stderr(&metrics)
    );
}

#[test]
fn pairs_joins_two_saved_runs_by_item_id_reports_the_unmatched_and_grades_them() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    let f = Folder::new(&server, &[]);
    let write = |name: &str, text: &str| std::fs::write(f.path().join(name), text).unwrap();
    write(
        "said.yaml",
        "id: said\ncriteria:\n  - { id: any, requirement: Says something, method: { check: regex, args: { pattern: \".\" } } }\n",
    );
    let answers = |ids: &[(&str, &str)]| -> String {
        let mut lines = String::new();
        for (id, s) in ids {
            lines.push_str(
                &json!({"id": id, "prompt": format!("Q {id}?"), "submission": s}).to_string(),
            );
            lines.push('\n');
        }
        lines
    };
    write(
        "old.jsonl",
        &answers(&[
            ("q1", "a wrong one"),
            ("q2", "the right answer"),
            ("q3", "a wrong one"),
            ("q4", "a wrong one"),
        ]),
    );
    write(
        "new.jsonl",
        &answers(&[
            ("q5", "x"),
            ("q4", "the right answer"),
            ("q3", "the right answer"),
            ("q2", "a wrong one"),
        ]),
    );
    for (data, name) in [("old.jsonl", "old"), ("new.jsonl", "new")] {
        let o = f.run(&[
            "grade",
            data,
            "--rubric",
            "said.yaml",
            "--name",
            name,
            "--format",
            "jsonl",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = f.run(&["pairs", "old", "new", "--out", "joined.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("pairs: 3 items graded by both old and new, written to joined.jsonl"),
        "{said}"
    );
    assert!(
        said.contains("pairs: 1 item only in old (left out): 'q1'"),
        "{said}"
    );
    assert!(
        said.contains("pairs: 1 item only in new (left out): 'q5'"),
        "{said}"
    );
    let joined: Vec<Value> = std::fs::read_to_string(f.path().join("joined.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(joined.len(), 3);
    assert_eq!(
        joined[0],
        json!({"id": "q2", "prompt": "Q q2?", "candidates": [
            {"id": "old", "submission": "the right answer"},
            {"id": "new", "submission": "a wrong one"}]})
    );
    let o = f.run(&["validate", "joined.jsonl"]);
    assert!(
        stdout(&o).contains("3 pair items to compare, candidates 'old', 'new'"),
        "{}",
        stdout(&o)
    );
    // Graded at once: new is right on q3 and q4, old on q2.
    let o = f.run(&[
        "pairs",
        "old",
        "new",
        "--rubric",
        "compare.yaml",
        "--judge",
        "openai/j",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p = pairwise_summary(&o);
    assert_eq!(p["systems"], json!(["old", "new"]));
    assert_eq!(p["criteria"][0]["systems"][1]["wins"], 2);
    assert_eq!(p["criteria"][0]["systems"][0]["wins"], 1);
    refused(&f, &["pairs", "old", "new"], &["give --rubric RUBRIC"]);
    refused(
        &f,
        &["pairs", "old", "old", "--out", "x.jsonl"],
        &["both runs are 'old'"],
    );
}

#[test]
fn the_worked_example_validates_and_grades_as_the_readme_runs_it() {
    let server = LlmServer::start(Duration::from_millis(0), first_always);
    let f = Folder::new(&server, &[]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let (rubric, pairs) = (root.join("compare.yaml"), root.join("pairs.jsonl"));
    let (rubric, pairs) = (rubric.to_str().unwrap(), pairs.to_str().unwrap());
    let o = f.run(&["validate", rubric, pairs]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("5 pair items to compare, candidates 'a', 'b'"),
        "{}",
        stdout(&o)
    );
    let o = f.run(&[
        "grade", pairs, "--rubric", rubric, "--judge", "openai/j", "--format", "table",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // 5 items × 3 criteria × 2 orders; a judge that always says A agrees with itself never.
    assert_eq!(server.seen().len(), 30);
    assert!(
        stdout(&o).contains("concise: 5 pairs, both orders agree in 0% [0–43%]"),
        "{}",
        stdout(&o)
    );
}
