//! Memory that follows neither the dataset nor the backlog: peak resident memory of the
//! release binary, as a child process, for `grade --save` with its journal on a slow disk and
//! for `metrics` and `calibrate` over the saved run with 100,000 labels, at 100,000 and
//! 1,000,000 items (the labels stay 100,000: the run grows ×10); and of plain `grade`, and
//! of `runs resume` after a `grade --save` killed (SIGKILL) half way.
//!
//! The slow disk: `RUBRICATE_BENCH_JOURNAL_BYTES_PER_SEC` (a hidden hook of the journal
//! writer, for this bench) holds the journal to 40 MB/s, several times slower than grading
//! produces it, so without back-pressure finished items would queue in memory. The labels
//! (20,000 items × 5 criteria, one annotator) go in through `labels import`.
//!
//! Prints each command's wall time and peak (GNU time's `%M`, else `VmHWM` polled), its
//! ratio to the 100 MB floor, and how the peak moved from the small run to the large one.
//! Asserts nothing.
//!
//! Run: `cargo bench --bench memory`. `BENCH_SIZES=N,M` changes the run sizes,
//! `BENCH_JOURNAL_MBPS=X` the slow disk's speed.

// A benchmark stops at the first surprise; there is no user input here.
#![allow(clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/answers.rs"]
mod answers;
#[path = "support/child.rs"]
mod child;
#[path = "support/tui_child.rs"]
mod tui_child;

use child::{Measured, binary, measure, measure_with, run_id};

/// The floor each command must stay under: 100 MB of peak resident memory.
const FLOOR_BYTES: f64 = 100e6;
/// Labels: this many items, each labelled on all five criteria.
const LABELLED_ITEMS: usize = 20_000;
const CRITERIA: [&str; 5] = ["mentions_paris", "no_filler", "brief", "cites", "shape"];

/// One size's figures.
struct Sized {
    items: usize,
    journal_mb: f64,
    grade: Measured,
    metrics: Measured,
    calibrate: Measured,
    plain: Measured,
    resumed: Measured,
    /// The terminal UI showing the run's items in Results.
    tui: tui_child::Shown,
}

fn main() {
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES").ok().map_or_else(
        || vec![100_000, 1_000_000],
        |s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
    );
    let mbps: f64 = std::env::var("BENCH_JOURNAL_MBPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40.0);
    let bin = binary();
    let mut rows = Vec::new();
    for &items in &sizes {
        rows.push(one_size(&bin, items, mbps));
    }
    println!(
        "\n{:<58} {:>8} {:>8} {:>10} {:>5}",
        "command", "wall s", "peak MB", "peak/100MB", "exit"
    );
    for r in &rows {
        let n = r.items;
        row(
            &format!(
                "grade --save, {n} items, journal {:.0} MB at {mbps} MB/s",
                r.journal_mb
            ),
            &r.grade,
        );
        row(
            &format!("metrics --run A --annotator bench ({n} items)"),
            &r.metrics,
        );
        row(&format!("calibrate --run A ({n} items)"), &r.calibrate);
        row(&format!("grade, no --save ({n} items)"), &r.plain);
        row(
            &format!("runs resume after SIGKILL half way ({n} items)"),
            &r.resumed,
        );
        println!(
            "{:<58} {:>8.1} {:>8} {:>10}",
            format!("terminal UI, Results items of the run ({n} items)"),
            r.tui.wall.as_secs_f64(),
            r.tui
                .peak
                .map_or_else(|| "?".into(), |p| format!("{:.1}", p / 1e6)),
            r.tui
                .peak
                .map_or_else(|| "?".into(), |p| format!("{:.2}", p / FLOOR_BYTES)),
        );
    }
    if let [small, .., large] = rows.as_slice() {
        let grew = |a: &Measured, b: &Measured| match (a.peak, b.peak) {
            (Some(a), Some(b)) => format!("×{:.2}", b / a),
            _ => "?".into(),
        };
        println!(
            "\nfrom {} to {} items (labels fixed at {}): grade --save {}, metrics {}, calibrate {}",
            small.items,
            large.items,
            LABELLED_ITEMS * CRITERIA.len(),
            grew(&small.grade, &large.grade),
            grew(&small.metrics, &large.metrics),
            grew(&small.calibrate, &large.calibrate),
        );
        if let (Some(a), Some(b)) = (small.tui.peak, large.tui.peak) {
            println!("terminal UI's Results: ×{:.2}", b / a);
        }
    }
    println!("floor: each under 100 MB of peak resident memory, flat in the run's size");
    for r in &rows {
        for (what, m) in [
            ("grade", &r.grade),
            ("metrics", &r.metrics),
            ("calibrate", &r.calibrate),
            ("grade", &r.plain),
            ("runs resume", &r.resumed),
        ] {
            if m.code != Some(0) {
                println!("{what} ({} items) failed: {}", r.items, m.stderr.trim());
            }
        }
        if let Some(screen) = &r.tui.failed {
            println!("terminal UI ({} items): {screen}", r.items);
        }
    }
}

fn one_size(bin: &Path, items: usize, mbps: f64) -> Sized {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path();
    let init = measure(bin, ws, &["init", "."], false);
    assert_eq!(init.code, Some(0), "init: {}", init.stderr);
    std::fs::create_dir_all(ws.join("datasets")).expect("datasets/");
    let data = ws.join("datasets").join("big.jsonl");
    let t = Instant::now();
    answers::write_dataset(&data, items).expect("dataset");
    std::fs::write(ws.join("bench.yaml"), answers::rubric(60)).expect("rubric");
    write_labels(&ws.join("labels.csv"), items.min(LABELLED_ITEMS));
    println!(
        "{items} items: dataset {:.1} MB and {} labels written in {:.1} s",
        std::fs::metadata(&data).map_or(0.0, |m| m.len() as f64 / 1e6),
        items.min(LABELLED_ITEMS) * CRITERIA.len(),
        t.elapsed().as_secs_f64()
    );
    let imported = measure(
        bin,
        ws,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "datasets/big.jsonl",
            "--annotator",
            "bench",
        ],
        false,
    );
    assert_eq!(imported.code, Some(0), "labels import: {}", imported.stderr);
    let rate = (mbps * 1e6).to_string();
    let grade = measure_with(
        bin,
        ws,
        &[
            "grade",
            "--rubric",
            "bench.yaml",
            "datasets/big.jsonl",
            "--format",
            "jsonl",
            "--save",
        ],
        false,
        &[("RUBRICATE_BENCH_JOURNAL_BYTES_PER_SEC", &rate)],
    );
    assert_eq!(grade.code, Some(0), "grade: {}", grade.stderr);
    let a = run_id(&grade.stderr);
    let journal_mb = std::fs::metadata(ws.join("runs").join(&a).join("results.jsonl"))
        .map_or(0.0, |m| m.len() as f64 / 1e6);
    let metrics = measure(
        bin,
        ws,
        &["metrics", "--run", &a, "--annotator", "bench"],
        false,
    );
    let calibrate = measure(
        bin,
        ws,
        &[
            "calibrate",
            "--dataset",
            "datasets/big.jsonl",
            "--run",
            &a,
            "--annotator",
            "bench",
        ],
        false,
    );
    let plain = measure(
        bin,
        ws,
        &[
            "grade",
            "--rubric",
            "bench.yaml",
            "datasets/big.jsonl",
            "--format",
            "jsonl",
        ],
        false,
    );
    let resumed = killed_and_resumed(bin, ws, journal_mb * 1e6 / 2.0, &rate);
    let tui = tui_child::results_items(bin, ws);
    Sized {
        items,
        journal_mb,
        grade,
        metrics,
        calibrate,
        plain,
        resumed,
        tui,
    }
}

/// Starts `grade --save` on the slow journal, kills it (SIGKILL) once its journal holds
/// `half` bytes, and measures the `runs resume` that finishes it.
fn killed_and_resumed(bin: &Path, ws: &Path, half: f64, rate: &str) -> Measured {
    let runs = ws.join("runs");
    let listed = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&runs)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let before = listed();
    let mut child = Command::new(bin)
        .args([
            "grade",
            "--rubric",
            "bench.yaml",
            "datasets/big.jsonl",
            "--format",
            "jsonl",
            "--save",
        ])
        .current_dir(ws)
        .env("NO_COLOR", "1")
        .env("RUBRICATE_BENCH_JOURNAL_BYTES_PER_SEC", rate)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("grade --save");
    let deadline = Instant::now() + Duration::from_secs(900);
    let run = loop {
        let new = listed().into_iter().find(|p| !before.contains(p));
        let journal = new
            .as_ref()
            .and_then(|d| std::fs::metadata(d.join("results.jsonl")).ok());
        if let (Some(dir), Some(j)) = (&new, journal)
            && j.len() as f64 >= half
        {
            break dir.clone();
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "grade --save ended before it was killed"
        );
        assert!(Instant::now() < deadline, "the journal never reached half");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let id = run
        .file_name()
        .expect("run id")
        .to_string_lossy()
        .into_owned();
    measure(bin, ws, &["runs", "resume", &id], false)
}

/// `items` items labelled on every criterion, as CSV: the verdict follows the item's
/// number, so about a third disagree with the checks.
fn write_labels(path: &Path, items: usize) {
    let mut csv = String::from("item,criterion,verdict\n");
    for i in 0..items {
        for (c, id) in CRITERIA.iter().enumerate() {
            let met = (i * 7 + c) % 3 != 0;
            let _ = writeln!(csv, "item-{i},{id},{}", if met { "MET" } else { "UNMET" });
        }
    }
    std::fs::write(path, csv).expect("labels.csv");
}

fn row(what: &str, m: &Measured) {
    let (mb, ratio) = m.peak.map_or_else(
        || ("?".to_owned(), "?".to_owned()),
        |p| (format!("{:.1}", p / 1e6), format!("{:.3}", p / FLOOR_BYTES)),
    );
    println!(
        "{what:<58} {:>8.2} {mb:>8} {ratio:>10} {:>5}",
        m.wall.as_secs_f64(),
        m.code.map_or_else(|| "-".to_owned(), |c| c.to_string())
    );
}
