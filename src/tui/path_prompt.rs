//! Opening a dataset file from anywhere (`o` in the Datasets pane): a path typed at a
//! prompt, `tab` completing it from the directory (as a shell does), `enter` registering
//! the file in the workspace (hash, count, index — as `rubricate datasets add`) and opening
//! it. Relative paths are taken from the workspace's root; `~` is home.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Effect};
use super::data::DatasetInfo;

/// What the typed path is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PathPurpose {
    /// A dataset file to register and open.
    #[default]
    Dataset,
    /// A file whose content becomes a new artifact.
    Artifact,
}

/// The prompt while it is open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPrompt {
    pub purpose: PathPurpose,
    pub text: String,
    /// What the last `tab` found in the directory (shown under the prompt).
    pub candidates: Vec<String>,
}

/// Entries shown under the prompt at most.
pub const SHOWN: usize = 8;

impl App {
    pub(super) fn open_path_prompt(&mut self) -> Vec<Effect> {
        self.path_prompt = Some(PathPrompt::default());
        Vec::new()
    }

    pub(super) fn path_prompt_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let Some(p) = &mut self.path_prompt else {
            return Vec::new();
        };
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Esc => self.path_prompt = None,
            KeyCode::Tab => return vec![Effect::CompletePath(p.text.clone())],
            KeyCode::Enter => {
                let path = p.text.trim().to_owned();
                if path.is_empty() {
                    self.path_prompt = None;
                    return Vec::new();
                }
                let purpose = p.purpose;
                self.path_prompt = None;
                self.shared.message = Some(format!("reading {path}…"));
                return vec![match purpose {
                    PathPurpose::Dataset => Effect::AddDataset(path),
                    PathPurpose::Artifact => Effect::ReadArtifactFile(path),
                }];
            }
            KeyCode::Char('u') if ctrl => {
                p.text.clear();
                p.candidates.clear();
            }
            KeyCode::Backspace => {
                p.text.pop();
                p.candidates.clear();
            }
            KeyCode::Char(c) if !ctrl => {
                p.text.push(c);
                p.candidates.clear();
            }
            _ => {}
        }
        Vec::new()
    }

    /// A completion arrived: applied when the prompt still holds what was completed.
    pub(super) fn path_completed(
        &mut self,
        typed: &str,
        text: String,
        candidates: Vec<String>,
    ) -> Vec<Effect> {
        if let Some(p) = &mut self.path_prompt
            && p.text == typed
        {
            p.text = text;
            p.candidates = candidates;
        }
        Vec::new()
    }

    /// A dataset file was registered: listed (once) and opened.
    pub(super) fn dataset_added(&mut self, info: DatasetInfo) -> Vec<Effect> {
        let i = if let Some(i) = self.shared.datasets.iter().position(|d| d.path == info.path) {
            i
        } else {
            self.shared.datasets.push(info);
            self.shared.datasets.len() - 1
        };
        self.shared.selected = i;
        self.shared.message = Some(format!(
            "{}: registered in this workspace (it stays in the list)",
            self.shared.datasets[i].path.display()
        ));
        self.open(i)
    }
}

/// A typed path as a file path: `~` is home, relative is from `base` (the workspace).
pub fn resolve(typed: &str, base: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let expanded = match (typed.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(typed),
    };
    if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    }
}

/// Completes a typed path from its directory: the text extended by what every match
/// shares, and the matches (directories end in `/`; hidden ones only when asked for).
pub fn complete(typed: &str, cwd: &Path) -> (String, Vec<String>) {
    let (dir_part, stem) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let dir = if dir_part.is_empty() {
        cwd.to_path_buf()
    } else {
        resolve(dir_part, cwd)
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return (typed.to_owned(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(stem) || (name.starts_with('.') && !stem.starts_with('.')) {
                return None;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir())
                || (e.file_type().is_ok_and(|t| t.is_symlink()) && e.path().is_dir());
            Some(if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    let shared = names
        .iter()
        .skip(1)
        .fold(names.first().cloned().unwrap_or_default(), |acc, n| {
            acc.chars()
                .zip(n.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect()
        });
    let text = if shared.chars().count() > stem.chars().count() {
        format!("{dir_part}{shared}")
    } else {
        typed.to_owned()
    };
    (text, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_extends_by_what_every_match_shares_and_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("evals")).unwrap();
        std::fs::write(dir.path().join("evals/answers-a.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("evals/answers-b.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("evals/.hidden.jsonl"), "").unwrap();
        let (text, found) = complete("ev", dir.path());
        assert_eq!(text, "evals/");
        assert_eq!(found, ["evals/"]);
        let (text, found) = complete("evals/", dir.path());
        assert_eq!(text, "evals/answers-");
        assert_eq!(found, ["answers-a.jsonl", "answers-b.jsonl"]);
        let (text, found) = complete("evals/answers-b", dir.path());
        assert_eq!(text, "evals/answers-b.jsonl");
        assert_eq!(found.len(), 1);
        // An absolute path completes the same; nothing there: the text stays.
        let abs = format!("{}/evals/zz", dir.path().display());
        assert_eq!(complete(&abs, dir.path()), (abs.clone(), Vec::new()));
        assert_eq!(resolve("a.jsonl", dir.path()), dir.path().join("a.jsonl"));
        assert_eq!(
            resolve("/x/a.jsonl", dir.path()),
            PathBuf::from("/x/a.jsonl")
        );
    }
}
