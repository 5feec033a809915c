//! A batch run stopped *inside* a trip to its provider, by every signal a run meets
//! (SIGKILL; SIGTERM from `timeout`, `docker stop` or a cancelled CI job; SIGHUP from a
//! closed terminal), and resumed at once: the provider is paid for each request once. The
//! loopback batch server takes its time to make a batch (as real ones do) and makes it
//! whether or not the client is still there; it counts every request of every batch it
//! made and was not told to cancel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::batch::{BatchServer, Stage};
use support::batch_run::*;

/// A run started in the background, its stderr kept in a file (a pipe nobody reads would
/// end it when full).
struct Started {
    child: Child,
    log: PathBuf,
}

fn start(ws: &Workspace, mut cmd: Command, name: &str) -> Started {
    let log = ws.dir.path().join(format!("{name}.log"));
    let child = cmd
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    Started { child, log }
}

impl Started {
    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `signal` (`KILL`, `TERM`, `HUP`) and waits for the process to end.
    fn stop(&mut self, signal: &str) -> String {
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status();
        let start = Instant::now();
        loop {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            // A graceful stop finishes its trip first; a minute is far beyond any here.
            if start.elapsed() > Duration::from_secs(120) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the run did not stop on SIG{signal}: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stderr()
    }

    fn ended(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }
}

/// A tiny seeded generator (the seed is printed, so a failure can be replayed).
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn seed() -> u64 {
    std::env::var("RUBRICATE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
}

/// Each request was paid for once (in a batch that was not cancelled), none was left out,
/// and the manifest names every batch the provider made, kept or cancelled.
fn paid_once(server: &BatchServer, ws: &Workspace, id: &str, requests: usize) {
    let paid = server.paid();
    assert_eq!(paid.len(), requests, "requests paid for");
    let twice: Vec<_> = paid.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "paid twice: {twice:?}");
    let m = ws.manifest(id);
    let mut named: Vec<String> = Vec::new();
    for b in m["batches"].as_array().unwrap() {
        assert_eq!(b["stage"], "downloaded", "{b}");
        named.push(b["batch_id"].as_str().unwrap().to_owned());
        for o in b["others"].as_array().into_iter().flatten() {
            assert_eq!(o["fate"], "cancelled", "{o}");
            named.push(o["batch_id"].as_str().unwrap().to_owned());
        }
    }
    named.sort();
    let mut made = server.batches();
    made.sort();
    assert_eq!(
        named, made,
        "the manifest names every batch the provider made"
    );
    assert!(m["finished_at"].is_string(), "the run is finished");
    let temps: Vec<String> = std::fs::read_dir(ws.run_dir(id))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".manifest.json."))
        .collect();
    assert!(
        temps.is_empty(),
        "killed writers' temporary manifests are swept: {temps:?}"
    );
}

/// The run id from a log's `run ID: …` line, once there is one.
fn logged_run_id(started: &Started) -> String {
    until("the run's id", || started.stderr().contains("run "));
    run_id(&started.stderr())
}

/// Starts `grade --batch` with every create held while the provider makes the batch, and
/// kills it (SIGKILL) there: the run's id.
fn killed_while_making(ws: &Workspace, batch: &BatchServer, judge: &str) -> String {
    batch.hold(Stage::Making);
    let mut grade = start(ws, ws.grade(&batch.url, judge, &["--batch"]), "grade");
    until("the create, held", || batch.held(Stage::Making) > 0);
    let id = logged_run_id(&grade);
    grade.stop("KILL");
    id
}

/// Killed while the provider makes the batch (the request is in, the batch not listed
/// yet), resumed at once: the resumed run waits for the batch the provider is making and
/// uses it; nothing is made twice.
fn killed_inside_the_create_trip(judge: &str, create_call: &str) {
    const ITEMS: usize = 40;
    let ws = Workspace::with_judge(ITEMS, 1_000, "  batch_create_settle: 60\n");
    let batch = BatchServer::start(2, answer_all);
    let id = killed_while_making(&ws, &batch, judge);
    let lists_before = batch
        .calls()
        .iter()
        .filter(|c| c.starts_with("GET "))
        .count();
    let resume = start(
        &ws,
        ws.resume(&batch.url, &id, &["--wait", "--poll", "0"]),
        "resume",
    );
    // The resumed run asks for the batch and does not find it yet …
    until("the resumed run looking", || {
        batch
            .calls()
            .iter()
            .filter(|c| c.starts_with("GET "))
            .count()
            > lists_before
    });
    // … then the provider finishes making it.
    batch.release();
    let mut resume = resume;
    until("the run finished", || resume.ended());
    let log = resume.stderr();
    assert!(
        log.contains("was being created when the run stopped"),
        "{log}"
    );
    let creates = batch.calls().iter().filter(|c| *c == create_call).count();
    assert_eq!(creates, 1, "one create: {:?}", batch.calls());
    paid_once(&batch, &ws, &id, ITEMS * 2);
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));
}

#[test]
fn killed_inside_the_openai_create_trip_finds_the_batch_being_made() {
    killed_inside_the_create_trip("openai/j", "POST /v1/batches");
}

#[test]
fn killed_inside_the_anthropic_create_trip_finds_the_batch_being_made() {
    killed_inside_the_create_trip("anthropic/claude-j", "POST /v1/messages/batches");
}

/// Kills at random moments of every trip (after a random number of calls reached the
/// server, while the provider takes its time making batches), each followed at once by
/// `runs resume --wait`, twenty times and more; then lets it finish.
fn killed_again_and_again(judge: &str) {
    const ITEMS: usize = 100;
    const KILLS: usize = 20;
    let seed = seed();
    eprintln!("RUBRICATE_TEST_SEED={seed}");
    let mut dice = Dice(seed);
    let ws = Workspace::with_judge(ITEMS, 8, "  batch_create_settle: 20\n");
    let batch = BatchServer::start(3, answer_all);
    batch.create_delay(Duration::from_millis(150));
    let mut current = start(&ws, ws.grade(&batch.url, judge, &["--batch"]), "grade-0");
    let id = logged_run_id(&current);
    let mut kills = 0;
    let mut by_signal: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut round = 0;
    while kills < KILLS {
        round += 1;
        // Half the time inside a create (the provider takes 150 ms to make the batch),
        // else after one to four more calls of any kind.
        let creates = |calls: &[String]| {
            calls
                .iter()
                .filter(|c| c.starts_with("POST ") && c.ends_with("batches"))
                .count()
        };
        let (calls, create) = (batch.calls(), dice.below(2) == 0);
        let (want_calls, want_creates) = (
            calls.len() + 1 + dice.below(4) as usize,
            creates(&calls) + 1,
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let calls = batch.calls();
            let reached = if create {
                creates(&calls) >= want_creates
            } else {
                calls.len() >= want_calls
            };
            if reached || current.ended() {
                break;
            }
            assert!(Instant::now() < deadline, "no call in a minute");
            std::thread::sleep(Duration::from_millis(1));
        }
        if !current.ended() {
            let signal = ["KILL", "KILL", "KILL", "TERM", "HUP"][dice.below(5) as usize];
            *by_signal.entry(signal).or_default() += 1;
            let log = current.stop(signal);
            assert!(
                !log.contains("panicked") && !log.contains("internal error"),
                "{log}"
            );
            kills += 1;
        }
        if ws.manifest(&id)["finished_at"].is_string() {
            break;
        }
        current = start(
            &ws,
            ws.resume(&batch.url, &id, &["--wait", "--poll", "0"]),
            &format!("resume-{round}"),
        );
    }
    if !current.ended() {
        until("the last resume", || current.ended());
    }
    ws.finish(&batch.url, &id);
    let found_again = (1..=round)
        .filter(|r| {
            std::fs::read_to_string(ws.dir.path().join(format!("resume-{r}.log")))
                .unwrap_or_default()
                .contains("was being created when the run stopped")
        })
        .count();
    eprintln!(
        "{kills} stops in {round} rounds: {by_signal:?}; {found_again} resumes found a create cut short; calls: {}",
        batch.calls().len()
    );
    assert!(
        kills >= KILLS,
        "seed {seed}: only {kills} stops before the run finished"
    );
    paid_once(&batch, &ws, &id, ITEMS * 2);
    assert!(
        batch.cancelled().is_empty(),
        "seed {seed}: nothing made twice to cancel"
    );
    assert_eq!(verdicts(&ws, &id), expected(ITEMS), "seed {seed}");
}

#[test]
fn openai_killed_at_random_inside_trips_pays_each_request_once() {
    killed_again_and_again("openai/j");
}

#[test]
fn anthropic_killed_at_random_inside_trips_pays_each_request_once() {
    killed_again_and_again("anthropic/claude-j");
}

/// When a second batch is made anyway (the provider took longer than the resumed run
/// waited), the newer of the two is cancelled as soon as the provider lists both, and
/// both are in the ledger and in `runs show`.
#[test]
fn a_second_openai_batch_made_anyway_is_cancelled_and_both_are_recorded() {
    second_batch_made_anyway("openai/j");
}

#[test]
fn a_second_anthropic_batch_made_anyway_is_cancelled_and_both_are_recorded() {
    second_batch_made_anyway("anthropic/claude-j");
}

fn second_batch_made_anyway(judge: &str) {
    const ITEMS: usize = 20;
    let ws = Workspace::with_judge(ITEMS, 1_000, "  batch_create_settle: 0\n");
    let batch = BatchServer::start(2, answer_all);
    let id = killed_while_making(&ws, &batch, judge);
    // Resumed at once and told not to wait: it makes the batch again (held too).
    let resume = start(&ws, ws.resume(&batch.url, &id, &[]), "resume");
    until("the second create, held", || batch.held(Stage::Making) > 1);
    batch.release();
    let mut resume = resume;
    until("the resume", || resume.ended());
    ws.finish(&batch.url, &id);
    let made = batch.batches();
    assert_eq!(made.len(), 2, "{made:?}");
    let cancelled = batch.cancelled();
    assert_eq!(
        cancelled.len(),
        1,
        "the newer one is cancelled: {cancelled:?}"
    );
    let m = ws.manifest(&id);
    let b = &m["batches"][0];
    assert_ne!(b["batch_id"], Value::from(cancelled[0].clone()));
    assert_eq!(
        b["others"][0]["batch_id"],
        Value::from(cancelled[0].clone())
    );
    paid_once(&batch, &ws, &id, ITEMS * 2);
    assert_eq!(verdicts(&ws, &id), expected(ITEMS));
    let shown = ws
        .command(&batch.url, &["runs", "show", &id])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(&format!("also at the provider: {}", cancelled[0]))
            && shown.contains("cancelled"),
        "{shown}"
    );
}

/// A batch the provider made says "no such batch" for a few polls (its lag): the run
/// waits; after five in a row it says so, without claiming the server has no batch API.
#[test]
fn a_404_while_polling_is_waited_out_then_named() {
    let ws = Workspace::new(8, 100);
    let batch = BatchServer::start(2, answer_all);
    let id = ws.send(&batch.url, "openai/j", &[]);
    batch.not_found(3);
    let done = ws
        .resume(&batch.url, &id, &["--wait", "--poll", "0"])
        .output()
        .unwrap();
    assert_eq!(
        done.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(verdicts(&ws, &id), expected(8));

    let ws = Workspace::new(8, 100);
    let id = ws.send(&batch.url, "openai/j", &[]);
    batch.not_found(1_000);
    let done = ws
        .resume(&batch.url, &id, &["--wait", "--poll", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{err}");
    assert!(err.contains("could not be asked about"), "{err}");
    assert!(!err.contains("no batch API"), "{err}");
    batch.not_found(0);
}

/// `runs show` counts what the run downloaded, by distinct request, not the provider's
/// own counts (one that counts a request twice said "80 of 40").
#[test]
fn runs_show_counts_distinct_requests() {
    let ws = Workspace::new(20, 100);
    let batch = BatchServer::start(1, answer_all);
    batch.overcount();
    let id = ws.send(&batch.url, "openai/j", &[]);
    // The last line sums the run's batches (it counted the last pass's calls as "sent").
    let done = ws.finish(&batch.url, &id);
    assert!(
        done.contains("batches: 1 batch, 40 requests answered by the provider, 0 failed, 4000 tokens in, 800 out"),
        "{done}"
    );
    assert!(!done.contains("requests sent"), "{done}");
    let m = ws.manifest(&id);
    assert_eq!(m["batches"][0]["answered"], 40);
    assert_eq!(m["batches"][0]["failed"], 0);
    let shown = ws
        .command(&batch.url, &["runs", "show", &id])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("40 requests · downloaded · 40 answered, 0 failed"),
        "{shown}"
    );
}
