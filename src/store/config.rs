//! The workspace config, `rubricate.yaml`, found by walking up from a folder (like git).
//! Today it holds `allow_commands`; an unknown key is a located warning, a bad value a
//! located error.

use std::path::{Path, PathBuf};

use crate::formats::fields::{Ctx, Fields};
use crate::formats::{Diagnostic, Diagnostics, MAX_RUBRIC_BYTES, parse_document, read_text};

pub const CONFIG_FILE: &str = "rubricate.yaml";

const KNOWN: &[&str] = &["allow_commands"];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceConfig {
    /// The file this came from; `None` when there is no workspace config.
    pub path: Option<PathBuf>,
    /// Lets `command` checks run programs.
    pub allow_commands: bool,
}

/// The nearest `rubricate.yaml` at or above `start`.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(CONFIG_FILE))
        .find(|p| p.is_file())
}

/// Reads the config at or above `start`. Returns the config and its warnings.
pub fn load_config(start: &Path) -> Result<(WorkspaceConfig, Vec<Diagnostic>), Diagnostics> {
    let Some(path) = find_config(start) else {
        return Ok((WorkspaceConfig::default(), Vec::new()));
    };
    let file = path.display().to_string();
    let text = read_text(&path, MAX_RUBRIC_BYTES, "config")?;
    let root = parse_document(&file, &text)?;
    let mut config = WorkspaceConfig {
        path: Some(path),
        ..WorkspaceConfig::default()
    };
    if root.value == crate::formats::node::NodeValue::Null {
        return Ok((config, Vec::new()));
    }
    let mut ctx = Ctx::new(&file);
    let Some(mut fields) = Fields::of(&mut ctx, &root, "rubricate.yaml") else {
        return Err(Diagnostics(ctx.diags));
    };
    config.allow_commands = fields.boolean(&mut ctx, "allow_commands").unwrap_or(false);
    let errors = std::mem::take(&mut ctx.diags);
    fields.finish(&mut ctx, KNOWN);
    let warnings = ctx.diags;
    if errors.is_empty() {
        Ok((config, warnings))
    } else {
        Err(Diagnostics(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_by_walking_up_with_warnings_and_errors_located() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert!(!load_config(&nested).unwrap().0.allow_commands);
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "allow_commands: true\nallow_comands: 1\n",
        )
        .unwrap();
        let (config, warnings) = load_config(&nested).unwrap();
        assert!(config.allow_commands);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].to_string().ends_with(":2:1: unknown field `allow_comands` in rubricate.yaml; did you mean `allow_commands`?"), "{}", warnings[0]);
        std::fs::write(dir.path().join(CONFIG_FILE), "allow_commands: yes please\n").unwrap();
        let err = load_config(&nested).unwrap_err().to_string();
        assert!(
            err.ends_with(":1:17: `allow_commands` must be true or false, found a string"),
            "{err}"
        );
    }
}
