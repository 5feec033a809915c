//! Real files from the seed systems' repositories (`tests/fixtures/realworld/`, a copy of
//! the shared corpus with its `SOURCES.tsv`: repository, path and commit of each file): the
//! autorubric ones load natively and score as autorubric documents. The other systems'
//! files are the foreign-format reader's to load.

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn realworld() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realworld")
}

fn rubricate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run rubricate")
}

#[test]
fn autorubric_files_validate() {
    let dir = realworld();
    for name in [
        "autorubric__essay_grading_dataset.json",
        "autorubric__meta_rubric_standalone.json",
    ] {
        let path = dir.join(name);
        let out = rubricate(&["validate", path.to_str().expect("utf-8 path")]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// autorubric's `compute_weighted_score`, written from its documentation: MET adds the
/// weight, `CANNOT_ASSESS` is skipped, the positive weights of counted criteria divide.
fn autorubric_score(weights: &[f64], verdicts: &[&str]) -> f64 {
    let (mut score, mut positive) = (0.0, 0.0);
    for (w, v) in weights.iter().zip(verdicts) {
        if *v == "CANNOT_ASSESS" {
            continue;
        }
        if *v == "MET" {
            score += w;
        }
        if *w > 0.0 {
            positive += w;
        }
    }
    if positive > 0.0 {
        (score / positive).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[test]
fn the_real_essay_dataset_scores_as_autorubric_documents() {
    let dir = realworld();
    let path = dir.join("autorubric__essay_grading_dataset.json");
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let weights: Vec<f64> = data["rubric"]
        .as_array()
        .expect("rubric list")
        .iter()
        .map(|c| c["weight"].as_f64().expect("weight"))
        .collect();
    let out = rubricate(&[
        "score",
        path.to_str().expect("utf-8 path"),
        "--format",
        "jsonl",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "some essays fail: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl"))
        .collect();
    let items = data["items"].as_array().expect("items");
    assert_eq!(lines.len(), items.len());
    for (item, result) in items.iter().zip(&lines) {
        let verdicts: Vec<&str> = item["ground_truth"]
            .as_array()
            .expect("gt")
            .iter()
            .map(|v| v.as_str().expect("verdict"))
            .collect();
        let want = autorubric_score(&weights, &verdicts);
        let got = result["score"].as_f64().expect("score");
        assert!(
            (got - want).abs() < 1e-9,
            "item {}: rubricate {got}, autorubric {want}",
            result["item"]
        );
    }
}

#[test]
fn agentic_scoring_rubrics_load_lint_and_keep_their_thresholds() {
    let dir = realworld();
    for name in [
        "agentic_v2_eval__agent.yaml",
        "agentic_v2_eval__code.yaml",
        "agentic_v2_eval__coding_standards.yaml",
        "agentic_v2_eval__default.yaml",
    ] {
        let path = dir.join(name);
        let path = path.to_str().expect("utf-8 path");
        let out = rubricate(&["validate", path]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = rubricate(&["lint", path]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let code = rubricate::formats::load_rubric(
        dir.join("agentic_v2_eval__code.yaml")
            .to_str()
            .expect("utf-8"),
    )
    .expect("loads");
    assert_eq!(code.rubric.pass_threshold, 0.75);
    assert_eq!(code.rubric.criteria.len(), 5);
    // Levels 0–5 without max_value: on the Scorer's 0..1, the six levels placed on it.
    assert!(code.rubric.criteria.iter().all(|c| matches!(
        &c.kind,
        rubricate::model::Kind::Scale(s) if s.min == 0.0 && s.max == 1.0 && s.anchors.len() == 6
    )));
}

/// `agentic_v2_eval`'s score: Σ weight · level/5 over the criteria; hard gates aside.
#[test]
fn agentic_code_rubric_scores_levels_as_its_scorer_does() {
    let dir = realworld();
    let rubric = dir.join("agentic_v2_eval__code.yaml");
    let data = tempfile::tempdir().expect("tempdir");
    let path = data.path().join("graded.jsonl");
    // Correctness .30, Completeness .20, Code Quality .20, Efficiency .15, Security .15;
    // levels 0–5 and no max_value: the Scorer reads each on 0..1 (its evaluators' range),
    // clamping — so a 0.6 is 0.6 and a raw level 3 is full marks.
    std::fs::write(
        &path,
        "{\"id\": \"x\", \"submission\": \"def f(): pass\", \"ground_truth\": [1, 0.8, 0.6, 0.4, 1]}\n{\"id\": \"y\", \"submission\": \"def f(): pass\", \"ground_truth\": [5, 4, 3, 2, 5]}\n",
    )
    .expect("write");
    let out = rubricate(&[
        "score",
        path.to_str().expect("utf-8"),
        "--rubric",
        rubric.to_str().expect("utf-8"),
        "--format",
        "jsonl",
    ]);
    let lines: Vec<Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a jsonl line"))
        .collect();
    let want = 0.30 * 1.0 + 0.20 * 0.8 + 0.20 * 0.6 + 0.15 * 0.4 + 0.15 * 1.0;
    let got = lines[0]["score"].as_f64().expect("score");
    assert!((got - want).abs() < 1e-9, "rubricate {got}, Scorer {want}");
    assert_eq!(lines[0]["passed"], Value::Bool(want >= 0.75));
    assert_eq!(
        lines[1]["score"].as_f64(),
        Some(1.0),
        "every level ≥ 1 clamps to 1"
    );
    // inspect says so.
    let out = rubricate(&["inspect", rubric.to_str().expect("utf-8")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("add `max_value: 5`"), "{text}");
}

/// Every real file: loads, `inspect`s, converts to native, and the native file validates.
#[test]
fn every_real_file_loads_inspects_and_converts_to_valid_native() {
    let dir = realworld();
    let out_dir = tempfile::tempdir().expect("tempdir");
    let mut walked = 0;
    for entry in std::fs::read_dir(&dir).expect("read dir") {
        let path = entry.expect("entry").path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["yaml", "yml", "json", "jsonl", "csv"].contains(&ext) {
            continue;
        }
        walked += 1;
        let file = path.to_str().expect("utf-8 path");
        let name = path.file_name().expect("name").to_string_lossy();
        let inspect = rubricate(&["inspect", file]);
        assert!(
            inspect.status.success() && !inspect.stdout.is_empty(),
            "inspect {name}: {}",
            String::from_utf8_lossy(&inspect.stderr)
        );
        let native = out_dir.path().join(format!("{name}.native.{ext}"));
        let convert = rubricate(&[
            "convert",
            file,
            "--to",
            "native",
            "-o",
            native.to_str().expect("utf-8"),
        ]);
        assert!(
            convert.status.success(),
            "convert {name}: {}",
            String::from_utf8_lossy(&convert.stderr)
        );
        let validate = rubricate(&["validate", native.to_str().expect("utf-8")]);
        assert!(
            validate.status.success(),
            "validate native {name}: {}{}",
            String::from_utf8_lossy(&validate.stdout),
            String::from_utf8_lossy(&validate.stderr)
        );
    }
    assert!(walked >= 12, "walked only {walked} files");
}

/// The real agentv eval files: every generation's rubrics become criteria as documented.
#[test]
fn agentv_real_files_keep_weights_gates_and_score_ranges() {
    let dir = realworld();
    let at = |file: &str, case: &str| {
        rubricate::formats::load_rubric(&format!("{}#{case}", dir.join(file).display()))
            .unwrap_or_else(|d| panic!("{file}#{case}: {d}"))
            .rubric
    };
    let r = at("agentv__dataset.yaml", "technical-writing-detailed");
    let weights: Vec<f64> = r.criteria.iter().map(|c| c.weight).collect();
    assert_eq!(weights, [1.0, 2.0, 2.0, 1.5, 1.0]);
    assert_eq!(r.criteria.iter().filter(|c| c.required).count(), 3);
    assert_eq!(r.pass_threshold, 0.8);
    let r = at(
        "agentv__dataset.yaml",
        "summary-multi-criteria-score-ranges-proposed",
    );
    assert_eq!(
        r.criteria[0].min_score,
        Some(0.8),
        "required_min_score 8 of 10"
    );
    assert!(
        matches!(&r.criteria[1].kind, rubricate::model::Kind::Scale(s) if s.max == 10.0 && s.anchors.len() == 5)
    );
    let r = at("agentv__readme-quickstart__my-eval.eval.yaml", "fizzbuzz");
    // `contains` is a grader of its own (weight 1, not required); the string is required,
    // and so are the llm-rubric entries that do not say otherwise (agentv's
    // parseRubricItems: `required ?? true`); their weights stay.
    let shape: Vec<(f64, bool)> = r.criteria.iter().map(|c| (c.weight, c.required)).collect();
    assert_eq!(shape, [(1.0, false), (1.0, true), (0.5, true), (1.5, true)]);
    let graders: Vec<(&str, f64, usize)> = r
        .graders
        .iter()
        .map(|g| (g.id.as_str(), g.weight, g.criteria.len()))
        .collect();
    assert_eq!(graders.len(), 3, "{graders:?}");
    assert_eq!(graders[0].2, 1, "{graders:?}");
    let r = at("agentv__threshold-grader__suite.yaml", "flexible-gate");
    assert_eq!(r.criteria.len(), 4);
    assert_eq!(r.criteria[0].section.as_deref(), Some("accuracy_check"));
}

/// `convert FILE --to native` works, or, for a file of several rubrics, works for its first.
fn converts(file: &Path) -> bool {
    let path = file.to_str().expect("utf-8");
    let out = rubricate(&["convert", path, "--to", "native"]);
    if out.status.success() {
        return true;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let Some(first) = err
        .split_once("rubrics (")
        .and_then(|(_, rest)| rest.split([',', ')']).next())
    else {
        return false;
    };
    rubricate(&["convert", &format!("{path}#{first}"), "--to", "native"])
        .status
        .success()
}

/// The survey of the five systems' public repositories (`tests/fixtures/corpus/`, each
/// file with its repository, path and commit in `SOURCES.tsv`): every file still loads,
/// or is refused, exactly as the table says — a regression either way fails.
#[test]
fn the_public_corpus_loads_as_its_table_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let table = std::fs::read_to_string(root.join("SOURCES.tsv")).expect("SOURCES.tsv");
    let mut wrong = Vec::new();
    let mut loads = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [_, path, _, kind, fixture, expect] = cols[..] else {
            panic!("a row of six columns: {line}");
        };
        let file = root.join(fixture);
        let out = rubricate(&["inspect", file.to_str().expect("utf-8")]);
        let loaded = out.status.success();
        loads += usize::from(loaded);
        // A refusal says what the table says (the file named for what it is, or why not).
        let says = expect
            .strip_prefix("refused: ")
            .is_none_or(|why| String::from_utf8_lossy(&out.stderr).contains(why));
        // What loads converts to native (results import instead); a file of several
        // rubrics converts one at a time (`FILE#ID`).
        if loaded && kind != "results" && !converts(&file) {
            wrong.push(format!("{path}: loads but does not convert to native"));
        }
        if loaded != (expect == "loads") || !says {
            wrong.push(format!(
                "{path}: expected {expect}, got {}",
                if loaded {
                    "loads".to_owned()
                } else {
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_owned()
                }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} files differ from the table:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(loads >= 253, "{loads} files load");
}

/// The corpus datasets whose items carry ground truth score as their home library scores
/// them (`SCORES.tsv`: autorubric 1.6.1's `compute_weighted_score`, normalised and raw;
/// `agentic_v2_eval`'s `Scorer.score(...).weighted_score`, which reports no raw sum).
#[test]
fn the_corpus_datasets_score_as_their_home_library_scores_them() {
    type Want = (usize, f64, Option<f64>);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let table = std::fs::read_to_string(root.join("SCORES.tsv")).expect("SCORES.tsv");
    let mut by_file: std::collections::BTreeMap<(&str, &str), Vec<Want>> =
        std::collections::BTreeMap::new();
    for line in table.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [fixture, item, score, raw, rubric] = cols[..] else {
            panic!("a row of five columns: {line}");
        };
        by_file.entry((fixture, rubric)).or_default().push((
            item.parse().unwrap(),
            score.parse().unwrap(),
            (raw != "-").then(|| raw.parse().unwrap()),
        ));
    }
    let mut checked = 0;
    let mut agentic = 0;
    for ((fixture, rubric), want) in by_file {
        let file = root.join(fixture);
        let mut args = vec!["score", file.to_str().unwrap(), "--format", "jsonl"];
        let rubric_file = root.join(rubric);
        if !rubric.is_empty() {
            args.extend(["--rubric", rubric_file.to_str().unwrap()]);
        }
        let out = rubricate(&args);
        let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            !rows.is_empty(),
            "{fixture}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (item, score, raw) in want {
            let row = &rows[item];
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(
                close(row["score"].as_f64().unwrap(), score)
                    && raw.is_none_or(|raw| close(row["raw"].as_f64().unwrap(), raw)),
                "{fixture} item {item}: rubricate {} / {}, its library {score} / {raw:?}",
                row["score"],
                row["raw"]
            );
            checked += 1;
            agentic += usize::from(fixture.starts_with("tafreeman_prompts/"));
        }
    }
    assert!(checked >= 60, "{checked} items checked");
    assert!(agentic >= 3, "{agentic} agentic_v2_eval items checked");
}
