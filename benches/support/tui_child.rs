//! The terminal UI as a person reaches a large run's results: the real binary in tmux,
//! the dataset opened, Results, its item list, a few pages down and an item opened — then
//! its peak resident memory (`VmHWM`) read before it quits. `#[path]`-included by the
//! memory bench.
#![allow(dead_code, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What the UI took to show the run's items.
pub struct Shown {
    /// From start to the item list on screen with its reasons read.
    pub wall: Duration,
    /// Peak resident memory in bytes.
    pub peak: Option<f64>,
    /// The screen when something did not show (the bench prints it).
    pub failed: Option<String>,
}

/// Runs a tmux command on `socket`'s server; its standard output.
pub fn tmux(socket: &str, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (polling) for the screen to hold `text` (or, with `gone`, no longer to); the
/// screen when it never does.
fn wait(socket: &str, text: &str, gone: bool, patience: Duration) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let screen = tmux(socket, &["capture-pane", "-p", "-t", "b"]);
        if screen.contains(text) != gone {
            return Ok(());
        }
        if start.elapsed() > patience {
            return Err(format!("{text:?} never showed (or went):\n{screen}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn keys(socket: &str, keys: &[&str]) {
    for k in keys {
        tmux(socket, &["send-keys", "-t", "b", k]);
    }
}

/// Starts `cmd` in a detached 120×40 session `b` on `socket`'s server (with the caller's own
/// stdin, as a person's shell would); whether tmux could.
pub fn start_session(socket: &str, cmd: &str) -> bool {
    Command::new("tmux")
        .args([
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "120",
            "-y",
            "40",
            cmd,
        ])
        .status()
        .is_ok_and(|s| s.success())
}

/// Opens the workspace at `ws` in the UI and walks to the first dataset's run's items.
pub fn results_items(bin: &Path, ws: &Path) -> Shown {
    let socket = format!("rubricate-membench-{}", std::process::id());
    let cmd = format!(
        "cd '{}' && exec env RUBRICATE_ANNOTATOR=bench NO_COLOR=1 TERM=xterm-256color '{}'",
        ws.display(),
        bin.display()
    );
    let start = Instant::now();
    let started = start_session(&socket, &cmd);
    if !started {
        return Shown {
            wall: start.elapsed(),
            peak: None,
            failed: Some("tmux could not start a session".into()),
        };
    }
    let pid = tmux(
        &socket,
        &["display-message", "-p", "-t", "b", "#{pane_pid}"],
    );
    let patience = Duration::from_secs(600);
    let steps = || -> Result<(), String> {
        wait(&socket, "big", false, patience)?;
        keys(&socket, &["Enter"]);
        wait(&socket, " items ", false, patience)?;
        keys(&socket, &["R"]);
        wait(&socket, "mean", false, patience)?;
        keys(&socket, &["i"]);
        wait(&socket, "Items ", false, patience)?;
        keys(&socket, &["PageDown", "PageDown", "PageDown"]);
        // The selected item's reasons, read from the journal for the rows on screen.
        wait(&socket, "reading its reasons", true, patience)?;
        Ok(())
    };
    let failed = steps().err();
    let wall = start.elapsed();
    let peak = std::fs::read_to_string(format!("/proc/{}/status", pid.trim()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb * 1024.0);
    tmux(&socket, &["kill-server"]);
    Shown { wall, peak, failed }
}
