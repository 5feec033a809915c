//! The real binary in a real pseudo-terminal (tmux), driven by keys the way a person would:
//! label three criteria, quit, find the labels on disk; and SIGKILL right after a label is
//! acknowledged on screen, then find that label on disk. Skipped (with a note) where tmux
//! is not installed.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn start(name: &str, home: &Path) -> Tmux {
        let socket = format!("rubricate-test-{}-{name}", std::process::id());
        let t = Tmux {
            socket,
            session: name.to_owned(),
        };
        let command = format!(
            "exec env RUBRICATE_HOME={} RUBRICATE_ANNOTATOR=pat NO_COLOR=1 TERM=xterm-256color {}",
            home.display(),
            env!("CARGO_BIN_EXE_rubricate")
        );
        let ok = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "120",
                "-y",
                "40",
                &command,
            ])
            .status()
            .unwrap();
        assert!(ok.success());
        t
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "capture-pane",
                "-p",
                "-t",
                &self.session,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session", "-t", &self.session])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Waits (polling the screen) until `text` shows, or fails after 20 s.
    fn wait_for(&self, text: &str) {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{text:?} never showed:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", &self.session, k])
                .status()
                .unwrap();
        }
    }

    fn pid(&self) -> u32 {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "display-message",
                "-p",
                "-t",
                &self.session,
                "#{pane_pid}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn journal(home: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(home.join("labels/support-answers/pat.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn label_three_criteria_by_keyboard_then_survive_a_kill() {
    if !Tmux::available() {
        eprintln!("tmux is not installed: the pseudo-terminal test is skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");

    let t = Tmux::start("label", &home);
    t.wait_for("support-answers");
    t.keys(&["Enter"]);
    t.wait_for("q01");
    t.keys(&["L"]);
    t.wait_for("q01 (1 of 50)");
    for (key, seq) in [("m", 1), ("u", 2), ("m", 3)] {
        t.keys(&[key]);
        t.wait_for(&format!("saved label {seq}"));
    }
    t.keys(&["q"]);
    let start = Instant::now();
    while t.alive() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the UI did not quit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let events = journal(&home);
    let got: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["criterion"].as_str().unwrap(),
                e["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("reset-link", "MET"),
            ("steps", "UNMET"),
            ("concise", "MET")
        ]
    );
    drop(t);

    // Killed right after the screen says a label is saved: the label is on disk.
    let t = Tmux::start("kill", &home);
    t.wait_for("support-answers");
    t.keys(&["Enter"]);
    t.wait_for("q01");
    t.keys(&["L"]);
    t.wait_for("q01 (1 of 50)");
    t.keys(&["c"]);
    t.wait_for("saved label 4");
    let pid = t.pid();
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let events = journal(&home);
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[3]["verdict"], "CANNOT_ASSESS");
}
