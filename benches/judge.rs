//! Judge throughput: N items × 5 judged criteria, per-criterion strategy, at concurrency 64
//! against the loopback server of `tests/support/` (run in a child process, so the CPU
//! measured here is the client's alone) at 100 ms and at 0 ms latency; then the anchor
//! workload through the real binary: 10,000 calls at concurrency 512 and 100 ms, with its
//! wall time against the floor and its peak resident memory (`/usr/bin/time`).
//!
//! `cargo bench --bench judge` (`BENCH_ITEMS` for another N).
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rubricate::engine::judge::{Judge, JudgeOptions, Panel};
use rubricate::engine::{CancelToken, EventKind, ExecOptions, Executor, compile};
use rubricate::formats::parse_rubric_text;
use rubricate::llm::{Client, ClientOptions, ProviderKind, ProviderSpec};
use rubricate::model::Item;
use serde_json::json;

const CONCURRENCY: usize = 64;
const CRITERIA: usize = 5;

const RUBRIC: &str = "id: bench\ncriteria:\n  - {id: a, requirement: Answers the question}\n  - {id: b, requirement: Cites a source}\n  - {id: c, requirement: Is polite}\n  - {id: d, requirement: Is concise}\n  - {id: e, requirement: Gives an example}\n";

/// The child: a server with `latency_ms`, its URL on stdout, alive until stdin closes.
fn serve(latency_ms: u64) {
    let server = support::LlmServer::start(Duration::from_millis(latency_ms), |_| {
        support::verdict("fine", json!("MET"))
    });
    println!("{}", server.url);
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// User + system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run(url: &str, items: usize) -> (f64, f64, usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let loaded = parse_rubric_text("bench.yaml", RUBRIC, "bench", Path::new("."), None).unwrap();
    let compiled = Arc::new(compile(&loaded).unwrap());
    let spec = ProviderSpec {
        name: "openai".into(),
        kind: ProviderKind::OpenAi,
        model: "bench".into(),
        base_url: format!("{url}/v1"),
        replicas: Vec::new(),
        key: None,
        key_var: "OPENAI_API_KEY".into(),
    };
    let client = Client::new(
        "openai/bench",
        spec,
        ClientOptions {
            concurrency: CONCURRENCY,
            max_retries: 0,
            ..ClientOptions::default()
        },
    )
    .unwrap();
    let judge = Arc::new(Judge::new(client, JudgeOptions::default()));
    let opts = ExecOptions {
        concurrency: CONCURRENCY,
        judge: Some(Arc::new(Panel::single(judge))),
        ..ExecOptions::default()
    };
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let judged = runtime.block_on(async move {
        let (item_tx, item_rx) = tokio::sync::mpsc::channel(1024);
        let (event_tx, mut event_rx) = tokio::sync::mpsc::channel(4096);
        let feeder = tokio::spawn(async move {
            for i in 0..items {
                let item = Item {
                    id: format!("item-{i}"),
                    submission: format!("Answer number {i}: Paris, according to the atlas."),
                    candidates: Vec::new(),
                    prompt: Some("What is the capital of France?".into()),
                    reference: None,
                    description: None,
                    ground_truth: None,
                    rubric: None,
                    metadata: serde_json::Map::new(),
                    origin: format!("bench:{i}"),
                    conversation: None,
                };
                if item_tx.send((i, item)).await.is_err() {
                    break;
                }
            }
        });
        let executor = Executor::new(opts);
        let run = tokio::spawn(async move {
            executor
                .run(Some(compiled), item_rx, event_tx, CancelToken::default())
                .await;
        });
        let mut judged = 0;
        while let Some(ev) = event_rx.recv().await {
            if let EventKind::ItemDone(e) = ev.kind {
                judged += e.results.iter().filter(|r| r.failure.is_none()).count();
            }
        }
        let _ = feeder.await;
        let _ = run.await;
        judged
    });
    (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0, judged)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        serve(args[i + 1].parse().unwrap());
        return;
    }
    let items: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let calls = items * CRITERIA;
    println!(
        "rubricate judge benchmark: {items} items × {CRITERIA} criteria, per-criterion, concurrency {CONCURRENCY}, loopback server in a child process"
    );
    println!(
        "{:>10} {:>7} {:>9} {:>9} {:>10} {:>18} {:>9}",
        "latency", "calls", "wall s", "floor s", "wall/floor", "client cpu s/1000", "peak MiB"
    );
    for latency_ms in [100u64, 0] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--serve", &latency_ms.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        let (wall, cpu, judged) = run(url.trim(), items);
        drop(child.stdin.take());
        let _ = child.wait();
        assert_eq!(judged, calls, "every call judged");
        let floor = (calls.div_ceil(CONCURRENCY)) as f64 * latency_ms as f64 / 1000.0;
        let ratio = if floor > 0.0 {
            format!("{:.3}", wall / floor)
        } else {
            "-".into()
        };
        println!(
            "{:>8}ms {calls:>7} {wall:>9.3} {floor:>9.3} {ratio:>10} {:>18.3} {:>9.1}",
            latency_ms,
            cpu / calls as f64 * 1000.0,
            peak_mib()
        );
    }
    println!(
        "floors: wall/floor ≤ 1.10 at 100 ms; ≤ 0.2 client CPU-seconds per 1,000 calls at 0 ms"
    );
    high_concurrency();
}

/// The anchor workload through the real binary: 2,000 items × 5 criteria (10,000 calls)
/// at concurrency 512 against the server at 100 ms, with the binary's peak resident memory.
fn high_concurrency() {
    const ITEMS: usize = 2_000;
    const WIDE: usize = 512;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rubric.yaml"), RUBRIC).unwrap();
    let mut lines = String::new();
    for i in 0..ITEMS {
        lines.push_str(
            &json!({"id": format!("item-{i}"), "prompt": "What is the capital of France?",
            "submission": format!("Answer number {i}: Paris, according to the atlas.")})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(dir.path().join("items.jsonl"), lines).unwrap();
    let mut server = Command::new(std::env::current_exe().unwrap())
        .args(["--serve", "100"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let peak_file = dir.path().join("peak");
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&peak_file)
        .arg(env!("CARGO_BIN_EXE_rubricate"))
        .args([
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--judge",
            "openai/bench",
            "--concurrency",
            "512",
            "--no-cache",
            "--max-retries",
            "0",
            "--format",
            "jsonl",
            "--out",
            "out.jsonl",
        ])
        .current_dir(dir.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", url.trim()))
        .env("OPENAI_API_KEY", "sk-bench")
        .env("NO_COLOR", "1")
        .output()
        .expect("run the binary under /usr/bin/time");
    let wall = start.elapsed().as_secs_f64();
    drop(server.stdin.take());
    let _ = server.wait();
    let calls = ITEMS * CRITERIA;
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak = std::fs::read_to_string(&peak_file)
        .ok()
        .and_then(|s| s.lines().last()?.trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0);
    let floor = calls.div_ceil(WIDE) as f64 * 0.1;
    println!(
        "through the binary: {calls} calls at concurrency {WIDE}, 100 ms: {wall:.3} s wall against a floor of {floor:.3} s (wall/floor {:.3}), peak {peak:.1} MiB resident (targets: ≤ 1.2, < 60 MiB)",
        wall / floor
    );
}
