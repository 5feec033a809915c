use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // A panic is a bug: say so plainly, with where, and exit 101 as Rust does.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("rubricate hit an internal error (a bug, please report it): {info}");
    }));
    if std::env::var_os("RUBRICATE_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("RUBRICATE_LOG"))
            .with_writer(std::io::stderr)
            .try_init();
    }
    rubricate::cli::run(rubricate::cli::Cli::parse())
}
