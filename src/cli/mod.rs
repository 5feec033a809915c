//! The command line: clap subcommands, human tables on a terminal, JSON/JSONL/CSV/JUnit
//! otherwise, and the exit codes CI gates on. Everything for standard output goes through
//! the one sink in `out` (`outln!`).
#![deny(clippy::print_stdout)]

// First: its macros are for every module below.
#[macro_use]
mod out;

mod align;
mod args;
pub(crate) mod artifacts;
mod baseline;
mod calibrate;
mod choice;
mod command;
mod convert;
mod datasets;
mod dry_run;
mod gates;
mod github;
mod grade;
mod inspect;
mod label_next;
mod labels;
mod labels_export;
mod labels_pairs;
mod lint;
mod markdown;
mod metrics;
pub(crate) mod output;
mod pairs;
mod pairs_out;
mod people;
mod progress;
mod report;
mod rubric_arg;
mod rubrics;
mod runs;
mod score;
mod shell;
pub use shell::reference as cli_reference;
mod signals;
mod split;
mod style;
mod validate;
mod verdict;
mod workspace_cmd;

use std::process::ExitCode;

use clap::Parser;

pub(crate) use args::{CommonArgs, JudgeArgs, LintFormat, OutputFormat};
pub use command::Cli;
pub(crate) use command::{CacheAction, Command};

/// Exit codes (also in docs/cli.md).
pub(crate) mod exit {
    /// Everything passed.
    pub(crate) const OK: u8 = 0;
    /// Some item is below its threshold, `--fail-under` is not met, or lint failed.
    pub(crate) const BELOW: u8 = 1;
    /// Usage, config or input error.
    pub(crate) const INPUT: u8 = 2;
    /// Judge/check failures above the tolerated rate.
    pub(crate) const FAILURES: u8 = 3;
    /// A batch run is not finished yet: its batches are still with the provider
    /// (`runs resume` without `--wait`).
    pub(crate) const PENDING: u8 = 4;
}

/// An error that ends a command with an exit code and a message on stderr.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl CliError {
    /// A usage, config or input error; anything printable (a message, or a typed error
    /// whose text names the file and the cause).
    pub(crate) fn input(message: impl std::fmt::Display) -> Self {
        Self {
            code: exit::INPUT,
            message: message.to_string(),
        }
    }
}

impl From<crate::store::StoreError> for CliError {
    fn from(e: crate::store::StoreError) -> Self {
        CliError::input(e.to_string())
    }
}

/// The workspace a command works in (`--workspace`, else found from the current folder,
/// else the default one); its warnings go to stderr.
pub(crate) fn workspace(
    flag: Option<&std::path::Path>,
) -> Result<crate::store::Workspace, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let ws = crate::store::Workspace::open(flag, &cwd)?;
    for w in &ws.warnings {
        eprintln!("warning: {}", crate::core::text::visible(&w.to_string()));
    }
    Ok(ws)
}

impl From<crate::formats::Diagnostics> for CliError {
    fn from(d: crate::formats::Diagnostics) -> Self {
        Self::input(d.to_string())
    }
}

/// `RUBRICATE_LOG` (a level or filter) sends logs to stderr; unset, nothing is logged.
pub fn log_to_stderr() {
    if std::env::var_os("RUBRICATE_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("RUBRICATE_LOG"))
            .with_writer(std::io::stderr)
            .try_init();
    }
}

/// Parses the command line. Help and the version are output like any command's (through
/// the sink: `--help > /dev/full` fails, `--help | head -1` does not); a usage error is
/// clap's message on stderr, exit 2.
pub fn parse() -> Result<Cli, ExitCode> {
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) if e.use_stderr() => e.exit(),
        Err(e) => {
            let shown = e.render();
            if style::color_enabled(style::stdout_is_terminal()) {
                out!("{}", shown.ansi());
            } else {
                out!("{shown}");
            }
            Err(output_lost().unwrap_or_else(|| ExitCode::from(exit::OK)))
        }
    }
}

/// Flushes the output; the exit code when it could not all be written (a closed pipe: a
/// quiet 0; any other failure: a message naming where it was going, 2).
fn output_lost() -> Option<ExitCode> {
    match out::finish() {
        out::End::Written => None,
        // The reader has read enough (`| head`): nothing to say.
        out::End::Closed => Some(ExitCode::SUCCESS),
        // Lost output outranks how the command itself ended (often that same failure).
        out::End::Failed(message) => {
            eprintln!("{}", style::error_text(&message));
            Some(ExitCode::from(exit::INPUT))
        }
    }
}

/// Runs a parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        None => workspace_cmd::open_ui(cli.workspace.as_deref()),
        Some(Command::Validate { files, from }) => validate::run(&files, from),
        Some(Command::Lint {
            rubric,
            from,
            format,
        }) => lint::run(&rubric, from, format),
        Some(Command::Inspect { file, from, format }) => inspect::run(&file, from, format),
        Some(Command::Convert {
            input,
            to,
            from,
            out,
            strict,
        }) => convert::run(&convert::ConvertArgs {
            input: &input,
            to,
            from,
            out: out.as_deref(),
            strict,
        }),
        Some(Command::Split {
            dataset,
            train,
            seed,
            no_stratify,
            out,
        }) => split::run(&dataset, train, seed, !no_stratify, &out),
        Some(Command::Grade {
            common,
            judge,
            concurrency,
            allow_commands,
            max_error_rate,
            save,
            name,
            limit,
            sample,
            items,
            batch,
            baseline,
        }) => grade::run(
            &common,
            &judge,
            &grade::GradeOptions {
                grade: crate::run::GradeSettings {
                    concurrency,
                    allow_commands,
                    max_error_rate,
                },
                save: (save || batch || name.is_some()).then_some(grade::SaveAs { name }),
                batch,
                subset: grade::SubsetArgs {
                    limit,
                    sample,
                    items,
                },
                baseline,
            },
            cli.workspace.as_deref(),
        ),
        Some(Command::Pairs { args }) => pairs::run(&args, cli.workspace.as_deref()),
        Some(Command::Init { dir }) => workspace_cmd::init(dir.as_deref()),
        Some(Command::Trust { dir }) => workspace_cmd::trust(dir.as_deref()),
        Some(Command::Runs { action }) => runs::run(&action, cli.workspace.as_deref()),
        Some(Command::Metrics { args }) => metrics::run(&args, cli.workspace.as_deref()),
        Some(Command::Calibrate { args }) => calibrate::run(&args, cli.workspace.as_deref()),
        Some(Command::Align { args }) => align::run(&args, cli.workspace.as_deref()),
        Some(Command::Rubrics { action }) => {
            workspace(cli.workspace.as_deref()).and_then(|ws| rubrics::run(&action, &ws.root))
        }
        Some(Command::Labels { action }) => labels::run(&action, cli.workspace.as_deref()),
        Some(Command::Datasets { action }) => datasets::run(&action, cli.workspace.as_deref()),
        Some(Command::Artifacts { action }) => artifacts::run(&action, cli.workspace.as_deref()),
        Some(Command::Score { common }) => score::run(&common),
        Some(Command::Cache { action }) => workspace_cmd::cache_command(action),
        Some(Command::Report {
            run,
            run_b,
            output,
            annotator,
            worst,
            sample,
        }) => report::run(
            &run,
            run_b.as_deref(),
            &output,
            annotator.as_deref(),
            crate::run::report::Embed { worst, sample },
            cli.workspace.as_deref(),
        ),
        Some(Command::Completions { shell }) => Ok(shell::completions(shell)),
        Some(Command::Man { dir }) => shell::man(dir.as_deref()),
        Some(Command::Schema { config }) => {
            let schema = if config {
                crate::store::config::CONFIG_SCHEMA
            } else {
                crate::formats::native::RUBRIC_SCHEMA
            };
            outln!("{}", schema.trim_end());
            Ok(exit::OK)
        }
    };
    if let Some(code) = output_lost() {
        return code;
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!(
                "{}",
                style::error_text(&crate::core::text::visible(&e.message))
            );
            ExitCode::from(e.code)
        }
    }
}
