//! Loading benchmark: a ~100 MB autorubric-shaped JSON dataset and a 1,000,000-line JSONL
//! file, read item by item through `open_dataset` exactly as `grade` and `score` read them.
//! Each load runs in a child process so its peak memory (`VmHWM`) is its own.
//!
//! `cargo bench --bench load` (set `BENCH_LINES` / `BENCH_JSON_MB` for other sizes).
#![allow(clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rubricate::formats::dataset::{ReadOptions, open_dataset};

const SUBMISSION: &str = "The Industrial Revolution began in Britain because of coal and iron deposits, a growing population, colonial trade and capital for investment. Steam power moved factories out of river valleys; railways cut transport costs; and the factory system changed how and where people worked, with long hours, child labour and crowded cities as the human cost. ";

fn write_jsonl(path: &Path, lines: usize) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    for i in 0..lines {
        writeln!(
            w,
            "{{\"id\":\"item-{i}\",\"submission\":\"{SUBMISSION}\",\"prompt\":\"Explain the causes.\",\"ground_truth\":[\"MET\",\"UNMET\",\"MET\",\"CANNOT_ASSESS\"]}}"
        )?;
    }
    w.flush()
}

fn write_json(path: &Path, megabytes: usize) -> std::io::Result<usize> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    write!(
        w,
        "{{\"name\":\"bench\",\"prompt\":\"Explain the causes of the Industrial Revolution.\",\"rubric\":[{{\"name\":\"Causes\",\"weight\":30,\"requirement\":\"Names two causes\"}},{{\"name\":\"Effects\",\"weight\":30,\"requirement\":\"Names two effects\"}},{{\"name\":\"Evidence\",\"weight\":20,\"requirement\":\"Gives evidence\"}},{{\"name\":\"Errors\",\"weight\":-15,\"requirement\":\"States a falsehood\"}}],\"items\":["
    )?;
    let item = format!(
        "{{\"submission\":\"{}\",\"description\":\"essay\",\"ground_truth\":[\"MET\",\"UNMET\",\"MET\",\"UNMET\"]}}",
        SUBMISSION.repeat(3)
    );
    let n = megabytes * 1024 * 1024 / (item.len() + 1);
    for i in 0..n {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(item.as_bytes())?;
    }
    w.write_all(b"]}\n")?;
    w.flush()?;
    Ok(n)
}

fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// In the child: load every item, print `items seconds peak_mib`.
fn child(path: &Path) {
    let start = Instant::now();
    let ds = match open_dataset(path, ReadOptions::default()) {
        Ok(ds) => ds,
        Err(d) => {
            eprintln!("{d}");
            std::process::exit(2);
        }
    };
    let mut items = 0usize;
    let mut bytes = 0usize;
    for item in ds.items {
        match item {
            Ok(i) => {
                items += 1;
                bytes += i.submission.len();
            }
            Err(d) => {
                eprintln!("{d}");
                std::process::exit(2);
            }
        }
    }
    std::hint::black_box(bytes);
    println!("{items} {} {}", start.elapsed().as_secs_f64(), peak_mib());
}

fn measure(path: &Path) -> (usize, f64, f64) {
    let exe = std::env::current_exe().expect("bench executable");
    let out = Command::new(exe)
        .arg("--child")
        .arg(path)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let mut next = || {
        parts
            .next()
            .and_then(|p| p.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    let (items, secs, peak) = (next(), next(), next());
    assert!(
        out.status.success() && items.is_finite(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (items as usize, secs, peak)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(Path::new(&args[i + 1]));
        return;
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let lines = env("BENCH_LINES", 1_000_000);
    let json_mb = env("BENCH_JSON_MB", 100);
    let dir = tempfile::tempdir().expect("tempdir");
    println!("rubricate load benchmark: open_dataset + every item, one process per row");
    println!(
        "{:<28} {:>10} {:>9} {:>9} {:>11} {:>12} {:>9}",
        "file", "items", "MB", "seconds", "MB/s", "items/s", "peak MiB"
    );
    let mut rows = Vec::new();
    for n in [lines / 10, lines] {
        let p = dir.path().join(format!("lines-{n}.jsonl"));
        write_jsonl(&p, n).expect("write jsonl");
        rows.push((format!("jsonl, {n} lines"), p));
    }
    for mb in [json_mb / 10, json_mb] {
        let p = dir.path().join(format!("data-{mb}.json"));
        write_json(&p, mb).expect("write json");
        rows.push((format!("autorubric json, {mb} MB"), p));
    }
    for (label, p) in rows {
        let mb = std::fs::metadata(&p).map_or(0.0, |m| m.len() as f64 / 1e6);
        let (items, secs, peak) = measure(&p);
        println!(
            "{label:<28} {items:>10} {mb:>9.1} {secs:>9.3} {:>11.1} {:>12.0} {peak:>9.1}",
            mb / secs,
            items as f64 / secs
        );
    }
    println!("floors: JSONL peak memory flat as the file grows tenfold; JSON at ≥ 100 MB/s");
}
