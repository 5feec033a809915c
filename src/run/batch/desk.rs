//! Where a batch run's judge calls go during one pass over the dataset: a call the
//! provider's batch already answered gets that answer (exactly as a live call would have
//! had it: the client reads it, retries what it would retry, caches what it accepts); a
//! call in a batch still in flight waits ([`LlmError::Batched`]: the cell is left for a
//! later pass); any other call is written to a new batch's requests file (or, with
//! `live`, sent now).
//!
//! A request's id is its cache key (endpoint and request) and its attempt: the client's
//! retry of a failed answer is the next attempt, sent in a later batch.
//!
//! Answers stay on disk: the desk keeps where each one's line is (some 50 bytes a
//! request, not the reply) and reads a line when its call comes.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::llm::batch::{Answer, BatchApi, Limits};
use crate::llm::{BoxFuture, Cache, ChatRequest, ChatResponse, LlmError, OnPiece, Provider};
use crate::store::runs::{BatchRecord, RunDir};

/// Hex characters of the cache key in a request's id (ids are at most 64 characters).
const ID_HEX: usize = 48;

/// A request id as the desk keys it: the first 128 bits of its cache key, and its attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Rid {
    key: u128,
    attempt: u32,
}

impl Rid {
    /// `<48 hex>-<attempt>` (what [`BatchProvider`] writes); `None` for anything else.
    fn parse(id: &str) -> Option<Self> {
        let (base, attempt) = id.rsplit_once('-')?;
        Some(Self {
            key: u128::from_str_radix(base.get(..32)?, 16).ok()?,
            attempt: attempt.parse().ok()?,
        })
    }
}

/// Where an answer's line is: which results file, from where, how long.
#[derive(Debug, Clone, Copy)]
struct Line {
    file: u32,
    offset: u64,
    len: u32,
}

/// One pass's view of the run's batches.
pub struct Desk {
    /// Where every answer downloaded so far is, by request id.
    answers: HashMap<Rid, Line>,
    /// The downloaded batches' results files, open.
    files: Vec<std::fs::File>,
    /// Requests in batches not yet downloaded.
    in_flight: HashSet<Rid>,
    /// Answers handed out this pass, by request (the next call for it is its next attempt).
    served: Mutex<HashMap<u128, u32>>,
    /// Calls that no batch holds go out live instead of into a new batch.
    live: bool,
    collector: Mutex<Collector>,
    /// Calls this pass answered from downloaded results, and sent live.
    from_batches: std::sync::atomic::AtomicU64,
    sent_live: std::sync::atomic::AtomicU64,
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
        let mut files = Vec::new();
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
                in_flight.extend(text.lines().filter_map(Rid::parse));
            } else {
                let path = run.batch_results(&b.name);
                let file = u32::try_from(files.len()).unwrap_or(u32::MAX);
                super::results::read(&path, &mut |id, _, offset, len| {
                    if let Some(rid) = Rid::parse(id) {
                        let len = u32::try_from(len).unwrap_or(u32::MAX);
                        answers.insert(rid, Line { file, offset, len });
                    }
                })?;
                files.push(
                    std::fs::File::open(&path).map_err(|e| {
                        super::super::Error::input(format!("{}: {e}", path.display()))
                    })?,
                );
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
            files,
            in_flight,
            served: Mutex::default(),
            from_batches: std::sync::atomic::AtomicU64::new(0),
            sent_live: std::sync::atomic::AtomicU64::new(0),
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

    /// Calls no batch holds go out live in this pass.
    pub fn live(&self) -> bool {
        self.live
    }

    /// Requests written to new batches this pass.
    /// Calls this pass answered from downloaded results.
    pub fn from_batches(&self) -> u64 {
        self.from_batches.load(Ordering::Relaxed)
    }

    /// Calls this pass sent live (`--live`).
    pub fn sent_live(&self) -> u64 {
        self.sent_live.load(Ordering::Relaxed)
    }

    pub fn collected(&self) -> usize {
        self.collector.lock().map_or(0, |c| c.collected.len())
    }

    /// What to do with one call.
    fn route(&self, base: &str) -> Route {
        let Some(key) = base
            .get(..32)
            .and_then(|h| u128::from_str_radix(h, 16).ok())
        else {
            return Route::Wait;
        };
        let rid = {
            let Ok(mut served) = self.served.lock() else {
                return Route::Wait;
            };
            let attempt = served.get(&key).copied().unwrap_or(0);
            let rid = Rid { key, attempt };
            if self.answers.contains_key(&rid) {
                served.insert(key, attempt + 1);
            }
            rid
        };
        // Read outside the lock: calls of other requests read their answers meanwhile.
        if let Some(line) = self.answers.get(&rid) {
            self.from_batches.fetch_add(1, Ordering::Relaxed);
            return Route::Answer(self.read(*line));
        }
        if self.in_flight.contains(&rid) {
            return Route::Wait;
        }
        if self.live {
            self.sent_live.fetch_add(1, Ordering::Relaxed);
            return Route::Live;
        }
        Route::Collect(format!("{base}-{}", rid.attempt), rid)
    }

    /// An answer's line, read again from its results file. One that cannot be read leaves
    /// its cell ungraded (never a failed verdict) and fails the step, saying why.
    fn read(&self, line: Line) -> Answer {
        let unreadable = |why: String| {
            if let Ok(mut c) = self.collector.lock() {
                c.error.get_or_insert(format!(
                    "a downloaded batch answer could not be read again ({why}); `rubricate runs resume` goes on from here"
                ));
            }
            Err(LlmError::Batched)
        };
        let Some(file) = usize::try_from(line.file)
            .ok()
            .and_then(|f| self.files.get(f))
        else {
            return unreadable("its file is gone".into());
        };
        let mut buf = vec![0u8; line.len as usize];
        if let Err(e) = file.read_exact_at(&mut buf, line.offset) {
            return unreadable(e.to_string());
        }
        match super::results::parse_line(&buf) {
            Some((_, answer)) => answer,
            None => unreadable("the line changed".into()),
        }
    }
}

enum Route {
    Answer(Answer),
    Wait,
    Live,
    Collect(String, Rid),
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
    collected: HashSet<Rid>,
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
    fn add(&mut self, model: &str, api: &BatchApi, id: &str, rid: Rid, req: &ChatRequest) {
        if self.error.is_some() || !self.collected.insert(rid) {
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
            Route::Collect(id, rid) => {
                if let Ok(mut c) = self.desk.collector.lock() {
                    c.add(&self.model, &self.api, &id, rid, req);
                }
                Box::pin(std::future::ready(Err(LlmError::Batched)))
            }
        }
    }
}
