//! Opening a dataset file from anywhere (`o` in the Datasets pane): a path typed at a
//! prompt, `tab` completing it from the directory (as a shell does), `enter` registering
//! the file in the workspace (hash, count, index — as `rubricate datasets add`) and opening
//! it. Relative paths are taken from the workspace's root; `~` is home.

use std::path::{Path, PathBuf};

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
