//! A rubric as people name it on the command line: a file (`FILE#ID` for one of several), a
//! built-in library rubric (`code`), a rubric file of the workspace's `rubrics/` folder by
//! its name (as the terminal UI lists it), or a saved version in the workspace's registry
//! (`name@1.2.0`, or a registered name alone for its current version).

use std::path::{Path, PathBuf};

use crate::formats::{Diagnostic, Diagnostics, Format, LoadedRubric, is_bare_name, load_rubric_as};
use crate::store::registry::Registry;

/// Loads the rubric `spec` names; `workspace` is the `--workspace` flag (else the one the
/// current folder is in). A file that exists always wins; then a built-in, the workspace's
/// file, its registry. With none, the error names what was tried.
pub(crate) fn load(
    spec: &str,
    from: Option<Format>,
    workspace: Option<&Path>,
) -> Result<LoadedRubric, Diagnostics> {
    let (path, _) = crate::formats::import::split_pick(spec);
    let builtin = is_bare_name(spec) && crate::formats::library::builtin(spec).is_some();
    if Path::new(path).exists() || builtin {
        return load_rubric_as(spec, from);
    }
    let (name, version) = match spec.split_once('@') {
        Some((n, v)) => (n, Some(v)),
        None => (spec, None),
    };
    if !is_bare_name(name) {
        return load_rubric_as(spec, from);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let Ok(ws) = crate::store::Workspace::open(workspace, &cwd) else {
        return load_rubric_as(spec, from);
    };
    if version.is_none()
        && let Some(file) = in_folder(&ws.path("rubrics"), name)
    {
        return load_rubric_as(&file.to_string_lossy(), from);
    }
    match Registry::new(&ws.root).get(name, version) {
        Ok(snapshot) => load_rubric_as(&snapshot.path.to_string_lossy(), from),
        Err(registry) if version.is_some() => Err(Diagnostics::one(Diagnostic::whole(
            spec,
            registry.to_string(),
        ))),
        Err(_) => Err(Diagnostics::one(Diagnostic::whole(
            spec,
            format!(
                "no rubric '{name}': not a file, a built-in ({}), a file in {}, or a rubric in the workspace's registry (`rubricate rubrics list`). To load a file, give a path such as ./{name}.yaml",
                crate::formats::library::NAMES.join(", "),
                ws.path("rubrics").display()
            ),
        ))),
    }
}

/// `rubrics/NAME.yaml` (or `.yml`, `.json`), when there is one.
fn in_folder(dir: &Path, name: &str) -> Option<PathBuf> {
    ["yaml", "yml", "json"]
        .iter()
        .map(|ext| dir.join(format!("{name}.{ext}")))
        .find(|p| p.is_file())
}
