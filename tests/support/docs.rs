//! Generated documentation held against what the code generates now; `UPDATE_DOCS=1`
//! (outside CI) writes it instead (`scripts/update-docs.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;

/// `actual` is what `file` holds (between `start` and `end` markers, when given); with
/// `UPDATE_DOCS=1` outside CI it is written there instead.
pub fn current(file: &str, markers: Option<(&str, &str)>, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let (before, held, after) = match markers {
        Some((start, end)) => {
            let a = text.find(start).expect("the start marker") + start.len();
            let b = text.find(end).expect("the end marker");
            (&text[..a], &text[a..b], &text[b..])
        }
        None => ("", text.as_str(), ""),
    };
    let wanted = match markers {
        Some(_) => format!("\n{actual}"),
        None => actual.to_owned(),
    };
    if held == wanted {
        return;
    }
    let update =
        std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") && std::env::var("CI").is_err();
    if update {
        std::fs::write(&path, format!("{before}{wanted}{after}")).unwrap();
        return;
    }
    panic!("{file} is stale: run scripts/update-docs.sh (UPDATE_DOCS=1) and commit it");
}
