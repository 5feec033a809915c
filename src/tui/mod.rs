//! The terminal UI (ARCHITECTURE.md "TUI"): the Elm-style loop. `App` holds the state and
//! changes only in `App::update` (the panes own theirs and draw it with what they share);
//! the runtime carries out effects on worker threads and answers over a bounded channel. It draws on stderr (stdout stays
//! pipeable), only when something changed and at most ~60 times a second; a panic hook and
//! every exit path restore the terminal; logs go to a file, never to the screen.
//!
//! No function here passes 120 lines (clippy's `too_many_lines`, its threshold in
//! clippy.toml): a pane's update or view that grows past it is split by what each part does
//! or draws. 120, not clippy's 100, because one match over a pane's actions or one view of
//! a whole panel reads better whole up to there.
#![warn(clippy::too_many_lines)]

pub mod app;
pub mod data;
pub mod effect;
mod error;
pub mod export;
pub mod keymap;
pub mod label_plan;
pub mod modal;
pub mod msg;
pub mod nav;
pub mod open_dataset;
pub mod pane;
pub mod panes;
pub mod path_prompt;
pub mod run_data;
mod run_details;
pub mod run_scan;
mod run_stats;
pub mod runtime;
pub mod shared;
pub mod svg;
pub mod theme;
pub mod ui_state;
pub mod view;
pub mod widgets;

use std::io::Stderr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
    EventStream,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use futures_util::StreamExt as _;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use app::{App, Msg};
use keymap::Keymap;
use runtime::{Dispatch, Runtime};

pub use error::TuiError;

use crate::formats::Diagnostics;
use crate::store::Workspace;

/// Frames are at least this far apart.
const FRAME: Duration = Duration::from_millis(16);

/// The app for a workspace: keymap (with the config's overrides), annotator, datasets.
pub fn build(ws: &Workspace) -> Result<App, TuiError> {
    let file = ws
        .config
        .path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let keymap = Keymap::load(ws.config.keymap.as_ref().map(|n| (file.as_str(), n)))
        .map_err(|errors| TuiError::Config(Diagnostics(errors)))?;
    let colors = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let theme = theme::Theme::load(ws.config.theme.as_ref().map(|n| (file.as_str(), n)), colors)
        .map_err(|errors| TuiError::Config(Diagnostics(errors)))?;
    let artifact_types: Vec<(String, Vec<String>)> = ws
        .config
        .artifact_types
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let remembered = ui_state::load(ws);
    let configured = ws
        .config
        .annotator
        .clone()
        .or_else(|| std::env::var("RUBRICATE_ANNOTATOR").ok())
        .or_else(|| remembered.annotator.clone())
        .filter(|a| crate::store::labels::check_name("annotator", a).is_ok());
    let annotator = configured
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|a| crate::store::labels::check_name("annotator", a).is_ok())
        .unwrap_or_else(|| "annotator".into());
    let mut app = App::new(
        ws.root.clone(),
        keymap,
        annotator,
        runtime::reads::datasets(ws),
    );
    app.shared_mut().theme = theme;
    app.shared_mut().artifact_types = artifact_types;
    if !ws.config.untrusted.is_empty() {
        // What to do first: the line is cut on a narrow terminal.
        app.shared_mut().message = Some(format!(
            "{} to honour what this untrusted rubricate.yaml asks: {}",
            ws.config.trust_hint,
            ws.config.untrusted.join(", ")
        ));
    }
    app.shared_mut().annotator_confirmed = configured.is_some();
    let mut rubrics: Vec<std::path::PathBuf> = std::fs::read_dir(ws.path("rubrics"))
        .map(|e| {
            e.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    rubrics.sort();
    app.shared_mut().rubric_files = rubrics;
    app.panes_mut()
        .grade
        .judge
        .clone_from(&ws.config.judge.model);
    app.panes_mut().grade.confirm_calls = ws
        .config
        .judge
        .confirm_calls
        .unwrap_or(crate::store::config::CONFIRM_CALLS);
    app.panes_mut().grade.confirm_cost = ws
        .config
        .judge
        .confirm_cost
        .unwrap_or(crate::store::config::CONFIRM_COST);
    app.panes_mut().grade.max_cost = ws.config.judge.max_cost;
    app.panes_mut().grade.workspace_max_cost = ws.config.judge.max_cost;
    app.restore(&remembered);
    Ok(app)
}

/// Restores the terminal when dropped (normal exit, error or unwinding panic).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// The UI's screen: raw mode is the caller's; then the alternate screen, the mouse, and
/// bracketed paste (a paste arrives as one `Event::Paste`, not as keys that would run
/// actions). `restore` undoes each.
fn enter_screen() -> Result<(), TuiError> {
    execute!(
        std::io::stderr(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )
    .map_err(TuiError::Terminal)
}

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stderr(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        DisableMouseCapture
    );
}

/// Logs go to `<state dir>/rubricate.log` (`RUBRICATE_LOG` sets the level).
fn start_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = crate::core::dirs::state_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let (writer, guard) =
        tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "rubricate.log"));
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUBRICATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
    Some(guard)
}

/// Runs the UI on a workspace until the user quits.
pub fn run(ws: Workspace) -> Result<(), TuiError> {
    let _log = start_logging();
    let mut app = build(&ws)?;
    app.shared_mut().first_start = !ui_state::path(&ws).exists();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(TuiError::Runtime)?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    enable_raw_mode().map_err(TuiError::Terminal)?;
    let _guard = TerminalGuard;
    enter_screen()?;
    let mut terminal =
        Terminal::new(CrosstermBackend::new(std::io::stderr())).map_err(TuiError::Terminal)?;
    let datasets = app.shared().datasets.clone();
    let annotator = app.shared().annotator.clone();
    let effects = Arc::new(Runtime::new(ws, datasets, annotator));
    tracing::info!("terminal UI started");
    let result = runtime.block_on(event_loop(app, &mut terminal, Arc::clone(&effects)));
    // Runs stop sending and estimates stop walking; whatever is still busy (a dataset
    // being indexed) is not waited for: the journals hold what was confirmed.
    effects.quit();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    let state = result?;
    if let Err(e) = ui_state::save(&effects.ws, &state) {
        tracing::warn!("the UI's state was not remembered: {e}");
    }
    Ok(())
}

async fn event_loop(
    mut app: App,
    terminal: &mut Terminal<CrosstermBackend<Stderr>>,
    runtime: Arc<Runtime>,
) -> Result<ui_state::UiState, TuiError> {
    let (tx, mut rx) = mpsc::channel::<Msg>(256);
    let out = Dispatch::start(&runtime, &tx);
    let mut events = EventStream::new();
    if let Ok(size) = terminal.size() {
        let effects = app.update(Msg::Resize(size.width, size.height));
        out.send(effects);
    }
    let effects = app.resume_effects();
    out.send(effects);
    let mut stops = Stops::new();
    // After a stop signal nothing is drawn (after SIGHUP there is no terminal to draw on).
    let mut stopping = false;
    let mut dirty = true;
    let mut last_draw = Instant::now()
        .checked_sub(FRAME)
        .unwrap_or_else(Instant::now);
    loop {
        // Draw when something changed, at most once per FRAME; messages arriving faster
        // are all applied before the next frame.
        if dirty && !stopping && last_draw.elapsed() >= FRAME {
            terminal.draw(|f| app.draw(f)).map_err(TuiError::Draw)?;
            last_draw = Instant::now();
            dirty = false;
        }
        let next_frame = tokio::time::Instant::from_std(last_draw + FRAME);
        let msg = tokio::select! {
            ev = events.next() => match ev {
                Some(Ok(Event::Key(k))) => Msg::Key(k),
                Some(Ok(Event::Mouse(m))) => Msg::Mouse(m),
                Some(Ok(Event::Resize(w, h))) => Msg::Resize(w, h),
                Some(Ok(Event::Paste(text))) => Msg::Paste(text),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(TuiError::Input(e)),
                None => return Ok(app.ui_state()),
            },
            Some(m) = rx.recv() => m,
            () = stops.next() => {
                tracing::info!("quit: a stop signal");
                stopping = true;
                Msg::Stop
            }
            () = tokio::time::sleep_until(next_frame), if dirty && !stopping => continue,
        };
        // A tick's effects are run too: `update` asks for what the screen needs after
        // every message (a plan, a run's reasons), and marks it asked for.
        let mut effects = app.update(Msg::Tick(Instant::now()));
        effects.extend(app.update(msg));
        run_effects(&mut app, terminal, &out, effects)?;
        while let Ok(m) = rx.try_recv() {
            let effects = app.update(m);
            run_effects(&mut app, terminal, &out, effects)?;
        }
        dirty = true;
        if app.quit() {
            tracing::info!("quit");
            return Ok(app.ui_state());
        }
    }
}

/// SIGTERM (`kill`, a closing session manager) and SIGHUP (the terminal closed): the UI
/// quits as `q` does, after every queued write is on disk. A terminal can also close
/// unseen (SIGHUP blocked or ignored by whatever started the UI): the terminal reader then
/// wakes forever on a dead device, so the controlling terminal is looked for every second,
/// and its going away is a stop too.
struct Stops {
    #[cfg(unix)]
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
    /// Whether there was a controlling terminal to watch when the UI started.
    #[cfg(unix)]
    watch_tty: bool,
    /// When it is looked for next (kept across calls: a busy loop still looks).
    #[cfg(unix)]
    next_look: tokio::time::Instant,
}

/// How often the controlling terminal is looked for.
#[cfg(unix)]
const TTY_WATCH: Duration = Duration::from_secs(1);

impl Stops {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                signals: signal(SignalKind::terminate())
                    .and_then(|t| Ok((t, signal(SignalKind::hangup())?)))
                    .ok(),
                watch_tty: tty_present(),
                next_look: tokio::time::Instant::now() + TTY_WATCH,
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next stop (never, where none can be watched).
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            let watch = self.watch_tty;
            let next_look = &mut self.next_look;
            let tty_gone = async {
                if !watch {
                    return std::future::pending::<()>().await;
                }
                loop {
                    tokio::time::sleep_until(*next_look).await;
                    *next_look = tokio::time::Instant::now() + TTY_WATCH;
                    if !tty_present() {
                        tracing::info!("the terminal is gone");
                        return;
                    }
                }
            };
            if let Some((term, hangup)) = &mut self.signals {
                tokio::select! {
                    _ = term.recv() => return,
                    _ = hangup.recv() => return,
                    () = tty_gone => return,
                }
            }
            tty_gone.await;
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await;
    }
}

/// Whether the process still has a controlling terminal (after a hang-up, opening
/// `/dev/tty` fails: "no such device").
#[cfg(unix)]
fn tty_present() -> bool {
    std::fs::File::open("/dev/tty").is_ok()
}

/// Carries out effects in this thread, feeding their answers back until none are left:
/// the loop without a terminal, for tests and benchmarks.
pub fn settle(app: &mut App, runtime: &Runtime, mut effects: Vec<app::Effect>) {
    while !effects.is_empty() {
        let mut next = Vec::new();
        for effect in effects {
            runtime.note(&effect);
            if let Some(msg) = runtime.handle(effect) {
                next.extend(app.update(msg));
            }
        }
        effects = next;
    }
}

/// The app drawn off screen at `width` × `height`: what a terminal that size would show.
pub fn frame(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let Ok(mut terminal) = Terminal::new(backend);
    let _ = terminal.draw(|f| app.draw(f));
    terminal.backend().buffer().clone()
}

/// Draws the app into a text grid `width` × `height` (tests and benchmarks).
pub fn render_text(app: &App, width: u16, height: u16) -> String {
    let buffer = frame(app, width, height);
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Dispatches effects; editing a rubric hands the terminal to `$EDITOR` here (it needs
/// the terminal), then the draft is read back and linted.
fn run_effects(
    app: &mut App,
    terminal: &mut Terminal<CrosstermBackend<Stderr>>,
    out: &Dispatch,
    effects: Vec<app::Effect>,
) -> Result<(), TuiError> {
    let runtime = out.runtime();
    let mut rest = Vec::new();
    for effect in effects {
        let (file, then) = match effect {
            app::Effect::EditRubric { path } => match runtime.rubric_draft(&path) {
                Ok(draft) => (
                    draft.clone(),
                    app::Effect::LoadRubric {
                        path,
                        draft: Some(draft),
                    },
                ),
                Err(e) => {
                    app.shared_mut().message = Some(e.to_string());
                    continue;
                }
            },
            app::Effect::EditArtifact { id } => match runtime.artifact_draft(&id) {
                Ok(file) => (file.clone(), app::Effect::ReviseArtifact { id, file }),
                Err(e) => {
                    app.shared_mut().message = Some(e.to_string());
                    continue;
                }
            },
            other => {
                rest.push(other);
                continue;
            }
        };
        if let Err(e) = edit_in_editor(terminal, &file)? {
            app.shared_mut().message = Some(e);
        }
        rest.push(then);
    }
    out.send(rest);
    Ok(())
}

/// Hands the terminal to `$VISUAL` / `$EDITOR` (else `vi`) on `file` and takes it back.
/// The outer error is the terminal's (fatal); the inner one says the editor did not start.
fn edit_in_editor(
    terminal: &mut Terminal<CrosstermBackend<Stderr>>,
    file: &std::path::Path,
) -> Result<Result<(), String>, TuiError> {
    restore();
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    // Through the shell, so EDITOR may carry arguments ("code --wait").
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file)
        .status();
    enable_raw_mode().map_err(TuiError::Terminal)?;
    enter_screen()?;
    terminal.clear().map_err(TuiError::Draw)?;
    Ok(status
        .map(|_| ())
        .map_err(|e| format!("could not start the editor `{editor}`: {e}")))
}
