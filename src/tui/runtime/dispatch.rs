//! The threads effects run on: a write to a file people own goes to the one ordered writer
//! (one at a time, in the order they were made; the answers go back in that order), and
//! everything else to a blocking worker of its own.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Runtime;
use crate::tui::effect::Effect;
use crate::tui::msg::Msg;

/// Where the event loop sends effects.
pub struct Dispatch {
    runtime: Arc<Runtime>,
    ui: mpsc::Sender<Msg>,
    writes: mpsc::UnboundedSender<Effect>,
}

impl Dispatch {
    /// Answers go to `ui` (runs send their events there too); starts the ordered writer on
    /// the current tokio runtime.
    pub fn start(runtime: &Arc<Runtime>, ui: &mpsc::Sender<Msg>) -> Self {
        if let Ok(mut slot) = runtime.tx.lock() {
            *slot = Some(ui.clone());
        }
        Self {
            runtime: Arc::clone(runtime),
            ui: ui.clone(),
            writes: ordered_writer(runtime, ui),
        }
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn send(&self, effects: Vec<Effect>) {
        for effect in effects {
            self.runtime.note(&effect);
            if effect.writes_in_order() {
                let _ = self.writes.send(effect);
                continue;
            }
            let runtime = Arc::clone(&self.runtime);
            let tx = self.ui.clone();
            tokio::task::spawn_blocking(move || {
                if let Some(msg) = runtime.handle(effect) {
                    let _ = tx.blocking_send(msg);
                }
            });
        }
    }
}

/// The one writer of a user's files: effects are carried out one after another, in the
/// order they were made, each on a blocking worker; the answers go back to the UI in the
/// same order.
fn ordered_writer(runtime: &Arc<Runtime>, ui: &mpsc::Sender<Msg>) -> mpsc::UnboundedSender<Effect> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Effect>();
    let runtime = Arc::clone(runtime);
    let ui = ui.clone();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while let Ok(more) = rx.try_recv() {
                batch.push(more);
            }
            for effect in superseded_drafts_dropped(batch) {
                let runtime = Arc::clone(&runtime);
                let answer = tokio::task::spawn_blocking(move || runtime.handle(effect)).await;
                if let Ok(Some(msg)) = answer
                    && ui.send(msg).await.is_err()
                {
                    return;
                }
            }
        }
    });
    tx
}

/// A draft write followed in the same batch by another write of the same draft is left
/// out: the later one holds every edit (each edit starts from the last), so rapid edits
/// cost one write and one lint, not one each.
fn superseded_drafts_dropped(batch: Vec<Effect>) -> Vec<Effect> {
    let later_write = |i: usize, path: &std::path::Path| {
        batch[i + 1..]
            .iter()
            .any(|e| matches!(e, Effect::WriteDraft { path: p, .. } if p == path))
    };
    let keep: Vec<bool> = batch
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            Effect::WriteDraft { path, .. } => !later_write(i, path),
            _ => true,
        })
        .collect();
    batch
        .into_iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect()
}
