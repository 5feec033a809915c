//! The run engine (`rubricate::run`) driven directly against the loopback judge: pause
//! means no new call starts, cancel leaves a run that resumes exactly its missing cells,
//! a rubric that does not compile leaves no run behind, re-grading what changed records
//! the whole run's totals, and a journal that cannot be written stops the run unfinished.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rubricate::run::{
    self, Control, Env, GradeSettings, JudgeSettings, NewRun, Recording, RunSettings, RunsHome,
};
use rubricate::store::WorkspaceConfig;
use serde_json::json;
use support::{LlmServer, Reply, Seen, verdict};

const RUBRIC: &str = "id: fruit
name: Fruit
criteria:
  - { id: a, requirement: Mentions apples, weight: 1 }
  - { id: b, requirement: Mentions bananas, weight: 1 }
  - { id: c, requirement: Mentions cherries, weight: 1 }
";

/// MET when the submission names the criterion's fruit.
fn rule(seen: &Seen) -> Reply {
    let p = seen.prompt();
    let fruit = ["apples", "bananas", "cherries"]
        .into_iter()
        .find(|f| p.contains(&format!("Mentions {f}")))
        .unwrap_or("none");
    let submission = p.split("<<<SUBMISSION").nth(1).unwrap_or_default();
    let met = submission.contains(fruit);
    verdict("looked", json!(if met { "MET" } else { "UNMET" }))
}

struct Ws {
    dir: tempfile::TempDir,
    config: WorkspaceConfig,
}

impl Ws {
    fn new(server: &LlmServer, items: usize) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("rubricate.yaml"),
            format!("providers:\n  loop:\n    base_url: {}/v1\n", server.url),
        )
        .unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
        let mut lines = String::new();
        for i in 0..items {
            let fruit = ["apples", "bananas", "cherries"][i % 3];
            lines.push_str(
                &json!({"id": format!("i{i}"), "submission": format!("A basket of {fruit}")})
                    .to_string(),
            );
            lines.push('\n');
        }
        std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
        let (config, _) = rubricate::store::load_config(dir.path()).unwrap();
        Ws { dir, config }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn home(&self) -> RunsHome {
        RunsHome {
            runs_dir: self.path("runs"),
            root: self.dir.path().to_path_buf(),
        }
    }

    fn env(&self) -> Env<'_> {
        Env {
            config: &self.config,
            cache_from: self.dir.path(),
        }
    }

    fn settings(concurrency: usize) -> RunSettings {
        RunSettings {
            judge: JudgeSettings {
                judge: vec!["loop/j".into()],
                no_cache: true,
                ..JudgeSettings::default()
            },
            grade: GradeSettings {
                concurrency: Some(concurrency),
                ..GradeSettings::default()
            },
            ..RunSettings::default()
        }
    }

    fn start(&self, control: &Control, concurrency: usize) -> run::Session {
        run::start(
            NewRun {
                dataset: &self.path("items.jsonl"),
                rubric: Some(
                    rubricate::formats::load_rubric(
                        &self.path("rubric.yaml").display().to_string(),
                    )
                    .unwrap(),
                ),
                settings: Self::settings(concurrency),
                record: Some((self.home(), None)),
                cell_events: false,
                copied: Vec::new(),
                only: None,
            },
            self.env(),
            control,
        )
        .unwrap()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Polls `done` until it holds, failing after a generous deadline.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

fn quiet(_: run::RunEvent) -> std::future::Ready<Result<(), String>> {
    std::future::ready(Ok(()))
}

fn journal_lines(run_dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run_dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn after_pause_no_new_judge_call_starts_and_resume_finishes_every_cell_once() {
    let server = LlmServer::start(Duration::from_millis(15), rule);
    let ws = Ws::new(&server, 500);
    let control = Control::default();
    let session = ws.start(&control, 16);
    let id = session.run_id().unwrap().to_owned();
    let rt = runtime();
    let run = rt.spawn(session.run(quiet));
    wait_for("the run to get going", || server.seen().len() >= 200);
    control.pause();
    let at_pause = server.seen().len();
    // Calls already sent finish; none waits at the gate with a request on its way.
    wait_for("the calls in flight to finish", || control.in_flight() == 0);
    let after = server.seen().len();
    assert!(
        after - at_pause <= 16,
        "{} requests arrived after the pause (at most the concurrency limit, 16)",
        after - at_pause
    );
    assert!(!run.is_finished(), "the run waits while paused");
    // Still paused: every call is held at the gate, so nothing more can arrive.
    assert_eq!(control.in_flight(), 0);
    assert_eq!(server.seen().len(), after);
    control.resume();
    let outcome = rt.block_on(run).unwrap();
    assert!(outcome.finished, "{:?}", outcome.ended.stop);
    assert_eq!(server.seen().len(), 1500, "every cell asked exactly once");
    assert_eq!(journal_lines(&ws.path("runs").join(&id)).len(), 1500);
    let totals = outcome.totals.unwrap();
    assert_eq!(
        (totals.items, totals.cells, totals.failed_cells),
        (500, 1500, 0)
    );
}

#[test]
fn a_cancelled_run_keeps_no_unsent_cell_and_continues_with_exactly_the_missing_ones() {
    let server = LlmServer::start(Duration::from_millis(10), rule);
    let ws = Ws::new(&server, 300);
    let control = Control::default();
    let session = ws.start(&control, 8);
    let id = session.run_id().unwrap().to_owned();
    let rt = runtime();
    let run = rt.spawn(session.run(quiet));
    wait_for("some cells", || server.seen().len() >= 150);
    control.cancel();
    let outcome = rt.block_on(run).unwrap();
    assert!(!outcome.finished);
    assert_eq!(outcome.ended.stop, Some(run::Stop::Cancelled));
    let run_dir = ws.path("runs").join(&id);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert!(
        manifest["finished_at"].is_null(),
        "a cancelled run is not finished"
    );
    let first = journal_lines(&run_dir);
    assert!(
        first.iter().all(|c| c["result"]["failure"].is_null()),
        "no cell the cancel kept from being sent is journalled as a failure"
    );
    let sent = server.seen().len();
    assert!(first.len() <= sent && first.len() < 900);
    // Continue: exactly the cells the journal lacks are asked.
    let control = Control::default();
    let session = run::reopen(&ws.path("runs"), &id, &[], ws.env(), &control, false).unwrap();
    assert_eq!(session.prior.len(), first.len());
    let outcome = rt.block_on(session.run(quiet));
    assert!(outcome.finished, "{:?}", outcome.ended.stop);
    assert_eq!(server.seen().len() - sent, 900 - first.len());
    let all = journal_lines(&run_dir);
    assert_eq!(all.len(), 900, "no cell twice");
    let totals = outcome.totals.unwrap();
    assert_eq!((totals.items, totals.cells), (300, 900));
    assert_eq!(totals.passed, 0, "each basket has one fruit of three");
}

#[test]
fn a_rubric_that_does_not_compile_starts_no_run_and_leaves_no_folder() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&server, 3);
    // A template with a syntax error loads (it is only text) but does not compile.
    std::fs::write(
        ws.path("bad.yaml"),
        "id: bad\nname: Bad\ncriteria:\n  - id: a\n    requirement: Mentions apples\n    weight: 1\n    method: {judge: {template: \"{% if %}\"}}\n",
    )
    .unwrap();
    // It loads (a template is only text until compiled) …
    let rubric =
        rubricate::formats::load_rubric(&ws.path("bad.yaml").display().to_string()).unwrap();
    // … and the run refuses to start, naming where the problem is.
    let e = run::start(
        NewRun {
            dataset: &ws.path("items.jsonl"),
            rubric: Some(rubric),
            settings: Ws::settings(4),
            record: Some((ws.home(), None)),
            cell_events: false,
            copied: Vec::new(),
            only: None,
        },
        ws.env(),
        &Control::default(),
    )
    .err()
    .expect("the run must not start");
    assert!(e.to_string().contains("bad.yaml"), "{e}");
    // A refused rubric, not a disk that failed: a front end may read it differently.
    assert_eq!(e.kind(), run::ErrorKind::Refused, "{e:?}");
    let runs = std::fs::read_dir(ws.path("runs")).map_or(0, Iterator::count);
    assert_eq!(runs, 0, "no run folder is created");
    assert!(server.seen().is_empty());
}

#[test]
fn regrading_what_changed_records_the_whole_runs_totals() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&server, 40);
    let control = Control::default();
    let rt = runtime();
    let first = rt.block_on(ws.start(&control, 8).run(quiet));
    assert!(first.finished);
    let earlier = Recording::open(&ws.path("runs"), first.run_id.as_deref().unwrap())
        .unwrap()
        .manifest;
    // Criterion c changes; a and b are copied, c is judged again.
    std::fs::write(
        ws.path("rubric.yaml"),
        RUBRIC.replace("Mentions cherries", "Mentions cherries or plums"),
    )
    .unwrap();
    let rubric =
        rubricate::formats::load_rubric(&ws.path("rubric.yaml").display().to_string()).unwrap();
    let settings = Ws::settings(8);
    let (_, copied) = run::regrade::unchanged_cells(
        &ws.path("runs"),
        &earlier,
        &ws.path("items.jsonl"),
        &rubric,
        &settings.judge,
    )
    .unwrap();
    assert_eq!(copied.len(), 80);
    let before = server.seen().len();
    let session = run::start(
        NewRun {
            dataset: &ws.path("items.jsonl"),
            rubric: Some(rubric),
            settings,
            record: Some((ws.home(), None)),
            cell_events: false,
            copied,
            only: None,
        },
        ws.env(),
        &Control::default(),
    )
    .unwrap();
    let second = rt.block_on(session.run(quiet));
    assert!(second.finished);
    assert_eq!(
        server.seen().len() - before,
        40,
        "only criterion c is judged"
    );
    let rec = Recording::open(&ws.path("runs"), second.run_id.as_deref().unwrap()).unwrap();
    let replayed = rec.replay(|_, _| {}).unwrap().summary;
    let totals = rec.manifest.totals.unwrap();
    assert_eq!(
        (totals.items, totals.passed, totals.cells, totals.mean_score),
        (
            replayed.items,
            replayed.passed,
            replayed.cells,
            replayed.mean_score()
        )
    );
    assert_eq!((totals.items, totals.cells), (40, 120));
    let mean = totals.mean_score.unwrap();
    assert!((mean - 1.0 / 3.0).abs() < 1e-9, "{mean}");
}

/// A small tmpfs mounted over a folder, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(at.to_path_buf()))
    }
}

impl SmallDisk {
    /// The disk, or `None` (the test skips) where tmpfs cannot be mounted — never under
    /// `CI=true`, which must run as root.
    fn mount_or_skip(at: &Path, size: &str) -> Option<SmallDisk> {
        let disk = SmallDisk::mount(at, size);
        if disk.is_none() {
            assert!(
                std::env::var_os("CI").is_none(),
                "mounting a small tmpfs is needed for this test (run as root)"
            );
            eprintln!("skipped: cannot mount a tmpfs here (not root)");
        }
        disk
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_journal_that_cannot_be_written_stops_the_run_and_leaves_it_unfinished() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&server, 2000);
    // The workspace's runs/ on a disk that fills up a few hundred cells in.
    let Some(_disk) = SmallDisk::mount_or_skip(&ws.path("runs"), "192k") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(ws.dir.path())
        .args([
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--judge",
            "loop/j",
            "--no-cache",
            "--save",
            "--format",
            "jsonl",
            "--out",
            "out.jsonl",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("stopped: the run's journal could not be written")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    let run_dir = std::fs::read_dir(ws.path("runs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert!(manifest["finished_at"].is_null(), "{manifest}");
    // The run stopped: far fewer requests than the 6,000 cells.
    assert!(server.seen().len() < 6000, "{}", server.seen().len());
    assert!(
        stderr.contains("is unfinished; `rubricate runs resume"),
        "{stderr}"
    );
}

/// The response cache on a disk that fills up: every judge call still gets its verdict
/// (the cache is an optimisation), and no temporary file is left in it.
#[test]
fn a_full_cache_disk_leaves_no_temporary_files() {
    let server = LlmServer::start(Duration::ZERO, rule);
    let ws = Ws::new(&server, 0);
    // Every submission different: every request a new cache entry.
    let lines: String = (0..300)
        .map(|i| {
            json!({"id": format!("i{i}"), "submission": format!("A basket of {i} apples")})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(ws.path("items.jsonl"), lines).unwrap();
    let cache = ws.path("cache");
    let Some(_disk) = SmallDisk::mount_or_skip(&cache, "64k") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(ws.dir.path())
        .args([
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--judge",
            "loop/j",
            "--format",
            "jsonl",
        ])
        .env("NO_COLOR", "1")
        .env("RUBRICATE_CACHE_DIR", &cache)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 300);
    let mut temps = Vec::new();
    for shard in std::fs::read_dir(&cache).unwrap().flatten() {
        for e in std::fs::read_dir(shard.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if rubricate::core::stale::is_temp(&name, ".") {
                temps.push(name);
            }
        }
    }
    assert!(
        temps.is_empty(),
        "{} left behind, e.g. {:?}",
        temps.len(),
        &temps[..temps.len().min(5)]
    );
}
