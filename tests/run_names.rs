//! Runs by name through the real binary: `grade --save --name A` then `runs show A`,
//! `runs compare`, `runs resume` and `metrics --run` take the name where they take an id;
//! a name another run has is refused at `grade`, and a name two runs share (a manifest
//! edited by hand) is refused at lookup, listing their ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use support::checked::{grade_saved, ok, rubricate, run_ids, text};

/// A workspace with a check-only rubric and three items.
fn workspace() -> tempfile::TempDir {
    support::checked::workspace(&[("a", "yes"), ("b", "no"), ("c", "yes")])
}

fn grade_named(d: &Path, name: &str) -> Output {
    grade_saved(d, name, "jsonl")
}

/// The id of the run whose manifest names it `name`.
fn id_named(d: &Path, name: &str) -> String {
    run_ids(d)
        .into_iter()
        .find(|id| {
            let m = std::fs::read_to_string(d.join("runs").join(id).join("manifest.json")).unwrap();
            m.contains(&format!(
                "\"name\": {}",
                serde_json::to_string(name).unwrap()
            ))
        })
        .unwrap()
}

#[test]
fn a_name_works_wherever_an_id_does() {
    let dir = workspace();
    let d = dir.path();
    ok(&grade_named(d, "baseline"));
    ok(&grade_named(d, "candidate run"));
    let ids = [id_named(d, "baseline"), id_named(d, "candidate run")];
    assert_ne!(ids[0], ids[1]);

    let by_name = ok(&rubricate(
        d,
        &["runs", "show", "baseline", "--format", "jsonl"],
    ));
    let by_id = ok(&rubricate(
        d,
        &["runs", "show", &ids[0], "--format", "jsonl"],
    ));
    assert!(!by_name.is_empty());
    // The two runs graded the same items alike: the name found a run, and `show` of it
    // is what `show` of an id gives.
    assert_eq!(by_name, by_id);
    let table = ok(&rubricate(d, &["runs", "show", "candidate run"]));
    assert!(table.contains(&ids[1]), "{table}");

    let compared = rubricate(d, &["runs", "compare", "baseline", "candidate run"]);
    let (out, err) = text(&compared);
    assert!(!err.contains("no run"), "{err}");
    assert!(compared.status.code().is_some_and(|c| c <= 1), "{out}{err}");

    let resumed = rubricate(d, &["runs", "resume", "baseline"]);
    let (_, err) = text(&resumed);
    assert!(resumed.status.code().is_some_and(|c| c <= 1), "{err}");
    assert!(err.contains(&format!("run {}:", ids[0])), "{err}");

    let metrics = rubricate(d, &["metrics", "--run", "candidate run"]);
    let (_, err) = text(&metrics);
    assert!(!err.contains("no run"), "{err}");

    let missing = rubricate(d, &["runs", "show", "nobody"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing).1.contains("no run 'nobody'"),
        "{:?}",
        text(&missing)
    );
}

#[test]
fn a_name_another_run_has_is_refused_and_nothing_is_recorded() {
    let dir = workspace();
    let d = dir.path();
    ok(&grade_named(d, "baseline"));
    let first = run_ids(d);
    assert_eq!(first, [id_named(d, "baseline")]);
    let again = grade_named(d, "baseline");
    let (out, err) = text(&again);
    assert_eq!(again.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("run name 'baseline' is taken by run"), "{err}");
    assert!(err.contains(&first[0]), "{err}");
    assert_eq!(run_ids(d), first, "no second run was recorded");
    // An existing run's id is not a name either: it could never be looked up.
    let shadow = grade_named(d, &first[0]);
    assert_eq!(shadow.status.code(), Some(2));
    assert!(text(&shadow).1.contains("is the id of a run already"));
}

#[test]
fn a_name_two_runs_share_is_refused_at_lookup_with_their_ids() {
    let dir = workspace();
    let d = dir.path();
    ok(&grade_named(d, "one"));
    ok(&grade_named(d, "two"));
    let ids = [id_named(d, "one"), id_named(d, "two")];
    // Someone edits the second manifest by hand to the first's name.
    let path = d.join("runs").join(&ids[1]).join("manifest.json");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"name\": \"two\"", "\"name\": \"one\"");
    assert!(edited.contains("\"name\": \"one\""), "{edited}");
    std::fs::write(&path, edited).unwrap();
    let shown = rubricate(d, &["runs", "show", "one"]);
    let (_, err) = text(&shown);
    assert_eq!(shown.status.code(), Some(2), "{err}");
    assert!(err.contains("'one' names 2 runs"), "{err}");
    assert!(err.contains(&ids[0]) && err.contains(&ids[1]), "{err}");
    // Their ids still work.
    ok(&rubricate(d, &["runs", "show", &ids[1]]));
}

#[test]
fn a_name_that_is_not_a_file_name_still_names_a_run() {
    let dir = workspace();
    let d = dir.path();
    ok(&grade_named(d, "v2: prompt/b"));
    ok(&rubricate(d, &["runs", "show", "v2: prompt/b"]));
}
