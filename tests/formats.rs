//! The five seed systems' formats: every fixture in `tests/fixtures/<format>/` loads, scores
//! as its home system documents (the cases in each folder's `cases.json`, each with the
//! seed passage and arithmetic it comes from), and survives native → format → native.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rubricate::formats::export::{Syntax, export_rubric};
use rubricate::formats::{Format, import_file, import_text, load_rubric};
use rubricate::model::Rubric;
use serde_json::Value;

const FORMATS: [(&str, Format); 5] = [
    ("rubric_lib", Format::RubricLib),
    ("autorubric", Format::Autorubric),
    ("agentv", Format::Agentv),
    ("agentic", Format::Agentic),
    ("dataknobs", Format::Dataknobs),
];

fn dir(name: &str) -> PathBuf {
    Path::new("tests/fixtures").join(name)
}

fn fixtures(name: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "cases.json"))
        .collect();
    files.sort();
    files
}

fn rubricate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn every_fixture_is_detected_as_its_format_and_loads() {
    for (name, format) in FORMATS {
        let files = fixtures(name);
        assert!(files.len() >= 5, "{name}: only {} fixtures", files.len());
        for path in files {
            let imported = import_file(&path, None)
                .unwrap_or_else(|d| panic!("{} does not load:\n{d}", path.display()));
            // A bare list of {weight, requirement} is both rubric_lib and autorubric; the two
            // score it alike, and detection calls it rubric_lib.
            let same = imported.format == format
                || (format == Format::Autorubric && imported.format == Format::RubricLib);
            assert!(same, "{} detected as {}", path.display(), imported.format);
            assert!(
                !imported.rubrics.is_empty() || !imported.items.is_empty(),
                "{} holds nothing",
                path.display()
            );
        }
    }
}

/// Each case: a one-item JSONL dataset with the given ground truth, scored by the real
/// binary against the fixture rubric, must give the documented score and pass/fail.
#[test]
fn scores_match_what_each_system_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, format) in FORMATS {
        let cases: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(dir(name).join("cases.json")).unwrap())
                .unwrap();
        assert!(cases.len() >= 5, "{name}: only {} cases", cases.len());
        for (i, case) in cases.iter().enumerate() {
            count += 1;
            let rubric = dir(name).join(case["rubric"].as_str().unwrap());
            let data = tmp.path().join(format!("{name}-{i}.jsonl"));
            let line = serde_json::json!({"id": format!("case-{i}"), "submission": "", "ground_truth": case["ground_truth"]});
            std::fs::write(&data, format!("{line}\n")).unwrap();
            let out = rubricate(&[
                "score",
                "--rubric",
                rubric.to_str().unwrap(),
                "--from",
                format.name(),
                data.to_str().unwrap(),
                "--format",
                "jsonl",
            ]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let Some(result) = stdout
                .lines()
                .next()
                .and_then(|l| serde_json::from_str::<Value>(l).ok())
            else {
                failures.push(format!(
                    "{name} case {i} ({}): no result; exit {:?}\n{}",
                    case["rubric"],
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            };
            let score = result["score"].as_f64().unwrap_or(f64::NAN);
            let want = case["score"].as_f64().unwrap();
            let passed = result["passed"].as_bool();
            // agentv: the rubric grader's own verdict, beside the test's.
            let grader = &case["grader_passed"];
            if (score - want).abs() > 5e-6
                || passed != case["passed"].as_bool()
                || (!grader.is_null() && result["graders"][0]["passed"] != *grader)
            {
                failures.push(format!(
                    "{name} case {i} ({}, {}): got score {score} passed {passed:?}, documented {want} passed {}\n  why: {}",
                    case["rubric"], case["ground_truth"], case["passed"], case["why"]
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What a format holds, compared after a round trip (metadata and display-only fields aside).
fn essentials(r: &Rubric) -> Vec<String> {
    r.criteria
        .iter()
        .map(|c| {
            format!(
                "{}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}",
                c.id, c.requirement, c.weight, c.required, c.min_score, c.kind, c.method, c.section
            )
        })
        .collect()
}

fn reread(r: &Rubric, to: Format, syntax: Syntax) -> Rubric {
    let exported = export_rubric(r, to, syntax).unwrap();
    let file = if exported.syntax == Syntax::Json {
        "again.json"
    } else {
        "again.yaml"
    };
    let again = import_text(file, &exported.text, &r.id, Path::new("."), Some(to))
        .unwrap_or_else(|d| panic!("{to} output does not load back:\n{d}\n{}", exported.text));
    (*again.rubrics[0].rubric).clone()
}

#[test]
fn each_fixture_round_trips_through_its_own_format_unchanged() {
    for (name, format) in FORMATS {
        for path in fixtures(name) {
            let imported = import_file(&path, Some(format)).unwrap();
            for loaded in &imported.rubrics {
                let r = &*loaded.rubric;
                for syntax in [Syntax::Yaml, Syntax::Json] {
                    let again = reread(r, format, syntax);
                    assert_eq!(
                        essentials(&again),
                        essentials(r),
                        "{} ({} via {syntax:?})",
                        path.display(),
                        r.id
                    );
                    assert!(
                        (again.pass_threshold - r.pass_threshold).abs() < 1e-12,
                        "{}",
                        path.display()
                    );
                    assert_eq!(again.scoring, r.scoring, "{}", path.display());
                }
            }
        }
    }
}

/// native → format → native keeps what the format can hold, and lists the rest.
#[test]
fn native_rubrics_keep_what_each_format_holds_and_say_what_it_cannot() {
    for builtin in ["default", "code", "quality", "pattern"] {
        let r = load_rubric(builtin).unwrap().rubric;
        for (_, format) in FORMATS {
            let Ok(exported) = export_rubric(&r, format, Syntax::Yaml) else {
                continue;
            };
            let again = reread(&r, format, Syntax::Yaml);
            assert_eq!(
                again.criteria.len(),
                r.criteria.len(),
                "{builtin} → {format}"
            );
            for (a, b) in again.criteria.iter().zip(&r.criteria) {
                let reported = exported
                    .lost
                    .iter()
                    .any(|l| l.contains(&format!("'{}': its requirement", b.id)));
                assert!(
                    a.requirement == b.requirement || reported,
                    "{builtin} → {format}: requirement of {} changed silently",
                    b.id
                );
            }
            // Anything that changed must have been reported.
            if essentials(&again) != essentials(&r) {
                assert!(
                    !exported.lost.is_empty(),
                    "{builtin} → {format} changed the rubric silently"
                );
            }
        }
    }
    // rubric_lib holds weights and requirements exactly.
    let r = load_rubric("tests/fixtures/rubric_lib/seed_readme.yaml")
        .unwrap()
        .rubric;
    let native = import_text(
        "n.yaml",
        &rubricate::formats::native::rubric_to_yaml(&r).unwrap(),
        "n",
        Path::new("."),
        Some(Format::Native),
    )
    .unwrap()
    .rubrics
    .remove(0);
    assert_eq!(essentials(&native.rubric), essentials(&r));
}

#[test]
fn penalties_are_reported_not_dropped_silently() {
    let r = load_rubric("tests/fixtures/rubric_lib/seed_readme.json")
        .unwrap()
        .rubric;
    let e = export_rubric(&r, Format::Agentic, Syntax::Yaml).unwrap();
    assert!(e.lost.iter().any(|l| l.contains("penalty")), "{:?}", e.lost);
    let levels = load_rubric("tests/fixtures/dataknobs/content_quality.yaml")
        .unwrap()
        .rubric;
    let e = export_rubric(&levels, Format::RubricLib, Syntax::Json).unwrap();
    assert!(e.lost.iter().any(|l| l.contains("levels")), "{:?}", e.lost);
}

/// A native rubric with the README's map levels (`levels: {0: text, 1: text, …}`, scored
/// k/max): its fields are rubricate's own, so it is never read as `agentic_v2_eval` (whose
/// criteria also write levels as a map).
const MAP_LEVELS: &str = "id: clear-answers
criteria:
  - id: clarity
    requirement: How clear the answer is
    kind: levels
    levels: {0: Hard to follow, 1: Understandable, 2: Crystal clear}
    method: { check: contains, args: { text: Paris } }
  - requirement: How complete the answer is
    levels: {0: Missing, 1: Partial, 2: Complete}
";

#[test]
fn the_readmes_map_levels_rubric_validates_and_scores() {
    let work = tempfile::tempdir().unwrap();
    let rubric = work.path().join("r.yaml");
    std::fs::write(&rubric, MAP_LEVELS).unwrap();
    let data = work.path().join("d.jsonl");
    std::fs::write(
        &data,
        "{\"id\":\"a\",\"submission\":\"Paris\",\"ground_truth\":{\"clarity\":\"2\",\"c2\":\"1\"}}\n",
    )
    .unwrap();
    let (rubric, data) = (rubric.to_str().unwrap(), data.to_str().unwrap());
    let valid = rubricate(&["validate", rubric]);
    assert_eq!(valid.status.code(), Some(0), "{}", text(&valid.stderr));
    assert!(
        text(&valid.stdout).contains("(native: rubric 'clear-answers'"),
        "{}",
        text(&valid.stdout)
    );
    // Graded by its check (MET is the best level) …
    let rubric_one = work.path().join("one.yaml");
    std::fs::write(
        &rubric_one,
        MAP_LEVELS
            .split("  - requirement: How complete")
            .next()
            .unwrap(),
    )
    .unwrap();
    let graded = rubricate(&[
        "grade",
        "--rubric",
        rubric_one.to_str().unwrap(),
        data,
        "--format",
        "jsonl",
    ]);
    assert_eq!(graded.status.code(), Some(0), "{}", text(&graded.stderr));
    let line: Value = serde_json::from_slice(&graded.stdout).unwrap();
    assert_eq!(line["criteria"][0]["verdict"], "2");
    assert_eq!(line["score"], 1.0);
    // … and scored from ground truth, k/max per criterion: (2/2 + 1/2) / 2.
    let scored = rubricate(&["score", data, "--rubric", rubric, "--format", "jsonl"]);
    assert_eq!(scored.status.code(), Some(0), "{}", text(&scored.stderr));
    let line: Value = serde_json::from_slice(&scored.stdout).unwrap();
    assert_eq!(line["score"], 0.75, "{line}");
}

#[test]
fn a_broken_agentic_rubric_says_it_was_read_as_agentic_and_why() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("quality.yaml");
    // agentic_v2_eval's own shape, with the first criterion's name forgotten.
    std::fs::write(
        &file,
        "criteria:\n  - weight: 0.6\n    description: Works\n    levels: {0: none, 5: all}\n  - name: Style\n    weight: 0.4\n    description: Readable\n    levels: {0: bad, 5: good}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let o = rubricate(&["validate", f]);
    assert_eq!(o.status.code(), Some(2));
    let said = text(&o.stderr);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "{f}:2:5: criterion 1 has no `name`: agentic_v2_eval's Scorer keys results by name (and skips a criterion without one); give it a name"
            ),
            format!(
                "{f}: read as agentic_v2_eval (`--from agentic`) because criterion 1 (line 2) has `levels` as a map {{score: text}} and no criterion has a field only rubricate's own format has (id, requirement, expected_outcome, outcome, kind, method, required, min_score, options, scale, scale_type, tags); if it is another system's file, `--from FORMAT` reads it as that (native, rubric-lib, autorubric, agentv, agentic, dataknobs)"
            ),
            "error: 1 of 1 files are not valid".to_owned(),
        ],
        "{said}"
    );
    // The field the reader stopped before is not called unknown ("did you mean `levels`?").
    assert!(!said.contains("unknown field `levels`"), "{said}");
    // Read as it was forced to be, it says so.
    let o = rubricate(&["validate", f, "--from", "rubric-lib"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(&format!(
            "{f}: read as rubric (The LLM Data Company), as `--from rubric-lib` says"
        )),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn did_you_mean_never_suggests_the_name_it_refuses() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("r.yaml");
    // A misspelt field gets the nearest known name; a known field is never "unknown".
    std::fs::write(
        &file,
        "id: r\ncriteria:\n  - id: a\n    requirment: Is fine\n    levels: {0: no, 1: yes}\n",
    )
    .unwrap();
    let o = rubricate(&["validate", file.to_str().unwrap()]);
    let said = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("unknown field `requirment` in a criterion; did you mean `requirement`?"),
        "{said}"
    );
    for line in said.lines() {
        if let Some((_, rest)) = line.split_once("unknown field `")
            && let Some((name, tail)) = rest.split_once('`')
        {
            assert!(!tail.contains(&format!("did you mean `{name}`")), "{line}");
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
