//! The workspace: a folder with `rubricate.yaml` at its root, found by walking up from the
//! current folder (like git), or named with `--workspace`, or else the default one in the
//! user's data folder, created on first use with the demo content (ARCHITECTURE.md "Store").

use crate::store::StoreError;
use std::path::{Path, PathBuf};

use super::config::{CONFIG_FILE, WorkspaceConfig, find_config, load_config};
use crate::core::atomic::AtomicFile;
use crate::formats::Diagnostic;

/// The folders every workspace has.
pub const FOLDERS: &[&str] = &[
    "rubrics",
    "datasets",
    "labels",
    "runs",
    "artifacts",
    ".rubricate",
];

/// The config a new workspace starts with: every setting shown, commented out.
pub const NEW_CONFIG: &str = include_str!("../../assets/workspace/rubricate.yaml");

/// The demo: its files, relative to the workspace root, and their text.
const DEMO: &[(&str, &str)] = &[
    (
        "rubricate.yaml",
        include_str!("../../assets/demo/rubricate.yaml"),
    ),
    (
        "rubrics/support-answer.yaml",
        include_str!("../../assets/demo/rubrics/support-answer.yaml"),
    ),
    (
        "rubrics/support-answer-judged.yaml",
        include_str!("../../assets/demo/rubrics/support-answer-judged.yaml"),
    ),
    (
        "datasets/support-answers.jsonl",
        include_str!("../../assets/demo/datasets/support-answers.jsonl"),
    ),
    (
        "runs/20261122-141552-3353/manifest.json",
        include_str!("../../assets/demo/runs/20261122-141552-3353/manifest.json"),
    ),
    (
        "runs/20261122-141552-3353/results.jsonl",
        include_str!("../../assets/demo/runs/20261122-141552-3353/results.jsonl"),
    ),
    (
        "labels/support-answers/alice.jsonl",
        include_str!("../../assets/demo/labels/support-answers/alice.jsonl"),
    ),
];

/// A workspace: its folder and its config.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The folder holding `rubricate.yaml` (or the default workspace's).
    pub root: PathBuf,
    /// The config, read and checked.
    pub config: WorkspaceConfig,
    /// Located warnings from the config (unknown keys).
    pub warnings: Vec<Diagnostic>,
}

impl Workspace {
    /// Makes `dir` a workspace: its folders and a commented `rubricate.yaml`. Refuses a
    /// folder that already is one.
    pub fn init(dir: &Path) -> Result<Workspace, StoreError> {
        let config = dir.join(CONFIG_FILE);
        if config.exists() {
            return Err(StoreError::Refused(format!(
                "{} already exists: {} is a workspace already",
                config.display(),
                dir.display()
            )));
        }
        make_folders(dir)?;
        write_schemas(dir)?;
        AtomicFile::write_whole(&config, NEW_CONFIG.as_bytes())
            .map_err(|e| StoreError::io(&config, e))?;
        Self::at(dir)
    }

    /// The workspace rooted at `root` (which must hold `rubricate.yaml`).
    pub fn at(root: &Path) -> Result<Workspace, StoreError> {
        let (config, warnings) = load_config(root)?;
        let found = config
            .path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        if found.as_deref() != Some(root) {
            return Err(StoreError::Refused(format!(
                "{} has no {CONFIG_FILE}; run `rubricate init {}` to make it a workspace",
                root.display(),
                root.display()
            )));
        }
        make_folders(root)?;
        Ok(Workspace {
            root: root.to_path_buf(),
            config,
            warnings,
        })
    }

    /// `--workspace DIR` if given; else the nearest `rubricate.yaml` at or above `cwd`; else
    /// the default workspace, created with the demo on first use.
    pub fn open(explicit: Option<&Path>, cwd: &Path) -> Result<Workspace, StoreError> {
        if let Some(dir) = explicit {
            return Self::at(dir);
        }
        if let Some(root) = find_config(cwd).as_deref().and_then(Path::parent) {
            return Self::at(root);
        }
        let Some(dir) = default_dir() else {
            return Err(StoreError::Refused(
                "no workspace here and no user data folder for the default one; run `rubricate init DIR` or pass --workspace DIR".into(),
            ));
        };
        if !dir.join(CONFIG_FILE).exists() {
            create_demo(&dir)?;
        }
        Self::at(&dir)
    }

    /// A path inside the workspace.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Where its runs are.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// Where its label journals are.
    pub fn labels_dir(&self) -> PathBuf {
        self.root.join("labels")
    }
}

/// `RUBRICATE_HOME`, else the user's data folder (`directories`).
fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RUBRICATE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    crate::core::dirs::data_dir().map(|d| d.join("workspace"))
}

/// Where judge replies are cached (the folder the LLM cache is handed):
/// `RUBRICATE_CACHE_DIR`, else the workspace's `.rubricate/cache` (the folder holding
/// `rubricate.yaml`, found from `start`), else the user's cache folder.
pub fn cache_dir(start: &Path) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RUBRICATE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(config) = super::config::find_config(start)
        && let Some(root) = config.parent()
    {
        return Some(root.join(".rubricate").join("cache"));
    }
    crate::core::dirs::cache_dir().map(|d| d.join("responses"))
}

/// The JSON Schemas of `rubricate.yaml` and of rubric files, in `.rubricate/`: the config's
/// first line points editors at the one (`# yaml-language-server: $schema=…`), a rubric file
/// can point at the other (`$schema=../.rubricate/rubric.schema.json` from `rubrics/`).
fn write_schemas(root: &Path) -> Result<(), StoreError> {
    for (name, text) in [
        ("config.schema.json", super::config::CONFIG_SCHEMA),
        ("rubric.schema.json", crate::formats::native::RUBRIC_SCHEMA),
    ] {
        let path = root.join(".rubricate").join(name);
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))?;
    }
    Ok(())
}

fn make_folders(root: &Path) -> Result<(), StoreError> {
    for f in FOLDERS {
        let p = root.join(f);
        std::fs::create_dir_all(&p).map_err(|e| StoreError::io(&p, e))?;
    }
    Ok(())
}

/// Writes the demo workspace into `dir` (which must not be a workspace yet): two rubrics, a
/// dataset of 50 support answers, partial labels by one annotator, and one finished run of
/// the deterministic rubric over the dataset. The config goes last, so
/// a demo interrupted half-way is written again on the next start.
pub fn create_demo(dir: &Path) -> Result<(), StoreError> {
    make_folders(dir)?;
    write_schemas(dir)?;
    for (relative, text) in DEMO.iter().filter(|(r, _)| *r != CONFIG_FILE) {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
        }
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))?;
    }
    let config = dir.join(CONFIG_FILE);
    let text = DEMO
        .iter()
        .find(|(r, _)| *r == CONFIG_FILE)
        .map_or(NEW_CONFIG, |(_, t)| t);
    AtomicFile::write_whole(&config, text.as_bytes()).map_err(|e| StoreError::io(&config, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_discover_and_refuse_twice() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::init(dir.path()).unwrap();
        assert!(ws.path("runs").is_dir() && ws.path(".rubricate").is_dir());
        assert!(ws.warnings.is_empty(), "{:?}", ws.warnings);
        let nested = dir.path().join("rubrics/deep");
        std::fs::create_dir_all(&nested).unwrap();
        let found = Workspace::open(None, &nested).unwrap();
        assert_eq!(found.root, dir.path());
        let again = Workspace::init(dir.path()).unwrap_err().to_string();
        assert!(again.contains("is a workspace already"), "{again}");
        let other = tempfile::tempdir().unwrap();
        let err = Workspace::open(Some(other.path()), other.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("run `rubricate init"), "{err}");
    }

    #[test]
    fn the_demo_is_a_valid_workspace() {
        let dir = tempfile::tempdir().unwrap();
        create_demo(dir.path()).unwrap();
        let ws = Workspace::at(dir.path()).unwrap();
        assert!(ws.warnings.is_empty(), "{:?}", ws.warnings);
        for (relative, _) in DEMO {
            assert!(ws.path(relative).is_file(), "{relative}");
        }
        let (events, _) =
            crate::store::labels::read(&ws.path("labels/support-answers/alice.jsonl")).unwrap();
        assert_eq!(crate::store::labels::fold(&events).len(), 128);
        let runs = crate::store::runs::list_runs(&ws.runs_dir());
        let run = runs[0].as_ref().unwrap();
        assert!(run.finished_at.is_some());
        let dir = crate::store::runs::RunDir::find(&ws.runs_dir(), &run.id).unwrap();
        assert_eq!(dir.read_cells(run).unwrap().0.len(), 200);
        assert_eq!(
            crate::store::runs::file_hash(&ws.path("datasets/support-answers.jsonl")).unwrap(),
            run.dataset.hash,
            "the demo run is of the demo dataset as shipped"
        );
    }
}
