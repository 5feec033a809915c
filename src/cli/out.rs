//! The one sink every command's standard output goes through (`outln!`, `out!`, or
//! [`Stdout`] as an `io::Write`). Nothing else in the CLI touches `std::io::stdout` for
//! writing (clippy's `print_stdout` is denied in `cli` and `main.rs`).
//!
//! Writes can fail in two ways that mean different things. A closed pipe (`rubricate schema
//! | head -c 1`) is the reader saying it has read enough: the rest is dropped and the command
//! ends quietly with 0. Anything else (a full disk, `> /dev/full`, an I/O error) loses output
//! the user asked for: it is remembered, later writes are refused, and [`finish`] turns it
//! into a message naming where the output was going, exit 2. Either way the first failure
//! sticks, so a command that keeps writing after it does no harm and a write in a loop can
//! stop at the error it gets back.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// How standard output stopped taking writes: the first failure, kept.
enum Broken {
    /// The reader went away (`EPIPE`).
    Closed,
    /// Any other error: what the user asked for was not written.
    Failed(io::Error),
}

static BROKEN: Mutex<Option<Broken>> = Mutex::new(None);

fn broken() -> std::sync::MutexGuard<'static, Option<Broken>> {
    // A panic while holding the lock leaves nothing half-done in an `Option`.
    BROKEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs one write on the process's standard output, unless it already failed; records the
/// first failure.
fn guarded<T>(op: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<T>) -> io::Result<T> {
    match &*broken() {
        Some(Broken::Closed) => {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "standard output was closed",
            ));
        }
        Some(Broken::Failed(e)) => return Err(io::Error::new(e.kind(), e.to_string())),
        None => {}
    }
    op(&mut io::stdout().lock()).inspect_err(|e| {
        let mut b = broken();
        if b.is_none() {
            *b = Some(if e.kind() == io::ErrorKind::BrokenPipe {
                Broken::Closed
            } else {
                Broken::Failed(io::Error::new(e.kind(), e.to_string()))
            });
        }
    })
}

/// Standard output through the sink, as an `io::Write` (wrap it in a `BufWriter` for many
/// small writes; dropping one unflushed still records a failure).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        guarded(|o| o.write(buf))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        guarded(|o| o.write_all(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        guarded(Write::flush)
    }
}

/// Writes formatted text; a failure is recorded for [`finish`] (see `out!`).
pub(crate) fn text(args: fmt::Arguments<'_>) {
    let _ = Stdout.write_fmt(args);
}

/// `print!` through the sink.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::text(format_args!($($arg)*))
    };
}

/// `outln!` through the sink.
macro_rules! outln {
    () => {
        $crate::cli::out::text(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::text(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// How a command's output ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Everything was written.
    Written,
    /// The reader closed the pipe: a quiet end, exit 0.
    Closed,
    /// Output was lost; the message names where it was going and why.
    Failed(String),
}

/// Flushes standard output and says how it ended. Call once, when the command is done.
pub(crate) fn finish() -> End {
    let _ = Stdout.flush();
    match broken().take() {
        None => End::Written,
        Some(Broken::Closed) => End::Closed,
        Some(Broken::Failed(e)) => End::Failed(format!(
            "cannot write the output to standard output{}: {e}; the output is incomplete: send it where there is room",
            destination().map_or_else(String::new, |d| format!(" ({d})"))
        )),
    }
}

/// The file standard output goes to, when the system says (`/dev/full`, `/mnt/x/out.json`).
fn destination() -> Option<String> {
    std::fs::read_link("/proc/self/fd/1")
        .ok()
        .filter(|p| p.is_absolute())
        .map(|p| p.display().to_string())
}
