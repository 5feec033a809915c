//! Drives the real binary in tmux the way a person would: keys in, the screen out, polled
//! for a condition (never a fixed sleep). Each driver has a server of its own (a socket
//! named after the test process) that is killed when the driver is dropped, even when the
//! test fails. Where tmux is missing the tests skip with a note — except under `CI=true`,
//! where they fail.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
    session: String,
}

/// How long a condition may take before the test fails: generous, because a loaded
/// machine (both cores busy) can be slow, and it only matters when the test fails.
const PATIENCE: Duration = Duration::from_secs(90);

impl Tmux {
    /// Whether tmux can be used; under `CI=true` a missing tmux fails the test.
    pub fn required() -> bool {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var_os("CI").is_none(),
                "tmux is needed for the terminal tests (apt-get install tmux)"
            );
            eprintln!("tmux is not installed: the pseudo-terminal test is skipped");
        }
        ok
    }

    /// Starts `command` (run by the shell, in `dir`) in a `width`×`height` terminal.
    pub fn start(name: &str, dir: &Path, width: u16, height: u16, command: &str) -> Tmux {
        let socket = format!("rubricate-test-{}-{name}", std::process::id());
        let t = Tmux {
            socket,
            session: name.to_owned(),
        };
        let shell = format!("cd '{}' && exec {command}", dir.display());
        let ok = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                &shell,
            ])
            .status()
            .unwrap();
        assert!(ok.success(), "tmux did not start");
        t
    }

    /// The binary under test with `env` (`KEY=VALUE` pairs) in front.
    pub fn rubricate(env: &[(&str, String)]) -> String {
        let mut parts = vec!["env".to_owned(), "TERM=xterm-256color".to_owned()];
        parts.extend(env.iter().map(|(k, v)| format!("{k}='{v}'")));
        parts.push(env!("CARGO_BIN_EXE_rubricate").to_owned());
        parts.join(" ")
    }

    pub fn screen(&self) -> String {
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

    /// Polls the screen until `text` shows.
    pub fn wait_for(&self, text: &str) {
        self.wait_until(text, |s| s.contains(text));
    }

    /// Polls the screen until `done` holds for it.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if done(&s) {
                return;
            }
            assert!(start.elapsed() < PATIENCE, "{what:?} never showed:\n{s}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends keys (tmux names: `Enter`, `Down`, `C-e`, or plain characters).
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.send(&["send-keys", "-t", &self.session, k]);
        }
    }

    /// Types text literally, all at once (as fast as a paste).
    pub fn type_text(&self, text: &str) {
        self.send(&["send-keys", "-l", "-t", &self.session, text]);
    }

    /// Pastes `text` as a terminal does: as one bracketed paste when the program asked
    /// for bracketed paste, else as typed characters (a line break then reads as Enter).
    pub fn paste(&self, text: &str) {
        self.send(&["set-buffer", "-b", "test-paste", "--", text]);
        self.send(&[
            "paste-buffer",
            "-p",
            "-d",
            "-b",
            "test-paste",
            "-t",
            &self.session,
        ]);
    }

    fn send(&self, args: &[&str]) {
        let ok = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    pub fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session", "-t", &self.session])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Waits until the program has exited (its session is gone).
    pub fn wait_gone(&self) {
        let start = Instant::now();
        while self.alive() {
            assert!(start.elapsed() < PATIENCE, "the program did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
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

/// Polls `done` (a file, a count) until it holds.
pub fn wait_for_condition(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
