//! `grade --baseline RUN|latest|FILE` through the real binary: grade and compare in one
//! step, in a clean folder with no workspace (a results file committed to a repository),
//! and against saved runs; the exit code follows the comparison and the gates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod support;

const RUBRIC: &str = r#"id: yes
name: Says yes
criteria:
  - { id: says_yes, requirement: Says yes, weight: 1, method: { check: contains, args: { text: "yes" } } }
  - { id: polite, requirement: Says please, weight: 1, method: { check: contains, args: { text: please } } }
"#;

/// A folder with the rubric and `items.jsonl` of `(id, submission)`; no workspace.
fn folder(items: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
    write_items(dir.path(), "items.jsonl", items);
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    dir
}

fn write_items(d: &Path, name: &str, items: &[(&str, &str)]) {
    let mut lines = String::new();
    for (id, submission) in items {
        lines += &serde_json::json!({"id": id, "submission": submission}).to_string();
        lines.push('\n');
    }
    std::fs::write(d.join(name), lines).unwrap();
}

/// The binary in `dir`, its temporary files in `dir/tmp`.
fn rubricate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("TMPDIR", dir.join("tmp"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap()
}

fn grade(dir: &Path, dataset: &str, extra: &[&str]) -> Output {
    let mut args = vec!["grade", dataset, "--rubric", "rubric.yaml"];
    args.extend_from_slice(extra);
    rubricate(dir, &args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const BASE: &[(&str, &str)] = &[
    ("a", "yes please"),
    ("b", "yes"),
    ("c", "no"),
    ("d", "yes please"),
];

#[test]
fn a_results_file_is_a_baseline_in_a_folder_with_no_workspace() {
    let dir = folder(BASE);
    let d = dir.path();
    let o = grade(
        d,
        "items.jsonl",
        &["--format", "jsonl", "--out", "baseline.jsonl"],
    );
    assert_eq!(o.status.code(), Some(1), "b and c do not pass");
    // Same answers: nothing regressed, so the job passes though items fail.
    let o = grade(
        d,
        "items.jsonl",
        &["--baseline", "baseline.jsonl", "--format", "jsonl"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("baseline: PASS: no regression"),
        "{}",
        stderr(&o)
    );
    // a lost its please (a regression: it passed); c gained a yes.
    write_items(
        d,
        "changed.jsonl",
        &[
            ("a", "yes"),
            ("b", "yes"),
            ("c", "yes"),
            ("d", "yes please"),
        ],
    );
    let o = grade(
        d,
        "changed.jsonl",
        &["--baseline", "baseline.jsonl", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let b = &v["summary"]["baseline"];
    assert_eq!(b["regressed"], true, "{b:#}");
    let regressions = b["regressions"].as_array().unwrap();
    let what: Vec<String> = regressions
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["kind"].as_str().unwrap(),
                r["id"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(what.contains(&"criterion polite".to_owned()), "{what:?}");
    assert!(what.contains(&"item a".to_owned()), "{what:?}");
    // Markdown: the comparison before the items, regressions first within it.
    let o = grade(
        d,
        "changed.jsonl",
        &["--baseline", "baseline.jsonl", "--format", "md"],
    );
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s} missing in\n{md}"));
    assert!(at("### Against the baseline") < at("#### Regressions"));
    assert!(at("#### Regressions") < at("#### Criteria"));
    assert!(at("#### Criteria") < at("that did not pass\n"));
    assert!(md.starts_with("## ❌ rubricate: yes"), "{md}");
    // No workspace was made, and the temporary runs are gone.
    assert!(!d.join("runs").exists());
    assert!(!d.join("rubricate.yaml").exists());
    assert_eq!(std::fs::read_dir(d.join("tmp")).unwrap().count(), 0);
}

#[test]
fn fail_on_significant_and_tolerance_are_the_compare_gates() {
    let dir = folder(BASE);
    let d = dir.path();
    grade(
        d,
        "items.jsonl",
        &["--format", "jsonl", "--out", "baseline.jsonl"],
    );
    write_items(
        d,
        "changed.jsonl",
        &[("a", "yes"), ("b", "yes"), ("c", "no"), ("d", "yes please")],
    );
    // One item lost half its score: a regression, not a significant one.
    let o = grade(
        d,
        "changed.jsonl",
        &["--baseline", "baseline.jsonl", "--fail-on", "significant"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = grade(d, "changed.jsonl", &["--baseline", "baseline.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    // A gate fails the job even when nothing regressed.
    let o = grade(
        d,
        "items.jsonl",
        &["--baseline", "baseline.jsonl", "--gate", "pass_rate>=0.75"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("gate ✗ FAILED pass_rate>=0.75"));
    assert!(stderr(&o).contains("baseline: PASS"));
}

#[test]
fn saved_runs_by_name_and_the_latest_are_baselines_too() {
    let dir = folder(BASE);
    let d = dir.path();
    assert_eq!(rubricate(d, &["init", "."]).status.code(), Some(0));
    grade(
        d,
        "items.jsonl",
        &["--save", "--name", "main", "--format", "jsonl"],
    );
    write_items(
        d,
        "items.jsonl",
        &[("a", "yes"), ("b", "yes"), ("c", "no"), ("d", "yes please")],
    );
    let o = grade(
        d,
        "items.jsonl",
        &["--baseline", "main", "--format", "jsonl"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // `latest`: the newest finished run of this rubric over this very dataset (the file
    // changed, so `main` is not one); the run just made is never its own baseline.
    let o = grade(d, "items.jsonl", &["--baseline", "latest", "--save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--baseline latest: no finished run of rubric 'yes'"));
    let o = grade(d, "items.jsonl", &["--baseline", "latest", "--save"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("baseline: PASS: no regression"));
}

#[test]
fn a_baseline_that_is_not_there_is_refused_before_grading() {
    let dir = folder(BASE);
    let d = dir.path();
    let o = grade(d, "items.jsonl", &["--baseline", "nope.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--baseline nope.jsonl: no such file, and no run 'nope.jsonl'"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "nothing graded");
    // Not a results file: named with its line.
    std::fs::write(d.join("bad.jsonl"), "{\"id\": \"a\"}\n").unwrap();
    let o = grade(
        d,
        "items.jsonl",
        &["--baseline", "bad.jsonl", "--format", "jsonl"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.jsonl:1:1: not a results line"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "nothing graded");
    // The gate's flags need a baseline.
    let o = grade(d, "items.jsonl", &["--tolerance", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn under_github_actions_a_regressed_item_is_annotated_on_its_line() {
    let dir = folder(BASE);
    let d = dir.path();
    grade(
        d,
        "items.jsonl",
        &["--format", "jsonl", "--out", "baseline.jsonl"],
    );
    write_items(
        d,
        "changed.jsonl",
        &[("a", "yes please"), ("b", "yes"), ("c", "no"), ("d", "yes")],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(d)
        .args([
            "grade",
            "changed.jsonl",
            "--rubric",
            "rubric.yaml",
            "--baseline",
            "baseline.jsonl",
            "--format",
            "jsonl",
        ])
        .env("NO_COLOR", "1")
        .env("TMPDIR", d.join("tmp"))
        .env("GITHUB_ACTIONS", "true")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("GITHUB_WORKSPACE", d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    // d (line 4) lost its please: 1.0 → 0.5.
    assert!(
        err.contains("::error file=changed.jsonl,line=4,title=rubricate%3A item d regressed::score 100.0%25 in the baseline, 50.0%25 now"),
        "{err}"
    );
}

/// Ctrl-C while a judge call is in flight: the call is finished and kept, the run stops as
/// cancelled (exit 3) after comparing what was graded, and the temporary baseline is gone.
#[test]
fn ctrl_c_inside_a_trip_to_the_judge_stops_cleanly_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("tmp")).unwrap();
    std::fs::write(
        d.join("judged.yaml"),
        "id: judged\nname: Judged\ncriteria:\n  - { id: good, requirement: The answer is good }\n",
    )
    .unwrap();
    write_items(
        d,
        "items.jsonl",
        &[("a", "one"), ("b", "two"), ("c", "three")],
    );
    std::fs::write(
        d.join("baseline.jsonl"),
        "{\"item\":\"a\",\"score\":1.0,\"passed\":true,\"criteria\":[{\"id\":\"good\",\"verdict\":\"MET\",\"value\":1.0}]}\n",
    )
    .unwrap();
    let server = support::LlmServer::start(std::time::Duration::from_millis(1), |_| {
        support::Reply::Held(serde_json::json!({"reason": "ok", "verdict": "MET"}).to_string())
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(d)
        .args([
            "grade",
            "items.jsonl",
            "--rubric",
            "judged.yaml",
            "--judge",
            "openai/j",
            "--concurrency",
            "1",
            "--baseline",
            "baseline.jsonl",
            "--format",
            "jsonl",
        ])
        .env("NO_COLOR", "1")
        .env("TMPDIR", d.join("tmp"))
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("RUBRICATE_CACHE_DIR", d.join("cache"))
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A call is in flight (held by the server).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.seen().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no judge call");
        std::thread::yield_now();
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // Once the run says it is stopping, the call in flight is answered: it is kept, and
    // nothing new starts.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead as _;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.starts_with("stopping:") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run says it is stopping");
    server.release();
    let out = child.wait_with_output().unwrap();
    let err = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("stopped: the run was cancelled"), "{err}");
    assert!(err.contains("baseline:"), "{err}");
    let graded = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!((1..3).contains(&graded), "{graded} items written");
    assert_eq!(
        std::fs::read_dir(d.join("tmp")).unwrap().count(),
        0,
        "temporary runs left"
    );
}
