//! What a shell and `man` need, from the same clap definitions as `--help`: tab
//! completions for bash, zsh, fish, elvish and PowerShell, and man pages (the command's and
//! one per subcommand, `rubricate-grade(1)`…).

use std::path::Path;

use std::fmt::Write as _;

use clap::CommandFactory as _;

use super::{Cli, CliError, exit};

/// The completion script for `shell`, on stdout (source it, or put it where the shell
/// looks: README "Install", docs/cli.md).
pub(crate) fn completions(shell: clap_complete::Shell) -> u8 {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rubricate", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    exit::OK
}

/// The man page of `rubricate` on stdout; with `dir`, every page (the command's and each
/// subcommand's, nested ones too) written there as `NAME.1`.
pub(crate) fn man(dir: Option<&Path>) -> Result<u8, CliError> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        out!("{}", String::from_utf8_lossy(&page(&cmd)?));
        return Ok(exit::OK);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display())))?;
    let mut written = 0usize;
    write_pages(&cmd, "rubricate", dir, &mut written)?;
    eprintln!("{written} man pages in {}", dir.display());
    Ok(exit::OK)
}

fn page(cmd: &clap::Command) -> Result<Vec<u8>, CliError> {
    let mut text = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut text)
        .map_err(|e| CliError::input(format!("cannot render the man page: {e}")))?;
    Ok(text)
}

/// `cmd`'s page as `name.1`, then each subcommand's as `name-sub.1`.
fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut usize,
) -> Result<(), CliError> {
    let named = cmd.clone().name(name.to_owned());
    let path = dir.join(format!("{name}.1"));
    crate::store::AtomicFile::write_whole(&path, &page(&named)?)
        .map_err(|e| CliError::from(crate::store::StoreError::io(&path, e)))?;
    *written += 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

/// The command-line reference as Markdown: every command's `--help`, as clap renders it at
/// 100 columns, nested commands too. `docs/cli-reference.md` is this, and a test holds the
/// two together (`scripts/update-docs.sh` writes it again).
pub fn reference() -> String {
    let mut out = String::from(
        "# Command-line reference\n\nEvery command's `--help`, generated from the same definitions (`scripts/update-docs.sh`\nwrites this page again; a test fails when it is stale). The commands in brief, with what\nthey are for: [cli.md](cli.md).\n",
    );
    let cmd = Cli::command().term_width(100);
    section(&cmd, "rubricate", &mut out);
    out
}

fn section(cmd: &clap::Command, name: &str, out: &mut String) {
    let mut cmd = cmd.clone().name(name.to_owned()).bin_name(name.to_owned());
    let help = cmd.render_long_help().to_string();
    let _ = write!(out, "\n## {name}\n\n```text\n{}\n```\n", help.trim_end());
    let subs: Vec<clap::Command> = cmd.get_subcommands().cloned().collect();
    for sub in subs.iter().filter(|s| s.get_name() != "help") {
        section(sub, &format!("{name} {}", sub.get_name()), out);
    }
}
