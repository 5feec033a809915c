//! CI through the real binary: run gates (`--gate`, the rubric's and `rubricate.yaml`'s
//! `gates:`) with their figures and exit codes, and GitHub Actions output — annotations on
//! the dataset's lines, the Markdown job summary, `--format github`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Says yes (tag axis:accuracy), says please (axis:tone), swears (a penalty).
const RUBRIC: &str = r#"id: ci
name: CI
criteria:
  - { id: says_yes, requirement: Says yes, weight: 1, tags: [axis:accuracy], method: { check: contains, args: { text: "yes" } } }
  - { id: polite, requirement: Says please, weight: 1, tags: [axis:tone], method: { check: contains, args: { text: please } } }
  - { id: rude, requirement: Swears, weight: -1, method: { check: contains, args: { text: damn } } }
"#;

/// a passes (1.0); b, c and d score 0.5 (threshold 0.7). A blank line puts c on line 4.
const ITEMS: &str = "{\"id\":\"a\",\"submission\":\"yes please\"}\n{\"id\":\"b\",\"submission\":\"yes\"}\n\n{\"id\":\"c\",\"submission\":\"no please\"}\n{\"id\":\"d\",\"submission\":\"yes please damn\"}\n";

fn folder(rubric_extra: &str, config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("evals")).unwrap();
    std::fs::write(d.join("evals/ci.yaml"), format!("{RUBRIC}{rubric_extra}")).unwrap();
    std::fs::write(d.join("evals/ci.jsonl"), ITEMS).unwrap();
    if let Some(c) = config {
        std::fs::write(d.join("rubricate.yaml"), c).unwrap();
    }
    dir
}

/// The binary in `dir`, outside GitHub Actions unless `env` says so.
fn rubricate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
    cmd.current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKSPACE")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn grade(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec!["grade", "evals/ci.jsonl", "--rubric", "evals/ci.yaml"];
    args.extend_from_slice(extra);
    rubricate(dir, &args, env)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The gates of `--format json`'s summary, by gate.
fn gates(o: &Output) -> Vec<(String, String, f64, bool)> {
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["summary"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["gate"].as_str().unwrap().to_owned(),
                g["source"].as_str().unwrap().to_owned(),
                g["value"].as_f64().unwrap(),
                g["held"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_gate_looks_at_its_figure_and_a_failed_one_fails_the_job() {
    let dir = folder("", None);
    let d = dir.path();
    // By hand: 1 of 4 passed; mean (1 + .5 + .5 + .5) / 4; says_yes met on a, b, d; the
    // penalty `rude` not applied on a, b, c; tag axis:accuracy = says_yes's value.
    let o = grade(
        d,
        &[
            "--format",
            "json",
            "--gate",
            "pass_rate>=25%",
            "--gate",
            "mean>=0.625",
            "--gate",
            "criterion:says_yes>=0.75",
            "--gate",
            "criterion:rude>=0.75",
            "--gate",
            "tag:axis:accuracy>=0.75",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let got = gates(&o);
    let values: Vec<f64> = got.iter().map(|g| g.2).collect();
    assert_eq!(values, [0.25, 0.625, 0.75, 0.75, 0.75]);
    assert!(got.iter().all(|g| g.3 && g.1 == "flag"));
    // Without gates every item must pass: three did not.
    assert_eq!(grade(d, &["--format", "jsonl"], &[]).status.code(), Some(1));
    // One gate a little higher fails, and is named.
    let o = grade(
        d,
        &[
            "--format",
            "jsonl",
            "--gate",
            "pass_rate>=0.25",
            "--gate",
            "criterion:says_yes>0.75",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("gate ✗ FAILED criterion:says_yes>0.75  0.750  (met on 3 of 4 items; --gate)"),
        "{err}"
    );
    assert!(err.contains("gate ✓ held   pass_rate>=0.25"), "{err}");
    // --fail-under is a gate on the mean.
    let o = grade(d, &["--format", "jsonl", "--fail-under", "0.7"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("gate ✗ FAILED mean>=0.7  0.625"));
}

#[test]
fn gates_come_from_the_rubric_and_the_workspace_too() {
    let dir = folder(
        "gates: [\"tag:axis:tone>=0.75\"]\n",
        Some("gates:\n  - pass_rate>=0.5\n"),
    );
    let d = dir.path();
    let o = grade(d, &["--format", "json"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let got = gates(&o);
    assert_eq!(
        got,
        [
            ("tag:axis:tone>=0.75".into(), "rubric".into(), 0.75, true),
            ("pass_rate>=0.5".into(), "config".into(), 0.25, false),
        ]
    );
    assert!(stderr(&o).contains("(1 of 4 items passed; rubricate.yaml)"));
}

#[test]
fn a_gate_that_cannot_hold_is_refused_before_grading() {
    // A typo in a criterion or tag would otherwise fail the job only after the run.
    let dir = folder("", None);
    let d = dir.path();
    let o = grade(d, &["--gate", "criterion:safety>=1"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("rubric 'ci' has no criterion 'safety'; its criteria: says_yes, polite, rude"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "nothing graded");
    let o = grade(d, &["--gate", "tag:axis:speed>=1"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("its tags: axis:accuracy, axis:tone"));
    // An unreadable gate, on the command line and in a file (with its line).
    let o = grade(d, &["--gate", "speed>=1"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`speed` is not a figure a gate knows"));
    let dir = folder("gates:\n  - pass_rate>=2\n", None);
    let o = grade(dir.path(), &[], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("ci.yaml:8:5"), "{err}");
    assert!(err.contains("outside 0 to 1"), "{err}");
}

#[test]
fn under_github_actions_failed_items_are_annotated_on_their_lines_and_the_summary_is_markdown() {
    let dir = folder("", None);
    let d = dir.path();
    let summary = d.join("summary.md");
    std::fs::write(&summary, "# earlier step\n").unwrap();
    let root = d.to_str().unwrap();
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ("GITHUB_WORKSPACE", root),
    ];
    let o = grade(d, &["--format", "jsonl", "--gate", "pass_rate>=0.5"], &env);
    assert_eq!(o.status.code(), Some(1));
    // stdout keeps its format: four JSON lines, nothing else.
    assert_eq!(stdout(&o).lines().count(), 4);
    assert!(stdout(&o).lines().all(|l| l.starts_with('{')));
    let err = stderr(&o);
    let annotations: Vec<&str> = err.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 4, "{err}");
    // b is on line 2, c on line 4 (after the blank line), d on line 5; paths as the
    // repository names them.
    assert!(annotations[0].starts_with(
        "::error file=evals/ci.jsonl,line=2,title=rubricate%3A item b did not pass (score 50.0%25)::polite: \"please\" not found"
    ), "{}", annotations[0]);
    assert!(annotations[1].starts_with("::error file=evals/ci.jsonl,line=4,"));
    assert!(annotations[2].starts_with("::error file=evals/ci.jsonl,line=5,"));
    // A penalty that was applied is what cost d.
    assert!(annotations[2].ends_with("::rude: found \"damn\" at line 1, column 12"));
    assert_eq!(
        annotations[3],
        "::error title=rubricate%3A gate pass_rate>=0.5 failed::pass_rate>=0.5 is 0.250 (1 of 4 items passed; set by --gate)"
    );
    // Appended after what was there, and a real Markdown document: the heading, the
    // figures, the gates and the worst items as tables.
    let md = std::fs::read_to_string(&summary).unwrap();
    let md = md
        .strip_prefix("# earlier step\n")
        .expect("appended, not replaced");
    let tables = markdown_tables(md);
    assert_eq!(tables.len(), 3, "{md}");
    assert_eq!(
        tables[0][0],
        ["items", "passed", "not passed", "incomplete", "mean score"]
    );
    assert_eq!(tables[0][1], ["4", "1 (25.0%)", "3", "0", "62.5%"]);
    assert_eq!(tables[1][1][1], "pass_rate>=0.5");
    assert_eq!(tables[1][1][0], "❌");
    assert_eq!(
        tables[2].len(),
        4,
        "header and the three items that did not pass"
    );
    assert!(md.starts_with("## ❌ rubricate: ci\n"), "{md}");
}

#[test]
fn format_github_writes_the_annotations_on_stdout_and_the_report_without_a_summary_file() {
    let dir = folder("", None);
    let d = dir.path();
    let o = grade(d, &["--format", "github"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("::error file=evals/ci.jsonl,line=2,"),
        "{out}"
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("::error")).count(), 3);
    assert!(out.contains("## rubricate: ci\n"), "{out}");
    // With a summary file, the report goes there and stdout holds the commands only.
    let summary = d.join("s.md");
    let o = grade(
        d,
        &["--format", "github"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert!(stdout(&o).lines().all(|l| l.starts_with("::")));
    assert_eq!(
        markdown_tables(&std::fs::read_to_string(&summary).unwrap()).len(),
        2
    );
}

#[test]
fn markdown_output_names_the_gates() {
    let dir = folder("", None);
    let o = grade(
        dir.path(),
        &[
            "--format",
            "md",
            "--gate",
            "mean>=0.6",
            "--gate",
            "pass_rate>=0.5",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let md = stdout(&o);
    assert!(md.contains("### Gates: 1 of 2 failed"), "{md}");
    let tables = markdown_tables(&md);
    // Failed gates first.
    assert_eq!(tables[1][1][1], "pass_rate>=0.5");
    assert_eq!(tables[1][2][1], "mean>=0.6");
}

/// Each table of a Markdown document as rows of cell texts (header first), as a Markdown
/// reader (GitHub's dialect: tables) parses it.
fn markdown_tables(md: &str) -> Vec<Vec<Vec<String>>> {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut tables = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => tables.push(Vec::new()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => row.push(cell.take().unwrap_or_default()),
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                if let Some(t) = tables.last_mut() {
                    t.push(std::mem::take(&mut row));
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
            }
            _ => {}
        }
    }
    tables
}

#[test]
fn a_job_its_gates_pass_warns_about_failed_items_instead_of_erroring() {
    let dir = folder("", None);
    let o = grade(
        dir.path(),
        &["--format", "github", "--gate", "pass_rate>=0.25"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("::warning file=evals/ci.jsonl,line=2,")),
        "{out}"
    );
    assert!(!out.contains("::error"), "{out}");
}

/// The workflow in examples/ci runs as written: its grade step's command, on a copy of the
/// repository's examples, under GitHub Actions, passes (the committed baseline is current).
#[test]
fn the_example_workflow_grades_and_passes_against_its_committed_baseline() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workflow = std::fs::read_to_string(repo.join("examples/ci/github-workflow.yml")).unwrap();
    // The folded `run: >-` block of the step that calls `rubricate grade`.
    let folded = workflow.find("run: >-").expect("a folded run block");
    let start = folded
        + workflow[folded..]
            .find("rubricate grade ")
            .expect("a grade step");
    let block: String = workflow[start..]
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<String> = block
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_owned())
        .collect();
    assert_eq!(words[..2], ["rubricate", "grade"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("examples/ci")).unwrap();
    for f in ["answers.jsonl", "answer-quality.yaml", "ci/baseline.jsonl"] {
        std::fs::copy(repo.join("examples").join(f), d.join("examples").join(f)).unwrap();
    }
    let summary = d.join("summary.md");
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let o = rubricate(
        d,
        &args,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("GITHUB_WORKSPACE", d.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(d.join("results.jsonl").is_file());
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("### Against the baseline"), "{md}");
    assert!(md.contains("PASS: no regression"), "{md}");
    assert!(stderr(&o).contains("::warning file=examples/answers.jsonl,line=3,"));
}

/// A dataset's own rubric brings its gates (no `--rubric`); a rubric's gate naming a
/// criterion it lacks is an error where the rubric is read.
#[test]
fn a_datasets_own_rubric_brings_its_gates_and_a_rubrics_gates_are_checked_where_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dataset = serde_json::json!({
        "rubric": {
            "criteria": [{"id": "says_yes", "requirement": "Says yes", "weight": 1,
                "method": {"check": "contains", "args": {"text": "yes"}}}],
            "gates": ["pass_rate>=0.75"]
        },
        "items": [{"id": "a", "submission": "yes"}, {"id": "b", "submission": "no"}]
    });
    std::fs::write(d.join("d.json"), dataset.to_string()).unwrap();
    let o = rubricate(d, &["grade", "d.json", "--format", "jsonl"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gate ✗ FAILED pass_rate>=0.75  0.500  (1 of 2 items passed; rubric)"),
        "{}",
        stderr(&o)
    );
    let dir = folder("gates:\n  - criterion:safety>=1\n", None);
    let o = grade(dir.path(), &[], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("ci.yaml:8:5"), "{err}");
    assert!(
        err.contains("rubric 'ci' has no criterion 'safety'"),
        "{err}"
    );
}
