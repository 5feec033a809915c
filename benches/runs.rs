//! Reading saved runs back: `runs show`, `runs resume` (nothing left to grade) and `runs
//! compare` on a 1,000,000-item × 5-criterion run, each as a child process of the release
//! binary, next to the `grade --save` runs that recorded them.
//!
//! Generates, in a temporary workspace (`rubricate init`), a 1,000,000-line JSONL dataset,
//! records two runs of it with `rubricate grade --save` (the 5 deterministic criteria of
//! `benches/grade.rs`; the second with a stricter word count, so some items change), then
//! runs `runs show A --format jsonl > /dev/null`, `runs resume A` and `runs compare A B`.
//! Prints wall time and peak resident memory of each (`/usr/bin/time -f %M`, else the
//! child's `VmHWM` polled from /proc, a lower bound), and each peak against the 200 MB
//! floor as a ratio. Prints figures; asserts nothing.
//!
//! Run: `cargo bench --bench runs`. `BENCH_ITEMS=N` changes the size.

// A benchmark stops at the first surprise; there is no user input here.
#![allow(clippy::expect_used)]

use std::time::Instant;

#[path = "support/answers.rs"]
mod answers;
#[path = "support/child.rs"]
mod child;

use child::{Measured, binary, measure, run_id};

/// The floor every reading command must stay under: 200 MB of peak resident memory.
const FLOOR_BYTES: f64 = 200e6;

fn row(what: &str, m: &Measured, floor: bool) {
    let mb = m
        .peak
        .map_or_else(|| "?".to_owned(), |p| format!("{:.1}", p / 1e6));
    let ratio = if floor {
        m.peak
            .map_or_else(|| "?".to_owned(), |p| format!("{:.3}", p / FLOOR_BYTES))
    } else {
        "-".to_owned()
    };
    println!(
        "{what:<44} {:>9.2} {:>10} {:>12} {:>5}",
        m.wall.as_secs_f64(),
        mb,
        ratio,
        m.code.map_or_else(|| "-".to_owned(), |c| c.to_string())
    );
}

fn main() {
    let items: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let bin = binary();
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path();
    let init = measure(&bin, ws, &["init", "."], false);
    assert_eq!(init.code, Some(0), "init: {}", init.stderr);
    let data = ws.join("datasets").join("big.jsonl");
    std::fs::create_dir_all(ws.join("datasets")).expect("datasets/");
    let t = Instant::now();
    answers::write_dataset(&data, items).expect("dataset");
    println!(
        "dataset: {items} items, {:.1} MB, written in {:.1} s",
        std::fs::metadata(&data).map_or(0.0, |m| m.len() as f64 / 1e6),
        t.elapsed().as_secs_f64()
    );
    std::fs::write(ws.join("bench.yaml"), answers::rubric(60)).expect("rubric");
    std::fs::write(ws.join("stricter.yaml"), answers::rubric(12)).expect("rubric");
    let grade = |rubric: &str, name: &str| {
        measure(
            &bin,
            ws,
            &[
                "grade",
                "--rubric",
                rubric,
                "datasets/big.jsonl",
                "--format",
                "jsonl",
                "--name",
                name,
            ],
            false,
        )
    };
    let graded_a = grade("bench.yaml", "a");
    let a = run_id(&graded_a.stderr);
    let graded_b = grade("stricter.yaml", "b");
    let b = run_id(&graded_b.stderr);
    let journal = ws.join("runs").join(&a).join("results.jsonl");
    println!(
        "run A {a}: journal {:.1} MB; run B {b}",
        std::fs::metadata(&journal).map_or(0.0, |m| m.len() as f64 / 1e6)
    );
    let show = measure(&bin, ws, &["runs", "show", &a, "--format", "jsonl"], false);
    let resume = measure(&bin, ws, &["runs", "resume", &a], false);
    let compare = measure(&bin, ws, &["runs", "compare", &a, &b], true);
    println!(
        "\n{:<44} {:>9} {:>10} {:>12} {:>5}",
        "command", "wall s", "peak MB", "peak/200 MB", "exit"
    );
    row(
        &format!("grade --save ({items} items × 5), run A"),
        &graded_a,
        true,
    );
    row("grade --save, run B (stricter word count)", &graded_b, true);
    row("runs show A --format jsonl > /dev/null", &show, true);
    row("runs resume A (nothing left to grade)", &resume, true);
    row("runs compare A B", &compare, true);
    println!(
        "\nfloor: each under 200 MB of peak resident memory (ratio < 1), flat in the run's size"
    );
    println!(
        "resume said: {}",
        resume
            .stderr
            .lines()
            .find(|l| l.contains("already in the journal"))
            .unwrap_or(resume.stderr.trim())
    );
    println!(
        "compare said:\n{}",
        compare
            .stdout
            .lines()
            .take(12)
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (what, m) in [("show", &show), ("compare", &compare)] {
        if m.code != Some(0) {
            println!("{what} failed: {}", m.stderr.trim());
        }
    }
}
