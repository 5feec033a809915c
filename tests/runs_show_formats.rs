//! `runs show RUN --format F` through the real binary writes, from the run's journal, what
//! `grade --format F` wrote while grading it (table, json, jsonl, csv, junit, md), and the
//! page `rubricate report` writes (html); `-o` writes a file, whole or not at all; an
//! unfinished run's items still waiting for cells are incomplete — not failed — in every
//! format, and stderr says the run is unfinished. Graded with checks (no judge).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::Value;
use support::checked::{grade_saved, ok, rubricate, run_ids, text};

const FORMATS: [&str; 6] = ["table", "json", "jsonl", "csv", "junit", "md"];

/// A workspace whose rubric has two checks (one tagged), and items that pass, fail both,
/// fail one; ids and submissions with a pipe, a quote, a comma and a line break, which
/// every format must carry as `grade` did.
fn workspace() -> tempfile::TempDir {
    let dir = support::checked::workspace(&[
        ("a", "yes"),
        ("b|\"two\"", "no, no, no,\nno no no"),
        ("c", "yes and then some more text"),
        ("d", "yes!"),
    ]);
    std::fs::write(
        dir.path().join("rubric.yaml"),
        "id: yes\nname: Says yes, briefly\ncriteria:\n  - { id: yes, requirement: Says yes, weight: 1, method: { check: contains, args: { text: yes } } }\n  - { id: short, requirement: Short, weight: 1, tags: [axis:form], method: { check: length, args: { max: 10 } } }\n",
    )
    .unwrap();
    dir
}

/// `grade --save --name NAME --format F`: its stdout and stderr.
fn grade(d: &Path, name: &str, format: &str) -> (String, String) {
    let o = grade_saved(d, name, format);
    ok(&o);
    text(&o)
}

/// `runs show` with `args`, which must exit 0: its stdout and stderr.
fn show(d: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["runs", "show"];
    all.extend_from_slice(args);
    let o = rubricate(d, &all);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{args:?}\n{out}\n{err}");
    (out, err)
}

/// The id of the only run the workspace has.
fn only_run(d: &Path) -> String {
    let ids = run_ids(d);
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids[0].clone()
}

/// The summary line (`N items: …`) of a command's stderr.
fn summary_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.contains(" items: "))
        .unwrap_or_else(|| panic!("no summary in {err}"))
}

#[test]
fn every_format_shows_what_grade_wrote() {
    let dir = workspace();
    let d = dir.path();
    for format in FORMATS {
        let name = format!("graded as {format}");
        let (graded, graded_err) = grade(d, &name, format);
        let (shown, shown_err) = show(d, &[&name, "--format", format]);
        if format == "table" {
            // The one difference: the table first names the run (id, name, rubric,
            // dataset, when it started and finished), which `grade` had not yet chosen.
            let mut lines = shown.lines();
            let head = lines.next().unwrap();
            assert!(
                head.starts_with("run ")
                    && head.contains(&format!("({name}) · yes@1.0.0 · items.jsonl")),
                "{shown}"
            );
            let when = lines.next().unwrap();
            assert!(
                when.starts_with("started ") && when.contains(" · finished "),
                "{shown}"
            );
            let body: String = lines.flat_map(|l| [l, "\n"]).collect();
            assert_eq!(body, graded, "table");
            // Both end with the summary; nothing is said twice on stderr.
            assert!(graded.contains("4 items: 2 passed, 2 failed "), "{graded}");
            assert!(!shown_err.contains(" items: "), "{shown_err}");
        } else {
            assert_eq!(shown, graded, "{format}");
            assert_eq!(summary_line(&shown_err), summary_line(&graded_err));
        }
        assert!(!shown_err.contains("unfinished"), "{shown_err}");
    }
    // What each format's content is was checked where `grade` writes it (tests/cli_grade.rs,
    // tests/cli_formats.rs); here, that the run was read whole: every item, the summary.
    let (json, _) = show(d, &["graded as json", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["items"].as_array().unwrap().len(), 4);
    assert_eq!(doc["summary"]["failed"], 2);
    assert_eq!(doc["summary"]["pending"], 0);
    assert_eq!(doc["items"][1]["item"], "b|\"two\"");
}

#[test]
fn the_html_page_is_the_one_report_writes() {
    let dir = workspace();
    let d = dir.path();
    grade(d, "nightly", "jsonl");
    let o = rubricate(d, &["report", "nightly", "-o", "report.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let page = std::fs::read(d.join("report.html")).unwrap();
    let (shown, _) = show(d, &["nightly", "--format", "html"]);
    assert_eq!(shown.as_bytes(), page.as_slice(), "to stdout");
    let (out, err) = show(d, &["nightly", "--format", "html", "-o", "shown.html"]);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("wrote shown.html (4 items; 4 held whole)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("shown.html")).unwrap(),
        page,
        "with -o"
    );
}

#[test]
fn out_writes_the_file_whole_or_leaves_it_as_it_was() {
    let dir = workspace();
    let d = dir.path();
    grade(d, "n", "jsonl");
    for format in FORMATS {
        let (to_stdout, _) = show(d, &["n", "--format", format]);
        let file = format!("shown.{format}");
        let (out, _) = show(d, &["n", "--format", format, "-o", &file]);
        assert!(out.is_empty(), "{format}: {out}");
        let written = std::fs::read_to_string(d.join(&file)).unwrap();
        assert_eq!(written, to_stdout, "{format}");
    }
    // `-o -` is stdout, as for `grade`.
    let (dash, _) = show(d, &["n", "--format", "csv", "-o", "-"]);
    assert_eq!(dash, std::fs::read_to_string(d.join("shown.csv")).unwrap());

    // A journal damaged after its first item: the error names the line, and the file from
    // before is untouched (no CSV, half-written or empty, replaces it).
    let journal = d.join("runs").join(only_run(d)).join("results.jsonl");
    let good = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(3, "garbage line");
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    std::fs::write(d.join("kept.csv"), "what was here before\n").unwrap();
    let o = rubricate(
        d,
        &["runs", "show", "n", "--format", "csv", "-o", "kept.csv"],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("results.jsonl:4: not a result line"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("kept.csv")).unwrap(),
        "what was here before\n"
    );
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("kept") && n != "kept.csv")
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");

    // A folder that does not exist: refused, naming the file.
    std::fs::write(&journal, &good).unwrap();
    let o = rubricate(d, &["runs", "show", "n", "-o", "no/such/folder/x.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no/such/folder/x.md"), "{}", text(&o).1);
}

/// Makes the workspace's only run look as a kill leaves it: no `finished_at`, and its
/// journal without item `c`'s `short` cell and without any cell of `d` (graded cells are
/// journalled one by one; `tests/runs_crash.rs` kills runs for real — here the cut is
/// placed so the test knows which cells are missing).
fn cut_short(d: &Path) -> String {
    let id = only_run(d);
    let run = d.join("runs").join(&id);
    let journal = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let kept: String = journal
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let (item, criterion) = (&v["item_id"], &v["result"]["criterion_id"]);
            !(item == "d" || (item == "c" && criterion == "short"))
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    assert_eq!(kept.lines().count(), journal.lines().count() - 3);
    std::fs::write(run.join("results.jsonl"), kept).unwrap();
    let manifest = run.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["finished_at"] = Value::Null;
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    id
}

#[test]
fn an_unfinished_run_says_so_and_fails_no_item_for_cells_to_come() {
    let dir = workspace();
    let d = dir.path();
    grade(d, "cut", "jsonl");
    let id = cut_short(d);
    let said = format!(
        "run {id} is unfinished: 1 item with cells still to come is incomplete, not failed, and items with no cell yet are not listed; `rubricate runs resume {id}` grades what is missing"
    );
    let summary = "3 items: 1 passed, 1 failed, 1 incomplete (1 with cells still to come)";
    let mut shown = std::collections::BTreeMap::new();
    for format in FORMATS {
        let (out, err) = show(d, &["cut", "--format", format]);
        assert!(err.contains(&said), "{format}: {err}");
        if format != "table" {
            assert!(summary_line(&err).starts_with(summary), "{format}: {err}");
        }
        shown.insert(format, out);
    }
    // The page counts them itself (its figures say how many items are partial).
    let (html, err) = show(d, &["cut", "--format", "html"]);
    assert!(
        err.contains(&format!(
            "run {id} is unfinished: items with cells still to come are incomplete, not failed"
        )),
        "{err}"
    );
    assert!(
        html.contains("\"partial\":1"),
        "the page counts the partial item"
    );

    let table = &shown["table"];
    assert!(
        table.contains("unfinished: items still waiting for cells are INCOMPLETE"),
        "{table}"
    );
    let row = |id: &str| table.lines().find(|l| l.starts_with(id)).unwrap();
    assert!(
        row("c ").ends_with("INCOMPLETE (still to come: short)"),
        "{table}"
    );
    assert!(row("b|").contains("FAIL"), "{table}");
    assert!(!table.lines().any(|l| l.starts_with("d ")), "{table}");
    assert!(table.contains(summary), "{table}");

    let doc: Value = serde_json::from_str(&shown["json"]).unwrap();
    let s = &doc["summary"];
    assert_eq!(
        (
            &s["items"],
            &s["passed"],
            &s["failed"],
            &s["incomplete"],
            &s["pending"]
        ),
        (&3.into(), &1.into(), &1.into(), &1.into(), &1.into()),
        "{s}"
    );
    let c = &doc["items"][2];
    assert_eq!(
        (&c["item"], &c["passed"], &c["incomplete"], &c["pending"]),
        (
            &"c".into(),
            &false.into(),
            &true.into(),
            &serde_json::json!(["short"])
        ),
        "{c}"
    );
    let jsonl: Vec<Value> = shown["jsonl"]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(jsonl, doc["items"].as_array().unwrap().clone());

    let csv: Vec<&str> = shown["csv"]
        .lines()
        .filter(|l| l.starts_with("c,"))
        .collect();
    // Not passed, incomplete, no criterion failure, no verdict for `short`.
    assert!(
        csv[0].starts_with("c,yes,1.0.0,1,1,false,true,0,MET,1,,,"),
        "{}",
        shown["csv"]
    );

    let junit = &shown["junit"];
    assert!(
        junit.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
        "{junit}"
    );
    assert!(
        junit.contains(
            "<testcase classname=\"yes\" name=\"c\"><skipped message=\"cells still to come: short\"/></testcase>"
        ),
        "{junit}"
    );

    let md = &shown["md"];
    assert!(
        md.contains("**The run is unfinished**: cells are still to come for 1 item (counted incomplete, not failed)."),
        "{md}"
    );
    assert!(md.contains("| 3 | 1 (33.3%) | 2 | 1 |"), "{md}");
    // Only the failure is among the worst items; the item still to come is not.
    assert!(md.contains("| b\\|\"two\" | 0.0% |"), "{md}");
    assert!(!md.contains("| c |"), "{md}");
}

/// A batch run read while its second batch is still at the provider (the builders of
/// `tests/batch_pending.rs`): every item waits for its `b` cell, so none has failed — in
/// every format.
#[test]
fn a_run_in_batches_fails_no_item_whose_cells_are_at_the_provider() {
    use support::batch_run::{Workspace, with_a_batch_in_flight};
    const ITEMS: usize = 8;
    let ws = Workspace::new(ITEMS, 1_000);
    let (batch, id) = with_a_batch_in_flight(&ws);
    let show = |format: &str| {
        let o = ws
            .command(&batch.url, &["runs", "show", &id, "--format", format])
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{format}: {err}");
        assert!(
            err.contains(&format!("run {id} is in batches (1 of 2 in flight): 8 items with cells still to come are incomplete, not failed")),
            "{format}: {err}"
        );
        out
    };
    let doc: Value = serde_json::from_str(&show("json")).unwrap();
    assert_eq!(
        (&doc["summary"]["failed"], &doc["summary"]["pending"]),
        (&0.into(), &ITEMS.into())
    );
    let junit = show("junit");
    assert!(
        junit.contains(&format!(
            "tests=\"{ITEMS}\" failures=\"0\" errors=\"0\" skipped=\"{ITEMS}\""
        )),
        "{junit}"
    );
    assert_eq!(
        junit
            .matches("<skipped message=\"cells still to come: b\"/>")
            .count(),
        ITEMS
    );
    let md = show("md");
    assert!(md.contains("cells are still to come for 8 items"), "{md}");
    assert!(
        !md.contains("that did not pass\n"),
        "no failed item to list: {md}"
    );
    let csv = show("csv");
    assert_eq!(
        csv.lines().filter(|l| l.contains(",false,true,0,")).count(),
        ITEMS,
        "{csv}"
    );
}

/// Items that bring their own rubrics (an agentv suite): `grade` and `runs show` of the run
/// it saved name the `JUnit` suite alike — after the dataset, wherever each ran from (one gave
/// the path as typed, the other as the manifest keeps it).
#[test]
fn grade_and_runs_show_name_the_suite_alike_for_items_with_their_own_rubrics() {
    let dir = support::checked::workspace(&[]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("evals")).unwrap();
    std::fs::write(
        d.join("evals/suite.yaml"),
        "tests:\n  - id: hello\n    output: hello world\n    assert:\n      - {type: contains, value: hello}\n  - id: bye\n    output: bye\n    assert:\n      - {type: equals, value: bye}\n",
    )
    .unwrap();
    let graded = ok(&rubricate(
        d,
        &[
            "grade",
            "evals/suite.yaml",
            "--save",
            "--name",
            "own",
            "--format",
            "junit",
        ],
    ));
    let shown = ok(&rubricate(
        &d.join("evals"),
        &["runs", "show", "own", "--format", "junit"],
    ));
    let suite = |xml: &str| -> String {
        let at = xml.find("<testsuite name=\"").unwrap() + 17;
        xml[at..].split('"').next().unwrap().to_owned()
    };
    assert_eq!(suite(&graded), "suite");
    assert_eq!(suite(&shown), "suite");
}
