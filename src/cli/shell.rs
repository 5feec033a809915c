//! What a shell and `man` need, from the same clap definitions as `--help`: tab
//! completions for bash, zsh, fish, elvish and PowerShell, and man pages (the command's and
//! one per subcommand, `rubricate-grade(1)`…).

use std::path::Path;

use clap::CommandFactory as _;

use super::{Cli, CliError, exit};

/// The completion script for `shell`, on stdout (source it, or put it where the shell
/// looks: README "Install").
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
