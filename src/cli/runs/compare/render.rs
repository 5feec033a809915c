//! `runs compare`'s four formats — table, JSON, JSONL and Markdown — each listing the
//! regressions first, then the paired tests (p-values and intervals), then the rest.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::engine::checks::plural;
use crate::run::compare::{Comparison, Gate, Regression, SIGNIFICANCE};
use crate::store::runs::Manifest;

/// How a comparison is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CompareFormat {
    Table,
    Json,
    Jsonl,
    Md,
}

pub(super) fn render(
    c: &Comparison,
    gate: &Gate,
    ma: &Manifest,
    mb: &Manifest,
    format: CompareFormat,
) -> String {
    match format {
        CompareFormat::Table => table(c, gate, ma, mb),
        CompareFormat::Json => {
            let mut text =
                serde_json::to_string_pretty(&document(c, gate, ma, mb)).unwrap_or_default();
            text.push('\n');
            text
        }
        CompareFormat::Jsonl => jsonl(c, gate, ma, mb),
        CompareFormat::Md => markdown(c, gate, ma, mb),
    }
}

/// One line saying what the gate decided.
pub(super) fn verdict(gate: &Gate) -> String {
    let significant = gate.regressions.iter().filter(|r| r.significant).count();
    let fail_on = match gate.fail_on {
        super::FailOn::Any => "any",
        super::FailOn::Significant => "significant",
    };
    let outcome = if gate.fails() { "FAIL" } else { "PASS" };
    if gate.regressed() {
        format!(
            "{outcome}: B regresses A: {} ({significant} significant at p < {SIGNIFICANCE}) · --fail-on {fail_on}",
            count(total_regressions(gate), "regression"),
        )
    } else {
        format!("{outcome}: no regression · --fail-on {fail_on}")
    }
}

/// Every regression, the items among them counted whole (the list keeps only the `top`).
fn total_regressions(gate: &Gate) -> usize {
    let listed_items = gate.regressions.iter().filter(|r| r.kind == "item").count();
    gate.regressions.len() - listed_items + gate.regressed_items
}

fn count(n: usize, what: &str) -> String {
    crate::engine::checks::plural(n, what)
}

/// What a regression is, in words: `mean score`, `criterion has_x`, `item b`.
fn label(r: &Regression) -> String {
    match &r.id {
        Some(id) => format!("{} {id}", r.kind),
        None => r.kind.replace("mean", "mean score"),
    }
}

/// A value as shown: a pass rate in percent, a score as a number.
fn value(r: &Regression, v: f64) -> String {
    if matches!(r.kind, "criterion" | "items passing") {
        format!("{:.1}%", v * 100.0)
    } else {
        format!("{v:.3}")
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        None => "–".to_owned(),
        Some(p) if p < 0.001 => "<0.001".to_owned(),
        Some(p) => format!("{p:.3}"),
    }
}

fn ci_text(r: &Regression) -> String {
    r.ci.map_or_else(
        || "–".to_owned(),
        |ci| format!("[{:+.3}, {:+.3}]", ci.low, ci.high),
    )
}

fn test_text(r: &Regression) -> &'static str {
    r.test.unwrap_or("no test")
}

/// How the paired tests were run (said in every format).
fn method(gate: &Gate) -> String {
    format!(
        "significant: p < {SIGNIFICANCE}; exact McNemar for pass/fail outcomes; paired bootstrap of the mean ({} resamples, seed {}, {:.0}% interval); tolerance {}",
        gate.bootstrap.resamples,
        gate.bootstrap.seed,
        gate.bootstrap.level * 100.0,
        gate.tolerance
    )
}

/// Items that regressed beyond those listed (`--top`).
fn unlisted(gate: &Gate) -> usize {
    let listed = gate.regressions.iter().filter(|r| r.kind == "item").count();
    gate.regressed_items.saturating_sub(listed)
}

fn table(c: &Comparison, gate: &Gate, ma: &Manifest, mb: &Manifest) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", verdict(gate));
    if gate.regressed() {
        let _ = writeln!(out, "\nREGRESSIONS");
        for r in &gate.regressions {
            // Fits 80 columns; the interval, when there is one, goes on a line of its own.
            let line = format!(
                "  {:<22} {:>6} → {:<6} {:>+7.3}  p {:<6}  {}{}",
                label(r),
                value(r, r.a),
                value(r, r.b),
                r.delta,
                p_text(r.p_value),
                r.test.map_or("", |t| t.trim_start_matches("exact ")),
                if r.significant { "  SIGNIFICANT" } else { "" }
            );
            let _ = writeln!(out, "{}", line.trim_end());
            if r.ci.is_some() {
                let _ = writeln!(out, "  {:<23}interval of the delta {}", "", ci_text(r));
            }
        }
        let more = unlisted(gate);
        if more > 0 {
            let _ = writeln!(
                out,
                "  … and {} more (raise --top to list them)",
                count(more, "regressed item")
            );
        }
    }
    let _ = writeln!(out);
    out.push_str(&report(c, ma, mb));
    let _ = writeln!(out, "\nPAIRED TESTS");
    for part in method(gate).split("; ") {
        let _ = writeln!(out, "  {part}");
    }
    if let (Some(a), Some(b), Some(m)) = (gate.mean_a, gate.mean_b, gate.mean) {
        let _ = writeln!(
            out,
            "  {:<22} {a:.3} → {b:.3}  {:+.3}  CI {}  p {}",
            "mean score",
            m.delta,
            m.ci.map_or_else(
                || "–".to_owned(),
                |ci| format!("[{:+.3}, {:+.3}]", ci.low, ci.high)
            ),
            p_text(Some(m.p_value))
        );
        let _ = writeln!(
            out,
            "  {:<22} {} lost, {} gained  p {} McNemar",
            "items passing",
            c.tally.items.lost,
            c.tally.items.gained,
            p_text(Some(gate.items_p))
        );
    }
    for t in &gate.criteria {
        let _ = writeln!(
            out,
            "  {:<22} {} lost, {} gained  {}",
            format!("criterion {}", t.id),
            t.lost,
            t.gained,
            t.p_value.map_or_else(
                || "graded: no paired test".to_owned(),
                |p| format!("p {} McNemar", p_text(Some(p)))
            )
        );
    }
    out
}

/// The whole comparison as one JSON document, regressions first.
fn document(c: &Comparison, gate: &Gate, ma: &Manifest, mb: &Manifest) -> Value {
    json!({
        "regressed": gate.regressed(),
        "failed": gate.fails(),
        "fail_on": gate.fail_on,
        "regressions": gate.regressions,
        "regressed_items": gate.regressed_items,
        "method": method(gate),
        "a": run(ma),
        "b": run(mb),
        "items": items(c, gate),
        "mean": mean(gate),
        "criteria": criteria(c, gate),
        "changed": changed(c),
    })
}

fn run(m: &Manifest) -> Value {
    json!({ "id": m.id, "name": m.name, "rubric": m.rubric_label(), "state": m.state().to_string() })
}

fn items(c: &Comparison, gate: &Gate) -> Value {
    json!({
        "both": c.both,
        "only_a": c.only_a,
        "only_b": c.only_b,
        "unfinished": c.pending,
        "changed": c.changed,
        "passing_a": c.tally.passing_a,
        "passing_b": c.tally.passing_b,
        "lost": c.tally.items.lost,
        "gained": c.tally.items.gained,
        "test": "exact McNemar",
        "p_value": gate.items_p,
    })
}

fn mean(gate: &Gate) -> Value {
    json!({
        "a": gate.mean_a,
        "b": gate.mean_b,
        "delta": gate.mean.map(|m| m.delta),
        "ci": gate.mean.and_then(|m| m.ci),
        "p_value": gate.mean.map(|m| m.p_value),
        "test": "paired bootstrap",
    })
}

fn criteria(c: &Comparison, gate: &Gate) -> Vec<Value> {
    gate.criteria
        .iter()
        .map(|t| {
            let (n, full_a, full_b, changed) = c.criteria.get(&t.id).copied().unwrap_or_default();
            let change = crate::metrics::paired_share_change(n as u64, t.lost, t.gained);
            json!({
                "id": t.id,
                "items": n,
                "full_a": full_a,
                "full_b": full_b,
                "delta": change.map(|(d, _)| d),
                "ci": change.map(|(_, ci)| ci),
                "verdicts_changed": changed,
                "lost": t.lost,
                "gained": t.gained,
                "test": t.test,
                "p_value": t.p_value,
            })
        })
        .collect()
}

fn changed(c: &Comparison) -> Vec<Value> {
    c.ranked_items()
        .into_iter()
        .map(|i| json!({ "id": i.id, "a": i.a, "b": i.b, "delta": i.delta, "regression": i.regression }))
        .collect()
}

/// One JSON object a line, each with its `record` kind: the regressions, the mean, the
/// criteria, the changed items, and last the summary.
fn jsonl(c: &Comparison, gate: &Gate, ma: &Manifest, mb: &Manifest) -> String {
    let mut lines: Vec<Value> = Vec::new();
    // The record's kind first, so a reader can dispatch before reading on.
    let tagged = |kind: &str, v: Value| {
        let mut map = serde_json::Map::new();
        map.insert("record".into(), kind.into());
        if let Value::Object(rest) = v {
            map.extend(rest);
        }
        Value::Object(map)
    };
    for r in &gate.regressions {
        lines.push(tagged("regression", json!(r)));
    }
    lines.push(tagged("mean", mean(gate)));
    lines.push(tagged("items", items(c, gate)));
    for v in criteria(c, gate) {
        lines.push(tagged("criterion", v));
    }
    for v in changed(c) {
        lines.push(tagged("item", v));
    }
    lines.push(tagged(
        "summary",
        json!({
            "regressed": gate.regressed(),
            "failed": gate.fails(),
            "fail_on": gate.fail_on,
            "regressions": gate.regressions.len(),
            "regressed_items": gate.regressed_items,
            "method": method(gate),
            "a": run(ma),
            "b": run(mb),
        }),
    ));
    let mut out = String::new();
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// A cell of a Markdown table: pipes and line breaks escaped.
fn md_cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// A run in Markdown: its name when it has one, and its id.
fn md_run(m: &Manifest) -> String {
    match &m.name {
        Some(name) => format!("**{}** (`{}`)", md_cell(name), md_cell(&m.id)),
        None => format!("`{}`", md_cell(&m.id)),
    }
}

fn markdown(c: &Comparison, gate: &Gate, ma: &Manifest, mb: &Manifest) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## rubricate runs compare\n\n**{}**\n\nA = {} ({}) · B = {} ({})\n",
        md_cell(&verdict(gate)),
        md_run(ma),
        md_cell(&ma.rubric_label()),
        md_run(mb),
        md_cell(&mb.rubric_label())
    );
    let _ = writeln!(out, "### Regressions\n");
    if gate.regressions.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        let _ = writeln!(
            out,
            "| What | A | B | Δ | p | Test | Interval | Significant |\n|---|---:|---:|---:|---:|---|---|---|"
        );
        for r in &gate.regressions {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:+.3} | {} | {} | {} | {} |",
                md_cell(&label(r)),
                value(r, r.a),
                value(r, r.b),
                r.delta,
                p_text(r.p_value),
                test_text(r),
                ci_text(r),
                if r.significant { "yes" } else { "no" }
            );
        }
        let more = unlisted(gate);
        if more > 0 {
            let _ = writeln!(out, "\n… and {} more.", count(more, "regressed item"));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "### Summary\n\n{} in both · {} only in A · {} only in B · {} changed\n",
        count(c.both, "item"),
        c.only_a,
        c.only_b,
        c.changed
    );
    if let (Some(a), Some(b), Some(m)) = (gate.mean_a, gate.mean_b, gate.mean) {
        let _ = writeln!(
            out,
            "Mean score {a:.3} → {b:.3} ({:+.3}, interval {}, p {:.4}); items passing {} → {} (p {:.4}).\n",
            m.delta,
            m.ci.map_or_else(
                || "–".to_owned(),
                |ci| format!("[{:+.3}, {:+.3}]", ci.low, ci.high)
            ),
            m.p_value,
            c.tally.passing_a,
            c.tally.passing_b,
            gate.items_p
        );
    }
    let _ = writeln!(
        out,
        "### Criteria\n\n| Criterion | A full | B full | Lost | Gained | p (exact McNemar) |\n|---|---:|---:|---:|---:|---:|"
    );
    for t in &gate.criteria {
        let (n, full_a, full_b, _) = c.criteria.get(&t.id).copied().unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {full_a}/{n} | {full_b}/{n} | {} | {} | {} |",
            md_cell(&t.id),
            t.lost,
            t.gained,
            t.p_value
                .map_or_else(|| "graded: no test".to_owned(), |p| format!("{p:.4}"))
        );
    }
    let _ = writeln!(out, "\n_{}_", md_cell(&method(gate)));
    out
}

/// The table's body: the runs, per criterion the change, and the items that moved most.
pub(super) fn report(c: &Comparison, ma: &Manifest, mb: &Manifest) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A = {} ({})\nB = {} ({})",
        ma.id,
        ma.rubric_label(),
        mb.id,
        mb.rubric_label()
    );
    let _ = writeln!(
        out,
        "{} in both · {} only in A · {} only in B",
        plural(c.both, "item"),
        c.only_a,
        c.only_b
    );
    unfinished_lines(&mut out, ma, mb, c.pending);
    let _ = writeln!(
        out,
        "\n{:<28} {:>8} {:>8} {:>8} {:>8}",
        "CRITERION", "A FULL", "B FULL", "DELTA", "CHANGED"
    );
    for (id, (n, full_a, full_b, changed)) in &c.criteria {
        #[allow(clippy::cast_precision_loss)] // counts
        let (pa, pb) = (*full_a as f64 / *n as f64, *full_b as f64 / *n as f64);
        let _ = writeln!(
            out,
            "{id:<28} {:>7.1}% {:>7.1}% {:>+7.1}  {changed:>8}",
            pa * 100.0,
            pb * 100.0,
            (pb - pa) * 100.0
        );
    }
    let _ = writeln!(
        out,
        "\n{} changed; regressions (passed in A and not in B, or score dropped) first:",
        plural(c.changed, "item")
    );
    for c in c.ranked_items() {
        let _ = writeln!(
            out,
            "  {:<28} {:>+7.1} points{}",
            c.id,
            c.delta * 100.0,
            if c.regression { "  REGRESSION" } else { "" }
        );
    }
    out
}

/// What `runs compare` says when a run is not finished: its state, and how many items
/// were compared on the cells both runs have only (none of them called a regression).
pub(super) fn unfinished_lines(out: &mut String, ma: &Manifest, mb: &Manifest, pending: usize) {
    for (name, m) in [("A", ma), ("B", mb)] {
        let state = m.state();
        if !state.is_finished() {
            let _ = writeln!(
                out,
                "{name} is {state}: its cells still to come are not compared"
            );
        }
    }
    if pending > 0 {
        let _ = writeln!(
            out,
            "{} with cells still to come: compared per criterion on the cells both runs have, not by score",
            plural(pending, "item")
        );
    }
}
