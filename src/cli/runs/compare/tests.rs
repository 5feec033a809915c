//! `runs compare` streamed by position reports as joined by id, and as it did before it
//! streamed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};

use std::path::Path;

use super::render::{report, unfinished_lines};
use crate::engine::checks::plural;
use crate::model::Evaluation;
use crate::model::{CriterionResult, MethodKind, Verdict};
use crate::run::Recording;
use crate::run::compare::{compare_by_id, compare_by_position};
use crate::run::{RunSettings, RunsHome};
use crate::store::runs::Manifest;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
            let streamed = report(
                &compare_by_position(&a, &b, top, 0.0).unwrap().unwrap(),
                &a.manifest,
                &b.manifest,
            );
            let joined = report(
                &compare_by_id(&a, &b, top, 0.0).unwrap(),
                &a.manifest,
                &b.manifest,
            );
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
