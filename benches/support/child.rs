//! Measuring the release binary as a child process: its wall time and peak resident
//! memory (GNU time's `%M`, else the child's `VmHWM` polled from /proc, a lower bound).
//! `#[path]`-included by the benchmarks that run the binary.
#![allow(dead_code, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The release binary built next to this bench.
pub fn binary() -> PathBuf {
    if let Some(p) = option_env!("CARGO_BIN_EXE_rubricate") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("exe");
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join("rubricate"))
        .filter(|p| p.exists())
        .expect("target/release/rubricate: run `cargo build --release` first")
}

/// What one child process took.
pub struct Measured {
    pub wall: Duration,
    /// Peak resident memory in bytes.
    pub peak: Option<f64>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Whether `/usr/bin/time -f %M` (GNU time: peak resident KiB of the child) works here.
fn gnu_time() -> bool {
    Command::new("/usr/bin/time")
        .args(["-f", "%M", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `bin args` in `dir` (stdout to /dev/null unless `keep_stdout`), measuring its
/// wall time and peak resident memory.
pub fn measure(bin: &Path, dir: &Path, args: &[&str], keep_stdout: bool) -> Measured {
    measure_with(bin, dir, args, keep_stdout, &[])
}

/// [`measure`] with extra environment variables for the child.
pub fn measure_with(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    keep_stdout: bool,
    env: &[(&str, &str)],
) -> Measured {
    let peak_file = dir.join(".bench-time");
    let timed = gnu_time();
    let mut cmd = if timed {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-f").arg("%M").arg("-o").arg(&peak_file).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(if keep_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id();
    let pipes = (child.stdout.take(), child.stderr.take());
    let readers = (
        std::thread::spawn(move || read_all(pipes.0)),
        std::thread::spawn(move || read_all(pipes.1)),
    );
    // Without GNU time: the child's high-water mark, read while it runs (a lower bound).
    let mut polled: Option<f64> = None;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if !timed && let Some(kib) = vm_hwm_kib(pid) {
            polled = Some(polled.map_or(kib, |p| p.max(kib)));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    let peak = if timed {
        std::fs::read_to_string(&peak_file)
            .ok()
            .and_then(|s| s.lines().last()?.trim().parse::<f64>().ok())
    } else {
        polled
    };
    Measured {
        wall,
        peak: peak.map(|kib| kib * 1024.0),
        code: status.code(),
        stdout: readers.0.join().unwrap_or_default(),
        stderr: readers.1.join().unwrap_or_default(),
    }
}

fn read_all(pipe: Option<impl std::io::Read>) -> String {
    let mut s = String::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_string(&mut s);
    }
    s
}

fn vm_hwm_kib(pid: u32) -> Option<f64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

pub fn run_id(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("run ")
                .and_then(|l| l.split(':').next())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no run id in:\n{stderr}"))
}
