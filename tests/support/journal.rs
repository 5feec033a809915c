//! A run's journal (`results.jsonl`) read back as rubricate reads it: the header line
//! skipped, and a torn last line — no newline: a kill landed mid-write, which the design
//! allows and the reader ignores — left out. Every other line must be whole.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// A cell: (item position, criterion id) → (verdict, value, reason).
pub type Cells = BTreeMap<(u64, String), (Value, Value, Value)>;

/// Every cell of the journal at `path`, each written once (a cell written twice fails),
/// and how many cell lines there were.
pub fn cells(path: &Path) -> (Cells, usize) {
    let text = std::fs::read(path).unwrap();
    let whole = match text.iter().rposition(|&b| b == b'\n') {
        Some(end) => &text[..=end],
        None => &[][..],
    };
    let whole = std::str::from_utf8(whole).unwrap();
    let mut out = BTreeMap::new();
    let mut count = 0;
    for (n, line) in whole.lines().enumerate().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!(
                "{}:{}: a whole journal line is not JSON ({e})",
                path.display(),
                n + 1
            )
        });
        let r = &v["result"];
        let key = (
            v["item"].as_u64().unwrap(),
            r["criterion_id"].as_str().unwrap().to_owned(),
        );
        let cell = (
            r["verdict"].clone(),
            r["value"].clone(),
            r["reason"].clone(),
        );
        assert!(
            out.insert(key.clone(), cell).is_none(),
            "cell {key:?} journalled twice"
        );
        count += 1;
    }
    (out, count)
}
