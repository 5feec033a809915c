//! `rubricate lint`: the meta-rubric's verdict on a rubric's structure, plus findings.

use crate::core::text::{cell, visible};
use serde_json::json;

use super::{CliError, LintFormat, exit, style};
use crate::engine::compile;
use crate::engine::lint::{LintReport, Severity, lint};
use crate::formats::Format;

pub(crate) fn run(spec: &str, from: Option<Format>, format: LintFormat) -> Result<u8, CliError> {
    let loaded = super::rubric_arg::load(spec, from, None)?;
    compile(&loaded)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    let report = runtime.block_on(lint(&loaded))?;
    match format {
        LintFormat::Text => print_text(&loaded.file, &loaded.rubric.name, &report),
        LintFormat::Json => print_json(&loaded.file, &loaded.rubric.id, &report),
    }
    Ok(if report.passed() {
        exit::OK
    } else {
        exit::BELOW
    })
}

fn print_text(file: &str, name: &str, report: &LintReport) {
    let color = style::color_enabled(style::stdout_is_terminal());
    let m = &report.meta;
    let verdict = if m.passed {
        style::green("PASSED", color)
    } else {
        style::red("FAILED", color)
    };
    let score = m
        .score
        .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0));
    outln!(
        "{} — rubric '{}' ({})",
        style::bold("rubricate lint", color),
        cell(name),
        cell(file)
    );
    outln!("structure score {score}: {verdict} (the meta-rubric passes at 70%)\n");
    for r in &m.results {
        let ok = r.value.is_some_and(|v| v >= 1.0);
        let mark = if ok {
            style::green("✓", color)
        } else {
            style::red("✗", color)
        };
        let level = r
            .verdict
            .as_ref()
            .map_or_else(|| "error".into(), ToString::to_string);
        let evidence = r
            .failure
            .as_ref()
            .map_or_else(|| r.evidence.join("; "), ToString::to_string);
        outln!(
            "  {mark} {:<26} {level:<9} {}",
            cell(&r.criterion_id),
            cell(&evidence)
        );
    }
    if !report.findings.is_empty() {
        outln!("\nfindings:");
        for f in &report.findings {
            let sev = match f.severity {
                Severity::Error => style::red("error", color),
                Severity::Warning => style::yellow("warning", color),
                Severity::Info => "info".to_owned(),
            };
            outln!("  {}: {sev}: {}", cell(&f.location), visible(&f.message));
        }
    }
}

fn print_json(file: &str, id: &str, report: &LintReport) {
    let m = &report.meta;
    let criteria: Vec<_> = m
        .results
        .iter()
        .map(|r| {
            json!({
                "id": r.criterion_id,
                "level": r.verdict.as_ref().map(ToString::to_string),
                "value": r.value,
                "evidence": r.evidence,
                "failure": r.failure.as_ref().map(ToString::to_string),
            })
        })
        .collect();
    let out = json!({
        "file": file,
        "rubric": id,
        "score": m.score,
        "passed": m.passed,
        "criteria": criteria,
        "findings": report.findings,
    });
    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}
