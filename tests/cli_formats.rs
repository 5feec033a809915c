//! The format commands as a person runs them: `inspect`, `convert` (with what the target
//! cannot hold on stderr), `split`, and `--from`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::Value;

fn rubricate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn inspect_says_what_was_detected_and_what_it_became() {
    let out = rubricate(&["inspect", "tests/fixtures/agentv/summary_ranges.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.starts_with("tests/fixtures/agentv/summary_ranges.yaml: agentv (detected)"),
        "{s}"
    );
    assert!(s.contains("scale 0..10"), "{s}");
    assert!(s.contains("pass_threshold 0.8"), "{s}");
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/rubric_lib/seed_readme.json",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "rubric-lib");
    assert_eq!(v["rubrics"][0]["criteria"][2]["weight"], -15.0);
}

#[test]
fn from_overrides_detection_and_bad_names_are_usage_errors() {
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/rubric_lib/seed_readme.json",
        "--from",
        "autorubric",
    ]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("autorubric (as --from says)"));
    let out = rubricate(&["inspect", "x.yaml", "--from", "promptfoo"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown format 'promptfoo'; use one of native, rubric-lib"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn convert_writes_the_target_and_lists_what_it_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("levels.json");
    let out = rubricate(&[
        "convert",
        "tests/fixtures/dataknobs/content_quality.yaml",
        "--to",
        "rubric-lib",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("note: rubric-lib cannot hold criterion 'clarity': its levels"),
        "{err}"
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    assert!(
        written
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["weight"].is_number() && c["requirement"].is_string())
    );
    // --strict refuses and writes nothing.
    let strict = dir.path().join("strict.json");
    let out = rubricate(&[
        "convert",
        "tests/fixtures/dataknobs/content_quality.yaml",
        "--to",
        "rubric-lib",
        "--strict",
        "-o",
        strict.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!strict.exists());
    assert!(text(&out.stderr).contains("nothing written"));
}

#[test]
fn a_converted_agentv_file_scores_the_same_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let native = dir.path().join("summary.yaml");
    let out = rubricate(&[
        "convert",
        "tests/fixtures/agentv/weighted_scores.yaml#release-faq",
        "--to",
        "native",
        "-o",
        native.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/agentv/cases.json").unwrap())
            .unwrap();
    let case = cases
        .iter()
        .find(|c| c["rubric"] == "weighted_scores.yaml#release-faq")
        .unwrap();
    let data = dir.path().join("d.jsonl");
    std::fs::write(
        &data,
        format!(
            "{}\n",
            serde_json::json!({"submission": "", "ground_truth": case["ground_truth"]})
        ),
    )
    .unwrap();
    let out = rubricate(&[
        "score",
        "--rubric",
        native.to_str().unwrap(),
        data.to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((result["score"].as_f64().unwrap() - case["score"].as_f64().unwrap()).abs() < 1e-6);
}

#[test]
fn a_file_with_several_rubrics_asks_for_one() {
    let out = rubricate(&[
        "validate",
        "tests/fixtures/dataknobs/question_bank_config.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = rubricate(&["lint", "tests/fixtures/dataknobs/question_bank_config.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("holds 2 rubrics (question_bank, answer_key); pick one with"),
        "{}",
        text(&out.stderr)
    );
    let out = rubricate(&[
        "lint",
        "tests/fixtures/dataknobs/question_bank_config.yaml#answer_key",
    ]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

fn split(args: &[&str]) -> (Output, Vec<Value>, Vec<Value>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.jsonl");
    let test = dir.path().join("test.jsonl");
    let mut all = args.to_vec();
    all.extend(["-o", train.to_str().unwrap(), "-o", test.to_str().unwrap()]);
    let out = rubricate(&all);
    let read = |p: &std::path::Path| -> Vec<Value> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (a, b) = (read(&train), read(&test));
    (out, a, b, dir)
}

#[test]
fn split_is_exact_stratified_and_seeded() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("labels.jsonl");
    let mut lines = String::new();
    for i in 0..40 {
        let gt = if i % 4 == 0 {
            ["UNMET", "MET"]
        } else {
            ["MET", "MET"]
        };
        let line =
            serde_json::json!({"id": format!("i{i}"), "submission": "x", "ground_truth": gt});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&data, lines).unwrap();
    let d = data.to_str().unwrap();
    let (out, train, test, _k) = split(&["split", d, "--train", "10", "--seed", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!((train.len(), test.len()), (10, 30));
    let unmet = train
        .iter()
        .filter(|v| v["ground_truth"][0] == "UNMET")
        .count();
    // Its share is 2.5: two seats, and the seeded tie-break decides the half seat.
    assert!(
        (2..=3).contains(&unmet),
        "the 1-in-4 stratum keeps its share: {unmet}"
    );
    let (_, again, _, _k2) = split(&["split", d, "--train", "10", "--seed", "3"]);
    assert_eq!(again, train, "same seed, same split");
    let (_, other, _, _k3) = split(&["split", d, "--train", "10", "--seed", "4"]);
    assert_ne!(other, train);
    let (out, _, _, _k4) = split(&["split", d, "--train", "41"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("more than the 40 items"));
}

#[test]
fn split_keeps_an_autorubric_dataset_shape() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test) = (dir.path().join("train.json"), dir.path().join("test.json"));
    let out = rubricate(&[
        "split",
        "examples/essays.json",
        "--train",
        "2",
        "-o",
        train.to_str().unwrap(),
        "-o",
        test.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&train).unwrap()).unwrap();
    assert_eq!(t["items"].as_array().unwrap().len(), 2);
    assert!(
        t["rubric"]["criteria"].is_array(),
        "the dataset rubric is kept"
    );
    let out = rubricate(&["score", train.to_str().unwrap(), "--format", "jsonl"]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// What `inspect` says of each system's scoring and of rubricate's deliberate differences
/// is what docs/formats.md says, word for word.
#[test]
fn readme_lists_every_deliberate_difference_inspect_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/formats.md"))
        .expect("docs/formats.md");
    for format in rubricate::formats::Format::ALL {
        let Some(f) = rubricate::formats::fidelity::of(format) else {
            continue;
        };
        assert!(
            readme.contains(f.scoring),
            "docs/formats.md lacks {format}: {}",
            f.scoring
        );
        for d in f.differences {
            assert!(readme.contains(d), "docs/formats.md lacks {format}: {d}");
        }
    }
    // And inspect prints them for the file at hand, and for a rubric picked from it.
    let out = rubricate(&["inspect", "tests/fixtures/dataknobs/content_quality.yaml"]);
    let s = text(&out.stdout);
    assert!(s.contains("where rubricate differs on purpose"), "{s}");
    let agentv = rubricate::formats::fidelity::of(rubricate::formats::Format::Agentv).unwrap();
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/agentv/code_review_eval.yaml#sql-injection",
    ]);
    let s = text(&out.stdout);
    assert!(s.contains(agentv.scoring), "{s}");
    assert!(agentv.differences.iter().all(|d| s.contains(d)), "{s}");
}

#[test]
fn a_dataknobs_function_of_the_application_is_judged_instead_and_said_so() {
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/dataknobs_app/content_quality.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("clarity") && s.contains("judge"), "{s}");
    assert!(
        s.contains(
            "18:21: function_ref 'myapp.scoring:check_clarity' is the application's own code"
        ),
        "{s}"
    );
}

/// agentv cases kept in other files load from the eval file: YAML lists, JSONL, promptfoo
/// CSV, folders of `*/case.yaml`, beside cases written inline; a missing file is located.
#[test]
fn agentv_cases_in_other_files_load_relative_to_the_eval_file() {
    let out = rubricate(&[
        "inspect",
        "tests/fixtures/agentv_external/suite.yaml",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["rubrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "math",
            "capital",
            "jsonl-greeting",
            "jsonl-farewell",
            "csv-magic",
            "folder-case",
            "inline-test"
        ]
    );
    assert_eq!(v["items"], 7);
    // The CSV's `icontains:hello` is a check.
    let csv = &v["rubrics"][4]["criteria"][0];
    assert_eq!(csv["method"]["check"], "contains", "{csv}");
    // A folder of `<name>/case.yaml`: each case named by its folder.
    let out = rubricate(&["inspect", "tests/fixtures/agentv_external/folder.yaml"]);
    assert!(
        text(&out.stdout).contains("fix-null  rubric 'fix-null'"),
        "{}",
        text(&out.stdout)
    );
    // A reference to nothing: the eval file's line and what was looked for.
    let out = rubricate(&["inspect", "tests/fixtures/agentv_external/missing.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("missing.yaml:2:5: the eval cases in 'file://nowhere.yaml' are not there"),
        "{}",
        text(&out.stderr)
    );
    // A case file read on its own is an eval of its cases.
    let out = rubricate(&["inspect", "tests/fixtures/agentv_external/cases.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("agentv (detected)"),
        "{}",
        text(&out.stdout)
    );
}

/// `agentic_v2_eval`'s evaluator rubrics (a `judge_prompt`) load: their dimensions, ranges
/// and hard gates read from the prompt, one rubric per pattern.
#[test]
fn agentic_evaluator_rubrics_load_from_their_judge_prompt() {
    let dir = "tests/fixtures/corpus/tafreeman_prompts/agentic-v2-eval/src/agentic_v2_eval/rubrics";
    let out = rubricate(&[
        "inspect",
        &format!("{dir}/prompt_standard.yaml"),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["rubrics"][0];
    assert_eq!(r["criteria"].as_array().unwrap().len(), 5);
    assert_eq!(r["pass_threshold"], 0.7);
    let out = rubricate(&[
        "inspect",
        &format!("{dir}/prompt_pattern.yaml"),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["rubrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    let poi = &v["rubrics"][0]["criteria"][1];
    assert_eq!(poi["id"], "poi");
    assert_eq!(poi["required"], true);
    assert_eq!(poi["min_score"], 0.8);
}

/// An eval file cannot make rubricate read a file elsewhere on the machine as its cases
/// (and send it to a judge): absolute paths and paths out of its folder's neighbourhood are
/// refused before anything is read.
#[test]
fn agentv_case_files_outside_the_eval_files_neighbourhood_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let evals = dir.path().join("project/evals");
    std::fs::create_dir_all(&evals).unwrap();
    let secret = dir.path().join("secret.yaml");
    std::fs::write(&secret, "- id: leak\n  assert: [x]\n").unwrap();
    for (name, reference) in [
        ("abs.yaml", format!("file://{}", secret.display())),
        ("up.yaml", "file://../../secret.yaml".to_owned()),
    ] {
        let eval = evals.join(name);
        std::fs::write(&eval, format!("tests:\n  - {reference}\n")).unwrap();
        let out = rubricate(&["inspect", eval.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            text(&out.stderr)
                .contains("case files are read from the eval file's folder and the one above it"),
            "{name}: {}",
            text(&out.stderr)
        );
    }
    // One level up is the project: `../fixtures/cases.yaml` beside `evals/` is read.
    std::fs::create_dir_all(dir.path().join("project/fixtures")).unwrap();
    std::fs::write(
        dir.path().join("project/fixtures/cases.yaml"),
        "- id: ok\n  assert: [Answers]\n",
    )
    .unwrap();
    let eval = evals.join("near.yaml");
    std::fs::write(&eval, "tests:\n  - file://../fixtures/cases.yaml\n").unwrap();
    let out = rubricate(&["inspect", eval.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A file from the same projects that is not a rubric is named for what it is.
#[test]
fn files_that_are_not_rubrics_are_named_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    for (body, says) in [
        (
            "name: t\nsuites:\n  - ref: a.eval.yaml\nrepeat: {count: 2}\n",
            "an agentv experiment",
        ),
        (
            "text: done\ntrace:\n  - {type: tool_call, name: search}\n",
            "an agentv execution trace",
        ),
        (
            "- {role: system, content: You answer.}\n- {role: user, content: \"{{ q }}\"}\n",
            "a chat prompt",
        ),
        (
            "- {id: judge, provider: openai, config: {model: m}}\n",
            "a list of agentv targets",
        ),
        (
            "criterion_results: []\nweighted_score: 0.5\n",
            "a dataknobs evaluation result",
        ),
        (
            "Accuracy: 0.9\nCompleteness: 0.8\n",
            "agentic_v2_eval's Scorer input",
        ),
    ] {
        let f = dir.path().join("file.yaml");
        std::fs::write(&f, body).unwrap();
        let out = rubricate(&["inspect", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains("this is ") && err.contains(says),
            "{says}: {err}"
        );
    }
}
