//! Ctrl-C, SIGTERM (`timeout`, `docker stop`, a cancelled CI job) and SIGHUP (a closed
//! terminal) all mean "stop": the first one cancels the run's [`Control`], so the trip to
//! the provider in flight is finished and written to the ledger before the command ends;
//! a second one ends the process at once (the ledger still knows where each batch was).

use crate::run::Control;

/// The exit code of a process ended by a second stop signal (as a shell reports SIGINT).
const STOPPED_AT_ONCE: i32 = 130;

/// Watches for stop signals on `runtime` for as long as it runs.
pub(crate) fn stop_on_signals(
    runtime: &tokio::runtime::Runtime,
    control: &Control,
    what: &'static str,
) {
    let control = control.clone();
    runtime.spawn(async move {
        if next_stop().await.is_err() {
            return;
        }
        eprintln!("stopping: {what} (press Ctrl-C again to stop at once)");
        control.cancel();
        if next_stop().await.is_ok() {
            std::process::exit(STOPPED_AT_ONCE);
        }
    });
}

/// The next Ctrl-C, SIGTERM or SIGHUP.
#[cfg(unix)]
async fn next_stop() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
        _ = hangup.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn next_stop() -> std::io::Result<()> {
    tokio::signal::ctrl_c().await
}
