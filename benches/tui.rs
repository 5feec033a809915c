//! Terminal UI benchmark: the time to draw one frame of each pane at 200×60 with a
//! 1,000,000-item dataset open; the time from start to first frame on the demo workspace
//! (in-process, and the real binary in tmux); and the real binary's CPU use while idle for
//! 10 s.
//!
//! `cargo bench --bench tui` (`BENCH_LINES` for another size; the tmux parts are skipped
//! where tmux is missing).
#![allow(clippy::expect_used, clippy::cast_precision_loss)]

#[path = "support/tui_child.rs"]
mod tui_child;

use tui_child::tmux;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rubricate::store::Workspace;
use rubricate::tui::app::{Msg, PaneId};
use rubricate::tui::runtime::Runtime;
use rubricate::tui::{build, settle};

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn write_jsonl(path: &Path, lines: usize) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for i in 0..lines {
        writeln!(
            w,
            "{{\"id\":\"item-{i}\",\"submission\":\"Answer {i}: Paris is the capital of France, on the Seine, with about two million people.\",\"prompt\":\"What is the capital of France?\"}}"
        )
        .expect("write");
    }
    w.flush().expect("flush");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn frames(lines: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = Workspace::init(dir.path()).expect("init");
    write_jsonl(&dir.path().join("datasets/big.jsonl"), lines);
    let ws = Workspace::at(&ws.root).expect("ws");
    let mut app = build(&ws).expect("app");
    let runtime = Runtime::new(
        ws.clone(),
        app.shared().datasets.clone(),
        app.shared().annotator.clone(),
    );
    let e = app.update(Msg::Resize(200, 60));
    settle(&mut app, &runtime, e);
    let start = Instant::now();
    let e = app.update(key(KeyCode::Enter));
    settle(&mut app, &runtime, e);
    let open = start.elapsed();
    // To the middle of the dataset, as a person paging would end up.
    for _ in 0..(lines / 2 / 55) {
        let e = app.update(key(KeyCode::PageDown));
        settle(&mut app, &runtime, e);
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    println!(
        "{lines} items: index built and first window read in {:.0} ms; cursor at item {}",
        open.as_secs_f64() * 1000.0,
        app.shared().browse.as_ref().map_or(0, |b| b.cursor + 1)
    );
    println!(
        "{:<22} {:>12} {:>12} {:>10}",
        "pane at 200×60", "median ms", "worst ms", "floor 4 ms"
    );
    for (name, setup) in [
        ("Datasets (list)", vec![]),
        ("Datasets (detail)", vec![key(KeyCode::Enter)]),
        (
            "Label",
            vec![
                key(KeyCode::Esc),
                Msg::Key(KeyEvent::new(KeyCode::Char('L'), KeyModifiers::NONE)),
            ],
        ),
        (
            "Results",
            vec![Msg::Key(KeyEvent::new(
                KeyCode::Char('R'),
                KeyModifiers::NONE,
            ))],
        ),
    ] {
        for m in setup {
            let e = app.update(m);
            settle(&mut app, &runtime, e);
        }
        let mut times = Vec::new();
        for i in 0..300 {
            // Something changes every frame, as it would while scrolling or labelling.
            if app.pane() == PaneId::Datasets && i % 2 == 0 {
                let e = app.update(key(KeyCode::Down));
                settle(&mut app, &runtime, e);
            }
            let t = Instant::now();
            terminal.draw(|f| app.draw(f)).expect("draw");
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let worst = times.iter().copied().fold(0.0, f64::max);
        let m = median(times);
        println!("{name:<22} {m:>12.3} {worst:>12.3} {:>10.3}", m / 4.0);
    }
}

fn first_frame_in_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    rubricate::store::workspace::create_demo(dir.path()).expect("demo");
    let mut times = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let ws = Workspace::at(dir.path()).expect("ws");
        let mut app = build(&ws).expect("app");
        app.update(Msg::Resize(120, 40));
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        terminal.draw(|f| app.draw(f)).expect("draw");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let m = median(times);
    println!(
        "start to first frame, in process (demo workspace): median {m:.2} ms (floor 150 ms, ratio {:.3})",
        m / 150.0
    );
}

fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn real_binary() {
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!("tmux not installed: real-binary figures skipped");
        return;
    }
    let exe = std::env::current_exe().expect("exe");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("rubricate"))
        .filter(|p| p.exists())
        .expect("target/release/rubricate: run `cargo build --release` first");
    let dir = tempfile::tempdir().expect("tempdir");
    rubricate::store::workspace::create_demo(dir.path()).expect("demo");
    let socket = format!("rubricate-bench-{}", std::process::id());
    let mut firsts = Vec::new();
    for run in 0..5 {
        let cmd = format!(
            "exec env RUBRICATE_HOME={} TERM=xterm-256color {}",
            dir.path().display(),
            bin.display()
        );
        let t = Instant::now();
        // The server must start with the bench's own stdin (as a person's shell would).
        let started = tui_child::start_session(&socket, &cmd);
        if !started {
            println!("tmux could not start a session here: real-binary figures skipped");
            return;
        }
        loop {
            let screen = tmux(&socket, &["capture-pane", "-p", "-t", "b"]);
            if screen.contains("support-answers") {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no first frame:\n{screen}"
            );
        }
        firsts.push(t.elapsed().as_secs_f64() * 1000.0);
        if run == 4 {
            let pid = tmux(
                &socket,
                &["display-message", "-p", "-t", "b", "#{pane_pid}"],
            );
            let pid = pid.trim();
            let before = cpu_ticks(pid).unwrap_or(0);
            std::thread::sleep(Duration::from_secs(10));
            let after = cpu_ticks(pid).unwrap_or(0);
            let hz = 100.0;
            let cpu = (after - before) as f64 / hz;
            println!(
                "idle for 10 s: {cpu:.3} CPU-seconds ({:.2}% of one core)",
                cpu / 10.0 * 100.0
            );
        }
        tmux(&socket, &["kill-server"]);
    }
    let m = median(firsts);
    println!(
        "start to first frame, real binary seen through tmux (includes tmux's own start and polling): median {m:.0} ms (floor 150 ms, ratio {:.2})",
        m / 150.0
    );
}

/// The Grade pane fed a scripted stream as fast as it can take it: `cells` cells (64 in
/// flight at a time) of 200 chunks each, then a verdict; frames drawn at most every 16 ms.
fn grade_stream(cells: usize) {
    use rubricate::engine::{EventKind, GradeEvent};
    use rubricate::model::{CriterionResult, Failure, MethodKind, Verdict};
    let dir = tempfile::tempdir().expect("tempdir");
    rubricate::store::workspace::create_demo(dir.path()).expect("demo");
    let ws = Workspace::at(dir.path()).expect("ws");
    let mut app = build(&ws).expect("app");
    let runtime = Runtime::new(
        ws.clone(),
        app.shared().datasets.clone(),
        app.shared().annotator.clone(),
    );
    let e = app.update(Msg::Resize(200, 60));
    settle(&mut app, &runtime, e);
    let e = app.update(key(KeyCode::Enter));
    settle(&mut app, &runtime, e);
    app.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('G'),
        KeyModifiers::NONE,
    )));
    let criteria = 4;
    app.update(Msg::RunStarted {
        tag: 1,
        run_id: "bench".into(),
        criteria: (0..criteria).map(|c| (format!("c{c}"), false)).collect(),
        items: Some(cells / criteria),
    });
    let rss = |field: &str| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with(field))?.to_owned();
                line.split_whitespace().nth(1)?.parse::<f64>().ok()
            })
            .unwrap_or(f64::NAN)
    };
    let before = rss("VmRSS:");
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let frame = Duration::from_millis(16);
    let mut last_draw = Instant::now()
        .checked_sub(frame)
        .unwrap_or_else(Instant::now);
    let (mut frames, mut worst_frame, mut worst_lag) = (0u64, 0.0f64, 0.0f64);
    let mut pending_verdict: Option<Instant> = None;
    let start = Instant::now();
    let chunk = "word ".to_owned();
    let in_flight = 64;
    for batch in (0..cells).collect::<Vec<_>>().chunks(in_flight) {
        for round in 0..=200 {
            for &cell in batch {
                let (item, c) = (cell / criteria, cell % criteria);
                let kind = if round < 200 {
                    EventKind::Chunk(chunk.clone())
                } else {
                    let mut r = CriterionResult::failed(
                        &format!("c{c}"),
                        MethodKind::Judge,
                        Failure::error("x", "y"),
                    );
                    r.failure = None;
                    r.verdict = Some(Verdict::Met);
                    r.value = Some(1.0);
                    r.reason = "fine".into();
                    pending_verdict.get_or_insert_with(Instant::now);
                    EventKind::Scored(Box::new(r))
                };
                app.update(Msg::Grade {
                    tag: 1,
                    event: Box::new(GradeEvent {
                        run: 1,
                        item,
                        criterion: Some(c),
                        kind,
                    }),
                });
                if last_draw.elapsed() >= frame {
                    let t = Instant::now();
                    terminal.draw(|f| app.draw(f)).expect("draw");
                    let drawn = Instant::now();
                    worst_frame = worst_frame.max((drawn - t).as_secs_f64() * 1000.0);
                    if let Some(v) = pending_verdict.take() {
                        worst_lag = worst_lag.max((drawn - v).as_secs_f64() * 1000.0);
                    }
                    frames += 1;
                    last_draw = drawn;
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let events = cells * 201;
    println!(
        "Grade pane, {cells} cells × 200 chunks ({events} events) in {secs:.2} s ({:.0} events/s): {frames} frames ({:.0} fps, cap ~60), worst frame {worst_frame:.2} ms (floor 8 ms), worst verdict-to-screen {worst_lag:.1} ms (floor 50 ms), memory +{:.1} MiB",
        events as f64 / secs,
        frames as f64 / secs,
        (rss("VmRSS:") - before) / 1024.0
    );
}

fn main() {
    let lines = std::env::var("BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    println!("rubricate TUI benchmark");
    // The real binary first: it starts tmux before this process has grown.
    real_binary();
    frames(lines);
    first_frame_in_process();
    grade_stream(10_000);
}
