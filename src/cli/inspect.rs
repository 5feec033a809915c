//! `rubricate inspect`: what a file was detected as and what it became — rubrics with
//! their criteria, kinds, weights and knobs; items; notes on what was ignored.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::{CliError, LintFormat, exit};
use crate::formats::dataset::{ReadOptions, is_dataset_file, open_dataset};
use crate::formats::export::describe_scoring;
use crate::formats::import::split_pick;
use crate::formats::{Format, Imported, LoadedRubric, import_file, is_bare_name};
use crate::model::{Kind, Method, Rubric};

pub(crate) fn run(spec: &str, from: Option<Format>, format: LintFormat) -> Result<u8, CliError> {
    let (path, pick) = split_pick(spec);
    let report = if is_bare_name(spec) || pick.is_some() {
        let r = super::rubric_arg::load(spec, from, None)?;
        Report::rubrics(
            spec,
            if is_bare_name(spec) {
                "built-in (native)"
            } else {
                "picked"
            },
            std::slice::from_ref(&r),
        )
    } else if let Some(what) = crate::formats::foreign_runs::sniff(Path::new(path)) {
        let text = format!(
            "{path}: {what} — keep them as a run of the dataset they graded: rubricate runs import {path} --dataset FILE\n"
        );
        Report {
            json: json!({"file": path, "format": what, "import": format!("rubricate runs import {path} --dataset FILE")}),
            text,
            problems: 0,
        }
    } else if is_dataset_file(Path::new(path))
        && from.is_none()
        && !crate::formats::agentv::is_case_file(Path::new(path))
    {
        dataset(path)?
    } else {
        Report::imported(&import_file(Path::new(path), from)?)
    };
    match format {
        LintFormat::Text => out!("{}", crate::core::text::visible(&report.text)),
        LintFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&report.json).unwrap_or_default()
        ),
    }
    // What `validate` would refuse makes the file invalid here too.
    Ok(if report.problems > 0 {
        exit::INPUT
    } else {
        exit::OK
    })
}

struct Report {
    text: String,
    json: Value,
    /// Problems found (bad items, patterns or schemas that do not compile): any makes the
    /// exit 2, as `validate` would.
    problems: usize,
}

/// What compiling the rubric refuses (a regex, a schema, a template), as `validate` says it,
/// added to the text; how many.
fn compile_problems(text: &mut String, r: &LoadedRubric) -> Vec<String> {
    let problems: Vec<String> = match crate::engine::compile(r) {
        Ok(_) => Vec::new(),
        Err(d) => d.0.iter().map(ToString::to_string).collect(),
    };
    for p in &problems {
        let _ = writeln!(text, "  problem: {p}");
    }
    problems
}

impl Report {
    fn rubrics(file: &str, what: &str, rubrics: &[LoadedRubric]) -> Report {
        let mut text = format!("{file}: {what}\n");
        let mut list = Vec::new();
        let mut problems = Vec::new();
        for r in rubrics {
            describe(&mut text, &r.rubric);
            problems.extend(compile_problems(&mut text, r));
            list.push(rubric_report(&r.rubric));
        }
        // A rubric picked from another system's file (`FILE#ID`) is scored as that system
        // scores it: say how, as for the whole file.
        let home = rubrics
            .first()
            .and_then(|r| r.rubric.metadata.get("format"))
            .and_then(Value::as_str)
            .and_then(|name| Format::parse(name).ok());
        let fidelity = home.and_then(crate::formats::fidelity::of);
        if let (Some(f), Some(r)) = (&fidelity, rubrics.first()) {
            how_scored(&mut text, f, Some(&r.rubric));
        }
        Report {
            text,
            json: json!({"file": file, "format": what, "rubrics": list, "problems": problems,
                "scored": fidelity.as_ref().map(|f| f.scoring),
                "differences": fidelity.as_ref().map(|f| f.differences)}),
            problems: problems.len(),
        }
    }

    fn imported(i: &Imported) -> Report {
        let how = if i.detected {
            "detected"
        } else {
            "as --from says"
        };
        let mut text = format!("{}: {} ({how})\n", i.file, i.format);
        let mut problems = Vec::new();
        for r in &i.rubrics {
            describe(&mut text, &r.rubric);
            problems.extend(compile_problems(&mut text, r));
        }
        if !i.items.is_empty() {
            let own = i.items.iter().filter(|x| x.rubric.is_some()).count();
            let gt = i.items.iter().filter(|x| x.ground_truth.is_some()).count();
            let _ = writeln!(
                text,
                "  items: {} ({own} with a rubric, {gt} with ground truth)",
                i.items.len()
            );
            let mut conversations = crate::model::ConversationTally::default();
            for item in &i.items {
                conversations.add(item.conversation.as_deref());
            }
            if let Some(c) = conversations.summary() {
                let _ = writeln!(text, "  {c}");
            }
            for item in i.items.iter().take(20) {
                let rubric = item
                    .rubric
                    .as_ref()
                    .map_or_else(|| "no rubric".to_owned(), |r| format!("rubric '{}'", r.id));
                let _ = writeln!(text, "    {}  {rubric}", item.id);
            }
            if i.items.len() > 20 {
                let _ = writeln!(text, "    … {} more", i.items.len() - 20);
            }
        }
        if !i.expectations.is_empty() {
            let _ = writeln!(text, "  expected grader scores: {}", i.expectations.len());
            for e in &i.expectations {
                let range = match (e.min, e.max) {
                    (Some(a), Some(b)) => format!("{a}..{b}"),
                    (Some(a), None) => format!(">= {a}"),
                    (None, Some(b)) => format!("<= {b}"),
                    (None, None) => "any".into(),
                };
                let _ = writeln!(text, "    {} ({}): {range}", e.item, e.grader);
            }
        }
        if !i.notes.is_empty() {
            let _ = writeln!(text, "  notes:");
            for n in &i.notes {
                let _ = writeln!(text, "    {n}");
            }
        }
        let fidelity = crate::formats::fidelity::of(i.format);
        if let Some(f) = &fidelity {
            how_scored(&mut text, f, i.rubrics.first().map(|r| &*r.rubric));
        }
        let json = json!({
            "file": i.file,
            "format": i.format.name(),
            "detected": i.detected,
            "rubrics": i.rubrics.iter().map(|r| rubric_report(&r.rubric)).collect::<Vec<_>>(),
            "items": i.items.len(),
            "expectations": i.expectations,
            "notes": i.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "scored": fidelity.as_ref().map(|f| f.scoring),
            "differences": fidelity.as_ref().map(|f| f.differences),
            "problems": problems,
        });
        Report {
            text,
            json,
            problems: problems.len(),
        }
    }
}

/// How the home system scores a foreign format's rubric, which Python's `sum()` its totals
/// follow (for the formats whose library uses it), and where rubricate differs on purpose.
fn how_scored(text: &mut String, f: &crate::formats::fidelity::Fidelity, rubric: Option<&Rubric>) {
    let _ = writeln!(text, "  scored {}", f.scoring);
    if f.python_sum
        && let Some(r) = rubric
    {
        let _ = writeln!(
            text,
            "  {}",
            crate::formats::python::describe(r.scoring.summation)
        );
    }
    if !f.differences.is_empty() {
        let _ = writeln!(text, "  where rubricate differs on purpose:");
        for d in f.differences {
            let _ = writeln!(text, "    - {d}");
        }
    }
}

/// A dataset, streamed: counts only, so inspecting millions of items stays flat in memory.
fn dataset(path: &str) -> Result<Report, CliError> {
    let ds = open_dataset(Path::new(path), ReadOptions::default())?;
    let kind = format!("{:?}", ds.format).to_ascii_lowercase();
    let mut text = format!("{path}: dataset ({kind})\n");
    if let Some(r) = &ds.header.rubric {
        describe(&mut text, &r.rubric);
    }
    let (mut items, mut gt, mut own) = (0usize, 0usize, 0usize);
    // Items in rubric's `rubrics.jsonl` layout bring rubrics of that library, which sum
    // as the Python it runs on.
    let (mut rubric_lib, mut summation) = (0usize, None);
    let mut problems = Vec::new();
    let mut shape = crate::model::pair::PairShape::default();
    let mut conversations = crate::model::ConversationTally::default();
    for item in ds.items {
        match item {
            Ok(mut i) => {
                items += 1;
                if let Err(m) = shape.add(&mut i) {
                    problems.push(format!("{}: {m}", i.origin));
                }
                conversations.add(i.conversation.as_deref());
                gt += usize::from(i.ground_truth.is_some());
                own += usize::from(i.rubric.is_some());
                if let Some(r) = &i.rubric
                    && r.metadata.get("format").and_then(Value::as_str) == Some("rubric_lib")
                {
                    rubric_lib += 1;
                    summation = Some(r.scoring.summation);
                }
            }
            Err(d) => problems.push(d.to_string()),
        }
    }
    let _ = writeln!(
        text,
        "  items: {items} ({own} with their own rubric, {gt} with ground truth)"
    );
    if let Some(pairs) = shape.describe() {
        let _ = writeln!(text, "  {pairs}");
    }
    if let Some(c) = conversations.summary() {
        let _ = writeln!(text, "  {c}");
    }
    if let Some(s) = summation {
        let _ = writeln!(
            text,
            "  {rubric_lib} of them rubric's (its rubrics.jsonl layout): {}",
            crate::formats::python::describe(s)
        );
    }
    for p in problems.iter().take(10) {
        let _ = writeln!(text, "  problem: {p}");
    }
    let json = json!({
        "file": path,
        "format": kind,
        "rubrics": ds.header.rubric.iter().map(|r| rubric_report(&r.rubric)).collect::<Vec<_>>(),
        "items": items,
        "with_ground_truth": gt,
        "with_rubric": own,
        "pair_items": shape.pairs,
        "candidates": shape.systems(),
        "conversations": {
            "items": conversations.items,
            "assistant_turns": conversations.turns,
            "tool_calls": conversations.tool_calls,
        },
        "problems": problems,
    });
    Ok(Report {
        text,
        json,
        problems: problems.len(),
    })
}

/// A rubric as JSON output reports it: its native fields, with every criterion also
/// listed flat under `criteria` (each naming its section) when the rubric has sections.
fn rubric_report(r: &Rubric) -> Value {
    let mut doc = crate::formats::native::rubric_to_json(r);
    if let Value::Object(m) = &mut doc
        && !m.contains_key("criteria")
    {
        let flat = r
            .criteria
            .iter()
            .map(|c| {
                let mut v = crate::formats::native::criterion_to_json(c);
                if let (Value::Object(cm), Some(s)) = (&mut v, &c.section) {
                    cm.insert("section".into(), json!(s));
                }
                v
            })
            .collect();
        m.insert("criteria".into(), Value::Array(flat));
    }
    doc
}

/// A rubric in a few lines: header, knobs, then one line per criterion.
fn describe(out: &mut String, r: &Rubric) {
    let s = &r.scoring;
    let _ = writeln!(
        out,
        "  rubric '{}' {} — {} criteria, pass_threshold {}; {}",
        r.id,
        r.version,
        r.criteria.len(),
        r.pass_threshold,
        describe_scoring(s)
    );
    if r.mode.is_pairwise() {
        let _ = writeln!(
            out,
            "  mode pairwise: each criterion asks which of two answers meets it better (A, B or tie), every pair in both orders"
        );
    }
    // Ids are aligned up to 40 characters; a longer one is cut (formatting widths are
    // bounded, and a line stays readable).
    let width = r
        .criteria
        .iter()
        .map(|c| c.id.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for c in &r.criteria {
        let kind = match &c.kind {
            Kind::Binary => "binary".to_owned(),
            Kind::Levels(l) => format!("levels({})", l.len()),
            Kind::Options { options, .. } => format!("options({})", options.len()),
            Kind::Scale(sc) => format!("scale {}..{}", sc.min, sc.max),
        };
        let method = match &c.method {
            Method::Judge(_) => "judge".to_owned(),
            Method::Check(spec) => format!("check {}", spec.name),
            Method::Schema(_) => "schema".to_owned(),
        };
        let gate = if c.required && s.gates == crate::model::GateRule::Off {
            " required (not enforced)".to_owned()
        } else if c.required {
            c.min_score
                .map_or_else(|| " required".to_owned(), |m| format!(" required>={m}"))
        } else {
            String::new()
        };
        let section = c
            .section
            .as_ref()
            .map_or_else(String::new, |s| format!(" [{s}]"));
        let _ = writeln!(
            out,
            "    {:<width$}  {kind:<12} w={:<6} {method}{gate}{section}  {}",
            short(&c.id, width),
            c.weight,
            short(&c.requirement, 70)
        );
    }
    // Graders: how the criteria above are grouped and averaged.
    for g in &r.graders {
        let gate = match (g.required, g.min_score) {
            (true, Some(m)) => format!(" required>={m}"),
            (true, None) => format!(" required>={}", r.pass_threshold),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "    grader {} w={}{gate}: {}",
            short(&g.id, 40),
            g.weight,
            short(&g.criteria.join(", "), 80)
        );
    }
}

fn short(s: &str, n: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= n {
        one_line
    } else {
        let cut: String = one_line.chars().take(n.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
