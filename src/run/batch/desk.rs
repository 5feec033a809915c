//! Where a batch run's judge calls go during one pass over the dataset: a call the
//! provider's batch already answered gets that answer (exactly as a live call would have
//! had it: the client reads it, retries what it would retry, caches what it accepts); a
//! call in a batch still in flight waits ([`LlmError::Batched`]: the cell is left for a
//! later pass); any other call is written to a new batch's requests file (or, with
//! `live`, sent now).
//!
//! A request's id is its cache key (endpoint and request) and its attempt: the client's
//! retry of a failed answer is the next attempt, sent in a later batch.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::llm::batch::{Answer, BatchApi, Limits};
use crate::llm::{BoxFuture, Cache, ChatRequest, ChatResponse, LlmError, OnPiece, Provider};
use crate::store::runs::{BatchRecord, RunDir};

/// Hex characters of the cache key in a request's id (ids are at most 64 characters).
const ID_HEX: usize = 48;

/// One pass's view of the run's batches.
pub struct Desk {
    /// Every answer downloaded so far, by request id.
    answers: HashMap<String, Answer>,
    /// Requests in batches not yet downloaded.
    in_flight: HashSet<String>,
    /// Answers handed out this pass, by request (the next call for it is its next attempt).
    served: Mutex<HashMap<String, u32>>,
    /// Calls that no batch holds go out live instead of into a new batch.
    live: bool,
    collector: Mutex<Collector>,
}

impl Desk {
    /// The answers of the run's downloaded batches and the ids of those in flight.
    pub fn load(
        run: &RunDir,
        ledger: &[BatchRecord],
        live: bool,
        limits: Option<Limits>,
    ) -> Result<Self, super::super::Error> {
        let mut answers = HashMap::new();
        let mut in_flight = HashSet::new();
        for b in ledger {
            if b.in_flight() {
                let path = run.batch_ids(&b.name);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    super::super::Error::input(format!(
                        "{}: cannot read the ids of batch {} ({e}); the run cannot go on without them",
                        path.display(),
                        b.name
                    ))
                })?;
                in_flight.extend(text.lines().map(str::to_owned));
            } else {
                super::results::read(&run.batch_results(&b.name), &mut |id, answer| {
                    answers.insert(id.to_owned(), answer);
                })?;
            }
        }
        let next = ledger
            .iter()
            .filter_map(|b| b.name.strip_prefix('b')?.parse::<u32>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        Ok(Self {
            answers,
            in_flight,
            served: Mutex::default(),
            live,
            collector: Mutex::new(Collector {
                dir: run.batches_dir(),
                run: run.clone(),
                next,
                limits,
                open: HashMap::new(),
                done: Vec::new(),
                collected: HashSet::new(),
                error: None,
            }),
        })
    }

    /// The batches written this pass (closed and synced), and the first error writing them.
    pub fn finish(&self) -> Result<Vec<BatchRecord>, String> {
        let mut c = self
            .collector
            .lock()
            .map_err(|_| "the batch writer was lost".to_owned())?;
        let open: Vec<String> = c.open.keys().cloned().collect();
        for model in open {
            c.close(&model);
        }
        if let Some(e) = c.error.take() {
            return Err(e);
        }
        Ok(std::mem::take(&mut c.done))
    }

    /// Requests written to new batches this pass.
    pub fn collected(&self) -> usize {
        self.collector.lock().map_or(0, |c| c.collected.len())
    }

    /// What to do with one call.
    fn route(&self, base: &str) -> Route {
        let Ok(mut served) = self.served.lock() else {
            return Route::Wait;
        };
        let attempt = served.get(base).copied().unwrap_or(0);
        let id = format!("{base}-{attempt}");
        if let Some(answer) = self.answers.get(&id) {
            served.insert(base.to_owned(), attempt + 1);
            return Route::Answer(answer.clone());
        }
        if self.in_flight.contains(&id) {
            return Route::Wait;
        }
        if self.live {
            return Route::Live;
        }
        Route::Collect(id)
    }
}

enum Route {
    Answer(Answer),
    Wait,
    Live,
    Collect(String),
}

/// New batches' requests files, one open per judge model, each closed at the provider's
/// limits (or the configured ones).
struct Collector {
    dir: PathBuf,
    run: RunDir,
    next: u32,
    limits: Option<Limits>,
    open: HashMap<String, Open>,
    done: Vec<BatchRecord>,
    /// Ids written this pass (an identical call later in the pass waits for the same one).
    collected: HashSet<String>,
    error: Option<String>,
}

struct Open {
    name: String,
    requests: std::io::BufWriter<std::fs::File>,
    ids: std::io::BufWriter<std::fs::File>,
    count: usize,
    bytes: u64,
    limits: Limits,
}

impl Collector {
    fn add(&mut self, model: &str, api: &BatchApi, id: &str, req: &ChatRequest) {
        if self.error.is_some() || !self.collected.insert(id.to_owned()) {
            return;
        }
        let line = api.line(id, req);
        let len = line.len() as u64 + 1;
        let full = self.open.get(model).is_some_and(|o| {
            o.count >= o.limits.requests || (o.count > 0 && o.bytes + len > o.limits.bytes)
        });
        if full {
            self.close(model);
        }
        if !self.open.contains_key(model) {
            match self.start(api) {
                Ok(o) => {
                    self.open.insert(model.to_owned(), o);
                }
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
        let Some(o) = self.open.get_mut(model) else {
            return;
        };
        let written = writeln!(o.requests, "{line}").and_then(|()| writeln!(o.ids, "{id}"));
        match written {
            Ok(()) => {
                o.count += 1;
                o.bytes += len;
            }
            Err(e) => self.error = Some(format!("cannot write batch {}'s requests: {e}", o.name)),
        }
    }

    fn start(&mut self, api: &BatchApi) -> Result<Open, String> {
        let name = format!("b{:04}", self.next);
        self.next += 1;
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            format!(
                "{}: cannot make the batches folder: {e}",
                self.dir.display()
            )
        })?;
        let create = |p: &Path| {
            std::fs::File::create(p)
                .map(|f| std::io::BufWriter::with_capacity(256 * 1024, f))
                .map_err(|e| format!("{}: cannot write a batch's requests: {e}", p.display()))
        };
        let provider = api.limits();
        let limits = self.limits.map_or(provider, |l| Limits {
            requests: l.requests.clamp(1, provider.requests),
            bytes: l.bytes.clamp(1, provider.bytes),
        });
        Ok(Open {
            requests: create(&self.run.batch_requests(&name))?,
            ids: create(&self.run.batch_ids(&name))?,
            name,
            count: 0,
            bytes: 0,
            limits,
        })
    }

    /// Flushes and syncs a model's open batch and lists it as done.
    fn close(&mut self, model: &str) {
        let Some(o) = self.open.remove(model) else {
            return;
        };
        let synced = |w: std::io::BufWriter<std::fs::File>| -> std::io::Result<()> {
            let f = w
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            f.sync_all()
        };
        if let Err(e) = synced(o.requests).and_then(|()| synced(o.ids)) {
            self.error
                .get_or_insert(format!("cannot write batch {}'s requests: {e}", o.name));
            return;
        }
        self.done
            .push(BatchRecord::new(o.name, model.to_owned(), o.count, o.bytes));
    }
}

/// A judge's provider during a batch run's pass (see the module's comment).
#[derive(Debug)]
pub struct BatchProvider {
    desk: Arc<Desk>,
    /// The judge model as the run names it.
    model: String,
    /// The client's endpoint (the cache key's first part).
    endpoint: String,
    api: BatchApi,
    live: Arc<dyn Provider>,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desk")
            .field("answers", &self.answers.len())
            .field("in_flight", &self.in_flight.len())
            .finish_non_exhaustive()
    }
}

impl BatchProvider {
    pub fn new(
        desk: Arc<Desk>,
        model: &str,
        endpoint: &str,
        api: BatchApi,
        live: Arc<dyn Provider>,
    ) -> Self {
        Self {
            desk,
            model: model.to_owned(),
            endpoint: endpoint.to_owned(),
            api,
            live,
        }
    }
}

impl Provider for BatchProvider {
    fn name(&self) -> &str {
        self.live.name()
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
        on_piece: Option<OnPiece<'a>>,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        let key = Cache::key(&self.endpoint, req);
        let base = &key[..ID_HEX.min(key.len())];
        match self.desk.route(base) {
            Route::Answer(answer) => Box::pin(std::future::ready(answer)),
            Route::Wait => Box::pin(std::future::ready(Err(LlmError::Batched))),
            Route::Live => self.live.complete(req, on_piece),
            Route::Collect(id) => {
                if let Ok(mut c) = self.desk.collector.lock() {
                    c.add(&self.model, &self.api, &id, req);
                }
                Box::pin(std::future::ready(Err(LlmError::Batched)))
            }
        }
    }
}
