//! Dataset index benchmark: index a 1,000,000-line JSONL once, then, in a fresh process,
//! open the saved index and read a 100-item window from the middle of the file.
//!
//! `cargo bench --bench index` (`BENCH_LINES` for another size).
#![allow(clippy::expect_used, clippy::cast_precision_loss)]

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rubricate::formats::dataset::index::LineIndex;

fn write_jsonl(path: &Path, lines: usize) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    for i in 0..lines {
        writeln!(
            w,
            "{{\"id\":\"item-{i}\",\"submission\":\"Answer {i}: Paris is the capital of France, on the Seine, with about two million people.\",\"prompt\":\"What is the capital of France?\"}}"
        )?;
    }
    w.flush()
}

fn rss_kib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .unwrap_or(f64::NAN)
}

/// In the child: open the saved index, read the middle window; print seconds, items, RSS.
fn child(data: &Path, index: &Path) {
    let before = rss_kib();
    let start = Instant::now();
    let ix = LineIndex::load(index, data).expect("a valid saved index");
    let middle = ix.len() / 2;
    let window = ix.window(data, "bench.jsonl", middle, 100).expect("window");
    let secs = start.elapsed().as_secs_f64();
    let ok = window.iter().filter(|r| r.is_ok()).count();
    let grown = (rss_kib() - before) * 1024.0;
    println!("{secs} {ok} {grown} {}", ix.len());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(Path::new(&args[i + 1]), Path::new(&args[i + 2]));
        return;
    }
    let lines = std::env::var("BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data.jsonl");
    let index = dir.path().join("data.idx");
    write_jsonl(&data, lines).expect("write");
    let mb = std::fs::metadata(&data).map_or(0.0, |m| m.len() as f64 / 1e6);
    let start = Instant::now();
    let ix = LineIndex::build(&data, |_| {}).expect("build");
    let build = start.elapsed().as_secs_f64();
    ix.save(&index).expect("save");
    let idx_mb = std::fs::metadata(&index).map_or(0.0, |m| m.len() as f64 / 1e6);
    println!("rubricate index benchmark: {lines} lines, {mb:.1} MB");
    println!(
        "build: {build:.3} s ({:.0} MB/s), index file {idx_mb:.1} MB ({} bytes per item in memory)",
        mb / build,
        LineIndex::BYTES_PER_ITEM
    );
    let exe = std::env::current_exe().expect("exe");
    for run in 1..=3 {
        let out = Command::new(&exe)
            .args([
                "--child",
                &data.display().to_string(),
                &index.display().to_string(),
            ])
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<f64> = text
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if let [secs, ok, grown, n] = f[..] {
            println!(
                "run {run}: open + 100-item window from the middle in {:.1} ms ({ok} items read; floor 200 ms, ratio {:.3}); memory grew {:.1} bytes per item",
                secs * 1000.0,
                secs / 0.2,
                grown / n
            );
        } else {
            println!(
                "run {run}: the child said {text:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    println!("floors: first window < 200 ms after open; index memory < 32 bytes per item");
}
