//! Grading throughput of deterministic and schema criteria, streamed from JSONL.
//!
//! Generates a 100,000-item JSONL file, grades it with a 5-criterion rubric (contains,
//! regex, word count, `json_path`, JSON Schema) on a single-threaded runtime, writes every
//! result as JSONL to a sink, and prints items/s, criterion evaluations/s (per wall second
//! and per CPU second) and peak memory. Runs at 10,000 and 100,000 items to show that
//! memory does not grow with the dataset.
//!
//! Run: `cargo bench --bench grade` (release build). `BENCH_ITEMS=N` changes the big size.

// A benchmark stops at the first surprise; there is no user input here.
#![allow(clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rubricate::engine::{CancelToken, EventKind, ExecOptions, Executor, InOrder, compile};
use rubricate::formats::dataset::{ReadOptions, open_dataset};
use rubricate::formats::parse_rubric_text;
use rubricate::formats::results::item_json;
use tokio::sync::mpsc;

#[path = "support/answers.rs"]
mod answers;

/// CPU seconds (user + system) this process has used, from /proc (Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit(')').next()?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Peak resident memory (`VmHWM`) in MiB.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn grade(path: &Path, criteria: usize) -> (usize, f64, f64) {
    let loaded = parse_rubric_text(
        "bench.yaml",
        &answers::rubric(60),
        "bench",
        Path::new("."),
        None,
    )
    .expect("bench rubric loads");
    let compiled = Arc::new(compile(&loaded).expect("bench rubric compiles"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dataset = open_dataset(path, ReadOptions::default()).expect("dataset opens");
    let cpu0 = cpu_seconds().unwrap_or(0.0);
    let start = Instant::now();
    let done = runtime.block_on(async move {
        let (item_tx, item_rx) = mpsc::channel(1024);
        let (event_tx, mut event_rx) = mpsc::channel(4096);
        let reader = std::thread::spawn(move || {
            for (i, item) in dataset.items.enumerate() {
                if item_tx
                    .blocking_send((i, item.expect("valid item")))
                    .is_err()
                {
                    break;
                }
            }
        });
        let executor = Executor::new(ExecOptions {
            concurrency: 64,
            ..ExecOptions::default()
        });
        let run = tokio::spawn(async move {
            executor
                .run(Some(compiled), item_rx, event_tx, CancelToken::default())
                .await;
        });
        let mut order = InOrder::new();
        let mut out = std::io::BufWriter::new(std::io::sink());
        let mut done = 0usize;
        while let Some(ev) = event_rx.recv().await {
            let finished = match ev.kind {
                EventKind::ItemDone(e) => vec![(ev.item, *e)],
                EventKind::ItemsDone(batch) => batch,
                _ => Vec::new(),
            };
            for (item, e) in finished {
                for e in order.push(item, Box::new(e)) {
                    serde_json::to_writer(&mut out, &item_json(&e)).expect("write");
                    out.write_all(b"\n").expect("write");
                    done += 1;
                }
            }
        }
        run.await.expect("executor");
        reader.join().expect("reader");
        done
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds().unwrap_or(0.0) - cpu0;
    assert_eq!(done * criteria, done * 5);
    (done, wall, cpu)
}

fn main() {
    let big: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    println!(
        "rubricate grade benchmark: 5 criteria (contains, regex, word_count, json_path, schema), single-threaded runtime"
    );
    println!(
        "{:>9} {:>9} {:>9} {:>12} {:>16} {:>16} {:>10}",
        "items", "wall s", "cpu s", "items/s", "crit evals/s", "evals/cpu-s", "peak MiB"
    );
    for n in [10_000, big] {
        let path = dir.path().join(format!("bench-{n}.jsonl"));
        answers::write_dataset(&path, n).expect("write dataset");
        let (done, wall, cpu) = grade(&path, 5);
        let evals = (done * 5) as f64;
        println!(
            "{done:>9} {wall:>9.3} {cpu:>9.3} {:>12.0} {:>16.0} {:>16.0} {:>10.1}",
            done as f64 / wall,
            evals / wall,
            if cpu > 0.0 { evals / cpu } else { f64::NAN },
            peak_mib().unwrap_or(f64::NAN)
        );
    }
    println!(
        "floor: ≥ 200,000 criterion evaluations per second on one core; peak memory flat between the two sizes"
    );
    through_the_binary(dir.path(), big.max(1_000_000));
}

/// The same rubric through the real binary (both cores, the real writer, stdout to
/// /dev/null), beside the time to read and parse the file alone (`rubricate validate`).
fn through_the_binary(dir: &Path, n: usize) {
    let bin = env!("CARGO_BIN_EXE_rubricate");
    let rubric = dir.join("bench.yaml");
    std::fs::write(&rubric, answers::rubric(60)).expect("write rubric");
    let data = dir.join(format!("bench-binary-{n}.jsonl"));
    answers::write_dataset(&data, n).expect("write dataset");
    let time = |args: &[&std::ffi::OsStr]| {
        let start = Instant::now();
        let status = std::process::Command::new(bin)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("run rubricate");
        assert!(status.code().is_some_and(|c| c <= 1), "{status}");
        start.elapsed().as_secs_f64()
    };
    // Best of three each: the file was just written (its pages may still be going to
    // disk) and this machine's second core is not always as free as its first.
    let best = |args: &[&std::ffi::OsStr]| (0..3).map(|_| time(args)).fold(f64::INFINITY, f64::min);
    let floor = best(&["validate".as_ref(), data.as_os_str()]);
    let grade = best(&[
        "grade".as_ref(),
        "--rubric".as_ref(),
        rubric.as_os_str(),
        data.as_os_str(),
        "--format".as_ref(),
        "jsonl".as_ref(),
    ]);
    let evals = (n * 5) as f64;
    println!(
        "through the binary (best of three): {n} items × 5 criteria graded in {grade:.2} s = {:.0} criterion evaluations/s (floor 1,000,000: ×{:.2}); reading and parsing alone {floor:.2} s ({:.1}× less than grading)",
        evals / grade,
        evals / grade / 1_000_000.0,
        grade / floor
    );
    let size = std::fs::metadata(bin).map_or(0, |m| m.len());
    println!(
        "the binary as this bench builds it: {:.1} MB (the bench profile keeps line tables for profiling; `cargo build --release` builds the download without them: README, Performance)",
        size as f64 / 1e6
    );
}
