//! Crash safety of saved runs: a judged run of 2,000 cells against the loopback server is
//! killed with SIGKILL at seeded random points (the first run and then ten resumes), resumed
//! each time, and must end equal to an uninterrupted run cell for cell, with no cell twice.
//! Damaged runs give clear errors and are left as they were.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng};
use serde_json::{Value, json};
use support::{LlmServer, Reply, Seen, verdict};

const RUBRIC: &str = "id: crash
name: Crash
criteria:
  - { id: a, requirement: Mentions apples, weight: 1 }
  - { id: b, requirement: Mentions bananas, weight: 1 }
  - { id: c, requirement: Mentions cherries, weight: 1 }
  - { id: d, requirement: Mentions dates, weight: -1 }
";

const ITEMS: usize = 500;
const CELLS: usize = ITEMS * 4;

/// MET when the submission names the fruit of the criterion.
fn rule(seen: &Seen) -> Reply {
    let p = seen.prompt();
    let fruit = ["apples", "bananas", "cherries", "dates"]
        .into_iter()
        .find(|f| p.contains(&format!("Mentions {f}")))
        .unwrap_or("none");
    let submission = p.split("<<<SUBMISSION").nth(1).unwrap_or_default();
    let met = submission.contains(fruit);
    verdict(
        &format!("looked for {fruit}"),
        json!(if met { "MET" } else { "UNMET" }),
    )
}

struct Workspace {
    dir: tempfile::TempDir,
    url: String,
}

impl Workspace {
    fn new(server: &LlmServer) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubricate.yaml"), "").unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
        let fruits = ["apples", "bananas", "cherries", "dates"];
        let mut lines = String::new();
        for i in 0..ITEMS {
            let picked: Vec<&str> = fruits
                .iter()
                .enumerate()
                .filter(|(k, _)| (i >> k) & 1 == 1)
                .map(|(_, f)| *f)
                .collect();
            let item = json!({"id": format!("i{i}"), "submission": format!("Basket {i}: {}", picked.join(", "))});
            lines.push_str(&item.to_string());
            lines.push('\n');
        }
        std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
        Workspace {
            dir,
            url: server.url.clone(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
        cmd.current_dir(self.dir.path())
            .args(args)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{}/v1", self.url))
            .env("OPENAI_API_KEY", "sk-crash")
            // No cache: every resumed cell is really asked again.
            .env("RUBRICATE_CACHE_DIR", self.dir.path().join("cache"));
        cmd
    }

    fn grade(&self, extra: &[&str]) -> Command {
        let mut args = vec![
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--format",
            "jsonl",
            "--out",
            "out.jsonl",
            "--judge",
            "openai/j",
            "--no-cache",
            "--concurrency",
            "4",
            "--save",
        ];
        args.extend_from_slice(extra);
        self.command(&args)
    }

    fn run_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join("runs").join(id)
    }
}

/// Starts `cmd`, reads its run id from stderr, waits until the journal holds at least
/// `cells` more cells than `before`, then kills it with SIGKILL.
fn kill_after(ws: &Workspace, mut cmd: Command, id: Option<&str>, cells: usize) -> String {
    let mut child: Child = cmd
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let id = if let Some(id) = id {
        id.to_owned()
    } else {
        let stderr = child.stderr.take().unwrap();
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line).unwrap();
        line.strip_prefix("run ")
            .and_then(|l| l.split(':').next())
            .unwrap_or_else(|| panic!("no run id in {line:?}"))
            .to_owned()
    };
    let journal = ws.run_dir(&id).join("results.jsonl");
    let target = lines(&journal) + cells;
    // Wait on the condition (the journal grew), or on the process ending by itself.
    loop {
        if lines(&journal) >= target || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill(); // SIGKILL on Unix
    let _ = child.wait();
    id
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// A cell's (verdict, value, reason) by (item, criterion).
use support::journal::Cells as CellMap;

/// Every cell of a run, and the line count.
/// The run's cells as rubricate reads them (a kill mid-write leaves a torn last line).
fn cells(ws: &Workspace, id: &str) -> (CellMap, usize) {
    support::journal::cells(&ws.run_dir(id).join("results.jsonl"))
}

fn run_ok(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_run_killed_again_and_again_resumes_to_the_uninterrupted_result() {
    let server = LlmServer::start(Duration::from_millis(1), rule);
    let ws = Workspace::new(&server);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);

    // The reference: one uninterrupted run.
    let reference = run_ok(ws.grade(&["--name", "reference"]));
    let ref_id = String::from_utf8_lossy(&reference.stderr)
        .lines()
        .find_map(|l| {
            l.strip_prefix("run ")
                .and_then(|l| l.split(':').next())
                .map(str::to_owned)
        })
        .unwrap();
    let (expected, n) = cells(&ws, &ref_id);
    assert_eq!(n, CELLS);

    // The same run, killed at random points: once while grading, then ten resumes.
    let id = kill_after(
        &ws,
        ws.grade(&["--name", "crashy"]),
        None,
        rng.random_range(1..200),
    );
    let mut kills = 1;
    for _ in 0..10 {
        let (_, done) = cells(&ws, &id);
        if done >= CELLS {
            break;
        }
        kill_after(
            &ws,
            ws.command(&["runs", "resume", &id]),
            Some(&id),
            rng.random_range(1..200),
        );
        kills += 1;
    }
    assert!(
        kills >= 10,
        "the run finished too early to be killed ten times ({kills})"
    );
    let finished = run_ok(ws.command(&["runs", "resume", &id]));
    let (got, count) = cells(&ws, &id);
    assert_eq!(count, CELLS, "no cell lost, none twice");
    assert_eq!(
        got, expected,
        "cell for cell equal to the uninterrupted run"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.run_dir(&id).join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert!(manifest["finished_at"].is_string(), "{manifest}");
    assert_eq!(manifest["totals"]["items"], ITEMS);
    let said = String::from_utf8_lossy(&finished.stderr);
    assert!(said.contains(&format!("run {id}: ")), "{said}");

    // A finished run resumed again asks nothing.
    let before = server.seen().len();
    run_ok(ws.command(&["runs", "resume", &id]));
    assert_eq!(server.seen().len(), before);
    // `runs show` rebuilds every item from the journal.
    let show = run_ok(ws.command(&["runs", "show", &id, "--format", "jsonl"]));
    assert_eq!(String::from_utf8_lossy(&show.stdout).lines().count(), ITEMS);
    let compare = run_ok(ws.command(&["runs", "compare", &ref_id, &id]));
    let text = String::from_utf8_lossy(&compare.stdout);
    assert!(text.contains("0 items changed"), "{text}");
}

#[test]
fn damaged_runs_give_clear_errors_and_stay_as_they_were() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Workspace::new(&server);
    let out = run_ok(ws.grade(&[]));
    let id = String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| {
            l.strip_prefix("run ")
                .and_then(|l| l.split(':').next())
                .map(str::to_owned)
        })
        .unwrap();
    let journal = ws.run_dir(&id).join("results.jsonl");
    let manifest = ws.run_dir(&id).join("manifest.json");
    let good_journal = std::fs::read(&journal).unwrap();
    let good_manifest = std::fs::read(&manifest).unwrap();
    let refused = |what: &str, expect: &str| {
        let out = ws.command(&["runs", "resume", &id]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(expect), "{what}: {err}");
    };

    // Garbage in the middle of the journal.
    let mut damaged = good_journal.clone();
    damaged.splice(200..200, b"garbage line\n".iter().copied());
    let cut = damaged[..200].iter().rposition(|b| *b == b'\n').unwrap() + 1;
    damaged.drain(200..200 + 13);
    damaged.splice(cut..cut, b"garbage line\n".iter().copied());
    std::fs::write(&journal, &damaged).unwrap();
    refused("garbage", "results.jsonl:2: not a result line");
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        damaged,
        "nothing rewritten"
    );

    // A results file from another rubric version.
    let mut other = String::from_utf8(good_journal.clone()).unwrap();
    let header_end = other.find('\n').unwrap();
    other.replace_range(
        ..header_end,
        &json!({"run": id, "rubric_hash": "0123456789abcdef"}).to_string(),
    );
    std::fs::write(&journal, &other).unwrap();
    refused(
        "foreign",
        "the results file is from another run or rubric version",
    );

    // A truncated manifest.
    std::fs::write(&journal, &good_journal).unwrap();
    std::fs::write(&manifest, &good_manifest[..good_manifest.len() / 2]).unwrap();
    refused("manifest", "the run manifest is damaged");
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        good_journal,
        "the journal is untouched"
    );

    // A changed dataset is not mixed into the run.
    std::fs::write(&manifest, &good_manifest).unwrap();
    std::fs::write(
        ws.dir.path().join("items.jsonl"),
        "{\"submission\": \"other\"}\n",
    )
    .unwrap();
    refused("dataset", "the dataset changed since run");
}
