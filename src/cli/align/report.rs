//! `align`'s result: the table, the report kept in the workspace, and adopting the winner.

use std::fmt::Write as _;

use super::search::{Search, Tried};
use crate::cli::CliError;
use crate::model::Rubric;
use crate::run::align::Split;
use crate::store::Workspace;

pub(super) use crate::run::align::TestOutcome as Outcome;

/// Keeps the winner as the rubric's next minor version, with the test figures and the
/// split's seed in the version's note; the new version.
pub(super) fn adopt(
    ws: &Workspace,
    winner: &Rubric,
    search: &Search<'_>,
    split: &Split,
    result: &[Outcome],
) -> Result<String, CliError> {
    let note = crate::run::align::adoption_note(
        "align",
        &search.annotator,
        &search.key,
        split,
        result,
        search.spent,
    );
    let version = crate::store::registry::Registry::new(&ws.root)
        .save_next_minor(winner, &note)
        .map_err(|e| CliError::input(e.to_string()))?;
    Ok(format!("{}@{version}", winner.id))
}

/// Keeps the search's report (and the winning rubric, to adopt later) as
/// `aligns/<time>-<rubric>.json` in the workspace, replaced whole or not at all.
pub(super) fn keep(
    ws: &Workspace,
    rubric: &str,
    doc: &serde_json::Value,
) -> Result<std::path::PathBuf, CliError> {
    let dir = ws.path("aligns");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display())))?;
    let stamp = jiff::Zoned::now().strftime("%Y%m%d-%H%M%S").to_string();
    let name = format!("{stamp}-{}.json", crate::model::slugify(rubric));
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(doc).unwrap_or_default();
    crate::store::AtomicFile::write_whole(&path, text.as_bytes())
        .map_err(|e| CliError::from(crate::store::StoreError::io(&path, e)))?;
    Ok(path)
}

pub(super) fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

pub(super) fn ci(c: Option<crate::metrics::Ci>) -> String {
    c.map_or_else(String::new, |c| format!(" [{:.2}, {:.2}]", c.low, c.high))
}

pub(super) fn table(
    search: &Search<'_>,
    split: &Split,
    tried: &[Tried],
    result: &[Outcome],
    stopped: Option<&str>,
    adopted: Option<&str>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "align against {}'s labels of '{}': {} train · {} dev · {} test items (seed {})\n",
        search.annotator,
        search.key,
        split.train.len(),
        split.dev.len(),
        split.test.len(),
        split.seed
    );
    if tried.is_empty() {
        let _ = writeln!(
            out,
            "the judge agrees with the people on every judged criterion of dev: nothing to align\n"
        );
    } else {
        let _ = writeln!(out, "candidates on dev (ranking only; not the result):");
        for t in tried {
            let _ = writeln!(
                out,
                "  {:<20} {:<22} κ {}{}  disagreements {}{}",
                crate::core::text::clipped(&t.criterion, 20),
                t.label,
                num(t.dev.kappa),
                ci(t.dev.kappa_ci),
                t.dev.disagreements,
                if t.indistinguishable {
                    "  (not distinguishable from the best)"
                } else {
                    ""
                }
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "the result, on test (graded once by the original and the winner):"
    );
    let _ = writeln!(
        out,
        "  {:<20} {:>22} {:>22} {:>17}",
        "CRITERION", "κ BEFORE", "κ AFTER", "LENIENCY B → A"
    );
    for o in result {
        let _ = writeln!(
            out,
            "  {:<20} {:>22} {:>22} {:>17}{}",
            crate::core::text::clipped(&o.criterion, 20),
            format!("{}{}", num(o.before.kappa), ci(o.before.kappa_ci)),
            format!("{}{}", num(o.after.kappa), ci(o.after.kappa_ci)),
            format!(
                "{} → {}",
                o.before
                    .leniency
                    .map_or_else(|| "-".into(), |l| format!("{l:+.1}")),
                o.after
                    .leniency
                    .map_or_else(|| "-".into(), |l| format!("{l:+.1}"))
            ),
            if o.worked_on { "  *" } else { "" }
        );
    }
    let _ = writeln!(out, "  (* worked on)\n\nsearch cost: ${:.4}", search.spent);
    if let Some(why) = stopped {
        let _ = writeln!(out, "stopped early: {why}");
    }
    if let Some(v) = adopted {
        let _ = writeln!(out, "adopted: {v}");
    }
    out
}
