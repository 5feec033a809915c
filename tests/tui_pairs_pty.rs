//! Pairs labelled in a real pseudo-terminal (tmux) as a person would: half of
//! examples/pairs-30.jsonl at 80×24 and a pair left half-labelled, quit, the UI started
//! again at 120×40 on that same pair, the rest labelled; the journal holds every pair's
//! three preferences once, each naming a candidate or a tie, and no screen ever showed a
//! candidate's id. Skipped where tmux is missing, except under `CI=true`.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tmux.rs"]
mod tmux;

use std::collections::BTreeMap;
use std::path::Path;

use tmux::Tmux;

/// A workspace holding the 30 pairs and the pairwise rubric; labels are pat's.
fn workspace(dir: &Path) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    std::fs::create_dir_all(dir.join("datasets")).unwrap();
    std::fs::create_dir_all(dir.join("rubrics")).unwrap();
    std::fs::copy(
        examples.join("pairs-30.jsonl"),
        dir.join("datasets/pairs-30.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        examples.join("compare.yaml"),
        dir.join("rubrics/compare.yaml"),
    )
    .unwrap();
    std::fs::write(dir.join("rubricate.yaml"), "annotator: pat\n").unwrap();
}

fn start(name: &str, dir: &Path, width: u16, height: u16) -> Tmux {
    let command = Tmux::rubricate(&[
        ("RUBRICATE_HOME", dir.join("home").display().to_string()),
        ("USER", "pat".into()),
        ("NO_COLOR", "1".into()),
    ]);
    Tmux::start(name, dir, width, height, &command)
}

/// The journal's current preference per (item, criterion), and how many events it holds.
fn journal(dir: &Path) -> (BTreeMap<(String, String), String>, usize) {
    let text = std::fs::read_to_string(dir.join("labels/pairs-30/pat.jsonl")).unwrap_or_default();
    let mut current = BTreeMap::new();
    let mut events = 0;
    for line in text.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
        current.insert((s("item"), s("criterion")), s("verdict"));
        events += 1;
    }
    (current, events)
}

/// Labels the pair on screen whole (`h`, `l`, `t`), the saved count reaching `upto`.
fn label_pair(t: &Tmux, upto: &mut usize) {
    for key in ["h", "l", "t"] {
        t.keys(&[key]);
        *upto += 1;
        t.wait_for(&format!("saved label {upto}"));
    }
}

fn blind(t: &Tmux) {
    let screen = t.screen();
    assert!(
        !screen.contains("assistant-v"),
        "a candidate shown:\n{screen}"
    );
}

#[test]
fn thirty_pairs_labelled_across_a_restart_at_two_sizes() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path());
    let t = start("pairs", dir.path(), 80, 24);
    t.wait_for("pairs-30");
    t.keys(&["Enter"]);
    t.wait_for("refund");
    t.keys(&["L"]);
    t.wait_for("refund (1 of 30) · a pair");
    t.wait_for("keys: h A better");
    let mut saved = 0;
    for n in 1..=15 {
        t.wait_for(&format!("({n} of 30) · a pair"));
        blind(&t);
        label_pair(&t, &mut saved);
    }
    // The sixteenth pair half labelled, then quit.
    t.wait_for("storage (16 of 30)");
    t.keys(&["h"]);
    saved += 1;
    t.wait_for(&format!("saved label {saved}"));
    t.keys(&["q"]);
    t.wait_gone();
    drop(t);
    assert_eq!(journal(dir.path()).1, saved);

    // Started again, larger: on the same pair, its second criterion focused.
    let t = start("pairs-again", dir.path(), 120, 40);
    t.wait_for("storage (16 of 30) · a pair");
    t.wait_until("the focus on its second criterion", |s| {
        s.contains("▶ actionable")
    });
    blind(&t);
    // The journal's numbering goes on from the first sitting's.
    for key in ["l", "t"] {
        t.keys(&[key]);
        saved += 1;
        t.wait_for(&format!("saved label {saved}"));
    }
    for n in 17..=30 {
        t.wait_for(&format!("({n} of 30) · a pair"));
        blind(&t);
        label_pair(&t, &mut saved);
    }
    t.keys(&["q"]);
    t.wait_gone();

    let (current, events) = journal(dir.path());
    assert_eq!(events, 90, "each preference written once");
    assert_eq!(current.len(), 90);
    let items: std::collections::BTreeSet<&str> = current.keys().map(|(i, _)| i.as_str()).collect();
    assert_eq!(items.len(), 30);
    for ((item, criterion), v) in &current {
        assert!(
            ["assistant-v1", "assistant-v2", "tie"].contains(&v.as_str()),
            "{item} {criterion}: {v}"
        );
        if criterion == "concise" {
            assert_eq!(v, "tie");
        }
    }
    // A and B name different candidates on every pair, and the shuffle showed the first
    // candidate on each side somewhere.
    let mut a_first = 0;
    for item in &items {
        let a = &current[&((*item).to_owned(), "correct".to_owned())];
        let b = &current[&((*item).to_owned(), "actionable".to_owned())];
        assert_ne!(a, b, "{item}");
        a_first += usize::from(a == "assistant-v1");
    }
    assert!(a_first > 0 && a_first < 30, "{a_first}");
}
