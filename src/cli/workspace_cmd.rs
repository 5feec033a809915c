//! Commands about the workspace itself rather than its contents: `init`, `trust`, the
//! response cache, and no command at all (the UI on a terminal, else the latest run again).

use super::{CacheAction, Cli, CliError, exit, log_to_stderr, runs};

pub(super) fn cache_command(action: CacheAction) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let Some(dir) = crate::store::workspace::cache_dir(&cwd) else {
        return Err(CliError::input("no cache folder: set RUBRICATE_CACHE_DIR"));
    };
    let cache = crate::llm::Cache::new(dir);
    match action {
        CacheAction::Stats => {
            let s = cache.stats();
            outln!(
                "{}: {} responses, {} bytes",
                cache.dir().display(),
                s.entries,
                s.bytes
            );
        }
        CacheAction::Clear => {
            let s = cache.clear().map_err(|e| {
                CliError::input(format!("cannot clear {}: {e}", cache.dir().display()))
            })?;
            outln!(
                "{}: removed {} responses ({} bytes)",
                cache.dir().display(),
                s.entries,
                s.bytes
            );
        }
    }
    Ok(exit::OK)
}

/// No command: the terminal UI on the workspace (or the demo) when on a terminal; else the
/// workspace's latest run graded again (JSONL on stdout), or the help when it has none.
pub(super) fn open_ui(flag: Option<&std::path::Path>) -> Result<u8, CliError> {
    use clap::CommandFactory;
    #[cfg(feature = "tui")]
    if std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
    {
        let ws = super::workspace(flag)?;
        crate::tui::run(ws).map_err(CliError::input)?;
        return Ok(exit::OK);
    }
    log_to_stderr();
    if let Some(code) = runs::regrade_latest(flag)? {
        return Ok(code);
    }
    out!("{}", Cli::command().render_help());
    Ok(exit::OK)
}

pub(super) fn init(dir: Option<&std::path::Path>) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let dir = dir.map_or(cwd, std::path::Path::to_path_buf);
    let ws = crate::store::Workspace::init(&dir).map_err(|e| CliError::input(e.to_string()))?;
    outln!(
        "{}: workspace created (rubricate.yaml, rubrics/, datasets/, labels/, runs/, artifacts/)",
        ws.root.display()
    );
    Ok(exit::OK)
}

pub(super) fn trust(dir: Option<&std::path::Path>) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let config = match dir {
        Some(d) => Some(d.join(crate::store::config::CONFIG_FILE)).filter(|p| p.is_file()),
        None => crate::store::config::find_config(&cwd),
    }
    .ok_or_else(|| {
        CliError::input(format!(
            "no {} in {}; trust the folder that holds one",
            crate::store::config::CONFIG_FILE,
            dir.unwrap_or(&cwd).display()
        ))
    })?;
    let (config_read, _) = crate::store::config::read_config(&config)?;
    let recorded =
        crate::store::trust::trust(&config).map_err(|e| CliError::input(e.to_string()))?;
    outln!(
        "{}: trusted as it is now (recorded in {}){}",
        config.display(),
        recorded.display(),
        if config_read.asks_for_trust().is_empty() {
            String::new()
        } else {
            format!("; honoured: {}", config_read.asks_for_trust().join(", "))
        }
    );
    Ok(exit::OK)
}
