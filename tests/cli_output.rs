//! Every command's output goes through one sink: a reader that closes the pipe early
//! (`rubricate schema | head -c 1`) ends the command quietly with 0; output that cannot be
//! written (a full disk, here `/dev/full`) is an error naming standard output and where it
//! went, exit 2 — never a lost file with exit 0, never a panic. The real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::Read;
use std::process::{Command, Stdio};

fn rubricate() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rubricate"));
    c.env("NO_COLOR", "1").env_remove("RUBRICATE_LOG");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const CHECKED: &str = "id: capital\ncriteria:\n  - id: paris\n    requirement: Names Paris\n    method: { check: contains, args: { text: Paris } }\n";

#[test]
fn output_that_cannot_be_written_exits_2_naming_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.yaml"), CHECKED).unwrap();
    std::fs::write(
        dir.path().join("d.jsonl"),
        "{\"id\":\"a\",\"submission\":\"Paris\"}\n",
    )
    .unwrap();
    let r = dir.path().join("r.yaml");
    let d = dir.path().join("d.jsonl");
    let (r, d) = (r.to_str().unwrap(), d.to_str().unwrap());
    let commands: Vec<Vec<&str>> = vec![
        vec!["schema"],
        vec!["lint", r],
        vec!["convert", r, "--to", "agentv"],
        vec!["inspect", r],
        vec!["validate", r],
        vec!["grade", "--rubric", r, d, "--format", "jsonl"],
        vec!["--help"],
        vec!["--version"],
    ];
    for args in &commands {
        // Written somewhere with room, each prints something (so the test can fail).
        let ok = rubricate().args(args).output().unwrap();
        assert_eq!(ok.status.code(), Some(0), "{args:?}: {}", text(&ok.stderr));
        assert!(!ok.stdout.is_empty(), "{args:?} prints its output");
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("this test needs /dev/full (Linux)");
        let o = rubricate()
            .args(args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let said = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains(
                "cannot write the output to standard output (/dev/full): No space left on device"
            ) && said.contains("the output is incomplete"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("internal error"), "{args:?}: {said}");
    }
}

#[test]
fn a_pipe_closed_early_ends_the_command_quietly_with_0_every_time() {
    // 200 times, as `rubricate schema | head -c 1` would: half of them the reader is gone
    // before anything is written, half it reads one byte and goes.
    for round in 0..200 {
        let mut child = rubricate()
            .arg("schema")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = child.stdout.take().unwrap();
        if round % 2 == 1 {
            let mut one = [0u8; 1];
            reader.read_exact(&mut one).unwrap();
            assert_eq!(&one, b"{");
        }
        drop(reader);
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "round {round}: {}",
            text(&o.stderr)
        );
        assert!(o.stderr.is_empty(), "round {round}: {}", text(&o.stderr));
    }
}

#[test]
fn a_long_listing_into_a_closed_pipe_stops_quietly() {
    // Output far beyond a pipe's buffer: the writes that follow the reader's going all meet
    // the closed pipe, in the streaming results writer too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.yaml"), CHECKED).unwrap();
    let mut lines = String::new();
    for i in 0..20_000 {
        writeln!(lines, "{{\"id\":\"i{i}\",\"submission\":\"Paris\"}}").unwrap();
    }
    std::fs::write(dir.path().join("d.jsonl"), lines).unwrap();
    let mut child = rubricate()
        .current_dir(dir.path())
        .args([
            "grade", "--rubric", "r.yaml", "d.jsonl", "--format", "jsonl",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    reader.read_exact(&mut first).unwrap();
    drop(reader);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
}
