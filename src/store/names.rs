//! One rule for every name that becomes part of a path in the workspace — a dataset, a run,
//! a rubric id, an artifact, an annotator — whether it comes from the command line, a file
//! someone sent, or the workspace's own files read back: it must be a single, ordinary file
//! name. Checked before anything is written or read by it.

/// A name that cannot be a file name here, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} '{shown}' cannot name a file: {why}")]
pub struct BadName {
    /// What the name is for (`dataset name`, `annotator`).
    pub what: String,
    /// The name with control characters made visible, cut to 80 characters.
    pub shown: String,
    /// Why it cannot be used, and what can.
    pub why: &'static str,
}

/// The longest name, in bytes (file systems allow 255; suffixes such as `.jsonl` and
/// `.tmp` are added to some).
pub const MAX_NAME_BYTES: usize = 200;

/// Why `name` cannot be a file name, if it cannot.
pub fn problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_NAME_BYTES {
        Some("it is longer than 200 bytes")
    } else if name.starts_with('.') {
        Some("it starts with '.' (`..` and hidden files are not names)")
    } else if name.contains(['/', '\\']) {
        Some("it contains a path separator")
    } else if name.chars().any(char::is_control) {
        Some("it contains a control character (a line break, NUL, an escape…)")
    } else if name.contains(['<', '>', ':', '"', '|', '?', '*']) {
        Some("it contains a character some file systems refuse (< > : \" | ? *)")
    } else {
        None
    }
}

/// `Ok` when `name` is a single ordinary file name; else what it is (`what`) and why not.
pub fn check(what: &str, name: &str) -> Result<(), BadName> {
    problem(name).map_or(Ok(()), |why| {
        Err(BadName {
            what: what.to_owned(),
            shown: shown(name),
            why,
        })
    })
}

fn shown(name: &str) -> String {
    let visible: String = name.escape_debug().collect();
    if visible.chars().count() > 80 {
        visible
            .chars()
            .take(79)
            .chain(std::iter::once('…'))
            .collect()
    } else {
        visible
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn hostile_names_are_refused_and_ordinary_ones_pass() {
        // The whole list of 20 is tried at every entry point in tests/hostile_names.rs.
        for name in [
            "",
            "..",
            "../x",
            "/abs",
            "a\\b",
            "nul\0",
            "cr\rlf\n",
            ".hidden",
            "x".repeat(201).as_str(),
        ] {
            let err = check("dataset", name).unwrap_err();
            assert!(!err.to_string().contains('\n'), "shown on one line: {err}");
        }
        for name in [
            "support-answers",
            "q01",
            "alice",
            "1.2.0",
            "art_0123",
            "Ünïcode name",
        ] {
            assert!(check("dataset", name).is_ok(), "{name}");
        }
        let err = check("annotator", "line\nbreak").unwrap_err().to_string();
        assert_eq!(
            err,
            "annotator 'line\\nbreak' cannot name a file: it contains a control character (a line break, NUL, an escape…)"
        );
    }
}
