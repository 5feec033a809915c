//! Cost per criterion: a rubric of N criteria (a regex check each) is read, linted and used
//! to grade items, at N = 2,500, 5,000 and 10,000. Linear work doubles with N; quadratic
//! work quadruples — the ratios printed say which. The floors: lint of 10,000 criteria under
//! a second, grading 1,000 items of 10,000 criteria in seconds.
//!
//! Run: `cargo bench --bench criteria` (release build). `BENCH_ITEMS=N` changes the items
//! graded (default 1,000).

// A benchmark stops at the first surprise; there is no user input here.
#![allow(clippy::expect_used)]

use std::fmt::Write as _;
use std::time::Instant;

use rubricate::engine::executor::{ExecOptions, evaluate_item};
use rubricate::model::Item;

const LINT_FLOOR_S: f64 = 1.0;

fn rubric_text(n: usize) -> String {
    let mut out = String::from("id: big\nname: Big\ncriteria:\n");
    for i in 0..n {
        let _ = write!(
            out,
            "  - id: c{i}\n    name: Criterion {i}\n    requirement: The answer mentions topic number {i} clearly\n    method: {{ check: regex, args: {{ pattern: \"t{i}\\\\b\" }} }}\n"
        );
    }
    out
}

/// (seconds to read, lint, and grade `items` items) for a rubric of `n` criteria.
fn measure(n: usize, items: usize, rt: &tokio::runtime::Runtime) -> (f64, f64, f64) {
    let text = rubric_text(n);
    let t = Instant::now();
    let loaded = rubricate::formats::parse_rubric_text(
        "big.yaml",
        &text,
        "big",
        std::path::Path::new("."),
        None,
    )
    .expect("the rubric reads");
    let read = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let report = rt
        .block_on(rubricate::engine::lint::lint(&loaded))
        .expect("lint runs");
    let lint = t.elapsed().as_secs_f64();
    assert!(report.meta.score.is_some());
    let compiled = rubricate::engine::compile(&loaded).expect("it compiles");
    let opts = ExecOptions {
        cell_events: false,
        ..ExecOptions::default()
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let drain = rt.spawn(async move { while rx.recv().await.is_some() {} });
    let t = Instant::now();
    rt.block_on(async {
        for i in 0..items {
            let item = Item {
                id: format!("i{i}"),
                submission: format!("t1 t{} t{} and more text", i % n, (i * 7) % n),
                ..Item::default()
            };
            let e = evaluate_item(Some(&compiled), &item, i, &opts, &tx).await;
            assert_eq!(e.results.len(), n);
        }
    });
    let grade = t.elapsed().as_secs_f64();
    drop(tx);
    let _ = rt.block_on(drain);
    (read, lint, grade)
}

fn main() {
    let items: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    println!("rubricate cost per criterion ({items} items graded at each size)");
    println!(
        "{:>10} {:>9} {:>9} {:>11} {:>14}",
        "criteria", "read s", "lint s", "grade s", "µs per cell"
    );
    let mut rows = Vec::new();
    for n in [2_500, 5_000, 10_000] {
        let (read, lint, grade) = measure(n, items, &rt);
        #[allow(clippy::cast_precision_loss)]
        let per_cell = grade * 1e6 / (n * items) as f64;
        println!("{n:>10} {read:>9.3} {lint:>9.3} {grade:>11.3} {per_cell:>14.3}");
        rows.push((read, lint, grade));
    }
    let ratio = |f: fn(&(f64, f64, f64)) -> f64| f(&rows[2]) / f(&rows[1]).max(1e-9);
    println!(
        "5,000 → 10,000 criteria: read ×{:.2}, lint ×{:.2}, grade ×{:.2} (linear ×2, quadratic ×4)",
        ratio(|r| r.0),
        ratio(|r| r.1),
        ratio(|r| r.2)
    );
    println!(
        "lint of 10,000 criteria: {:.3} s (floor {LINT_FLOOR_S} s, ratio {:.2})",
        rows[2].1,
        rows[2].1 / LINT_FLOOR_S
    );
}
