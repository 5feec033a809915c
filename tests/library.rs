//! The built-in rubric library: every rubric loads, compiles, passes its own lint, matches the
//! published JSON Schema and survives a write/read round trip; `lint` fails and reports what
//! it should on rubrics built to trip it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use rubricate::engine::compile;
use rubricate::formats::library::{NAMES, builtin};
use rubricate::formats::native::{RUBRIC_SCHEMA, rubric_to_json, rubric_to_yaml};
use rubricate::formats::{load_rubric, parse_document, parse_rubric_text};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rubricate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn schema_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(RUBRIC_SCHEMA).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the published schema compiles")
}

/// Every schema error for `doc`, located, for a readable failure message.
fn schema_errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path().as_str()))
        .collect()
}

#[test]
fn names_match_the_rubrics_folder() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(root().join("rubrics"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = NAMES.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(listed, on_disk);
    assert_eq!(listed.len(), NAMES.len(), "no name listed twice");
    for name in NAMES {
        let file = std::fs::read_to_string(root().join(format!("rubrics/{name}.yaml"))).unwrap();
        assert_eq!(
            builtin(name),
            Some(file.as_str()),
            "{name} is embedded as is"
        );
    }
    assert_eq!(builtin("no_such_rubric"), None);
}

#[test]
fn every_builtin_loads_compiles_and_describes_itself() {
    for name in NAMES {
        let loaded = load_rubric(name).unwrap_or_else(|d| panic!("{name}: {d}"));
        assert_eq!(loaded.file, format!("builtin:{name}"));
        let r = &loaded.rubric;
        assert_eq!(r.id, *name, "the id is the name it loads by");
        assert!(
            !r.description.trim().is_empty(),
            "{name} has no description"
        );
        assert!(!r.criteria.is_empty(), "{name} has no criteria");
        for c in &r.criteria {
            assert!(
                !c.requirement.trim().is_empty(),
                "{name}: criterion {} has an empty requirement",
                c.id
            );
        }
        let compiled = compile(&loaded).unwrap_or_else(|d| panic!("{name}: {d}"));
        assert_eq!(compiled.methods.len(), r.criteria.len());
    }
}

#[test]
fn every_builtin_passes_lint() {
    for name in NAMES {
        let o = rubricate(&["lint", name]);
        assert_exit(&o, 0);
        let o = rubricate(&["lint", name, "--format", "json"]);
        assert_exit(&o, 0);
        let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(report["rubric"], *name);
        assert_eq!(report["passed"], true, "{name}: {report:#}");
        assert!(report["score"].as_f64().unwrap() >= 0.7, "{name}");
        let errors: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

#[test]
fn every_builtin_and_the_example_validate_against_the_published_schema() {
    let validator = schema_validator();
    let mut docs: Vec<(String, String)> = NAMES
        .iter()
        .map(|n| (format!("{n}.yaml"), builtin(n).unwrap().to_owned()))
        .collect();
    for file in [
        "examples/answer-quality.yaml",
        "tests/fixtures/valid/everything.yaml",
        "tests/fixtures/valid/labelled.yaml",
    ] {
        docs.push((
            file.to_owned(),
            std::fs::read_to_string(root().join(file)).unwrap(),
        ));
    }
    for (file, text) in docs {
        let doc = parse_document(&file, &text)
            .unwrap_or_else(|d| panic!("{file}: {d}"))
            .to_json();
        let errors = schema_errors(&validator, &doc);
        assert!(errors.is_empty(), "{file}:\n{}", errors.join("\n"));
    }
}

#[test]
fn the_schema_rejects_what_the_format_does_not_allow() {
    let validator = schema_validator();
    let bad = [
        r#"{"id": "x"}"#,
        r#"{"criteria": []}"#,
        r#"{"criteria": ["a"], "colour": "red"}"#,
        r#"{"criteria": [{"requirement": "a", "kind": "stars"}]}"#,
        r#"{"criteria": ["a"], "scoring": {"aggregate": "median"}}"#,
        r#"{"criteria": ["a"], "version": "one"}"#,
    ];
    for text in bad {
        let doc: Value = serde_json::from_str(text).unwrap();
        assert!(!validator.is_valid(&doc), "the schema accepts {text}");
    }
}

#[test]
fn written_rubrics_validate_and_read_back_equal() {
    let validator = schema_validator();
    let mut loaded: Vec<_> = NAMES
        .iter()
        .map(|n| load_rubric(n).unwrap_or_else(|d| panic!("{n}: {d}")))
        .collect();
    loaded.push(load_rubric("examples/answer-quality.yaml").unwrap());
    loaded.push(load_rubric("tests/fixtures/valid/labelled.yaml").unwrap());
    // Sections, every scoring knob, judge settings, options, scales with anchors, schemas.
    loaded.push(load_rubric("tests/fixtures/valid/everything.yaml").unwrap());
    for l in loaded {
        let original = &*l.rubric;
        let errors = schema_errors(&validator, &rubric_to_json(original));
        assert!(
            errors.is_empty(),
            "{}: written JSON:\n{}",
            l.file,
            errors.join("\n")
        );

        let yaml = rubric_to_yaml(original).unwrap();
        let again = parse_rubric_text("roundtrip.yaml", &yaml, "roundtrip", Path::new("."), None)
            .unwrap_or_else(|d| panic!("{}: the written YAML does not load:\n{d}\n{yaml}", l.file));
        assert_eq!(
            *again.rubric, *original,
            "{}: round trip through\n{yaml}",
            l.file
        );

        let json = serde_json::to_string_pretty(&rubric_to_json(original)).unwrap();
        let again = parse_rubric_text("roundtrip.json", &json, "roundtrip", Path::new("."), None)
            .unwrap_or_else(|d| panic!("{}: the written JSON does not load:\n{d}", l.file));
        assert_eq!(*again.rubric, *original, "{}: JSON round trip", l.file);
    }
}

// ---------------------------------------------------------------------------------------------
// lint on rubrics built to trip it

#[test]
fn lint_fails_duplicate_names_unnormalised_weights_and_a_zero_threshold() {
    let file = "tests/fixtures/valid/lint_duplicates.yaml";
    let o = rubricate(&["lint", file]);
    assert_exit(&o, 1);
    let text = stdout(&o);
    assert!(text.contains("FAILED"), "{text}");
    assert!(text.contains("share the name 'Accuracy'"), "{text}");

    let o = rubricate(&["lint", file, "--format", "json"]);
    assert_exit(&o, 1);
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["file"], file);
    assert_eq!(report["rubric"], "lint-duplicates");
    assert_eq!(report["passed"], false);
    // Coverage and level order pass (0.2 each); the other three fail.
    assert!(
        (report["score"].as_f64().unwrap() - 0.4).abs() < 1e-9,
        "{report:#}"
    );
    let level = |id: &str| -> Value {
        report["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {report:#}"))["level"]
            .clone()
    };
    assert_eq!(level("criteria_coverage"), "pass");
    assert_eq!(level("criteria_independence"), "fail");
    assert_eq!(level("weight_distribution"), "fail");
    assert_eq!(level("threshold_reasonableness"), "too_low");
    assert_eq!(level("level_ordering"), "pass");
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("weights sum to 6, not 1")),
        "{messages:#?}"
    );
}

#[test]
fn lint_reports_double_barrelled_unknown_variables_and_unreachable_thresholds() {
    let file = "tests/fixtures/valid/lint_findings.yaml";
    let o = rubricate(&["lint", file, "--format", "json"]);
    // The structure itself is sound: the meta-rubric passes; the findings are warnings.
    assert_exit(&o, 0);
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["passed"], true);
    let findings = report["findings"].as_array().unwrap();
    let find = |path: &str, fragment: &str| -> &Value {
        findings
            .iter()
            .find(|f| f["path"] == path && f["message"].as_str().unwrap().contains(fragment))
            .unwrap_or_else(|| panic!("no finding at {path} saying {fragment:?}: {findings:#?}"))
    };

    let double = find("criteria[0].requirement", "may check two things");
    assert_eq!(double["severity"], "warning");
    assert_eq!(double["location"], format!("{file}:11:18"));
    assert!(
        double["message"]
            .as_str()
            .unwrap()
            .contains("\"States the capital of France\" and \"explains why it matters\"")
    );

    let template = find("criteria[1].method.judge.template", "`audience`");
    assert_eq!(template["severity"], "warning");
    assert!(
        !template["message"]
            .as_str()
            .unwrap()
            .contains("`submission` that"),
        "known variables are not reported"
    );

    let threshold = find("pass_threshold", "cannot be reached");
    assert_eq!(threshold["severity"], "warning");
    assert_eq!(threshold["location"], format!("{file}:7:17"));
    // Weights 1, 1 and a required penalty of −1 that must be MET: (1 + 1 − 1) / 2.
    assert!(
        threshold["message"]
            .as_str()
            .unwrap()
            .contains("the best score is 0.5000"),
        "{threshold:#}"
    );

    find("criteria[2].required", "penalty");
    for f in findings {
        assert_eq!(
            f.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["severity", "location", "path", "message"]
        );
    }
}

#[test]
fn lint_text_lists_the_findings_with_locations() {
    let file = "tests/fixtures/valid/lint_findings.yaml";
    let o = rubricate(&["lint", file]);
    assert_exit(&o, 0);
    let text = stdout(&o);
    assert!(text.contains("PASSED"), "{text}");
    assert!(
        text.contains(&format!(
            "{file}:7:17: warning: pass_threshold 0.7 cannot be reached"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{file}:11:18: warning: criterion 'capital' may check two things"
        )),
        "{text}"
    );
}

#[test]
fn lint_of_a_rubric_that_does_not_load_exits_2() {
    let o = rubricate(&["lint", "tests/fixtures/valid/no-such-rubric.yaml"]);
    assert_exit(&o, 2);
    let o = rubricate(&["lint", "no_such_builtin"]);
    assert_exit(&o, 2);
}
