//! The real binary: `grade` in every output format, `--out`, exit codes, output order under
//! concurrency, CSV and JSON datasets; `score` against hand-computed autorubric scores and
//! map-by-id ground truth; `validate` and `schema`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const RUBRIC: &str = "examples/answer-quality.yaml";
const ANSWERS: &str = "examples/answers.jsonl";
const ESSAYS: &str = "examples/essays.json";

/// Runs the binary from the crate root, without colour.
fn rubricate(args: &[&str]) -> Output {
    rubricate_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn rubricate_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

fn grade(format: &str, extra: &[&str]) -> Output {
    let mut args = vec!["grade", "--rubric", RUBRIC, ANSWERS, "--format", format];
    args.extend_from_slice(extra);
    rubricate(&args)
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

#[track_caller]
fn assert_close(actual: &Value, expected: f64) {
    let x = actual
        .as_f64()
        .unwrap_or_else(|| panic!("{actual} is no number"));
    assert!((x - expected).abs() < 1e-9, "{x} != {expected}");
}

const ITEM_KEYS: [&str; 9] = [
    "item",
    "rubric",
    "rubric_version",
    "score",
    "raw",
    "passed",
    "incomplete",
    "criteria",
    "feedback",
];
const CRITERION_KEYS: [&str; 6] = ["id", "verdict", "value", "reason", "evidence", "failure"];

/// What `examples/answer-quality.yaml` gives `examples/answers.jsonl`: weights 3 (required),
/// 1, −2 (penalty) and 1 (levels terse 0.3 / good 1.0), so P = 5.
struct Expected {
    id: &'static str,
    score: f64,
    raw: f64,
    passed: bool,
    verdicts: [&'static str; 4],
}

const EXPECTED: [Expected; 5] = [
    Expected {
        id: "a1",
        score: 1.0,
        raw: 5.0,
        passed: true,
        verdicts: ["MET", "MET", "UNMET", "good"],
    },
    Expected {
        id: "a2",
        score: 0.6,
        raw: 3.0,
        passed: false,
        verdicts: ["MET", "MET", "MET", "good"],
    },
    Expected {
        id: "a3",
        score: 0.26,
        raw: 1.3,
        passed: false,
        verdicts: ["UNMET", "MET", "UNMET", "terse"],
    },
    Expected {
        id: "a4",
        score: 0.8,
        raw: 4.0,
        passed: true,
        verdicts: ["MET", "UNMET", "UNMET", "good"],
    },
    Expected {
        id: "a5",
        score: 0.86,
        raw: 4.3,
        passed: true,
        verdicts: ["MET", "MET", "UNMET", "terse"],
    },
];

// ---------------------------------------------------------------------------------------------
// grade: output formats

#[test]
fn grade_jsonl_has_the_stable_item_shape_and_the_expected_scores() {
    let o = grade("jsonl", &[]);
    assert_exit(&o, 1); // a2 and a3 fail
    let rows = jsonl(&stdout(&o));
    assert_eq!(rows.len(), 5);
    for (row, want) in rows.iter().zip(&EXPECTED) {
        assert_eq!(keys(row), ITEM_KEYS, "{row}");
        assert_eq!(row["item"], want.id);
        assert_eq!(row["rubric"], "answer-quality");
        assert_eq!(row["rubric_version"], "1.0.0");
        assert_close(&row["score"], want.score);
        assert_close(&row["raw"], want.raw);
        assert_eq!(row["passed"], want.passed, "{}", want.id);
        assert_eq!(row["incomplete"], false);
        let criteria = row["criteria"].as_array().unwrap();
        let ids: Vec<&Value> = criteria.iter().map(|c| &c["id"]).collect();
        assert_eq!(ids, ["correct", "concise", "filler", "length"]);
        for (c, verdict) in criteria.iter().zip(want.verdicts) {
            assert_eq!(keys(c), CRITERION_KEYS, "{c}");
            assert_eq!(c["verdict"], verdict, "{} {}", want.id, c["id"]);
            assert!(c["failure"].is_null());
            assert!(!c["evidence"].as_array().unwrap().is_empty());
            assert_eq!(c["reason"], c["evidence"][0]);
        }
        let feedback = row["feedback"].as_str().unwrap();
        let verdict = if want.passed { "PASSED" } else { "FAILED" };
        assert!(
            feedback.starts_with(&format!(
                "Evaluation {verdict} for rubric 'Answer quality'.\n"
            )),
            "{feedback}"
        );
    }
    // Evidence quotes the submission's own text and place.
    assert_eq!(
        rows[4]["criteria"][0]["evidence"],
        json!(["found \"paris\" at line 1, column 1"])
    );
    assert_eq!(
        rows[1]["criteria"][2]["evidence"],
        json!(["matched \"Great question\" at line 1, column 1"])
    );
    assert_eq!(
        rows[2]["criteria"][3]["evidence"],
        json!(["1 word (allowed any)", "1 is below every threshold → terse"])
    );
    assert!(
        stderr(&o).contains(
            "5 items: 3 passed, 2 failed · mean score 0.704 · 0 of 20 criterion results failed (0.0%)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn grade_json_has_items_and_a_summary() {
    let o = grade("json", &[]);
    assert_exit(&o, 1);
    let doc: Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
    assert_eq!(keys(&doc), ["items", "summary"]);
    let items = doc["items"].as_array().unwrap();
    let lines = jsonl(&stdout(&grade("jsonl", &[])));
    assert_eq!(items, &lines, "the same items as JSONL");
    let summary = &doc["summary"];
    assert_eq!(summary["items"], 5);
    assert_eq!(summary["passed"], 3);
    assert_eq!(summary["failed"], 2);
    assert_eq!(summary["incomplete"], 0);
    assert_close(&summary["mean_score"], 3.52 / 5.0);
    assert_eq!(summary["criterion_results"], 20);
    assert_eq!(summary["criterion_failures"], 0);
}

#[test]
fn grade_csv_has_a_header_with_verdict_and_value_columns() {
    let o = grade("csv", &[]);
    assert_exit(&o, 1);
    let text = stdout(&o);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "item",
            "rubric",
            "rubric_version",
            "score",
            "raw",
            "passed",
            "incomplete",
            "failures",
            "verdict:correct",
            "value:correct",
            "verdict:concise",
            "value:concise",
            "verdict:filler",
            "value:filler",
            "verdict:length",
            "value:length",
            "feedback",
        ]
    );
    let rows: Vec<BTreeMap<String, String>> = reader.deserialize().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5);
    let jsonl_rows = jsonl(&stdout(&grade("jsonl", &[])));
    for ((row, want), j) in rows.iter().zip(&EXPECTED).zip(&jsonl_rows) {
        assert_eq!(row["item"], want.id);
        assert_eq!(row["rubric"], "answer-quality");
        assert_eq!(row["rubric_version"], "1.0.0");
        let score: f64 = row["score"].parse().unwrap();
        assert!((score - want.score).abs() < 1e-9);
        let raw: f64 = row["raw"].parse().unwrap();
        assert!((raw - want.raw).abs() < 1e-9);
        assert_eq!(row["passed"], want.passed.to_string());
        assert_eq!(row["incomplete"], "false");
        assert_eq!(row["failures"], "0");
        for (id, verdict) in ["correct", "concise", "filler", "length"]
            .iter()
            .zip(want.verdicts)
        {
            assert_eq!(row[&format!("verdict:{id}")], verdict);
        }
        let length: f64 = row["value:length"].parse().unwrap();
        assert!((length - if want.verdicts[3] == "good" { 1.0 } else { 0.3 }).abs() < 1e-9);
        // The multi-line feedback (with quotes) survives CSV quoting intact.
        assert_eq!(row["feedback"], j["feedback"].as_str().unwrap());
    }
}

#[test]
fn grade_junit_is_well_formed_with_counts() {
    let o = grade("junit", &[]);
    assert_exit(&o, 1);
    let elements = parse_xml(&stdout(&o));
    let suite = elements
        .iter()
        .find(|(n, _)| n == "testsuite")
        .expect("a testsuite");
    assert_eq!(suite.1["name"], "answer-quality");
    assert_eq!(suite.1["tests"], "5");
    assert_eq!(suite.1["failures"], "2");
    assert_eq!(suite.1["errors"], "0");
    let cases: Vec<&str> = elements
        .iter()
        .filter(|(n, _)| n == "testcase")
        .map(|(_, a)| a["name"].as_str())
        .collect();
    assert_eq!(cases, ["a1", "a2", "a3", "a4", "a5"]);
    let failures: Vec<&str> = elements
        .iter()
        .filter(|(n, _)| n == "failure")
        .map(|(_, a)| a["message"].as_str())
        .collect();
    assert_eq!(
        failures,
        ["score 0.6000 did not pass", "score 0.2600 did not pass"]
    );
    assert_eq!(elements[0].0, "testsuites");
}

#[test]
fn grade_junit_reports_incomplete_items_as_errors() {
    let o = rubricate(&[
        "grade",
        "--rubric",
        "tests/fixtures/valid/judged.yaml",
        "tests/fixtures/valid/paris.jsonl",
        "--format",
        "junit",
    ]);
    assert_exit(&o, 3);
    let elements = parse_xml(&stdout(&o));
    let suite = &elements.iter().find(|(n, _)| n == "testsuite").unwrap().1;
    assert_eq!(
        (
            suite["tests"].as_str(),
            suite["failures"].as_str(),
            suite["errors"].as_str()
        ),
        ("2", "0", "2")
    );
    assert_eq!(elements.iter().filter(|(n, _)| n == "error").count(), 2);
}

/// Item ids with markup characters, commas, quotes and line breaks come back unchanged from
/// the `JUnit` `name` attribute (as an XML parser reads it) and from the CSV `item` column.
#[test]
fn awkward_item_ids_survive_junit_and_csv() {
    let ids = ["a<b&\"c'd", "x,y\nz", "  padded  ", "tab\there"];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("awkward.jsonl");
    let mut text = String::new();
    for id in ids {
        writeln!(text, "{}", json!({ "id": id, "submission": "Paris." })).unwrap();
    }
    std::fs::write(&data, text).unwrap();
    let run = |format: &str| {
        let o = rubricate(&[
            "grade",
            "--rubric",
            RUBRIC,
            data.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_exit(&o, 0);
        stdout(&o)
    };
    let csv_text = run("csv");
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let csv_ids: Vec<String> = reader
        .records()
        .map(|r| r.unwrap().get(0).unwrap().to_owned())
        .collect();
    assert_eq!(csv_ids, ids);

    let elements = parse_xml(&run("junit"));
    let junit_ids: Vec<&str> = elements
        .iter()
        .filter(|(n, _)| n == "testcase")
        .map(|(_, a)| a["name"].as_str())
        .collect();
    assert_eq!(junit_ids, ids);
}

#[test]
fn grade_table_lists_items_and_ends_with_the_summary() {
    let o = grade("table", &[]);
    assert_exit(&o, 1);
    let text = stdout(&o);
    assert!(
        !text.contains('\u{1b}'),
        "NO_COLOR: no escape codes\n{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["ITEM", "SCORE", "RESULT", "NOTES"]);
    let rows: Vec<Vec<&str>> = lines[1..6]
        .iter()
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["a1", "100.0%", "PASS"],
            ["a2", "60.0%", "FAIL"],
            ["a3", "26.0%", "FAIL"],
            ["a4", "80.0%", "PASS"],
            ["a5", "86.0%", "PASS"],
        ]
    );
    assert!(lines[2].contains("lost points: filler"), "{}", lines[2]);
    assert_eq!(
        lines.last().copied(),
        Some(
            "5 items: 3 passed, 2 failed · mean score 0.704 · 0 of 20 criterion results failed (0.0%)"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// --out

#[test]
fn out_writes_the_same_bytes_as_stdout_and_leaves_no_temp_file() {
    for (format, ext) in [
        ("jsonl", "jsonl"),
        ("json", "json"),
        ("csv", "csv"),
        ("junit", "xml"),
        ("table", "txt"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(format!("results.{ext}"));
        // An older report is replaced, not appended to.
        std::fs::write(&out, "stale\n").unwrap();
        let to_file = grade(format, &["--out", out.to_str().unwrap()]);
        assert_exit(&to_file, 1);
        assert!(to_file.stdout.is_empty(), "{format}: nothing on stdout");
        let to_stdout = grade(format, &[]);
        let written = std::fs::read(&out).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written),
            stdout(&to_stdout),
            "{format}: the file holds what stdout would"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [format!("results.{ext}")],
            "{format}: no temp file left"
        );
    }
}

/// `--out` to a FIFO: the bytes arrive through it and it is still a FIFO after.
#[cfg(unix)]
#[test]
fn out_to_a_fifo_writes_through_it_and_leaves_it_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = grade("jsonl", &["--out", fifo.to_str().unwrap()]);
    assert_exit(&o, 1);
    let got = reader.join().unwrap();
    assert_eq!(got, stdout(&grade("jsonl", &[])));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file"
    );
}

/// `--out` to a character device (a null device made in a temporary folder, so a
/// regression destroys only that): written in place, still a device. Making a device
/// needs root; elsewhere the test says so and passes, except under `CI=true`.
#[cfg(unix)]
#[test]
fn out_to_a_character_device_writes_in_place_and_leaves_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must be able to make a device node (run as root)"
        );
        eprintln!("cannot make a device node here (not root): skipped");
        return;
    }
    for format in ["jsonl", "junit", "table"] {
        let o = grade(format, &["--out", null.to_str().unwrap()]);
        assert_exit(&o, 1);
        assert!(
            std::fs::metadata(&null)
                .unwrap()
                .file_type()
                .is_char_device(),
            "{format}: the device is still a device"
        );
    }
    // `-` is stdout.
    let o = grade("jsonl", &["--out", "-"]);
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), stdout(&grade("jsonl", &[])));
}

#[test]
fn out_into_a_missing_folder_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no/such/folder/results.jsonl");
    let o = grade("jsonl", &["--out", out.to_str().unwrap()]);
    assert_exit(&o, 2);
    assert!(!out.exists());
}

// ---------------------------------------------------------------------------------------------
// exit codes

#[test]
fn fail_under_decides_the_exit_code_from_the_mean_score() {
    // Mean score 0.704.
    assert_exit(&grade("jsonl", &["--fail-under", "0.5"]), 0);
    assert_exit(&grade("jsonl", &["--fail-under", "0.704"]), 0);
    assert_exit(&grade("jsonl", &["--fail-under", "0.9"]), 1);
    assert_exit(&grade("jsonl", &[]), 1);
}

#[test]
fn judge_failures_exit_3_unless_tolerated() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "grade",
            "--rubric",
            "tests/fixtures/valid/judged.yaml",
            "tests/fixtures/valid/paris.jsonl",
            "--format",
            "jsonl",
        ];
        args.extend_from_slice(extra);
        rubricate(&args)
    };
    let o = run(&[]);
    assert_exit(&o, 3);
    for row in jsonl(&stdout(&o)) {
        assert_eq!(row["incomplete"], true);
        let polite = &row["criteria"][1];
        assert_eq!(polite["id"], "polite");
        assert!(polite["verdict"].is_null(), "a failure is never a verdict");
        assert!(polite["value"].is_null());
        assert_eq!(polite["failure"]["category"], "judge");
        assert_eq!(polite["failure"]["kind"], "error");
    }
    assert!(
        stderr(&o).contains("2 of 4 criterion results failed (50.0%)"),
        "{}",
        stderr(&o)
    );
    // Half of the criterion results failed.
    assert_exit(&run(&["--max-error-rate", "1"]), 0);
    assert_exit(&run(&["--max-error-rate", "0.5"]), 0);
    assert_exit(&run(&["--max-error-rate", "0.4"]), 3);
}

#[test]
fn usage_errors_exit_2() {
    let cases: [&[&str]; 8] = [
        &["grade", "--rubric", RUBRIC, ANSWERS, "--no-such-flag"],
        &["grade", "--rubric", RUBRIC],
        &["grade", "--rubric", RUBRIC, "examples/no-such-file.jsonl"],
        &["grade", "--rubric", "no/such/rubric.yaml", ANSWERS],
        &["grade", "--rubric", "no_such_builtin", ANSWERS],
        &["grade", "--rubric", RUBRIC, ANSWERS, "--format", "xml"],
        &[
            "grade",
            "--rubric",
            RUBRIC,
            ANSWERS,
            "--max-error-rate",
            "2",
        ],
        &["no-such-command"],
    ];
    for args in cases {
        let o = rubricate(args);
        assert_exit(&o, 2);
        assert!(o.stdout.is_empty(), "{args:?}: nothing graded");
        assert!(!stderr(&o).trim().is_empty(), "{args:?}: says why");
    }
    let o = rubricate(&["grade", "--rubric", RUBRIC, "examples/no-such-file.jsonl"]);
    assert!(
        stderr(&o).contains("examples/no-such-file.jsonl"),
        "{}",
        stderr(&o)
    );
}

// ---------------------------------------------------------------------------------------------
// order under concurrency, and other dataset formats

#[test]
fn output_order_is_stable_under_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("many.jsonl");
    let mut text = String::new();
    for i in 0..500 {
        let submission = match i % 5 {
            0 => format!("The capital of France is Paris. Item {i}."),
            1 => format!("Great question! Paris, item {i}."),
            2 => format!("Lyon {i}."),
            3 => format!("Paris. One. Two. Three {i}."),
            _ => "paris".repeat(1 + i % 7),
        };
        writeln!(
            text,
            "{}",
            json!({ "id": format!("n{i:03}"), "submission": submission })
        )
        .unwrap();
    }
    std::fs::write(&data, text).unwrap();
    let data = data.to_str().unwrap();
    let run = |n: &str| {
        let o = rubricate(&[
            "grade",
            "--rubric",
            RUBRIC,
            data,
            "--format",
            "jsonl",
            "--concurrency",
            n,
        ]);
        assert_exit(&o, 1);
        stdout(&o)
    };
    let serial = run("1");
    let parallel = run("16");
    assert_eq!(serial, parallel, "same bytes in the same order");
    let ids: Vec<String> = jsonl(&serial)
        .iter()
        .map(|r| r["item"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (0..500).map(|i| format!("n{i:03}")).collect();
    assert_eq!(ids, want);
}

/// The five example answers as (id, prompt, submission).
fn answers() -> Vec<(String, String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(ANSWERS)).unwrap();
    jsonl(&text)
        .into_iter()
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_owned(),
                v["prompt"].as_str().unwrap().to_owned(),
                v["submission"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn csv_dataset_grades_like_the_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("answers.csv");
    let mut w = csv::Writer::from_path(&path).unwrap();
    w.write_record(["id", "prompt", "submission"]).unwrap();
    for (id, prompt, submission) in answers() {
        w.write_record([id, prompt, submission]).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let o = rubricate(&[
        "grade",
        "--rubric",
        RUBRIC,
        path.to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    assert_exit(&o, 1);
    assert_eq!(stdout(&o), stdout(&grade("jsonl", &[])));
}

#[test]
fn json_datasets_grade_like_the_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<Value> = answers()
        .into_iter()
        .map(|(id, prompt, submission)| json!({ "id": id, "prompt": prompt, "submission": submission }))
        .collect();
    let expected = stdout(&grade("jsonl", &[]));
    for (name, doc) in [
        ("object.json", json!({ "name": "answers", "items": items })),
        ("list.json", Value::Array(items.clone())),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let o = rubricate(&[
            "grade",
            "--rubric",
            RUBRIC,
            path.to_str().unwrap(),
            "--format",
            "jsonl",
        ]);
        assert_exit(&o, 1);
        assert_eq!(stdout(&o), expected, "{name}");
    }
}

#[test]
fn command_checks_through_the_binary_need_allow_commands() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = dir.path().join("cmd.yaml");
    std::fs::write(
        &rubric,
        "id: cmd\ncriteria:\n  - id: paris\n    requirement: Names Paris\n    method:\n      check: command\n      args: { program: sh, args: ['-c', 'grep -q Paris && echo MET || echo UNMET'] }\n",
    )
    .unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid/paris.jsonl");
    let args = [
        "grade",
        "--rubric",
        rubric.to_str().unwrap(),
        data.to_str().unwrap(),
        "--format",
        "jsonl",
    ];
    let refused = rubricate_in(dir.path(), &args);
    assert_exit(&refused, 3);
    for row in jsonl(&stdout(&refused)) {
        let f = &row["criteria"][0]["failure"];
        assert_eq!(f["category"], "command");
        assert!(f["message"].as_str().unwrap().contains("--allow-commands"));
    }
    let mut allowed_args = args.to_vec();
    allowed_args.push("--allow-commands");
    let allowed = rubricate_in(dir.path(), &allowed_args);
    assert_exit(&allowed, 0);
    for row in jsonl(&stdout(&allowed)) {
        assert_eq!(row["criteria"][0]["verdict"], "MET");
        assert_eq!(
            row["criteria"][0]["evidence"],
            json!(["`sh` printed \"MET\""])
        );
    }
}

// ---------------------------------------------------------------------------------------------
// score

/// autorubric's `compute_weighted_score`, by hand: `CANNOT_ASSESS` is skipped; MET adds the
/// weight (negative for a penalty); the sum is divided by the positive weight of the counted
/// criteria and clamped to [0, 1].
fn autorubric_score(weights: &[f64], verdicts: &[&str]) -> (f64, f64) {
    let mut raw = 0.0;
    let mut positive = 0.0;
    for (w, v) in weights.iter().zip(verdicts) {
        match *v {
            "CANNOT_ASSESS" => {}
            "MET" => {
                raw += w;
                if *w > 0.0 {
                    positive += w;
                }
            }
            "UNMET" => {
                if *w > 0.0 {
                    positive += w;
                }
            }
            other => panic!("unexpected verdict {other}"),
        }
    }
    let score = if positive > 0.0 {
        (raw / positive).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (score, raw)
}

/// The helper itself, against numbers worked out on paper for weights 30, 30, 20, 20, −15.
#[test]
fn autorubric_score_by_hand() {
    let w = [30.0, 30.0, 20.0, 20.0, -15.0];
    let cases: [([&str; 5], f64, f64); 6] = [
        (["MET", "MET", "MET", "MET", "UNMET"], 1.0, 100.0),
        (["MET", "MET", "MET", "MET", "MET"], 0.85, 85.0),
        (["UNMET", "MET", "UNMET", "UNMET", "MET"], 0.15, 15.0),
        (["UNMET", "UNMET", "MET", "UNMET", "MET"], 0.05, 5.0),
        (["UNMET", "UNMET", "UNMET", "UNMET", "MET"], 0.0, -15.0),
        // Only the first and third are assessed: 30 / (30 + 20).
        (
            [
                "MET",
                "CANNOT_ASSESS",
                "UNMET",
                "CANNOT_ASSESS",
                "CANNOT_ASSESS",
            ],
            0.6,
            30.0,
        ),
    ];
    for (verdicts, score, raw) in cases {
        let (s, r) = autorubric_score(&w, &verdicts);
        assert!(
            (s - score).abs() < 1e-12 && (r - raw).abs() < 1e-12,
            "{verdicts:?}"
        );
    }
}

#[test]
fn score_essays_matches_autorubric_weighted_scores() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(ESSAYS)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let weights: Vec<f64> = doc["rubric"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["weight"].as_f64().unwrap())
        .collect();
    assert_eq!(weights, [30.0, 30.0, 20.0, 20.0, -15.0]);
    let items = doc["items"].as_array().unwrap();
    assert!(!items.is_empty());

    let o = rubricate(&["score", ESSAYS, "--format", "jsonl"]);
    let rows = jsonl(&stdout(&o));
    assert_eq!(rows.len(), items.len());
    let mut sum = 0.0;
    for (i, (row, item)) in rows.iter().zip(items).enumerate() {
        let verdicts: Vec<&str> = item["ground_truth"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let (score, raw) = autorubric_score(&weights, &verdicts);
        sum += score;
        assert_eq!(
            row["item"],
            (i + 1).to_string(),
            "items are numbered from 1"
        );
        assert_close(&row["score"], score);
        assert_close(&row["raw"], raw);
        assert_eq!(row["passed"], score >= 0.7 - 1e-9, "item {}", i + 1);
        assert_eq!(row["incomplete"], false);
        let given: Vec<&Value> = row["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["verdict"])
            .collect();
        assert_eq!(given, verdicts, "item {}", i + 1);
    }
    let all_pass = rows.iter().all(|r| r["passed"] == true);
    assert_exit(&o, i32::from(!all_pass));
    let mean = sum / items.len() as f64;
    assert!(
        stderr(&o).contains(&format!("mean score {mean:.3}")),
        "{}",
        stderr(&o)
    );
    // --fail-under compares the mean score.
    let below = format!("{:.4}", mean - 0.01);
    let above = format!("{:.4}", mean + 0.01);
    assert_exit(
        &rubricate(&["score", ESSAYS, "--format", "jsonl", "--fail-under", &below]),
        0,
    );
    assert_exit(
        &rubricate(&["score", ESSAYS, "--format", "jsonl", "--fail-under", &above]),
        1,
    );
}

#[test]
fn score_map_by_id_ground_truth_with_levels_options_and_scales() {
    let o = rubricate(&[
        "score",
        "--rubric",
        "tests/fixtures/valid/labelled.yaml",
        "tests/fixtures/valid/labelled.jsonl",
        "--format",
        "jsonl",
    ]);
    assert_exit(&o, 1);
    let rows = jsonl(&stdout(&o));
    let verdicts = |row: &Value| -> Vec<Value> {
        row["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["verdict"].clone())
            .collect()
    };
    let values = |row: &Value| -> Vec<Option<f64>> {
        row["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["value"].as_f64())
            .collect()
    };
    // Weights: correct 2, clarity 1, tone 1, detail 1 (scale 0–10).
    assert_eq!(rows[0]["item"], "x1");
    assert_eq!(
        verdicts(&rows[0]),
        [json!("MET"), json!("ok"), json!("Warm"), json!(7.0)]
    );
    assert_eq!(
        values(&rows[0]),
        [Some(1.0), Some(0.7), Some(1.0), Some(0.7)]
    );
    assert_close(&rows[0]["score"], (2.0 + 0.7 + 1.0 + 0.7) / 5.0);
    assert_eq!(rows[0]["passed"], true);

    // N/A and CANNOT_ASSESS abstain: (0·2 + 1·1) / 3.
    assert_eq!(
        verdicts(&rows[1]),
        [
            json!("UNMET"),
            json!("great"),
            json!("N/A"),
            json!("CANNOT_ASSESS")
        ]
    );
    assert_eq!(values(&rows[1]), [Some(0.0), Some(1.0), None, None]);
    assert_close(&rows[1]["score"], 1.0 / 3.0);
    assert_close(&rows[1]["raw"], 1.0);

    // Criteria the map leaves out are not given: only clarity counts.
    assert_eq!(
        verdicts(&rows[2]),
        [
            json!("CANNOT_ASSESS"),
            json!("poor"),
            json!("CANNOT_ASSESS"),
            json!("CANNOT_ASSESS")
        ]
    );
    assert_close(&rows[2]["score"], 0.0);
    assert_eq!(rows[2]["incomplete"], false);

    // Map order does not matter; 2.5 on 0–10 is 0.25.
    assert_eq!(
        verdicts(&rows[3]),
        [json!("MET"), json!("great"), json!("Neutral"), json!(2.5)]
    );
    assert_close(&rows[3]["score"], (2.0 + 1.0 + 0.5 + 0.25) / 5.0);
}

#[test]
fn score_positional_ground_truth_with_level_ids_option_labels_and_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("positional.jsonl");
    std::fs::write(
        &data,
        concat!(
            r#"{"id": "p1", "submission": "Paris.", "ground_truth": ["MET", "great", "Rude", 10]}"#,
            "\n",
            r#"{"id": "p2", "submission": "Lyon.", "ground_truth": ["UNMET", "poor", "Neutral", "4"]}"#,
            "\n",
        ),
    )
    .unwrap();
    let rubric = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid/labelled.yaml");
    let o = rubricate(&[
        "score",
        "--rubric",
        rubric.to_str().unwrap(),
        data.to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    let rows = jsonl(&stdout(&o));
    assert_eq!(rows.len(), 2, "{}", stderr(&o));
    assert_close(&rows[0]["score"], (2.0 + 1.0 + 0.0 + 1.0) / 5.0);
    assert_close(&rows[1]["score"], (0.0 + 0.0 + 0.5 + 0.4) / 5.0);
    assert_eq!(rows[1]["criteria"][3]["verdict"], json!(4.0));
}

#[test]
fn score_rejects_a_label_the_criterion_does_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.jsonl");
    std::fs::write(
        &data,
        r#"{"id": "b1", "submission": "x", "ground_truth": {"clarity": "superb"}}"#,
    )
    .unwrap();
    let rubric = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid/labelled.yaml");
    let o = rubricate(&[
        "score",
        "--rubric",
        rubric.to_str().unwrap(),
        data.to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    assert_exit(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("b1") && err.contains("superb") && err.contains("clarity"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// validate, schema

#[test]
fn validate_accepts_every_builtin_and_the_examples() {
    let mut args = vec!["validate"];
    args.extend_from_slice(rubricate::formats::library::NAMES);
    args.extend_from_slice(&[
        RUBRIC,
        ANSWERS,
        ESSAYS,
        "tests/fixtures/valid/schema_file.yaml",
        "tests/fixtures/valid/judged.yaml",
        "tests/fixtures/valid/labelled.yaml",
        "tests/fixtures/valid/labelled.jsonl",
        "tests/fixtures/valid/paris.jsonl",
        "tests/fixtures/valid/schema_answers.jsonl",
        "tests/fixtures/valid/everything.yaml",
        "tests/fixtures/valid/lint_duplicates.yaml",
        "tests/fixtures/valid/lint_findings.yaml",
    ]);
    let o = rubricate(&args);
    assert_exit(&o, 0);
    let out = stdout(&o);
    for spec in &args[1..] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("ok {spec} ("))),
            "{spec} not reported ok:\n{out}"
        );
    }
    let essays: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(ESSAYS)).unwrap(),
    )
    .unwrap();
    let n = essays["items"].as_array().unwrap().len();
    assert!(
        out.contains(&format!("ok examples/essays.json (dataset, {n} items)")),
        "{out}"
    );
    assert!(
        out.contains("ok examples/answers.jsonl (dataset, 5 items)"),
        "{out}"
    );
}

#[test]
fn schema_prints_the_published_json_schema() {
    let o = rubricate(&["schema"]);
    assert_exit(&o, 0);
    let printed: Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let published: Value = serde_json::from_str(rubricate::formats::native::RUBRIC_SCHEMA).unwrap();
    assert_eq!(printed, published);
    assert_eq!(
        printed["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let file = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/rubric.schema.json"),
    )
    .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&file).unwrap(), printed);
}

// ---------------------------------------------------------------------------------------------
// A minimal XML well-formedness check (no XML crate among the dependencies).

type Attrs = BTreeMap<String, String>;

/// Parses `text` strictly enough to catch malformed output: one root, balanced and properly
/// nested tags, quoted attributes, no duplicate attributes, no raw `<` or stray `&` in text or
/// values. Returns the start tags in document order with their (unescaped) attributes.
fn parse_xml(text: &str) -> Vec<(String, Attrs)> {
    let mut rest = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .expect("an XML declaration first");
    let mut stack: Vec<String> = Vec::new();
    let mut elements = Vec::new();
    let mut roots = 0;
    while let Some(open) = rest.find('<') {
        let (chars, after) = rest.split_at(open);
        check_text(chars);
        if stack.is_empty() {
            assert!(chars.trim().is_empty(), "text outside the root: {chars:?}");
        }
        let close = after.find('>').expect("an unclosed tag");
        let tag = &after[1..close];
        rest = &after[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack.pop().expect("a closing tag with nothing open");
            assert_eq!(top, name.trim(), "tags nest");
            continue;
        }
        let (tag, empty) = match tag.strip_suffix('/') {
            Some(t) => (t, true),
            None => (tag, false),
        };
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_-:.".contains(c)),
            "bad tag name {name:?}"
        );
        if stack.is_empty() {
            roots += 1;
        }
        elements.push((name.to_owned(), parse_attrs(&tag[name_end..])));
        if !empty {
            stack.push(name.to_owned());
        }
    }
    check_text(rest);
    assert!(rest.trim().is_empty(), "text after the root: {rest:?}");
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
    elements
}

fn parse_attrs(mut s: &str) -> Attrs {
    let mut attrs = Attrs::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return attrs;
        }
        let eq = s.find('=').expect("attribute = value");
        let name = s[..eq].trim().to_owned();
        let value = s[eq + 1..].trim_start();
        let quote = value.chars().next().expect("a value");
        assert!(quote == '"' || quote == '\'', "quoted attribute {name}");
        let end = value[1..].find(quote).expect("a closing quote") + 1;
        let raw = &value[1..end];
        assert!(!raw.contains('<'), "raw < in attribute {name}");
        check_text(raw);
        // XML 1.0 §3.3.3: a parser reads literal tabs and line breaks in an attribute value
        // as spaces; only character references (`&#10;`) keep them.
        let unescaped = raw
            .replace(['\t', '\n', '\r'], " ")
            .replace("&#10;", "\n")
            .replace("&#13;", "\r")
            .replace("&#9;", "\t")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&");
        assert!(
            attrs.insert(name.clone(), unescaped).is_none(),
            "duplicate attribute {name}"
        );
        s = &value[end + 1..];
    }
}

/// Every `&` starts a known entity or a character reference.
fn check_text(s: &str) {
    for (i, _) in s.match_indices('&') {
        let tail = &s[i..];
        let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
            .iter()
            .any(|e| tail.starts_with(e))
            || (tail.starts_with("&#") && tail.find(';').is_some_and(|end| end > 2));
        assert!(ok, "stray & in {s:?}");
    }
    assert!(
        !s.chars()
            .any(|c| (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t')),
        "a control character XML cannot carry in {s:?}"
    );
}
