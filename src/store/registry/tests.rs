use crate::core::hash::sha256_hex;
use std::io::Write as _;

use super::*;
use crate::model::Criterion;

fn rubric(id: &str, version: &str, target_type: &str) -> Rubric {
    let mut r = Rubric::new(
        id,
        vec![
            Criterion::binary("accurate", "The answer is correct.", 2.0),
            Criterion::binary("cited", "Claims cite a source.", 1.0),
        ],
    );
    r.name = "Answer quality".into();
    r.version = version.into();
    r.target_type = target_type.into();
    r
}

fn edited(r: &Rubric, version: &str, requirement: &str) -> Rubric {
    let mut r = r.clone();
    r.version = version.into();
    r.criteria[1].requirement = requirement.into();
    r
}

fn setup() -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    let reg = Registry::new(dir.path());
    (dir, reg)
}

fn kinds(events: &[Event]) -> Vec<(EventKind, &str)> {
    events
        .iter()
        .map(|e| (e.event, e.version.as_str()))
        .collect()
}

#[test]
fn register_get_latest_and_the_files_on_disk() {
    let (_t, reg) = setup();
    let r = rubric("answer", "1.0.0", "answer");
    let e = reg.register(&r, "first\ndraft").unwrap();
    assert_eq!(e.event, EventKind::Registered);
    assert_eq!(e.note, "first draft", "notes are one line");

    let latest = reg.latest("answer").unwrap();
    assert_eq!(latest.rubric, r);
    assert_eq!(latest.meta.version, "1.0.0");
    assert!(latest.meta.current);
    assert_eq!(latest.meta.hash, sha256_hex(&latest.text));
    assert_eq!(latest.meta.hash, e.hash);
    assert_eq!(latest.meta.saved, e.time);
    assert_eq!(latest.meta.note, "first draft");

    let dir = reg.dir().join("answer");
    assert_eq!(latest.path, dir.join("1.0.0.yaml"));
    assert_eq!(
        std::fs::read_to_string(dir.join("1.0.0.yaml")).unwrap(),
        latest.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("current")).unwrap(),
        "1.0.0\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("history.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );

    let pinned = reg.get("answer", Some("1.0.0")).unwrap();
    assert_eq!(pinned.text, latest.text);

    let again = reg.register(&edited(&r, "2.0.0", "x"), "").unwrap_err();
    assert!(
        matches!(&again, RegistryError::AlreadyRegistered { current, .. } if current == "1.0.0")
    );
    assert!(again.to_string().contains("update"), "{again}");

    let missing = reg.latest("nope").unwrap_err();
    assert!(
        matches!(missing, RegistryError::NotFound { .. }),
        "{missing}"
    );
    let no_version = reg.get("answer", Some("9.9.9")).unwrap_err();
    assert_eq!(
        no_version.to_string(),
        "rubric 'answer' has no version 9.9.9; saved versions: 1.0.0"
    );
}

/// A snapshot written by an earlier YAML writer (other quoting, other layout) holds the
/// same content: saving that content again is still refused as unchanged.
#[test]
fn unchanged_content_is_told_by_content_not_by_how_the_snapshot_is_worded() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "qa");
    reg.register(&v1, "").unwrap();
    let path = snapshot_path(&reg.dir().join("answer"), "1.0.0");
    let written = std::fs::read_to_string(&path).unwrap();
    // The same document in flow style with single quotes, as another writer may word it.
    let reworded = serde_json::to_string(&crate::formats::native::rubric_to_json(&v1))
        .unwrap()
        .replace('"', "'");
    assert_ne!(written, reworded);
    std::fs::write(&path, &reworded).unwrap();

    let same = reg.update(&edited(&v1, "1.1.0", "Claims cite a source."), "");
    assert!(
        matches!(same, Err(RegistryError::Unchanged { .. })),
        "{same:?}"
    );
    // A real change is still saved.
    reg.update(&edited(&v1, "1.1.0", "changed"), "").unwrap();
}

#[test]
fn update_refuses_unchanged_content_and_versions_that_do_not_increase() {
    let (_t, reg) = setup();
    let v120 = rubric("answer", "1.2.0", "");
    reg.register(&v120, "").unwrap();

    let same = reg.update(&v120, "").unwrap_err();
    assert!(matches!(same, RegistryError::Unchanged { .. }), "{same}");
    // Only the version moved: still the same content.
    let bumped = reg.update(&edited(&v120, "1.3.0", "Claims cite a source."), "");
    assert!(matches!(bumped, Err(RegistryError::Unchanged { .. })));

    let not_up = reg
        .update(&edited(&v120, "1.2.0", "changed"), "")
        .unwrap_err();
    assert!(
        matches!(&not_up, RegistryError::NotIncreasing { highest, .. } if highest == "1.2.0"),
        "{not_up}"
    );
    let older = reg.update(&edited(&v120, "1.1.9", "changed"), "");
    assert!(matches!(older, Err(RegistryError::NotIncreasing { .. })));

    // Numeric, not lexical: 1.10.0 > 1.9.0.
    reg.update(&edited(&v120, "1.9.0", "nine"), "").unwrap();
    reg.update(&edited(&v120, "1.10.0", "ten"), "").unwrap();
    let lexical = reg.update(&edited(&v120, "1.9.1", "nine one"), "");
    assert!(
        matches!(&lexical, Err(RegistryError::NotIncreasing { highest, .. }) if highest == "1.10.0")
    );
    assert_eq!(reg.latest("answer").unwrap().meta.version, "1.10.0");

    // A prerelease sits below its release.
    reg.update(&edited(&v120, "2.0.0-rc.1", "rc"), "").unwrap();
    reg.update(&edited(&v120, "2.0.0", "final"), "").unwrap();
    let pre = reg.update(&edited(&v120, "2.0.0-rc.2", "late rc"), "");
    assert!(matches!(pre, Err(RegistryError::NotIncreasing { .. })));
    assert_eq!(
        reg.versions("answer").unwrap(),
        ["1.2.0", "1.9.0", "1.10.0", "2.0.0-rc.1", "2.0.0"]
    );

    let unknown = reg.update(&rubric("other", "1.0.0", ""), "");
    assert!(matches!(unknown, Err(RegistryError::NotFound { .. })));
    let bad = reg.update(&edited(&v120, "3.0", "x"), "").unwrap_err();
    assert!(matches!(bad, RegistryError::BadVersion { .. }), "{bad}");
}

#[test]
fn delete_keeps_every_version_and_register_after_delete_must_still_increase() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "answer");
    reg.register(&v1, "").unwrap();
    reg.update(&edited(&v1, "1.1.0", "second"), "").unwrap();
    let e = reg.delete("answer", "retired").unwrap();
    assert_eq!((e.event, e.version.as_str()), (EventKind::Deleted, "1.1.0"));

    let gone = reg.latest("answer").unwrap_err();
    assert!(
        matches!(&gone, RegistryError::Deleted { last, .. } if last == "1.1.0"),
        "{gone}"
    );
    assert!(gone.to_string().contains("answer@1.1.0"), "{gone}");
    let old = reg.get("answer", Some("1.0.0")).unwrap();
    assert_eq!(old.rubric, v1);
    assert!(!old.meta.current);
    assert!(reg.get("answer", Some("1.1.0")).is_ok());
    assert!(!reg.dir().join("answer").join("current").exists());
    assert!(reg.list_latest().unwrap().is_empty());
    assert!(matches!(
        reg.delete("answer", ""),
        Err(RegistryError::Deleted { .. })
    ));
    assert!(matches!(
        reg.update(&edited(&v1, "1.2.0", "x"), ""),
        Err(RegistryError::Deleted { .. })
    ));

    let same_version = reg.register(&edited(&v1, "1.1.0", "second"), "");
    assert!(matches!(
        same_version,
        Err(RegistryError::NotIncreasing { .. })
    ));
    let back = reg.register(&edited(&v1, "1.2.0", "third"), "").unwrap();
    assert_eq!(back.event, EventKind::Registered);
    assert_eq!(reg.latest("answer").unwrap().meta.version, "1.2.0");
    assert_eq!(
        kinds(&reg.history("answer").unwrap()),
        [
            (EventKind::Registered, "1.0.0"),
            (EventKind::Updated, "1.1.0"),
            (EventKind::Deleted, "1.1.0"),
            (EventKind::Registered, "1.2.0"),
        ]
    );
}

#[test]
fn list_latest_and_by_target_type() {
    let (_t, reg) = setup();
    let mut essay = rubric("essay", "1.0.0", "essay");
    essay.name = "Essay".into();
    reg.register(&essay, "").unwrap();
    reg.register(&rubric("answer", "1.0.0", "answer"), "")
        .unwrap();
    reg.update(
        &edited(&rubric("answer", "1.0.0", "answer"), "1.1.0", "x"),
        "",
    )
    .unwrap();
    reg.register(&rubric("code", "0.1.0", "answer"), "")
        .unwrap();
    reg.register(&rubric("old", "1.0.0", "answer"), "").unwrap();
    reg.delete("old", "").unwrap();

    let all = reg.list_latest().unwrap();
    let rows: Vec<(&str, &str, &str, &str)> = all
        .iter()
        .map(|e| {
            (
                e.id.as_str(),
                e.name.as_str(),
                e.version.as_str(),
                e.target_type.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("answer", "Answer quality", "1.1.0", "answer"),
            ("code", "Answer quality", "0.1.0", "answer"),
            ("essay", "Essay", "1.0.0", "essay"),
        ]
    );
    let answers: Vec<String> = reg
        .list_by_target_type("answer")
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(answers, ["answer", "code"]);
    assert!(reg.list_by_target_type("nothing").unwrap().is_empty());
    assert!(
        Registry::new("/nonexistent/workspace")
            .list_latest()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn history_is_in_order_with_times_hashes_and_notes() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "");
    reg.register(&v1, "first").unwrap();
    reg.update(&edited(&v1, "1.1.0", "b"), "second").unwrap();
    reg.update(&edited(&v1, "2.0.0", "c"), "third").unwrap();
    let h = reg.history("answer").unwrap();
    assert_eq!(
        kinds(&h),
        [
            (EventKind::Registered, "1.0.0"),
            (EventKind::Updated, "1.1.0"),
            (EventKind::Updated, "2.0.0"),
        ]
    );
    assert_eq!(
        h.iter().map(|e| e.note.as_str()).collect::<Vec<_>>(),
        ["first", "second", "third"]
    );
    assert!(h.windows(2).all(|w| w[0].time <= w[1].time));
    for e in &h {
        let text = reg.get("answer", Some(&e.version)).unwrap().text;
        assert_eq!(e.hash, sha256_hex(&text));
        assert_eq!(e.id, "answer");
    }
    assert!(matches!(
        reg.history("nope"),
        Err(RegistryError::NotFound { .. })
    ));
}

#[test]
fn diff_between_versions_is_a_unified_diff() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "answer");
    reg.register(&v1, "").unwrap();
    reg.update(&edited(&v1, "1.1.0", "Every claim cites a source."), "")
        .unwrap();
    let want = "\
--- answer@1.0.0
+++ answer@1.1.0
@@ -1,6 +1,6 @@
 id: answer
 name: Answer quality
-version: 1.0.0
+version: 1.1.0
 target_type: answer
 pass_threshold: 0.7
 criteria:
@@ -8,5 +8,5 @@
   requirement: The answer is correct.
   weight: 2.0
 - id: cited
-  requirement: Claims cite a source.
+  requirement: Every claim cites a source.
   weight: 1.0
";
    assert_eq!(reg.diff("answer", "1.0.0", "1.1.0").unwrap(), want);
    assert_eq!(reg.diff("answer", "1.1.0", "1.1.0").unwrap(), "");
    assert!(matches!(
        reg.diff("answer", "1.0.0", "3.0.0"),
        Err(RegistryError::NoSuchVersion { .. })
    ));
}

#[test]
fn a_torn_last_history_line_is_ignored_then_cut_by_the_next_append() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "");
    reg.register(&v1, "").unwrap();
    let path = reg.dir().join("answer").join("history.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"event":"updated","id":"answer","vers"#)
        .unwrap();
    drop(f);

    assert_eq!(
        kinds(&reg.history("answer").unwrap()),
        [(EventKind::Registered, "1.0.0")]
    );
    assert!(reg.latest("answer").is_ok());
    reg.update(&edited(&v1, "1.1.0", "b"), "").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
        "the torn line is gone: {text}"
    );
    assert_eq!(
        kinds(&reg.history("answer").unwrap()),
        [
            (EventKind::Registered, "1.0.0"),
            (EventKind::Updated, "1.1.0")
        ]
    );

    // A damaged line that is not the last one is an error naming the file and line.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "garbage");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let err = reg.history("answer").unwrap_err().to_string();
    assert!(
        err.contains("history.jsonl") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn a_corrupt_snapshot_is_a_clear_error_naming_the_file() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "");
    reg.register(&v1, "").unwrap();
    reg.update(&edited(&v1, "1.1.0", "b"), "").unwrap();
    let file = reg.dir().join("answer").join("1.1.0.yaml");

    std::fs::write(&file, "id: answer\nversion: [1.1.0\n").unwrap();
    let err = reg.latest("answer").unwrap_err();
    assert!(matches!(err, RegistryError::Corrupt { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    assert!(msg.contains("restore it from a backup"), "{msg}");
    assert!(reg.list_latest().is_err());
    // The other versions are unaffected.
    assert!(reg.get("answer", Some("1.0.0")).is_ok());

    // Valid YAML edited after the save: caught by the recorded hash.
    let edited_text = render(&edited(&v1, "1.1.0", "edited by hand")).unwrap();
    std::fs::write(&file, edited_text).unwrap();
    let msg = reg.latest("answer").unwrap_err().to_string();
    assert!(
        msg.contains(&file.display().to_string()) && msg.contains("content hash"),
        "{msg}"
    );

    std::fs::write(reg.dir().join("answer").join("current"), "banana").unwrap();
    let msg = reg.latest("answer").unwrap_err().to_string();
    assert!(msg.contains("current") && msg.contains("banana"), "{msg}");
}

#[test]
fn a_save_cut_before_current_is_completed_by_saving_again() {
    let (_t, reg) = setup();
    let v1 = rubric("answer", "1.0.0", "");
    reg.register(&v1, "").unwrap();
    let v2 = edited(&v1, "1.1.0", "b");
    // The crash left the snapshot, but neither the event nor the pointer.
    let dir = reg.dir().join("answer");
    std::fs::write(dir.join("1.1.0.yaml"), render(&v2).unwrap()).unwrap();
    assert_eq!(reg.latest("answer").unwrap().meta.version, "1.0.0");

    reg.update(&v2, "again").unwrap();
    assert_eq!(reg.latest("answer").unwrap().meta.version, "1.1.0");
    assert_eq!(
        kinds(&reg.history("answer").unwrap()),
        [
            (EventKind::Registered, "1.0.0"),
            (EventKind::Updated, "1.1.0")
        ]
    );
    // A different rubric under an existing version is refused, not written over it.
    let other = edited(&v1, "1.1.0", "other");
    assert!(matches!(
        reg.update(&other, ""),
        Err(RegistryError::NotIncreasing { .. })
    ));
}

#[test]
fn ids_that_would_escape_the_registry_are_refused() {
    let (_t, reg) = setup();
    for id in ["../evil", "a/b", ".hidden", "", "a:b"] {
        let err = reg.register(&rubric(id, "1.0.0", ""), "");
        assert!(matches!(err, Err(RegistryError::BadId { .. })), "{id}");
        assert!(matches!(
            reg.get(id, None),
            Err(RegistryError::BadId { .. })
        ));
    }
    assert!(!reg.dir().exists());
}

#[test]
fn concurrent_writers_are_serialised_by_the_lock() {
    let (_t, reg) = setup();
    let base = rubric("answer", "1.0.0", "");
    reg.register(&base, "").unwrap();
    let saved: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=8)
            .map(|i| {
                let reg = reg.clone();
                let r = edited(&base, &format!("1.{i}.0"), &format!("edit {i}"));
                s.spawn(move || usize::from(reg.update(&r, "").is_ok()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let history = reg.history("answer").unwrap();
    assert_eq!(history.len(), 1 + saved);
    assert!(saved >= 1);
    let latest = reg.latest("answer").unwrap();
    assert_eq!(latest.meta.version, history[history.len() - 1].version);
    // Every recorded version reads back with the hash the history gives it.
    for e in &history {
        assert_eq!(
            reg.get("answer", Some(&e.version)).unwrap().meta.hash,
            e.hash
        );
    }
}
