//! The runtime: the public API of one node's host, that the dev server, the
//! test harnesses and the conformance runner all use. It builds the node
//! (choosing its storage once) and hands events to actors' mailboxes.

use crate::address::ActorKey;
use crate::bindings::ActorPre;
use crate::component_cache::CacheOutcome;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::failure_kind::FailureKind;
use crate::faults::Faults;
use crate::http_types::{HttpRequest, HttpResponse, SocketMessage};
use crate::imports::HostState;
use crate::job::AdminDeleted;
use crate::job::{self, CallFailure, EventKind, Job};
use crate::manifest::{Access, ClassSpec, Manifest};
use crate::metrics::Metrics;
use crate::node::{ActorInfo, ActorStatus, App, Class, Host, LogLine, lock};
use crate::node_builder;
use crate::passes::{self, ExpiryPass, queue_due};
use crate::sockets::{OutboundReceiver, SocketEntry};
use crate::sql_types::QueryResult;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The local host. Cheap to clone; every clone is the same host.
#[derive(Clone)]
pub struct Runtime {
    host: Arc<Host>,
}

/// An answer on its way: wait for it blocking or with `.await`. Once an
/// ordered shutdown begins, an event still queued is answered 503 at once.
pub struct PendingResponse {
    rx: oneshot::Receiver<HttpResponse>,
    /// Dropped unanswered (the client went away), the event is given up.
    ticket: GiveUpIfDropped,
    host: Arc<Host>,
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

    /// Waits asynchronously. Dropping this (or the future) before the answer
    /// came, as when the client went away, gives the event up if it has not
    /// started.
    pub async fn recv(self) -> HttpResponse {
        let Self {
            mut rx,
            ticket,
            host,
            app,
        } = self;
        let ended = |r: Result<HttpResponse, _>| {
            r.unwrap_or_else(|_| HttpResponse::host_failure(FailureKind::Host, "the event ended without an answer"))
        };
        let mut stops = host.stops().subscribe();
        loop {
            if host.halted(&app) {
                break;
            }
            tokio::select! {
                biased;
                r = &mut rx => return ended(r),
                changed = stops.changed() => if changed.is_err() { return ended(rx.await) },
            }
        }
        if job::take_ticket(&ticket.0, job::ABANDONED) {
            return HttpResponse::host_failure(FailureKind::ShuttingDown, job::SHUTTING_DOWN);
        }
        // It is running: it finishes, and its answer comes.
        ended(rx.await)
    }
}

/// Gives a queued event up when its waiter goes away: nobody would read
/// its answer, and under load it would take the place of one somebody waits
/// for. An event already running finishes (its ticket moved on).
struct GiveUpIfDropped(job::Ticket);

impl Drop for GiveUpIfDropped {
    fn drop(&mut self) {
        job::take_ticket(&self.0, job::ABANDONED);
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
    pub outbound: OutboundReceiver,
}

impl Runtime {
    /// Starts a runtime: the engine, the data directory, the alarm timer.
    ///
    /// # Errors
    /// The engine cannot be configured or the data directory cannot be created.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        node_builder::build_host(config, None).map(|host| Self { host })
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
    ) -> Result<Self, RuntimeError> {
        if node.is_empty() || node.contains('/') {
            return Err(RuntimeError::Host(format!(
                "node id {node:?} must be non-empty and have no '/'"
            )));
        }
        node_builder::build_host(config, Some((cluster, node.to_owned()))).map(|host| Self { host })
    }

    /// Cuts this node off from its cluster: from now on it holds nothing, its
    /// uploads are never acknowledged, and other nodes may take its actors.
    ///
    /// # Errors
    /// This runtime is a single node.
    pub fn cut_off(&self) -> Result<(), RuntimeError> {
        let c = self
            .host
            .cluster()
            .ok_or_else(|| RuntimeError::Host("cut_off needs a cluster node (Runtime::new_node)".into()))?;
        c.cluster.cut_off(&c.node);
        Ok(())
    }

    /// Whether the actor was deleted, from positive evidence in the bucket (a
    /// reset at the head of its history). On a single node there is no bucket
    /// and no such evidence: the answer is `unknown`.
    pub fn deletion_status(&self, key: &ActorKey) -> crate::deletion::DeletionStatus {
        self.host.storage().deletion_status(key)
    }

    /// The live nodes of this node's cluster (empty on a single node).
    pub fn live_nodes(&self) -> Vec<String> {
        self.host.cluster().map(|c| c.cluster.live_nodes()).unwrap_or_default()
    }

    /// This node's id in its cluster (none on a single node).
    pub fn node_id(&self) -> Option<&str> {
        self.host.cluster().map(|c| c.node.as_str())
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &RuntimeConfig {
        self.host.config()
    }

    /// Loads (or replaces) an app from a manifest file, compiling its components.
    ///
    /// # Errors
    /// The manifest is invalid or a component cannot be compiled or linked.
    pub fn load_manifest(&self, path: &Path) -> Result<Manifest, RuntimeError> {
        let manifest = Manifest::load(path)?;
        self.add_app(&manifest.app, &manifest.classes)?;
        Ok(manifest)
    }

    /// Loads (or replaces) an app from its classes.
    ///
    /// # Errors
    /// A name is invalid, or a component cannot be read, compiled or linked.
    pub fn add_app(&self, app: &str, classes: &[ClassSpec]) -> Result<(), RuntimeError> {
        crate::address::validate_app_name(app).map_err(RuntimeError::Host)?;
        let mut loaded = HashMap::new();
        for c in classes {
            crate::address::validate_class_name(&c.name).map_err(RuntimeError::Host)?;
            let (pre, _) = self.link_component(&c.component)?;
            loaded.insert(c.name.clone(), Arc::new(Class { pre, access: c.access }));
        }
        self.host
            .apps()
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(app.to_owned(), Arc::new(App { classes: loaded }));
        Ok(())
    }

    /// Replaces one class of a loaded app with the component `spec` names
    /// (`serve --watch`, after a rebuild). Each actor of the class meets the
    /// new component at its next event; its database, alarm and open
    /// sockets stay. When the new component does not load, the old one stays.
    ///
    /// # Errors
    /// No such app or class, or the component does not load (as [`Runtime::add_app`]).
    pub fn reload_class(&self, app: &str, spec: &ClassSpec) -> Result<CacheOutcome, RuntimeError> {
        let (pre, outcome) = self.link_component(&spec.component)?;
        let mut apps = self
            .host
            .apps()
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let loaded = apps.get(app).ok_or_else(|| RuntimeError::NoSuchApp(app.to_owned()))?;
        if !loaded.classes.contains_key(&spec.name) {
            let mut known: Vec<&str> = loaded.classes.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(RuntimeError::NoSuchClass {
                app: app.to_owned(),
                class: spec.name.clone(),
                known: known.join(", "),
            });
        }
        let mut classes = loaded.classes.clone();
        classes.insert(
            spec.name.clone(),
            Arc::new(Class {
                pre,
                access: spec.access,
            }),
        );
        apps.insert(app.to_owned(), Arc::new(App { classes }));
        self.host.class_reloaded();
        Ok(outcome)
    }

    /// Compiles (or loads from the compiled-component cache) one component and
    /// links it, without adding it to an app: whether it would load, and
    /// whether the cache had it.
    ///
    /// # Errors
    /// The file cannot be read, is not a component, or does not link against
    /// `wasmkeep:actor@0.2.x` and WASI 0.2.
    pub fn load_component(&self, path: &Path) -> Result<CacheOutcome, RuntimeError> {
        self.link_component(path).map(|(_, outcome)| outcome)
    }

    fn link_component(&self, path: &Path) -> Result<(ActorPre<HostState>, CacheOutcome), RuntimeError> {
        let err = |message: String| RuntimeError::Component {
            path: path.to_owned(),
            message,
        };
        let (component, outcome) = match self.host.cache().load_seen(self.host.engine(), path) {
            Some(component) => (component, CacheOutcome::Hit),
            None => {
                let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
                if !bytes.starts_with(b"\0asm") {
                    return Err(err(format!(
                        "is not a WebAssembly file: build the actor into a wasm32-wasip2 component ({})",
                        crate::manifest::BUILD_HINT
                    )));
                }
                self.host.cache().load_file(self.host.engine(), path, &bytes).map_err(|e| {
                    err(format!(
                        "not a valid WebAssembly component ({e:#}); build the actor into a wasm32-wasip2 component ({})",
                        crate::manifest::BUILD_HINT
                    ))
                })?
            }
        };
        let pre = self.host.linker().instantiate_pre(&component).map_err(|e| {
            err(format!(
                "does not link against wasmkeep:actor@0.2.x and WASI 0.2: {e:#}"
            ))
        })?;
        let pre = ActorPre::new(pre).map_err(|e| err(format!("does not export wasmkeep:actor/events@0.2.x: {e:#}")))?;
        Ok((pre, outcome))
    }

    /// Whether the class lets an event from outside reach `key`; its access.
    fn check_outside_access(&self, key: &ActorKey) -> Result<Access, RuntimeError> {
        let access = self.host.class(key)?.access;
        match access {
            Access::Open => Ok(access),
            // Resident here: it exists, and no listing is needed to say so.
            Access::Existing if self.host.is_resident(key) || self.exists(key) => Ok(access),
            Access::Existing => Err(RuntimeError::NoSuchActor(key.clone())),
            Access::Internal => Err(RuntimeError::Internal(key.class.clone())),
        }
    }

    /// Delivers a request event from outside the app, as the dev server does.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn request(&self, key: &ActorKey, req: HttpRequest) -> Result<PendingResponse, RuntimeError> {
        let require_existing = self.check_outside_access(key)? == Access::Existing;
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
        self.host.enqueue(key, job);
        Ok(PendingResponse {
            rx,
            ticket: GiveUpIfDropped(ticket),
            host: self.host.clone(),
            app: key.app.clone(),
        })
    }

    /// Sends a request and waits for the answer.
    ///
    /// # Errors
    /// As [`Runtime::request`].
    pub fn request_blocking(&self, key: &ActorKey, req: HttpRequest) -> Result<HttpResponse, RuntimeError> {
        Ok(self.request(key, req)?.wait())
    }

    /// Runs `on-call` on an actor as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class. The call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, RuntimeError> {
        self.host.class(key)?;
        Ok(self
            .host
            .call_blocking(key, None, payload, Vec::new(), self.host.config().event_timeout))
    }

    /// Opens a WebSocket to an actor; `on-socket-open` is queued.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn open_socket(&self, key: &ActorKey, path: &str) -> Result<SocketHandle, RuntimeError> {
        self.check_outside_access(key)?;
        let id = self.host.sockets().next_id();
        let (entry, rx) = SocketEntry::new(key.clone());
        lock(&self.host.sockets().map).insert(id, entry);
        self.host.enqueue(
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
    pub fn socket_message(&self, id: u64, msg: SocketMessage) -> Result<(), RuntimeError> {
        let key = lock(&self.host.sockets().map)
            .get(&id)
            .map(|s| s.key.clone())
            .ok_or(RuntimeError::NoSuchSocket(id))?;
        self.host
            .enqueue(&key, Job::new(EventKind::SocketMessage { id, msg }, Vec::new()));
        Ok(())
    }

    /// A message from a socket's client, queued once the socket's inbound
    /// budget (1 MiB of messages waiting for the actor) has room: a
    /// connection that awaits this before reading the next message lets TCP
    /// slow a client that sends faster than its actor handles.
    ///
    /// # Errors
    /// The socket is not open (or closed while this waited).
    pub async fn socket_message_paced(&self, id: u64, msg: SocketMessage) -> Result<(), RuntimeError> {
        let (key, budget) = lock(&self.host.sockets().map)
            .get(&id)
            .map(|s| (s.key.clone(), s.inbound.clone()))
            .ok_or(RuntimeError::NoSuchSocket(id))?;
        let share = crate::sockets::message_size(&msg).min(crate::sockets::INBOUND_BUDGET);
        let share = budget
            .acquire_many_owned(u32::try_from(share).unwrap_or(u32::MAX))
            .await
            .map_err(|_| RuntimeError::NoSuchSocket(id))?;
        if !self.host.socket_belongs_to(&key, id) {
            return Err(RuntimeError::NoSuchSocket(id));
        }
        let mut job = Job::new(EventKind::SocketMessage { id, msg }, Vec::new());
        job.inbound_share = Some(share);
        self.host.enqueue(&key, job);
        Ok(())
    }

    /// The client closed the socket; `on-socket-close` is queued unless the
    /// actor or the host closed it first.
    pub fn socket_closed(&self, id: u64, code: u16, reason: &str) {
        let entry = lock(&self.host.sockets().map).remove(&id);
        if let Some(e) = entry {
            self.host.enqueue(
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
        // Nothing is queued where no worker runs: a barrier there would make
        // a mailbox, take a resident place (maybe evicting another actor) and
        // start a worker only to wait on it. A test host settles every node
        // after every event, most of which never held the actor.
        if !self.host.has_queue(key) {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(EventKind::Barrier { done: tx }, Vec::new()));
        let _ = rx.blocking_recv();
    }

    /// The host's time (ms since the epoch).
    pub fn now_ms(&self) -> u64 {
        self.host.clock().now_ms()
    }

    /// Moves the virtual clock forward by `ms`. Alarms do not run until
    /// [`Runtime::run_due_alarms`] (or [`Runtime::run_alarm`]) is called.
    ///
    /// # Errors
    /// The runtime uses the real clock.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, RuntimeError> {
        self.host
            .clock()
            .as_virtual()
            .map(|c| c.advance(ms))
            .ok_or(RuntimeError::RealClock)
    }

    /// Runs every alarm due now and waits for them; returns how many ran `on-alarm`.
    pub fn run_due_alarms(&self) -> usize {
        queue_due(&self.host, &HashMap::new())
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
        passes::operator_pass(&self.host)
    }

    /// Cluster: one whole control pass, as a node runs every second with the
    /// real clock: apps whose tombstone is in the bucket stop being served
    /// here (ADR 0028 §5), the others' heartbeats are written, and operator
    /// delete requests are queued.
    pub fn run_control_pass(&self) {
        passes::control_pass(&self.host);
    }

    /// Whether this node stopped serving `app` (its tombstone was seen).
    pub fn app_stopped(&self, app: &str) -> bool {
        self.host.stops().app_stopped(app)
    }

    /// Sets (or with `None` removes) a class's `expire-after-idle`.
    ///
    /// # Errors
    /// [`RuntimeError::Host`] for a limit below one hour.
    pub fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Result<(), RuntimeError> {
        let k = (app.to_owned(), class.to_owned());
        match limit {
            Some(d) if d < crate::manifest::MIN_EXPIRE_AFTER_IDLE => Err(RuntimeError::Host(format!(
                "expire-after-idle for {app} {class}: {d:?} is below the minimum of one hour: give at least 3600 s (3600000 ms); no limit (0 in C) removes it"
            ))),
            Some(d) => {
                lock(&self.host.pass_book().idle_limits).insert(k, u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                Ok(())
            }
            None => {
                lock(&self.host.pass_book().idle_limits).remove(&k);
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
        passes::expiry_pass(&self.host)
    }

    /// Runs `key`'s alarm if it is due; true if `on-alarm` ran.
    pub fn run_alarm(&self, key: &ActorKey) -> bool {
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(EventKind::Alarm { ran: tx }, Vec::new()));
        rx.blocking_recv().unwrap_or(false)
    }

    /// The fault switches.
    pub fn faults(&self) -> &Faults {
        self.host.faults()
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        self.host.metrics()
    }

    /// The last (up to 1000) lines actors logged.
    pub fn logs(&self) -> Vec<LogLine> {
        lock(self.host.logs()).iter().cloned().collect()
    }

    /// Whether the actor has a database.
    pub fn exists(&self, key: &ActorKey) -> bool {
        self.host.storage().exists(key).unwrap_or_else(|e| {
            tracing::warn!(actor = %key, "{e}");
            false
        })
    }

    /// The actor's database path.
    pub fn db_path(&self, key: &ActorKey) -> PathBuf {
        self.host.storage().db_path(key)
    }

    /// Every actor the host knows (in memory or on disk) and its state.
    pub fn actors(&self) -> Vec<ActorInfo> {
        let mut seen: HashMap<ActorKey, ActorStatus> = HashMap::new();
        for k in self.host.storage().local_actors() {
            seen.insert(k, ActorStatus::Hibernated);
        }
        for (k, slot) in lock(self.host.actors()).iter() {
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
                alarm: self.host.alarms().get(&key).ok().flatten(),
                key,
                status,
            })
            .collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    /// The actor's tables and rows (the host's own table left out), read in
    /// its mailbox, at most 16 MiB of rows in at most 2 s (reading runs the
    /// SQL of the guest's generated columns).
    ///
    /// # Errors
    /// The actor does not exist or its database cannot be read;
    /// [`RuntimeError::TablesTooLarge`], [`RuntimeError::TablesTooSlow`].
    pub fn tables(&self, key: &ActorKey) -> Result<Vec<(String, QueryResult)>, RuntimeError> {
        if !self.exists(key) {
            return Err(RuntimeError::Event(format!("no such actor: {key} has no database")));
        }
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(EventKind::Inspect { reply: tx }, Vec::new()));
        rx.blocking_recv()
            .map_err(|_| RuntimeError::Host("the actor's worker stopped".into()))?
    }

    /// Deletes an actor on this node as an operator would (the admin API's
    /// `DELETE /_shim/actors/<class>/<name>`): in its mailbox after what is
    /// queued, with no guest code, its sockets closed with 1000 "actor
    /// deleted", recorded as `operator`. On one node an actor whose database
    /// cannot be opened (damaged) is deleted by removing its files.
    ///
    /// # Errors
    /// The delete failed or is not this node's to do (a cluster's actor held
    /// elsewhere, or damaged: use `wasmkeep-shim actor delete`).
    pub fn delete_actor(&self, key: &ActorKey) -> Result<AdminDeleted, RuntimeError> {
        self.host.class(key)?;
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(EventKind::AdminDelete { done: tx }, Vec::new()));
        rx.blocking_recv()
            .map_err(|_| RuntimeError::Host("the actor's worker stopped".into()))?
            .map_err(RuntimeError::Event)
    }

    /// Hibernates every resident actor once its queued events have run.
    pub fn hibernate_all(&self) {
        passes::hibernate_where(&self.host, |_| true);
    }

    /// Restarts one actor, as a crash and recovery would, once its queued
    /// events have run: its instance (and whatever it kept in memory) is
    /// dropped, a transaction it left open is rolled back, its database is
    /// closed; the next event recovers it from its files. Its sockets stay open.
    pub fn restart_actor(&self, key: &ActorKey) {
        passes::hibernate_where(&self.host, |k| k == key);
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
        self.host.stops().stop_host();
        let mut report = Shutdown::default();
        let mine: std::collections::HashSet<ActorKey> = lock(self.host.actors()).keys().cloned().collect();
        report.sockets_closed = self.host.close_sockets_where(|k| mine.contains(k), 1001, "going away");
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
        self.host.is_stopping()
    }

    /// How many actors are resident now.
    pub fn resident_count(&self) -> usize {
        lock(self.host.actors())
            .values()
            .filter(|s| s.lock().sender.is_some())
            .count()
    }
}
