//! `rubricate runs compare A B`: two runs of one dataset side by side — per criterion the
//! change, then the items that moved most, regressions first; streamed by position when
//! the runs share their dataset, joined by id otherwise. The regression gate (what
//! regresses, the paired tests, the exit code and the formats) is in [`gate`].

mod gate;
mod render;

use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;

pub(crate) use gate::{CompareFormat, FailOn, GateOptions};

use crate::cli::CliError;
use crate::engine::checks::plural;
use crate::model::Evaluation;
use crate::run::{self, Recording};
use crate::store::runs::Manifest;

/// Compares B with A, prints the report in `options.format`, and returns the gate's exit
/// code: 1 when B regresses A (as `--fail-on` counts), else 0.
pub(super) fn compare(a: &Recording, b: &Recording, options: &GateOptions) -> Result<u8, CliError> {
    let (comparison, gate) = compared(a, b, options)?;
    out!(
        "{}",
        render::render(&comparison, &gate, &a.manifest, &b.manifest, options.format)
    );
    Ok(gate.exit_code())
}

/// B compared with A, and what the gate makes of it.
fn compared(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
) -> Result<(Comparison, gate::Gate), CliError> {
    options.check()?;
    let (top, tolerance) = (options.top, options.tolerance);
    let comparison = if a.manifest.dataset.hash == b.manifest.dataset.hash {
        match compare_by_position(a, b, top, tolerance)? {
            Some(c) => c,
            None => compare_by_id(a, b, top, tolerance)?,
        }
    } else {
        compare_by_id(a, b, top, tolerance)?
    };
    let gate = gate::Gate::of(&comparison, options);
    Ok((comparison, gate))
}

/// `report A B`: B compared with A as `runs compare --format json` gives it, with up to
/// `top` changed items (regressions first), for the page.
pub(crate) fn comparison_json(
    a: &Recording,
    b: &Recording,
    top: usize,
) -> Result<serde_json::Value, CliError> {
    let options = GateOptions {
        top,
        tolerance: 0.0,
        fail_on: FailOn::Any,
        format: CompareFormat::Json,
    };
    let (comparison, gate) = compared(a, b, &options)?;
    let text = render::render(
        &comparison,
        &gate,
        &a.manifest,
        &b.manifest,
        CompareFormat::Json,
    );
    serde_json::from_str(&text).map_err(|e| CliError::input(format!("the comparison: {e}")))
}

/// `grade --baseline`: the run `b` just graded against its baseline `a`, as every output of
/// `grade` shows it (Markdown, JSON, a line for stderr) and whether it regressed.
pub(crate) fn against_baseline(
    a: &Recording,
    b: &Recording,
    options: &GateOptions,
) -> Result<crate::cli::gates::Baseline, CliError> {
    let (comparison, gate) = compared(a, b, options)?;
    let render = |format| render::render(&comparison, &gate, &a.manifest, &b.manifest, format);
    // A section of grade's report: its headings one level down.
    let md = render(CompareFormat::Md)
        .lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("#{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect::<String>()
        .replacen("### rubricate runs compare", "### Against the baseline", 1);
    Ok(crate::cli::gates::Baseline {
        md,
        json: serde_json::from_str(&render(CompareFormat::Json)).unwrap_or_default(),
        text: format!("baseline: {}", render::verdict(&gate)),
        regressed: gate.fails(),
        items: comparison
            .ranked_items()
            .into_iter()
            .filter(|c| c.regression)
            .map(|c| (c.id.clone(), c.a, c.b))
            .collect(),
    })
}

/// Two runs over the same dataset, read side by side in item order (memory does not grow
/// with the runs). `None` when an item's id differs between them at the same position
/// (the dataset read otherwise): then they are joined by id.
fn compare_by_position(
    run_a: &Recording,
    run_b: &Recording,
    top: usize,
    tolerance: f64,
) -> Result<Option<Comparison>, CliError> {
    fn pull(all: &mut run::Evaluations) -> Result<Option<(usize, Evaluation)>, CliError> {
        Ok(all.next().transpose()?)
    }
    let (mut all_a, mut all_b) = (run_a.evaluations()?, run_b.evaluations()?);
    let mut sum = Comparison::new(top, tolerance);
    let (mut next_a, mut next_b) = (pull(&mut all_a)?, pull(&mut all_b)?);
    loop {
        match (&next_a, &next_b) {
            (None, None) => break,
            (Some((at_a, in_a)), Some((at_b, in_b))) if at_a == at_b => {
                if in_a.target_id != in_b.target_id {
                    return Ok(None);
                }
                sum.pair(&in_a.target_id, in_a, in_b);
                (next_a, next_b) = (pull(&mut all_a)?, pull(&mut all_b)?);
            }
            (Some((at_a, _)), Some((at_b, _))) if at_a < at_b => {
                sum.only_a += 1;
                next_a = pull(&mut all_a)?;
            }
            (Some(_), None) => {
                sum.only_a += 1;
                next_a = pull(&mut all_a)?;
            }
            _ => {
                sum.only_b += 1;
                next_b = pull(&mut all_b)?;
            }
        }
    }
    Ok(Some(sum))
}

/// Two runs joined by item id, in memory (runs over different datasets).
fn compare_by_id(
    a: &Recording,
    b: &Recording,
    top: usize,
    tolerance: f64,
) -> Result<Comparison, CliError> {
    let collect = |run: &Recording| -> Result<BTreeMap<String, Evaluation>, CliError> {
        let mut out = BTreeMap::new();
        run.replay(|_, e| {
            out.insert(e.target_id.clone(), e.clone());
        })?;
        Ok(out)
    };
    let (ea, eb) = (collect(a)?, collect(b)?);
    let mut c = Comparison::new(top, tolerance);
    for (id, x) in &ea {
        if let Some(y) = eb.get(id) {
            c.pair(id, x, y);
        }
    }
    c.only_a = ea.len() - c.both;
    c.only_b = eb.len() - c.both;
    Ok(c)
}

/// What comparing two runs adds up: per criterion, pass rates and changed verdicts; per
/// item, score deltas, of which only the `top` most changed are kept (regressions first).
struct Comparison {
    both: usize,
    only_a: usize,
    only_b: usize,
    /// Per criterion: items in both, full marks in A, in B, verdict changed.
    criteria: BTreeMap<String, (usize, usize, usize, usize)>,
    /// Items in both with cells still to come in either run: compared on the criteria
    /// both have, never by score (a missing cell is not a regression).
    pending: usize,
    /// Items whose score or pass changed.
    changed: usize,
    top: usize,
    /// The `top` first in rank; the last in rank at the root.
    ranked: BinaryHeap<Changed>,
    /// What the regression gate and its paired tests need.
    tally: gate::Tally,
}

/// An item whose score or pass changed.
struct Changed {
    id: String,
    /// Its scores in A and in B.
    a: f64,
    b: f64,
    delta: f64,
    regression: bool,
}

impl Ord for Changed {
    /// Rank order: regressions first, then the largest changes, then by id.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .regression
            .cmp(&self.regression)
            .then(other.delta.abs().total_cmp(&self.delta.abs()))
            .then_with(|| self.id.cmp(&other.id))
    }
}

impl PartialOrd for Changed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Changed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Changed {}

impl Comparison {
    fn new(top: usize, tolerance: f64) -> Self {
        Self {
            both: 0,
            only_a: 0,
            only_b: 0,
            criteria: BTreeMap::new(),
            pending: 0,
            changed: 0,
            top,
            ranked: BinaryHeap::new(),
            tally: gate::Tally::new(tolerance),
        }
    }

    /// An item in both runs: `x` in A, `y` in B.
    fn pair(&mut self, id: &str, x: &Evaluation, y: &Evaluation) {
        self.both += 1;
        // Per criterion: share of items whose value is full marks, and verdict changes.
        for rx in &x.results {
            let Some(ry) = y.results.iter().find(|r| r.criterion_id == rx.criterion_id) else {
                continue;
            };
            let entry = match self.criteria.get_mut(&rx.criterion_id) {
                Some(e) => e,
                None => self.criteria.entry(rx.criterion_id.clone()).or_default(),
            };
            entry.0 += 1;
            entry.1 += usize::from(rx.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.2 += usize::from(ry.value.is_some_and(|v| v >= 1.0 - 1e-9));
            entry.3 += usize::from(rx.verdict != ry.verdict);
            self.tally.criterion(&rx.criterion_id, rx.value, ry.value);
        }
        if !x.pending.is_empty() || !y.pending.is_empty() {
            self.pending += 1;
            return;
        }
        let (a, b) = (x.score.unwrap_or(0.0), y.score.unwrap_or(0.0));
        let delta = b - a;
        let regression = self.tally.item(x.passed, y.passed, a, b);
        if delta.abs() > 1e-12 || x.passed != y.passed {
            self.changed += 1;
            if self.top > 0 {
                self.ranked.push(Changed {
                    id: id.to_owned(),
                    a,
                    b,
                    delta,
                    regression,
                });
                if self.ranked.len() > self.top {
                    self.ranked.pop();
                }
            }
        }
    }

    /// The table's body: the runs, per criterion the change, and the items that moved most.
    fn report(&self, ma: &Manifest, mb: &Manifest) -> String {
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
            plural(self.both, "item"),
            self.only_a,
            self.only_b
        );
        unfinished_lines(&mut out, ma, mb, self.pending);
        let _ = writeln!(
            out,
            "\n{:<28} {:>8} {:>8} {:>8} {:>8}",
            "CRITERION", "A FULL", "B FULL", "DELTA", "CHANGED"
        );
        for (id, (n, full_a, full_b, changed)) in &self.criteria {
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
            plural(self.changed, "item")
        );
        for c in self.ranked_items() {
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
}

impl Comparison {
    /// The items kept, in rank order (regressions first).
    fn ranked_items(&self) -> Vec<&Changed> {
        let mut all: Vec<&Changed> = self.ranked.iter().collect();
        all.sort();
        all
    }
}

/// What `runs compare` says when a run is not finished: its state, and how many items
/// were compared on the cells both runs have only (none of them called a regression).
fn unfinished_lines(out: &mut String, ma: &Manifest, mb: &Manifest, pending: usize) {
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

#[cfg(test)]
mod tests {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt as _, SeedableRng as _};

    use std::path::Path;

    use super::*;
    use crate::model::{CriterionResult, MethodKind, Verdict};
    use crate::run::{RunSettings, RunsHome};

    const RUBRIC: &str = "
id: r
name: R
version: 1.0.0
pass_threshold: 0.6
criteria:
  - id: a
    requirement: A
    method: { check: contains, args: { text: x } }
  - id: b
    requirement: B
    weight: 2
    method: { check: contains, args: { text: y } }
  - id: c
    requirement: C
    weight: -1
    method: { check: contains, args: { text: z } }
";

    /// A saved run over `dataset` whose journal holds random verdicts of random items,
    /// written in passes (as resumes and retries write them); ids `id-<position>`, or
    /// `other-<position>` when `other_ids`.
    fn random_run(home: &RunsHome, dataset: &Path, seed: u64, other_ids: bool) -> Recording {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let rubric =
            crate::formats::parse_rubric_text("r.yaml", RUBRIC, "r", &home.root, None).unwrap();
        let (rec, mut w) =
            Recording::create(home, None, Some(&rubric), dataset, &RunSettings::default()).unwrap();
        for _ in 0..rng.random_range(1..4) {
            for item in 0..60 {
                if rng.random_range(0..4) == 0 {
                    continue;
                }
                let results: Vec<CriterionResult> = ["a", "b", "c"]
                    .iter()
                    .map(|c| (c, rng.random_range(0..5), rng.random_range(0..2) == 0))
                    .filter(|(_, keep, _)| *keep > 0)
                    .map(|(c, _, met)| {
                        let mut r = CriterionResult::failed(
                            c,
                            MethodKind::Check,
                            crate::model::Failure::error("x", "y"),
                        );
                        r.failure = None;
                        r.verdict = Some(if met { Verdict::Met } else { Verdict::Unmet });
                        r.value = Some(if met { 1.0 } else { 0.0 });
                        r
                    })
                    .collect();
                let id = format!("{}-{item}", if other_ids { "other" } else { "id" });
                w.append(item, &id, &results).unwrap();
            }
        }
        w.finish().unwrap();
        rec
    }

    /// The report as `runs compare` wrote it before it streamed: the oracle.
    fn compare_report(
        ma: &Manifest,
        ea: &BTreeMap<String, Evaluation>,
        mb: &Manifest,
        eb: &BTreeMap<String, Evaluation>,
        top: usize,
    ) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "A = {} ({})\nB = {} ({})",
            ma.id,
            ma.rubric_label(),
            mb.id,
            mb.rubric_label()
        );
        let common: Vec<&String> = ea.keys().filter(|k| eb.contains_key(*k)).collect();
        let _ = writeln!(
            out,
            "{} in both · {} only in A · {} only in B",
            plural(common.len(), "item"),
            ea.len() - common.len(),
            eb.len() - common.len()
        );
        let waiting = |id: &String| {
            ea.get(id).is_some_and(|e| !e.pending.is_empty())
                || eb.get(id).is_some_and(|e| !e.pending.is_empty())
        };
        unfinished_lines(
            &mut out,
            ma,
            mb,
            common.iter().filter(|id| waiting(id)).count(),
        );
        out.push('\n');
        // Per criterion: share of items whose value is full marks, and verdict changes.
        let mut criteria: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
        for id in &common {
            let (Some(x), Some(y)) = (ea.get(*id), eb.get(*id)) else {
                continue;
            };
            for rx in &x.results {
                let Some(ry) = y.results.iter().find(|r| r.criterion_id == rx.criterion_id) else {
                    continue;
                };
                let entry = criteria.entry(rx.criterion_id.clone()).or_default();
                entry.0 += 1;
                entry.1 += usize::from(rx.value.is_some_and(|v| v >= 1.0 - 1e-9));
                entry.2 += usize::from(ry.value.is_some_and(|v| v >= 1.0 - 1e-9));
                entry.3 += usize::from(rx.verdict != ry.verdict);
            }
        }
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>8} {:>8} {:>8}",
            "CRITERION", "A FULL", "B FULL", "DELTA", "CHANGED"
        );
        for (id, (n, full_a, full_b, changed)) in &criteria {
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
        let mut deltas: Vec<(&String, f64, bool)> = common
            .iter()
            .filter(|id| !waiting(id))
            .filter_map(|id| {
                let (x, y) = (ea.get(*id)?, eb.get(*id)?);
                let d = y.score.unwrap_or(0.0) - x.score.unwrap_or(0.0);
                let regression = x.passed && !y.passed || d < -1e-12;
                (d.abs() > 1e-12 || x.passed != y.passed).then_some((*id, d, regression))
            })
            .collect();
        deltas.sort_by(|p, q| {
            q.2.cmp(&p.2)
                .then(p.1.abs().total_cmp(&q.1.abs()).reverse())
        });
        let _ = writeln!(
            out,
            "\n{} changed; regressions (passed in A and not in B, or score dropped) first:",
            plural(deltas.len(), "item")
        );
        for (id, d, regression) in deltas.iter().take(top) {
            let _ = writeln!(
                out,
                "  {id:<28} {:>+7.1} points{}",
                d * 100.0,
                if *regression { "  REGRESSION" } else { "" }
            );
        }
        out
    }

    #[test]
    fn compare_streamed_by_position_reports_as_joined_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let home = RunsHome {
            runs_dir: dir.path().join("runs"),
            root: dir.path().to_path_buf(),
        };
        let dataset = dir.path().join("d.jsonl");
        std::fs::write(&dataset, "{\"id\": \"x\"}\n").unwrap();
        for seed in 0..12 {
            let a = random_run(&home, &dataset, seed, false);
            let b = random_run(&home, &dataset, seed + 100, false);
            for top in [0, 1, 5, 1000] {
                let streamed = compare_by_position(&a, &b, top, 0.0)
                    .unwrap()
                    .unwrap()
                    .report(&a.manifest, &b.manifest);
                let joined = compare_by_id(&a, &b, top, 0.0)
                    .unwrap()
                    .report(&a.manifest, &b.manifest);
                assert_eq!(streamed, joined, "seed {seed}, top {top}");
                let all = |r: &Recording| {
                    let mut out = BTreeMap::new();
                    r.replay(|_, e| {
                        out.insert(e.target_id.clone(), e.clone());
                    })
                    .unwrap();
                    out
                };
                let before = compare_report(&a.manifest, &all(&a), &b.manifest, &all(&b), top);
                assert_eq!(streamed, before, "seed {seed}, top {top}");
                assert!(streamed.contains(" in both · "), "{streamed}");
            }
            let c = random_run(&home, &dataset, seed + 200, true);
            assert!(
                compare_by_position(&a, &c, 5, 0.0).unwrap().is_none(),
                "other ids at the same positions: joined by id instead"
            );
        }
    }
}
