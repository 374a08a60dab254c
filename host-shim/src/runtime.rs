//! The runtime: apps, classes, actors with one mailbox each, and the public API
//! that the dev server, the test harnesses and the conformance runner all use.

use crate::address::ActorKey;
use crate::alarm_index::{AlarmIndex, MemoryAlarmIndex, SqliteAlarmIndex};
use crate::bindings::ActorPre;
use crate::clock::{Clock, SystemClock, VirtualClock};
use crate::component_cache::{CacheOutcome, ComponentCache};
use crate::faults::Faults;
use crate::host_impl::HostState;
use crate::http_types::{HttpRequest, HttpResponse, Outbound, SocketMessage};
use crate::job::{self, CallFailure, EventKind, Job};
use crate::manifest::{Access, ClassSpec, Manifest};
use crate::metrics::Metrics;
use crate::sql_types::QueryResult;
use crate::state_store::{LocalStateStore, StateStore};
use crate::storage::ActorStorage;
use crate::storage::cluster_node::ClusterStorage;
use crate::storage::single_node::SingleNodeStorage;
use crate::worker;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::time::Duration;
use tokio::sync::{mpsc as tmpsc, oneshot};
use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where actors' databases and the host's own files go.
    pub data_dir: PathBuf,
    /// Where compiled components are cached (shared between data dirs).
    pub cache_dir: PathBuf,
    /// Use a virtual clock that only tests move (alarms then run when told).
    pub virtual_clock: bool,
    /// Keep the alarm index in memory instead of `<data-dir>/host/alarms.db`.
    pub memory_alarm_index: bool,
    /// How long one event may run before it is interrupted.
    pub event_timeout: Duration,
    /// Linear memory an actor instance may grow to.
    pub memory_limit_bytes: usize,
    /// How long an actor stays resident with no event before it hibernates.
    pub idle_timeout: Duration,
}

impl RuntimeConfig {
    /// Defaults for a data directory: real clock, 5 s events, 256 MiB memory,
    /// 30 s idle, cache in `$WASMKEEP_CACHE_DIR` or `<data-dir>/cache`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        let cache_dir = std::env::var_os("WASMKEEP_CACHE_DIR").map_or_else(|| data_dir.join("cache"), PathBuf::from);
        Self {
            data_dir,
            cache_dir,
            virtual_clock: false,
            memory_alarm_index: false,
            event_timeout: Duration::from_secs(5),
            memory_limit_bytes: 256 << 20,
            idle_timeout: Duration::from_secs(30),
        }
    }

    /// For tests: virtual clock, in-memory alarm index.
    pub fn for_tests(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            virtual_clock: true,
            memory_alarm_index: true,
            ..Self::new(data_dir)
        }
    }
}

/// Errors of the runtime's API.
#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    /// The app is not loaded.
    #[error("no app {0:?} is loaded")]
    NoSuchApp(String),
    /// The class is not in the app.
    #[error("app {app} has no class {class:?} (classes: {known})")]
    NoSuchClass {
        /// The app.
        app: String,
        /// The class asked for.
        class: String,
        /// The classes it has.
        known: String,
    },
    /// The class is `existing` and the actor does not exist.
    #[error("no such actor: {0} (its class is `existing`: only calls from the app create actors)")]
    NoSuchActor(ActorKey),
    /// The class is `internal`.
    #[error("class {0} is internal: it takes calls from the app's actors only")]
    Internal(String),
    /// A manifest problem.
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    /// A component could not be read, compiled or linked.
    #[error("component {path}: {message}")]
    Component {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The operation needs the virtual clock.
    #[error(
        "the clock is real: start with a virtual clock (`serve --virtual-clock`, or RuntimeConfig::for_tests) to move it"
    )]
    RealClock,
    /// No such socket.
    #[error("socket {0} is not open")]
    NoSuchSocket(u64),
    /// The event did not complete.
    #[error("{0}")]
    Event(String),
    /// The host failed.
    #[error("host failure: {0}")]
    Host(String),
}

/// A class of a loaded app.
pub(crate) struct Class {
    pub(crate) pre: ActorPre<HostState>,
    pub(crate) access: Access,
}

/// A loaded app.
pub(crate) struct App {
    pub(crate) classes: HashMap<String, Arc<Class>>,
}

/// Where an actor stands, as the admin API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActorStatus {
    /// In memory, with its database open.
    Resident,
    /// Only its files: the next event wakes it.
    Hibernated,
    /// Deleted by its last event; the next event creates a new, empty actor.
    Deleted,
}

/// An actor and its state, for listings.
#[derive(Debug, Clone, Serialize)]
pub struct ActorInfo {
    /// The actor.
    #[serde(flatten)]
    pub key: ActorKey,
    /// Its state.
    pub status: ActorStatus,
    /// Its pending alarm, per the host's index (ms).
    pub alarm: Option<u64>,
}

pub(crate) struct SlotInner {
    pub(crate) sender: Option<mpsc::Sender<Job>>,
    pub(crate) status: ActorStatus,
    /// Moves on at each delete: socket events queued before it are dropped.
    pub(crate) generation: u64,
}

/// One actor's mailbox and status.
pub(crate) struct Slot {
    pub(crate) key: ActorKey,
    pub(crate) inner: Mutex<SlotInner>,
}

impl Slot {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, SlotInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Every open socket, by id. Shared by the nodes of a cluster, so that the
/// node holding an actor reaches sockets another node accepted.
#[derive(Default)]
pub struct SocketTable {
    map: Mutex<HashMap<u64, SocketEntry>>,
    next: AtomicU64,
}

impl SocketTable {
    /// A new id, never reused by this table.
    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::SeqCst) + 1
    }
}

struct SocketEntry {
    key: ActorKey,
    out: tmpsc::UnboundedSender<Outbound>,
}

/// A log line an actor wrote.
#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    /// When, on the host's clock (ms since the epoch; virtual under tests).
    pub at: u64,
    /// The actor.
    pub actor: String,
    /// debug, info, warn, error.
    pub level: &'static str,
    /// The text.
    pub message: String,
}

/// State shared by the runtime and every actor's worker.
pub struct Shared {
    /// This node itself, for the cluster directory's mailbox deliveries.
    me: std::sync::Weak<Shared>,
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<HostState>,
    pub(crate) config: RuntimeConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) faults: Arc<Faults>,
    pub(crate) metrics: Arc<Metrics>,
    /// Where actors' durable state lives: one node's files or a cluster's bucket.
    pub(crate) storage: Arc<dyn ActorStorage>,
    pub(crate) alarms: Arc<dyn AlarmIndex>,
    pub(crate) apps: RwLock<HashMap<String, Arc<App>>>,
    pub(crate) actors: Mutex<HashMap<ActorKey, Arc<Slot>>>,
    sockets: Arc<SocketTable>,
    cache: ComponentCache,
    timer_wake: Mutex<Option<mpsc::Sender<()>>>,
    logs: Mutex<std::collections::VecDeque<LogLine>>,
    /// Set in cluster mode: the cluster and this node's place in it.
    pub(crate) cluster: Option<crate::cluster::ClusterNode>,
    /// Operator delete requests queued here and not finished (bucket keys).
    operator_in_flight: Mutex<std::collections::HashSet<String>>,
    /// `expire-after-idle` by (app, class), in ms.
    idle_limits: Mutex<HashMap<(String, String), u64>>,
    /// Set once an ordered shutdown began: no new guest code runs.
    stopping: std::sync::atomic::AtomicBool,
    /// Apps this node stopped serving (their tombstone was seen).
    stopped_apps: RwLock<std::collections::HashSet<String>>,
    /// Whether `stopped_apps` has any entry: keeps the lock off every event's path.
    any_app_stopped: std::sync::atomic::AtomicBool,
    /// Bumped whenever something stops (the host or an app): waiters look again.
    stop_gen: tokio::sync::watch::Sender<u64>,
    /// Idle expiry: ownership record versions found changed or held, not tried
    /// again at that version (long-resident actors would take every pass's budget).
    expiry_skipped: Mutex<std::collections::HashSet<(String, crate::bucket::ETag)>>,
}

/// What one idle expiry pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpiryPass {
    /// Released records older than their class's limit.
    pub candidates: usize,
    /// Actors deleted.
    pub expired: usize,
}

/// How often the collecting node runs an idle expiry pass (the host's clock).
pub const EXPIRY_PASS_EVERY_MS: u64 = 600_000;
/// At most this many expiries per pass ...
pub const EXPIRIES_PER_PASS: usize = 100;
/// ... and this many at a time.
pub const EXPIRIES_AT_ONCE: usize = 4;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The local host. Cheap to clone; every clone is the same host.
#[derive(Clone)]
pub struct Runtime {
    shared: Arc<Shared>,
}

/// An answer on its way: wait for it blocking or with `.await`. Once an
/// ordered shutdown begins, an event still queued is answered 503 at once.
pub struct PendingResponse {
    rx: oneshot::Receiver<HttpResponse>,
    ticket: job::Ticket,
    shared: Arc<Shared>,
    app: String,
}

impl std::fmt::Debug for PendingResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingResponse")
            .field("app", &self.app)
            .finish_non_exhaustive()
    }
}

impl PendingResponse {
    /// Blocks until the actor answers (or the host answers for it).
    pub fn wait(self) -> HttpResponse {
        crate::block_on::block_on(self.recv())
    }

    /// Waits asynchronously.
    pub async fn recv(self) -> HttpResponse {
        let Self {
            mut rx,
            ticket,
            shared,
            app,
        } = self;
        let ended = |r: Result<HttpResponse, _>| {
            r.unwrap_or_else(|_| HttpResponse::host_text(500, "the event ended without an answer"))
        };
        let mut stops = shared.stop_gen.subscribe();
        loop {
            if shared.halted(&app) {
                break;
            }
            tokio::select! {
                biased;
                r = &mut rx => return ended(r),
                changed = stops.changed() => if changed.is_err() { return ended(rx.await) },
            }
        }
        if job::take_ticket(&ticket, job::ABANDONED) {
            return HttpResponse::host_text(503, job::SHUTTING_DOWN);
        }
        // It is running: it finishes, and its answer comes.
        ended(rx.await)
    }
}

/// What an ordered shutdown did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shutdown {
    /// WebSockets closed with 1001 "going away".
    pub sockets_closed: usize,
    /// Actors released (their instances dropped, databases closed, holds let go).
    pub actors_released: usize,
}

/// A socket opened through the library: the id and what the actor sends to it.
#[derive(Debug)]
pub struct SocketHandle {
    /// The socket's id, as the actor sees it.
    pub id: u64,
    /// Messages and the close the actor (or the host) sends.
    pub outbound: tmpsc::UnboundedReceiver<Outbound>,
}

impl crate::cluster::NodeMailboxes for Shared {
    fn deliver(&self, key: &ActorKey, job: Job) {
        if let Some(me) = self.me.upgrade() {
            me.enqueue(key, job);
        }
    }
}

impl Shared {
    /// The mailboxes of another live node of this node's cluster.
    pub(crate) fn node_mailboxes(&self, node: &str) -> Option<Arc<dyn crate::cluster::NodeMailboxes>> {
        self.cluster.as_ref().and_then(|c| c.cluster.node(node))
    }

    pub(crate) fn wake_timer(&self) {
        if let Some(tx) = lock(&self.timer_wake).as_ref() {
            let _ = tx.send(());
        }
    }

    pub(crate) fn record_log(&self, key: &ActorKey, level: &'static str, message: &str) {
        let mut logs = lock(&self.logs);
        if logs.len() >= 1000 {
            logs.pop_front();
        }
        logs.push_back(LogLine {
            at: self.clock.now_ms(),
            actor: key.to_string(),
            level,
            message: message.to_owned(),
        });
    }

    pub(crate) fn class(&self, key: &ActorKey) -> Result<Arc<Class>, ShimError> {
        let apps = self.apps.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let app = apps
            .get(&key.app)
            .ok_or_else(|| ShimError::NoSuchApp(key.app.clone()))?;
        app.classes.get(&key.class).cloned().ok_or_else(|| {
            let mut known: Vec<&str> = app.classes.keys().map(String::as_str).collect();
            known.sort_unstable();
            ShimError::NoSuchClass {
                app: key.app.clone(),
                class: key.class.clone(),
                known: known.join(", "),
            }
        })
    }

    fn slot(&self, key: &ActorKey) -> Arc<Slot> {
        lock(&self.actors)
            .entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Slot {
                    key: key.clone(),
                    inner: Mutex::new(SlotInner {
                        sender: None,
                        status: ActorStatus::Hibernated,
                        generation: 0,
                    }),
                })
            })
            .clone()
    }

    /// Whether an ordered shutdown began.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether no guest code of `app` runs here any more (the host stopping,
    /// or the app deleted).
    pub(crate) fn halted(&self, app: &str) -> bool {
        self.is_stopping()
            || self.any_app_stopped.load(std::sync::atomic::Ordering::Acquire)
                && self
                    .stopped_apps
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .contains(app)
    }

    /// Cluster: stops serving `app` here because its tombstone was seen
    /// (ADR 0028 §5): no more guest code; events still queued answered at
    /// once; running ones finish; sockets closed with 1001; alarms stopped;
    /// actors released; the heartbeat and the node's local files of the app
    /// removed; then the app is unloaded.
    fn stop_app(self: &Arc<Self>, app: &str) {
        self.stopped_apps
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(app.to_owned());
        self.any_app_stopped.store(true, std::sync::atomic::Ordering::Release);
        self.stop_gen.send_modify(|g| *g += 1);
        tracing::warn!(app = %app, "the app was deleted (tombstone): this node stops serving it");
        self.close_sockets_where(|k| k.app == app, 1001, "going away");
        self.hibernate_where(|k| k.app == app);
        if let Ok(due) = self.alarms.due(u64::MAX) {
            for (k, _) in due.into_iter().filter(|(k, _)| k.app == app) {
                let _ = self.alarms.remove(&k);
            }
        }
        if let Some(c) = &self.cluster {
            let _ = c.bucket.delete(&crate::keys::heartbeat(app, &c.node));
        }
        let mut dir = self.config.data_dir.join("state");
        for part in app.split('/') {
            dir.push(part);
        }
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(app = %app, "removing {}: {e}", dir.display());
        }
        self.apps
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(app);
    }

    /// Hibernates every resident actor `which` picks, after its queued jobs,
    /// and waits for all of them (a worker that panicked counts as done).
    fn hibernate_where(self: &Arc<Self>, which: impl Fn(&ActorKey) -> bool) {
        let slots: Vec<Arc<Slot>> = lock(&self.actors).values().filter(|s| which(&s.key)).cloned().collect();
        let mut waits = Vec::new();
        for s in slots {
            if s.lock().sender.is_some() {
                let (tx, rx) = oneshot::channel();
                self.enqueue(&s.key, Job::new(EventKind::Hibernate { done: tx }, Vec::new()));
                waits.push(rx);
            }
        }
        for w in waits {
            let _ = w.blocking_recv();
        }
    }

    /// Cluster: one control pass: apps with a tombstone are stopped, the
    /// others' heartbeats written, operator delete requests queued.
    fn control_pass(self: &Arc<Self>) {
        let Some(c) = &self.cluster else { return };
        if self.is_stopping() || !c.cluster.is_live(&c.node) {
            return;
        }
        let apps: Vec<String> = self
            .apps
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        for app in apps {
            match crate::app_delete::read_tombstone(c.bucket.as_ref(), &app) {
                Ok(Some(_)) => self.stop_app(&app),
                Ok(None) => {
                    let _ = c.bucket.put(
                        &crate::keys::heartbeat(&app, &c.node),
                        b"",
                        &crate::bucket::PutCondition::None,
                    );
                }
                Err(e) => tracing::warn!(app = %app, "reading the tombstone: {e}"),
            }
        }
        self.operator_pass();
    }

    /// Puts a job in the actor's mailbox, waking a worker if it has none.
    pub(crate) fn enqueue(self: &Arc<Self>, key: &ActorKey, job: Job) {
        let slot = self.slot(key);
        let mut inner = slot.lock();
        let mut job = job;
        job.generation = inner.generation;
        let job = match &inner.sender {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                // The worker is gone (it panicked): start a new one with this job.
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(job);
        inner.sender = Some(tx);
        let shared = self.clone();
        let slot2 = slot.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("actor {}", slot.key))
            .spawn(move || worker::run(&shared, &slot2, &rx));
        if let Err(e) = spawned {
            tracing::error!("cannot start a worker thread: {e}");
            inner.sender = None;
        }
    }

    pub(crate) fn socket_send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), ()> {
        let sockets = lock(&self.sockets.map);
        match sockets.get(&id) {
            Some(s) if s.key == *key => s.out.send(Outbound::Message(msg)).map_err(|_| ()),
            _ => Err(()),
        }
    }

    /// An operator delete request is no longer queued here.
    pub(crate) fn operator_released(&self, req: &crate::operator::DeleteRequest) {
        lock(&self.operator_in_flight).remove(&req.object);
    }

    /// One control pass over operator delete requests (ADR 0028 §3); see
    /// [`Runtime::run_operator_pass`].
    fn operator_pass(self: &Arc<Self>) -> usize {
        use crate::operator::{Listed, MAX_PER_PASS, Outcome, REQUEST_TTL_MS};
        let Some(c) = &self.cluster else { return 0 };
        // One node of the cluster lists and queues: the lowest live id (ADR 008).
        // The job goes to whichever node holds the actor.
        if c.cluster.live_nodes().into_iter().min().as_deref() != Some(c.node.as_str()) {
            return 0;
        }
        let now = self.clock.now_ms();
        let apps: Vec<(String, Arc<App>)> = self
            .apps
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut queued = 0;
        for (name, app) in apps {
            let listed = match crate::operator::list(c.bucket.as_ref(), &name) {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(app = %name, "listing operator delete requests: {e}");
                    continue;
                }
            };
            let outcomes: std::collections::HashSet<&str> = listed
                .iter()
                .filter_map(|l| match l {
                    Listed::Outcome { object, .. } => Some(object.as_str()),
                    Listed::Request(_) => None,
                })
                .collect();
            for l in &listed {
                match l {
                    Listed::Outcome { object, t } if t + REQUEST_TTL_MS < now => {
                        let _ = c.bucket.delete(object);
                    }
                    Listed::Outcome { .. } => {}
                    Listed::Request(r) if r.t + REQUEST_TTL_MS < now => {
                        let _ = c.bucket.delete(&r.object);
                    }
                    // Its outcome is written; only deleting the request failed.
                    Listed::Request(r)
                        if [Outcome::Done, Outcome::Absent]
                            .iter()
                            .any(|o| outcomes.contains(r.outcome_key(*o).as_str())) =>
                    {
                        let _ = c.bucket.delete(&r.object);
                    }
                    // A class this node does not serve: left to the nodes that do (or to expiry).
                    Listed::Request(r) if !app.classes.contains_key(&r.key.class) => {}
                    Listed::Request(r) => {
                        let mut in_flight = lock(&self.operator_in_flight);
                        if in_flight.len() >= MAX_PER_PASS || !in_flight.insert(r.object.clone()) {
                            continue;
                        }
                        drop(in_flight);
                        self.enqueue(
                            &r.key,
                            Job::new(EventKind::OperatorDelete { req: r.clone() }, Vec::new()),
                        );
                        queued += 1;
                    }
                }
            }
        }
        queued
    }

    /// One idle expiry pass (ADR 0028 §4); see [`Runtime::run_expiry_pass`].
    fn expiry_pass(self: &Arc<Self>) -> ExpiryPass {
        let mut pass = ExpiryPass::default();
        let Some(c) = &self.cluster else { return pass };
        if c.cluster.live_nodes().into_iter().min().as_deref() != Some(c.node.as_str()) {
            return pass;
        }
        // The clock before the listing: a slow listing never makes a record look idler.
        let now = self.clock.now_ms();
        let limits: Vec<((String, String), u64)> =
            lock(&self.idle_limits).iter().map(|(k, v)| (k.clone(), *v)).collect();
        let mut candidates = Vec::new();
        // Versions listed this pass: a skipped version no longer listed is dropped,
        // so the skip list never outgrows the records.
        let mut seen = std::collections::HashSet::new();
        for ((app, class), limit) in limits {
            let prefix = crate::keys::owners_of_class(&app, &class);
            let listed = match c.bucket.list(&prefix) {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(app = %app, class = %class, "idle expiry: listing owners: {e}");
                    continue;
                }
            };
            for m in listed {
                seen.insert((m.key.clone(), m.etag.clone()));
                let Some(key) = crate::keys::actor_of_owner(&app, &class, &m.key) else {
                    continue;
                };
                if m.last_modified.saturating_add(limit) > now {
                    continue;
                }
                if lock(&self.expiry_skipped).contains(&(m.key.clone(), m.etag.clone())) {
                    continue;
                }
                // Resident here or with a socket: active (the job never takes a hold it has).
                let resident = self
                    .actors
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&key)
                    .is_some_and(|s| s.lock().status == ActorStatus::Resident);
                if resident || !self.sockets_of(&key).is_empty() {
                    continue;
                }
                candidates.push((key, m.key, m.etag));
            }
        }
        lock(&self.expiry_skipped).retain(|v| seen.contains(v));
        pass.candidates = candidates.len();
        self.metrics
            .add(crate::metrics::EXPIRY_CANDIDATES_TOTAL, "", candidates.len() as u64);
        for batch in candidates
            .chunks(EXPIRIES_AT_ONCE)
            .take(EXPIRIES_PER_PASS / EXPIRIES_AT_ONCE)
        {
            let waits: Vec<_> = batch
                .iter()
                .map(|(key, _, etag)| {
                    let (tx, rx) = oneshot::channel();
                    self.enqueue(
                        key,
                        Job::new(
                            EventKind::Expire {
                                etag: etag.clone(),
                                done: tx,
                            },
                            Vec::new(),
                        ),
                    );
                    rx
                })
                .collect();
            for ((_, record, etag), rx) in batch.iter().zip(waits) {
                if rx.blocking_recv().unwrap_or(false) {
                    pass.expired += 1;
                } else {
                    lock(&self.expiry_skipped).insert((record.clone(), etag.clone()));
                }
            }
        }
        pass
    }

    pub(crate) fn socket_close_by_actor(
        self: &Arc<Self>,
        key: &ActorKey,
        id: u64,
        code: u16,
        reason: String,
    ) -> Result<(), ()> {
        let entry = {
            let mut sockets = lock(&self.sockets.map);
            match sockets.get(&id) {
                Some(s) if s.key == *key => sockets.remove(&id),
                _ => None,
            }
        };
        let entry = entry.ok_or(())?;
        let _ = entry.out.send(Outbound::Close {
            code,
            reason: reason.clone(),
        });
        // The actor's own close event comes after the current event.
        self.enqueue(key, Job::new(EventKind::SocketClose { id, code, reason }, Vec::new()));
        Ok(())
    }

    pub(crate) fn socket_belongs_to(&self, key: &ActorKey, id: u64) -> bool {
        lock(&self.sockets.map).get(&id).is_some_and(|s| s.key == *key)
    }

    pub(crate) fn sockets_of(&self, key: &ActorKey) -> Vec<u64> {
        let mut v: Vec<u64> = lock(&self.sockets.map)
            .iter()
            .filter(|(_, s)| s.key == *key)
            .map(|(id, _)| *id)
            .collect();
        v.sort_unstable();
        v
    }

    /// Closes every socket of a deleted actor with 1000 "actor deleted"; no close events run.
    pub(crate) fn close_sockets_of_deleted(&self, key: &ActorKey) {
        self.close_sockets_where(|k| k == key, 1000, "actor deleted");
    }

    /// Closes (with `code`, `reason`) and forgets every socket whose actor
    /// `which` picks; no close events run. Returns how many.
    fn close_sockets_where(&self, which: impl Fn(&ActorKey) -> bool, code: u16, reason: &str) -> usize {
        let mut sockets = lock(&self.sockets.map);
        let ids: Vec<u64> = sockets
            .iter()
            .filter(|(_, s)| which(&s.key))
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            if let Some(s) = sockets.remove(id) {
                let _ = s.out.send(Outbound::Close {
                    code,
                    reason: reason.into(),
                });
            }
        }
        ids.len()
    }

    pub(crate) fn call_blocking(
        self: &Arc<Self>,
        target: &ActorKey,
        caller: Option<ActorKey>,
        payload: Vec<u8>,
        chain: Vec<ActorKey>,
        limit: Duration,
    ) -> Result<Vec<u8>, CallFailure> {
        self.class(target).map_err(|e| CallFailure::Refused(e.to_string()))?;
        if chain.contains(target) {
            let path: Vec<String> = chain
                .iter()
                .chain(std::iter::once(target))
                .map(ToString::to_string)
                .collect();
            return Err(CallFailure::Refused(format!(
                "call cycle {}: the target is waiting on this call and would wait forever",
                path.join(" → ")
            )));
        }
        let (tx, rx) = mpsc::channel();
        let job = Job::new(
            EventKind::Call {
                caller,
                payload,
                reply: tx,
            },
            chain,
        );
        let ticket = job.ticket.clone();
        self.enqueue(target, job);
        // Never wait longer than the caller's event may run: two actors calling
        // each other at once would otherwise wait for each other forever. Look
        // for a shutdown meanwhile: a call still queued is answered at once.
        let until = std::time::Instant::now() + limit;
        loop {
            let step = until
                .saturating_duration_since(std::time::Instant::now())
                .min(Duration::from_millis(20));
            match rx.recv_timeout(step) {
                Ok(answer) => return answer,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(CallFailure::Failed("the callee's event ended without an answer".into()));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if self.halted(&target.app) && job::take_ticket(&ticket, job::ABANDONED) {
                return Err(CallFailure::Failed(job::SHUTTING_DOWN.into()));
            }
            if std::time::Instant::now() >= until {
                return Err(CallFailure::Failed(format!(
                    "{target} did not answer within {limit:?} (busy, or waiting on a call back to this chain)"
                )));
            }
        }
    }
}

impl Runtime {
    /// Starts a runtime: the engine, the data directory, the alarm timer.
    ///
    /// # Errors
    /// The engine cannot be configured or the data directory cannot be created.
    pub fn new(config: RuntimeConfig) -> Result<Self, ShimError> {
        Self::build(config, None)
    }

    /// Starts one node of a cluster: its own data directory (local files, a
    /// cache of the bucket's heads), the cluster's bucket, clock and alarm index.
    ///
    /// # Errors
    /// As [`Runtime::new`]; a node id that is empty or has a `/`.
    pub fn new_node(
        config: RuntimeConfig,
        cluster: Arc<crate::cluster::Cluster>,
        node: &str,
    ) -> Result<Self, ShimError> {
        if node.is_empty() || node.contains('/') {
            return Err(ShimError::Host(format!(
                "node id {node:?} must be non-empty and have no '/'"
            )));
        }
        Self::build(config, Some((cluster, node.to_owned())))
    }

    /// Cuts this node off from its cluster: from now on it holds nothing, its
    /// uploads are never acknowledged, and other nodes may take its actors.
    ///
    /// # Errors
    /// This runtime is a single node.
    pub fn cut_off(&self) -> Result<(), ShimError> {
        let c = self
            .shared
            .cluster
            .as_ref()
            .ok_or_else(|| ShimError::Host("cut_off needs a cluster node (Runtime::new_node)".into()))?;
        c.cluster.cut_off(&c.node);
        Ok(())
    }

    /// Whether the actor was deleted, from positive evidence in the bucket (a
    /// reset at the head of its history). On a single node there is no bucket
    /// and no such evidence: the answer is `unknown`.
    pub fn deletion_status(&self, key: &ActorKey) -> crate::deletion::DeletionStatus {
        self.shared.storage.deletion_status(key)
    }

    /// The live nodes of this node's cluster (empty on a single node).
    pub fn live_nodes(&self) -> Vec<String> {
        self.shared
            .cluster
            .as_ref()
            .map(|c| c.cluster.live_nodes())
            .unwrap_or_default()
    }

    /// This node's id in its cluster (none on a single node).
    pub fn node_id(&self) -> Option<&str> {
        self.shared.cluster.as_ref().map(|c| c.node.as_str())
    }

    fn build(
        config: RuntimeConfig,
        cluster: Option<(Arc<crate::cluster::Cluster>, String)>,
    ) -> Result<Self, ShimError> {
        let host = |e: &dyn std::fmt::Display| ShimError::Host(e.to_string());
        std::fs::create_dir_all(&config.data_dir)
            .map_err(|e| host(&format!("creating {}: {e}", config.data_dir.display())))?;
        let mut wcfg = Config::new();
        wcfg.wasm_component_model(true).epoch_interruption(true);
        let engine = Engine::new(&wcfg).map_err(|e| host(&e))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| host(&e))?;
        crate::bindings::Actor::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| host(&e))?;
        let faults = Arc::new(Faults::default());
        let clock: Arc<dyn Clock> = if let Some((c, _)) = &cluster {
            c.clock().clone()
        } else if config.virtual_clock {
            Arc::new(VirtualClock::default())
        } else {
            Arc::new(SystemClock)
        };
        let alarms: Arc<dyn AlarmIndex> = if let Some((c, _)) = &cluster {
            c.alarms()
        } else if config.memory_alarm_index {
            Arc::new(MemoryAlarmIndex::default())
        } else {
            let dir = config.data_dir.join("host");
            std::fs::create_dir_all(&dir).map_err(|e| host(&e))?;
            Arc::new(SqliteAlarmIndex::open(&dir.join("alarms.db")).map_err(|e| host(&e))?)
        };
        let metrics = Arc::new(Metrics::default());
        let files: Arc<dyn StateStore> = Arc::new(LocalStateStore::new(&config.data_dir, faults.clone()));
        let cluster = cluster.map(|(cluster, node)| crate::cluster::ClusterNode {
            bucket: Arc::new(crate::bucket::FaultyBucket::new(
                cluster.bucket().clone(),
                faults.clone(),
            )),
            cluster,
            node,
        });
        let storage: Arc<dyn ActorStorage> = match &cluster {
            Some(c) => Arc::new(ClusterStorage::new(
                c.node.clone(),
                c.cluster.clone(),
                c.bucket.clone(),
                faults.clone(),
                files,
                metrics.clone(),
            )),
            None => Arc::new(SingleNodeStorage::new(files, metrics.clone())),
        };
        let sockets = cluster.as_ref().map_or_else(Default::default, |c| c.cluster.sockets());
        let shared = Arc::new_cyclic(|me| Shared {
            me: me.clone(),
            storage,
            cache: ComponentCache::new(config.cache_dir.clone()),
            engine,
            linker,
            clock,
            faults: faults.clone(),
            metrics,
            alarms,
            apps: RwLock::new(HashMap::new()),
            actors: Mutex::new(HashMap::new()),
            sockets,
            timer_wake: Mutex::new(None),
            logs: Mutex::new(std::collections::VecDeque::new()),
            operator_in_flight: Mutex::default(),
            idle_limits: Mutex::default(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            stopped_apps: RwLock::default(),
            any_app_stopped: std::sync::atomic::AtomicBool::new(false),
            stop_gen: tokio::sync::watch::Sender::new(0),
            expiry_skipped: Mutex::default(),
            cluster,
            config,
        });
        if let Some(c) = &shared.cluster {
            let me: std::sync::Weak<dyn crate::cluster::NodeMailboxes> = Arc::downgrade(&shared) as _;
            c.cluster.join(&c.node, me);
        }
        start_epoch_ticker(&shared.engine);
        if shared.clock.as_virtual().is_none() {
            start_alarm_timer(&shared);
            if shared.cluster.is_some() {
                start_control_pass(&shared);
            }
        }
        Ok(Self { shared })
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }

    /// Loads (or replaces) an app from a manifest file, compiling its components.
    ///
    /// # Errors
    /// The manifest is invalid or a component cannot be compiled or linked.
    pub fn load_manifest(&self, path: &Path) -> Result<Manifest, ShimError> {
        let manifest = Manifest::load(path)?;
        self.add_app(&manifest.app, &manifest.classes)?;
        Ok(manifest)
    }

    /// Loads (or replaces) an app from its classes.
    ///
    /// # Errors
    /// A name is invalid, or a component cannot be read, compiled or linked.
    pub fn add_app(&self, app: &str, classes: &[ClassSpec]) -> Result<(), ShimError> {
        crate::address::validate_app_name(app).map_err(ShimError::Host)?;
        let mut loaded = HashMap::new();
        for c in classes {
            crate::address::validate_class_name(&c.name).map_err(ShimError::Host)?;
            let (pre, _) = self.load_component(&c.component)?;
            loaded.insert(c.name.clone(), Arc::new(Class { pre, access: c.access }));
        }
        self.shared
            .apps
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(app.to_owned(), Arc::new(App { classes: loaded }));
        Ok(())
    }

    /// Compiles (or loads from the cache) one component and links it.
    ///
    /// # Errors
    /// The file cannot be read, is not a component, or does not link against
    /// `wasmkeep:actor@0.2.x` and WASI 0.2.
    pub fn load_component(&self, path: &Path) -> Result<(ActorPre<HostState>, CacheOutcome), ShimError> {
        let err = |message: String| ShimError::Component {
            path: path.to_owned(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
        if !bytes.starts_with(b"\0asm") {
            return Err(err(
                "is not a WebAssembly file: build actors with `wasmkeep-shim build`, which makes a wasm32-wasip2 component"
                    .into(),
            ));
        }
        let (component, outcome) = self.shared.cache.load(&self.shared.engine, &bytes).map_err(|e| {
            err(format!(
                "not a valid WebAssembly component ({e:#}); build actors with `wasmkeep-shim build`, \
                     which makes a wasm32-wasip2 component"
            ))
        })?;
        let pre = self.shared.linker.instantiate_pre(&component).map_err(|e| {
            err(format!(
                "does not link against wasmkeep:actor@0.2.x and WASI 0.2: {e:#}"
            ))
        })?;
        let pre = ActorPre::new(pre).map_err(|e| err(format!("does not export wasmkeep:actor/events@0.2.x: {e:#}")))?;
        Ok((pre, outcome))
    }

    fn check_outside_access(&self, key: &ActorKey) -> Result<(), ShimError> {
        match self.shared.class(key)?.access {
            Access::Open => Ok(()),
            Access::Existing if self.exists(key) => Ok(()),
            Access::Existing => Err(ShimError::NoSuchActor(key.clone())),
            Access::Internal => Err(ShimError::Internal(key.class.clone())),
        }
    }

    /// Delivers a request event from outside the app, as the dev server does.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn request(&self, key: &ActorKey, req: HttpRequest) -> Result<PendingResponse, ShimError> {
        self.check_outside_access(key)?;
        let require_existing = self.shared.class(key)?.access == Access::Existing;
        let (tx, rx) = oneshot::channel();
        let job = Job::new(
            EventKind::Request {
                req,
                respond: tx,
                require_existing,
            },
            Vec::new(),
        );
        let ticket = job.ticket.clone();
        self.shared.enqueue(key, job);
        Ok(PendingResponse {
            rx,
            ticket,
            shared: self.shared.clone(),
            app: key.app.clone(),
        })
    }

    /// Sends a request and waits for the answer.
    ///
    /// # Errors
    /// As [`Runtime::request`].
    pub fn request_blocking(&self, key: &ActorKey, req: HttpRequest) -> Result<HttpResponse, ShimError> {
        Ok(self.request(key, req)?.wait())
    }

    /// Runs `on-call` on an actor as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class. The call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, ShimError> {
        self.shared.class(key)?;
        Ok(self
            .shared
            .call_blocking(key, None, payload, Vec::new(), self.shared.config.event_timeout))
    }

    /// Opens a WebSocket to an actor; `on-socket-open` is queued.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn open_socket(&self, key: &ActorKey, path: &str) -> Result<SocketHandle, ShimError> {
        self.check_outside_access(key)?;
        let id = self.shared.sockets.next_id();
        let (tx, rx) = tmpsc::unbounded_channel();
        lock(&self.shared.sockets.map).insert(
            id,
            SocketEntry {
                key: key.clone(),
                out: tx,
            },
        );
        self.shared.enqueue(
            key,
            Job::new(
                EventKind::SocketOpen {
                    id,
                    path: path.to_owned(),
                },
                Vec::new(),
            ),
        );
        Ok(SocketHandle { id, outbound: rx })
    }

    /// A message from a socket's client; `on-socket-message` is queued.
    ///
    /// # Errors
    /// The socket is not open.
    pub fn socket_message(&self, id: u64, msg: SocketMessage) -> Result<(), ShimError> {
        let key = lock(&self.shared.sockets.map)
            .get(&id)
            .map(|s| s.key.clone())
            .ok_or(ShimError::NoSuchSocket(id))?;
        self.shared
            .enqueue(&key, Job::new(EventKind::SocketMessage { id, msg }, Vec::new()));
        Ok(())
    }

    /// The client closed the socket; `on-socket-close` is queued unless the
    /// actor or the host closed it first.
    pub fn socket_closed(&self, id: u64, code: u16, reason: &str) {
        let entry = lock(&self.shared.sockets.map).remove(&id);
        if let Some(e) = entry {
            self.shared.enqueue(
                &e.key,
                Job::new(
                    EventKind::SocketClose {
                        id,
                        code,
                        reason: reason.to_owned(),
                    },
                    Vec::new(),
                ),
            );
        }
    }

    /// Waits until every event queued so far for `key` has run.
    pub fn settle(&self, key: &ActorKey) {
        let (tx, rx) = oneshot::channel();
        self.shared
            .enqueue(key, Job::new(EventKind::Barrier { done: tx }, Vec::new()));
        let _ = rx.blocking_recv();
    }

    /// The host's time (ms since the epoch).
    pub fn now_ms(&self) -> u64 {
        self.shared.clock.now_ms()
    }

    /// Moves the virtual clock forward by `ms`. Alarms do not run until
    /// [`Runtime::run_due_alarms`] (or [`Runtime::run_alarm`]) is called.
    ///
    /// # Errors
    /// The runtime uses the real clock.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, ShimError> {
        self.shared
            .clock
            .as_virtual()
            .map(|c| c.advance(ms))
            .ok_or(ShimError::RealClock)
    }

    /// Runs every alarm due now and waits for them; returns how many ran `on-alarm`.
    pub fn run_due_alarms(&self) -> usize {
        queue_due(&self.shared, &HashMap::new())
            .into_iter()
            .map(|(_, rx)| rx.blocking_recv().unwrap_or(false))
            .filter(|ran| *ran)
            .count()
    }

    /// Cluster: one control pass over the apps' operator delete requests
    /// (ADR 0028 §3): expired requests and outcomes are removed, and up to 16
    /// requests at a time are queued, each in its actor's mailbox, run by the
    /// node that holds it. Returns how many were queued (0 on a single node
    /// and on every node but the lowest live one). With the real clock a
    /// cluster node runs a pass every second by itself.
    pub fn run_operator_pass(&self) -> usize {
        self.shared.operator_pass()
    }

    /// Cluster: one whole control pass, as a node runs every second with the
    /// real clock: apps whose tombstone is in the bucket stop being served
    /// here (ADR 0028 §5), the others' heartbeats are written, and operator
    /// delete requests are queued.
    pub fn run_control_pass(&self) {
        self.shared.control_pass();
    }

    /// Whether this node stopped serving `app` (its tombstone was seen).
    pub fn app_stopped(&self, app: &str) -> bool {
        self.shared
            .stopped_apps
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(app)
    }

    /// Sets (or with `None` removes) a class's `expire-after-idle`.
    ///
    /// # Errors
    /// [`ShimError::Host`] for a limit below one hour.
    pub fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Result<(), ShimError> {
        let k = (app.to_owned(), class.to_owned());
        match limit {
            Some(d) if d < crate::manifest::MIN_EXPIRE_AFTER_IDLE => Err(ShimError::Host(format!(
                "expire-after-idle for {app} {class}: {} s is below the minimum of one hour",
                d.as_secs()
            ))),
            Some(d) => {
                lock(&self.shared.idle_limits).insert(k, u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                Ok(())
            }
            None => {
                lock(&self.shared.idle_limits).remove(&k);
                Ok(())
            }
        }
    }

    /// Cluster: one idle expiry pass (ADR 0028 §4), on the collecting node
    /// (the lowest live id; on others it does nothing). Candidates come from
    /// one listing of each limited class's ownership records: released and
    /// last written longer ago than the limit, not resident here, no socket.
    /// Each is deleted only if its record is still the version listed and its
    /// database has no pending alarm; at most 100 a pass, 4 at a time. With
    /// the real clock the collecting node runs a pass every 10 minutes.
    pub fn run_expiry_pass(&self) -> ExpiryPass {
        self.shared.expiry_pass()
    }

    /// Runs `key`'s alarm if it is due; true if `on-alarm` ran.
    pub fn run_alarm(&self, key: &ActorKey) -> bool {
        let (tx, rx) = oneshot::channel();
        self.shared
            .enqueue(key, Job::new(EventKind::Alarm { ran: tx }, Vec::new()));
        rx.blocking_recv().unwrap_or(false)
    }

    /// The fault switches.
    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// The last (up to 1000) lines actors logged.
    pub fn logs(&self) -> Vec<LogLine> {
        lock(&self.shared.logs).iter().cloned().collect()
    }

    /// Whether the actor has a database.
    pub fn exists(&self, key: &ActorKey) -> bool {
        self.shared.storage.exists(key).unwrap_or_else(|e| {
            tracing::warn!(actor = %key, "{e}");
            false
        })
    }

    /// The actor's database path.
    pub fn db_path(&self, key: &ActorKey) -> PathBuf {
        self.shared.storage.db_path(key)
    }

    /// Every actor the host knows (in memory or on disk) and its state.
    pub fn actors(&self) -> Vec<ActorInfo> {
        let mut seen: HashMap<ActorKey, ActorStatus> = HashMap::new();
        for k in self.shared.storage.local_actors() {
            seen.insert(k, ActorStatus::Hibernated);
        }
        for (k, slot) in lock(&self.shared.actors).iter() {
            let inner = slot.lock();
            let status = if inner.sender.is_some() && inner.status != ActorStatus::Deleted {
                ActorStatus::Resident
            } else {
                inner.status
            };
            if status != ActorStatus::Hibernated || seen.contains_key(k) {
                seen.insert(k.clone(), status);
            }
        }
        let mut v: Vec<ActorInfo> = seen
            .into_iter()
            .map(|(key, status)| ActorInfo {
                alarm: self.shared.alarms.get(&key).ok().flatten(),
                key,
                status,
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// The actor's tables and rows (the host's own table left out), read in its mailbox.
    ///
    /// # Errors
    /// The actor does not exist or its database cannot be read.
    pub fn tables(&self, key: &ActorKey) -> Result<Vec<(String, QueryResult)>, ShimError> {
        if !self.exists(key) {
            return Err(ShimError::Event(format!("no such actor: {key} has no database")));
        }
        let (tx, rx) = oneshot::channel();
        self.shared
            .enqueue(key, Job::new(EventKind::Inspect { reply: tx }, Vec::new()));
        rx.blocking_recv()
            .map_err(|_| ShimError::Host("the actor's worker stopped".into()))?
            .map_err(ShimError::Event)
    }

    /// Hibernates every resident actor once its queued events have run.
    pub fn hibernate_all(&self) {
        self.shared.hibernate_where(|_| true);
    }

    /// The ordered shutdown (tellus's lesson: "stopped" is reported last, so
    /// whoever waits on it knows everything is gone). In order: no new guest
    /// code runs; events still queued are answered at once (503 over HTTP,
    /// `failed` to calls) instead of waiting; running events finish; every
    /// WebSocket is closed with 1001 "going away"; every actor is released
    /// (instance dropped, database closed, hold let go in a cluster). It
    /// returns only when all of that is done. A guest that traps or a worker
    /// that panics does not stop the sequence. Calling it again is harmless.
    pub fn shutdown(&self) -> Shutdown {
        self.shared.stopping.store(true, std::sync::atomic::Ordering::Release);
        self.shared.stop_gen.send_modify(|g| *g += 1);
        let mut report = Shutdown::default();
        let mine: std::collections::HashSet<ActorKey> = lock(&self.shared.actors).keys().cloned().collect();
        report.sockets_closed = self
            .shared
            .close_sockets_where(|k| mine.contains(k), 1001, "going away");
        report.actors_released = self.resident_count();
        // Each worker finishes its running event, answers what is queued behind
        // it (no guest code), then drops the instance and releases the actor.
        self.hibernate_all();
        report
    }

    /// [`Runtime::shutdown`] for async callers: resolves once everything is stopped.
    pub async fn shutdown_async(&self) -> Shutdown {
        let rt = self.clone();
        tokio::task::spawn_blocking(move || rt.shutdown())
            .await
            .unwrap_or_default()
    }

    /// Whether an ordered shutdown began.
    pub fn is_stopping(&self) -> bool {
        self.shared.is_stopping()
    }

    /// How many actors are resident now.
    pub fn resident_count(&self) -> usize {
        lock(&self.shared.actors)
            .values()
            .filter(|s| s.lock().sender.is_some())
            .count()
    }
}

/// Queues an alarm job for every due entry not already `in_flight`; returns the new ones.
fn queue_due(
    shared: &Arc<Shared>,
    in_flight: &HashMap<ActorKey, oneshot::Receiver<bool>>,
) -> Vec<(ActorKey, oneshot::Receiver<bool>)> {
    let now = shared.clock.now_ms();
    let due = match shared.alarms.due(now) {
        Ok(d) => d,
        Err(e) => {
            tracing::error!("reading the alarm index: {e}");
            return Vec::new();
        }
    };
    let mut queued = Vec::new();
    for (key, _) in due {
        if shared.class(&key).is_err() || in_flight.contains_key(&key) {
            continue; // its app is not loaded here, or its alarm job is still queued
        }
        let (tx, rx) = oneshot::channel();
        shared.enqueue(&key, Job::new(EventKind::Alarm { ran: tx }, Vec::new()));
        queued.push((key, rx));
    }
    queued
}

/// Interrupts guests: every 10 ms the engine's epoch moves; an event's deadline counts in epochs.
fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    let _ = std::thread::Builder::new().name("epoch ticker".into()).spawn(move || {
        while let Some(engine) = weak.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(worker::EPOCH_TICK);
        }
    });
}

/// Cluster, with the real clock: a control pass every second (operator
/// deletes), and an idle expiry pass every 10 minutes.
fn start_control_pass(shared: &Arc<Shared>) {
    let weak = Arc::downgrade(shared);
    let _ = std::thread::Builder::new().name("control pass".into()).spawn(move || {
        let mut last_expiry = 0u64;
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let Some(shared) = weak.upgrade() else { return };
            shared.control_pass();
            let now = shared.clock.now_ms();
            if now.saturating_sub(last_expiry) >= EXPIRY_PASS_EVERY_MS {
                last_expiry = now;
                shared.expiry_pass();
            }
        }
    });
}

/// With the real clock: runs alarms when they come due.
fn start_alarm_timer(shared: &Arc<Shared>) {
    let (tx, rx) = mpsc::channel::<()>();
    *lock(&shared.timer_wake) = Some(tx);
    let weak = Arc::downgrade(shared);
    let _ = std::thread::Builder::new().name("alarm timer".into()).spawn(move || {
        // Alarm jobs are not waited for: one busy actor never holds up the others.
        let mut in_flight: HashMap<ActorKey, oneshot::Receiver<bool>> = HashMap::new();
        loop {
            let Some(shared) = weak.upgrade() else { return };
            in_flight.retain(|_, rx| matches!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
            let queued = queue_due(&shared, &in_flight);
            in_flight.extend(queued);
            let now = shared.clock.now_ms();
            // At least 50 ms between passes, so an entry that cannot run yet
            // (its actor busy, its removal pending) does not make the timer spin.
            let wait = match shared.alarms.next_at() {
                Ok(Some(at)) => Duration::from_millis(at.saturating_sub(now).clamp(50, 1000)),
                _ => Duration::from_secs(1),
            };
            drop(shared);
            match rx.recv_timeout(wait) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    });
}
