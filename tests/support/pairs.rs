//! Pairwise tests' shared fixtures: a folder with a pairwise rubric and a pair dataset,
//! commands of the real binary run in it against the loopback judge, and scripted judges
//! (always the first shown, the answer that is right, the one with more `+`).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::{LlmServer, Reply, Seen, verdict};

pub const RUBRIC: &str = "id: compare
name: Compare
mode: pairwise
criteria:
  - { id: correct, requirement: Gives the right answer }
  - { id: brief, requirement: Answers in few words }
";

/// The text of answer `which` (A or B) in a pairwise prompt.
pub fn answer(seen: &Seen, which: &str) -> String {
    answer_in(&seen.prompt(), which)
}

/// The text of answer `which` (A or B) in a pairwise prompt's text.
pub fn answer_in(prompt: &str, which: &str) -> String {
    let start = format!("<<<ANSWER {which} ");
    let end = format!("<<<END ANSWER {which} ");
    prompt
        .split(&start)
        .nth(1)
        .and_then(|rest| rest.split(&end).next())
        .unwrap_or_default()
        .to_owned()
}

/// The reply preferring the answer containing "right", else a tie, to a pairwise
/// prompt's text: the same text live ([`prefers_right`]) and in a batch.
pub fn right_reply(prompt: &str) -> String {
    let (reason, v) = match (
        answer_in(prompt, "A").contains("right"),
        answer_in(prompt, "B").contains("right"),
    ) {
        (true, false) => ("A is right", "A"),
        (false, true) => ("B is right", "B"),
        _ => ("no difference", "tie"),
    };
    json!({"reason": reason, "verdict": v}).to_string()
}

/// Always prefers whatever is shown first.
pub fn first_always(_: &Seen) -> Reply {
    verdict("the first one", json!("A"))
}

/// Prefers the answer with more `+` signs, else calls it a tie.
pub fn more_plus(seen: &Seen) -> Reply {
    let (a, b) = (answer(seen, "A"), answer(seen, "B"));
    let (a, b) = (a.matches('+').count(), b.matches('+').count());
    verdict(
        "counted",
        json!(match a.cmp(&b) {
            std::cmp::Ordering::Greater => "A",
            std::cmp::Ordering::Less => "B",
            std::cmp::Ordering::Equal => "tie",
        }),
    )
}

/// Prefers the answer containing "right", else calls it a tie.
pub fn prefers_right(seen: &Seen) -> Reply {
    Reply::Text(right_reply(&seen.prompt()))
}

/// The binary run in `dir` with `args`, its judge the loopback server at `url`.
pub fn binary(dir: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
    cmd.current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env("OPENAI_API_KEY", "sk-pairs")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    cmd
}

/// `labels set --stdin` of `annotator` on `dataset` against the pairwise `rubric`, fed
/// `lines` (ITEM CRITERION PREFERENCE each); it must succeed. Its output.
pub fn set_preferences(
    dir: &Path,
    dataset: &str,
    rubric: &str,
    annotator: &str,
    lines: &str,
) -> Output {
    let mut child = binary(
        dir,
        "http://127.0.0.1:9",
        &[
            "labels",
            "set",
            "--dataset",
            dataset,
            "--annotator",
            annotator,
            "--rubric",
            rubric,
            "--stdin",
        ],
    )
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), lines.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

pub struct Folder {
    pub dir: tempfile::TempDir,
    pub url: String,
}

impl Folder {
    pub fn new(server: &LlmServer, items: &[Value]) -> Folder {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubricate.yaml"), "").unwrap();
        std::fs::write(dir.path().join("compare.yaml"), RUBRIC).unwrap();
        let mut lines = String::new();
        for i in items {
            lines.push_str(&i.to_string());
            lines.push('\n');
        }
        std::fs::write(dir.path().join("pairs.jsonl"), lines).unwrap();
        Folder {
            dir,
            url: server.url.clone(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        binary(self.path(), &self.url, args)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `grade pairs.jsonl` under the pairwise rubric and judge, with `extra` flags.
    pub fn grading(&self, extra: &[&str]) -> Command {
        self.grading_at(&self.url, extra)
    }

    /// The same against the server at `url` (a batch engine's, say).
    pub fn grading_at(&self, url: &str, extra: &[&str]) -> Command {
        let mut args = vec![
            "grade",
            "pairs.jsonl",
            "--rubric",
            "compare.yaml",
            "--judge",
            "openai/j",
        ];
        args.extend_from_slice(extra);
        binary(self.path(), url, &args)
    }

    /// The id of the one run saved in the folder.
    pub fn only_run(&self) -> String {
        let mut runs = std::fs::read_dir(self.path().join("runs")).unwrap();
        let id = runs.next().unwrap().unwrap().file_name();
        assert!(runs.next().is_none(), "more than one run");
        id.to_string_lossy().into_owned()
    }

    pub fn grade(&self, extra: &[&str]) -> Output {
        self.grading(extra).output().unwrap()
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `n` pair items: `a` is right on the even ones, `b` on the odd ones.
pub fn pair_items(n: usize) -> Vec<Value> {
    pair_items_where(n, |i| i % 2 == 0)
}

/// `n` pair items, `a` right where `a_right(i)`, else `b`.
pub fn pair_items_where(n: usize, a_right: impl Fn(usize) -> bool) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let (a, b) = if a_right(i) {
                ("the right answer", "a wrong one")
            } else {
                ("a wrong one", "the right answer")
            };
            json!({"id": format!("q{i}"), "prompt": format!("Question {i}?"), "a": a, "b": b})
        })
        .collect()
}

pub fn pairwise_summary(o: &Output) -> Value {
    let v: Value =
        serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)));
    v["summary"]["pairwise"].clone()
}
