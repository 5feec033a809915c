//! A workspace for batch-run tests of the real binary: a two-criterion rubric (apples,
//! bananas) over baskets, the judge rules that answer it, and the helpers that start,
//! kill and resume `rubricate` and read what it left on disk.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::batch::{BatchServer, Outcome, Request};
use super::{Reply, Seen, verdict};

pub const RUBRIC: &str = "id: fruit
name: Fruit
criteria:
  - { id: a, requirement: Mentions apples, weight: 1 }
  - { id: b, requirement: Mentions bananas, weight: 1 }
";

/// Whether a prompt's submission names the fruit its criterion asks about.
pub fn met(prompt: &str) -> (String, bool) {
    let fruit = ["apples", "bananas"]
        .into_iter()
        .find(|f| prompt.contains(&format!("Mentions {f}")))
        .unwrap_or("none");
    let submission = prompt.split("<<<SUBMISSION").nth(1).unwrap_or_default();
    (fruit.to_owned(), submission.contains(fruit))
}

pub fn reply_text(prompt: &str) -> String {
    let (fruit, met) = met(prompt);
    json!({"reason": format!("looked for {fruit}"), "verdict": if met { "MET" } else { "UNMET" }})
        .to_string()
}

pub fn live_rule(seen: &Seen) -> Reply {
    let (fruit, met) = met(&seen.prompt());
    verdict(
        &format!("looked for {fruit}"),
        json!(if met { "MET" } else { "UNMET" }),
    )
}

pub fn answer_all(r: &Request) -> Outcome {
    Outcome::Text(reply_text(&r.prompt))
}

pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    /// `items` items; batches of at most `per_batch` requests.
    pub fn new(items: usize, per_batch: usize) -> Workspace {
        Self::with_judge(items, per_batch, "")
    }

    /// The same, with more `judge:` settings (lines of YAML, indented by two).
    pub fn with_judge(items: usize, per_batch: usize, judge: &str) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("rubricate.yaml"),
            format!("judge:\n  batch_max_requests: {per_batch}\n{judge}prices:\n  openai/j: {{input: 1, output: 4}}\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
        let mut lines = String::new();
        for i in 0..items {
            let picked = match i % 4 {
                0 => "",
                1 => "apples",
                2 => "bananas",
                _ => "apples, bananas",
            };
            lines.push_str(
                &json!({"id": format!("i{i}"), "submission": format!("Basket {i}: {picked}")})
                    .to_string(),
            );
            lines.push('\n');
        }
        std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
        Workspace { dir }
    }

    pub fn command(&self, url: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
        cmd.current_dir(self.dir.path())
            .args(args)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{url}/v1"))
            .env("OPENAI_API_KEY", "sk-batch")
            .env("ANTHROPIC_BASE_URL", url)
            .env("ANTHROPIC_API_KEY", "sk-ant-batch")
            .env("RUBRICATE_CACHE_DIR", self.dir.path().join("cache"));
        cmd
    }

    pub fn grade(&self, url: &str, judge: &str, extra: &[&str]) -> Command {
        let mut args = vec![
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--judge",
            judge,
            "--format",
            "jsonl",
        ];
        args.extend_from_slice(extra);
        self.command(url, &args)
    }

    pub fn resume(&self, url: &str, id: &str, extra: &[&str]) -> Command {
        let mut args = vec!["runs", "resume", id];
        args.extend_from_slice(extra);
        self.command(url, &args)
    }

    /// `grade --batch` with `judge` (and `extra` flags), which must send the run's batches
    /// and exit 0: the run's id.
    pub fn send(&self, url: &str, judge: &str, extra: &[&str]) -> String {
        let mut args = vec!["--batch"];
        args.extend_from_slice(extra);
        let sent = self.grade(url, judge, &args).output().unwrap();
        assert_eq!(sent.status.code(), Some(0), "{}", stderr(&sent));
        run_id(&stderr(&sent))
    }

    /// `runs resume ID --wait --poll 0`, which must finish the run (exit 0 or 1): its
    /// stderr.
    pub fn finish(&self, url: &str, id: &str) -> String {
        let done = self
            .resume(url, id, &["--wait", "--poll", "0"])
            .output()
            .unwrap();
        let err = stderr(&done);
        assert!(done.status.code().is_some_and(|c| c <= 1), "{err}");
        err
    }

    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join("runs").join(id)
    }

    pub fn manifest(&self, id: &str) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.run_dir(id).join("manifest.json")).unwrap(),
        )
        .unwrap()
    }

    /// Every cell of a run's journal as (verdict, value, reason), each written once.
    pub fn cells(&self, id: &str) -> super::journal::Cells {
        super::journal::cells(&self.run_dir(id).join("results.jsonl")).0
    }

    /// `runs show` as a table, less the lines that name the run and when it ran.
    pub fn shown(&self, url: &str, id: &str) -> String {
        let out = self.command(url, &["runs", "show", id]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| {
                !l.starts_with("run ") && !l.starts_with("started ") && !l.starts_with("batch ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run id a command printed (`run ID: …`).
pub fn run_id(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("run ").and_then(|l| l.split(':').next()))
        .unwrap_or_else(|| panic!("no run id in {text}"))
        .to_owned()
}

/// Starts a command, returns its run id (from its first stderr line) and the child.
pub fn spawn(mut cmd: Command) -> (String, Child) {
    let mut child = cmd
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (run_id(&line), child)
}

/// A batch run of `ws` with judge `openai/j` whose second batch is still at the provider:
/// every `b` request expires the first time (so it goes again in a second batch), and the
/// run is stepped until the first batch's answers are in (the second then needs two more
/// asks to end). The server (keep it running) and the run's id.
pub fn with_a_batch_in_flight(ws: &Workspace) -> (BatchServer, String) {
    let batch = BatchServer::start(2, |r: &Request| {
        if r.earlier == 0 && r.prompt.contains("Mentions bananas") {
            Outcome::Expired
        } else {
            answer_all(r)
        }
    });
    let id = ws.send(&batch.url, "openai/j", &[]);
    until("the first batch's answers", || {
        let step = ws.resume(&batch.url, &id, &[]).output().unwrap();
        assert_eq!(step.status.code(), Some(4), "{}", stderr(&step));
        !ws.cells(&id).is_empty()
    });
    (batch, id)
}

/// Waits (polling) until `done`, failing after a minute.
pub fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn kill(mut child: Child) {
    let _ = child.kill(); // SIGKILL on Unix
    let _ = child.wait();
}

/// Every request was submitted exactly once, and the manifest names exactly the batches
/// the provider made, all downloaded.
pub fn sent_once(server: &BatchServer, ws: &Workspace, id: &str, requests: usize) {
    let submitted = server.submitted();
    assert_eq!(submitted.len(), requests, "requests submitted");
    let twice: Vec<_> = submitted.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "submitted twice: {twice:?}");
    let m = ws.manifest(id);
    let named: BTreeSet<String> = m["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b["stage"], "downloaded", "{b}");
            b["batch_id"].as_str().unwrap().to_owned()
        })
        .collect();
    let made: BTreeSet<String> = server.batches().into_iter().collect();
    assert_eq!(
        named, made,
        "the manifest names every batch the provider made"
    );
    assert!(m["finished_at"].is_string(), "the run is finished");
}

/// What the rule gives every cell: MET exactly where the basket has the fruit.
pub fn expected(items: usize) -> BTreeMap<(u64, String), bool> {
    let mut out = BTreeMap::new();
    for i in 0..items as u64 {
        out.insert((i, "a".to_owned()), i % 4 == 1 || i % 4 == 3);
        out.insert((i, "b".to_owned()), i % 4 == 2 || i % 4 == 3);
    }
    out
}

pub fn verdicts(ws: &Workspace, id: &str) -> BTreeMap<(u64, String), bool> {
    ws.cells(id)
        .into_iter()
        .map(|(k, (verdict, _, _))| (k, verdict == json!("MET")))
        .collect()
}
