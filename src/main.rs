//! The `rubricate` binary. Its output goes through the CLI's one sink (`cli::out`).
#![deny(clippy::print_stdout)]

use std::process::ExitCode;

// Grading allocates many small strings per item (reasons, evidence, feedback, JSON); mimalloc
// serves them faster than the system allocator (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A panic is a bug: say so plainly, with where, and exit 101 as Rust does.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("rubricate hit an internal error (a bug, please report it): {info}");
        // The backtrace (function names; the release binary keeps its symbols) goes to the
        // log (`RUBRICATE_LOG`), where a report can quote it.
        tracing::error!(
            "panic: {info}\n{}",
            std::backtrace::Backtrace::force_capture()
        );
    }));
    let cli = match rubricate::cli::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // A command logs to stderr; without one the terminal UI may start, whose screen stderr
    // is: it logs to its file, and the other paths choose for themselves.
    if cli.has_command() {
        rubricate::cli::log_to_stderr();
    }
    rubricate::cli::run(cli)
}
