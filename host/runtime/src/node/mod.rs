//! One node's host: its apps, its actors' mailboxes, its storage, clock and
//! alarm index, and the operations every actor's worker and imports use.
//! Used by the runtime (the public API) and every worker.

mod app_table;
mod calls;
mod log_book;
mod out_of_files;
mod parts;
mod socket_ops;
mod stops;
#[cfg(test)]
mod tests;
mod worker_run;

use crate::address::ActorKey;
use crate::alarm_index::AlarmIndex;
use crate::clock::Clock;
use crate::component_cache::ComponentCache;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::event_error::EventError;
use crate::failure_kind::FailureKind;
use crate::faults::Faults;
use crate::http_types::SocketMessage;
use crate::imports::{HostState, NodeHandles, NodeServices};
use crate::job::{self, CallFailure, GuestEvent, Job, JobKind, WorkerJob};
use crate::metrics::Metrics;
use crate::remote_calls::{CallRoute, RemoteCall};
use crate::scheduler::residency::{Admission, Residency};
use crate::scheduler::worker_threads::{self, WorkerThreads};
use crate::scheduler::{ActorStatus, Mailbox, MailboxState, Mailboxes, ParkedWorker, Resumed, WorkerEnd};
use crate::sockets::{NOT_READING, SocketTable};
use crate::storage::ActorStorage;
pub(crate) use app_table::{AppTable, Class};
pub(crate) use log_book::LogBook;
pub use log_book::LogLine;
pub(crate) use parts::HostParts;
use serde::Serialize;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use stops::Stops;
use wasmtime::Engine;
use wasmtime::component::Linker;
use worker_run::{NodeWorkerRun, Unstarted};

/// How a node starts an actor's worker `id`: the runtime passes the worker
/// loop in, so that this module does not depend on the worker that depends
/// on it.
pub(crate) type SpawnWorker = fn(&Arc<Host>, &Arc<Mailbox>, mpsc::Receiver<Job>, u64) -> WorkerEnd;

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
    /// Its last guest event on this node since the host started, and how it ended.
    pub last_event: Option<crate::last_event::LastEvent>,
    /// The node of another process that holds it, as the bucket's record
    /// named it when this node last had an event for it (and sent the event
    /// there); none when it is held here or this node did not ask.
    pub held_elsewhere: Option<String>,
}

/// One node's host: what the runtime and every actor's worker share.
pub struct Host {
    /// This node itself, for the cluster directory's mailbox deliveries.
    me: std::sync::Weak<Host>,
    /// The worker loop (see [`SpawnWorker`]).
    spawn_worker: SpawnWorker,
    engine: Engine,
    linker: Linker<HostState>,
    config: RuntimeConfig,
    clock: Arc<dyn Clock>,
    faults: Arc<Faults>,
    metrics: Arc<Metrics>,
    /// Where actors' durable state lives: one node's files or a cluster's bucket.
    storage: Arc<dyn ActorStorage>,
    alarms: Arc<dyn AlarmIndex>,
    apps: AppTable,
    /// How many classes `Runtime::reload_class` has replaced: each event
    /// compares it with one atomic load, and looks its class up only when it moved.
    class_reloads: std::sync::atomic::AtomicU64,
    mailboxes: Mailboxes,
    sockets: Arc<SocketTable>,
    cache: ComponentCache,
    /// The resident-actor cap and the mailboxes waiting for a worker.
    residency: Residency<Mailbox>,
    logs: LogBook,
    /// Set in cluster mode: the cluster and this node's place in it.
    cluster: Option<crate::cluster::ClusterNode>,
    /// The engine's pool of instance slots and its claim on the process's
    /// address space, given back when the node is dropped (ADR 042).
    instance_pool: Option<crate::instance_pool::InstancePool>,
    /// What has stopped here: the host, or single apps.
    stops: Stops,
    /// What the passes keep between runs.
    pass_book: crate::pass_book::PassBook,
    /// Threads kept from workers that ended, for the next to start.
    worker_threads: Arc<WorkerThreads<NodeWorkerRun>>,
    /// How a call reaches an actor held by a node of another process:
    /// installed once at start-up by a node process's dev server (ADR 034).
    remote_calls: std::sync::OnceLock<Arc<dyn crate::remote_calls::RemoteCalls>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl crate::cluster::NodeMailboxes for Host {
    fn deliver(&self, key: &ActorKey, job: Job) {
        if let Some(me) = self.me.upgrade() {
            me.enqueue(key, job);
        }
    }
}

impl Host {
    /// The mailboxes of another live node of this node's cluster.
    pub(crate) fn node_mailboxes(&self, node: &str) -> Option<Arc<dyn crate::cluster::NodeMailboxes>> {
        self.cluster.as_ref().and_then(|c| c.cluster.node(node))
    }

    /// Where another node of this node's cluster answers HTTP, if it is a
    /// live node process that said.
    pub(crate) fn node_address(&self, node: &str) -> Option<String> {
        self.cluster.as_ref().and_then(|c| c.cluster.address(node))
    }

    /// The live node of another process that holds `key` now, if one does
    /// (its ownership record names it, unreleased): its id and its address.
    pub(crate) fn remote_holder(&self, key: &ActorKey) -> Option<(String, Option<String>)> {
        let c = self.cluster.as_ref()?;
        let rec = crate::replica::recorded_holder(c.bucket.as_ref(), key).ok()??;
        let remote = !rec.released
            && rec.node != c.node
            && self.node_mailboxes(&rec.node).is_none()
            && c.cluster.is_live(&rec.node);
        remote.then(|| {
            let address = c.cluster.address(&rec.node);
            (rec.node, address)
        })
    }

    pub(crate) fn wake_timer(&self) {
        self.pass_book.wake_timer();
    }

    pub(crate) fn record_log(&self, key: &ActorKey, level: &'static str, message: &str) {
        self.logs.record(LogLine {
            at: self.clock.now_ms(),
            actor: key.to_string(),
            level,
            message: message.to_owned(),
        });
    }

    pub(crate) fn class(&self, key: &ActorKey) -> Result<Arc<Class>, RuntimeError> {
        self.apps.class(key)
    }

    pub(crate) fn slot(&self, key: &ActorKey) -> Arc<Mailbox> {
        self.mailboxes.of(key)
    }

    /// Whether events may be queued here for `key`: its worker runs, or its
    /// mailbox waits for a resident place. Creates no mailbox.
    pub(crate) fn has_queue(&self, key: &ActorKey) -> bool {
        let slot = self.mailboxes.get(key);
        slot.is_some_and(|s| s.lock().has_worker())
    }

    /// Whether `key` exists, for an `existing` class: resident here says so
    /// without a listing; otherwise the storage is asked (in a cluster, a
    /// bucket listing). A socket's opening asks here; a request's worker asks
    /// the storage itself, knowing its own cell is not resident.
    ///
    /// # Errors
    /// The storage could not tell: never read as absent.
    pub(crate) fn exists(&self, key: &ActorKey) -> Result<bool, crate::storage::StorageError> {
        if self.is_resident(key) {
            return Ok(true);
        }
        self.storage.exists(key)
    }

    /// Whether `key` is resident here now (its instance kept by its worker).
    pub(crate) fn is_resident(&self, key: &ActorKey) -> bool {
        // The node's lock is let go before the mailbox's: a mailbox may be
        // held for a while (its database closing, ADR 045).
        let slot = self.mailboxes.get(key);
        slot.is_some_and(|s| s.lock().status() == ActorStatus::Resident)
    }

    /// Whether an ordered shutdown began.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stops.host_stopped()
    }

    /// After the shutdown released every actor: the worker threads waiting
    /// for another run end now, instead of after their linger (ADR 060).
    pub(crate) fn end_waiting_worker_threads(&self) {
        self.worker_threads.close();
    }

    /// Whether no guest code of `app` runs here any more (the host stopping,
    /// or the app deleted).
    pub(crate) fn halted(&self, app: &str) -> bool {
        self.is_stopping() || self.stops.app_stopped(app)
    }

    /// Puts a job in the actor's mailbox, waking a worker if it has none.
    /// At the resident-actor cap the mailbox waits for a worker while the
    /// least recently used residents hibernate; when too many wait, the job
    /// is refused (503 with `Retry-After`).
    pub(crate) fn enqueue(self: &Arc<Self>, key: &ActorKey, job: Job) {
        let slot = self.slot(key);
        self.residency.touch(&slot);
        let mut job = job;
        if let Some(bytes) = job.kind.outside_bytes() {
            match slot.bound.admit(bytes) {
                Some(share) => {
                    if job.kind.is_request() {
                        slot.overlap.admitted(share.behind());
                    }
                    job.queued_share = Some(share);
                }
                None => {
                    self.refuse_queue_full(key, job);
                    return;
                }
            }
        }
        let here = job.kind.runs_where_received() && self.runs_requests_here();
        let mut inner = slot.lock();
        job.generation = inner.generation();
        let job = match inner.sender() {
            Some(tx) => match tx.send(job) {
                Ok(()) => {
                    match inner.take_parked() {
                        // An actor whose database the idle sweep closed
                        // reopens it on a thread of the node's, not the
                        // receiving one (ADR 059).
                        Some(parked) if here && parked.runs_here && !parked.rested => {
                            drop(inner);
                            self.run_here(&slot, parked);
                        }
                        Some(parked) => {
                            if let Some(unstarted) = self.resume_worker(&slot, &mut inner, parked) {
                                drop(inner);
                                self.worker_unstarted(unstarted);
                            }
                        }
                        None => {}
                    }
                    return;
                }
                // The worker is gone (it panicked): start a new one with this job.
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (tx, rx) = mpsc::channel();
        let _ = tx.send(job);
        inner.worker_given(tx);
        match self.residency.admit(&slot, rx) {
            Admission::Start { id, rx } => {
                if let Err(unstarted) = self.start_worker(id, slot.clone(), rx) {
                    inner.worker_left();
                    drop(inner);
                    self.worker_unstarted(unstarted);
                }
            }
            Admission::Wait { evict } => {
                drop(inner);
                self.metrics.inc(crate::metrics::RESIDENT_WAITS_TOTAL, "");
                for victim in evict {
                    self.ask_to_hibernate(&victim);
                }
            }
            Admission::Full { rx } => {
                inner.worker_left();
                drop(inner);
                self.metrics.inc(crate::metrics::RESIDENT_REFUSALS_TOTAL, "");
                let why = crate::event_error::EventError::Overloaded {
                    limit: self.residency.limit(),
                };
                while let Ok(job) = rx.try_recv() {
                    crate::event_error::fail_job(job.kind, &why);
                }
            }
        }
    }

    /// An event from outside found its actor's mailbox full: it is answered
    /// 503 (a socket message closes its socket with 1013, try again later).
    fn refuse_queue_full(self: &Arc<Self>, key: &ActorKey, job: Job) {
        self.metrics.inc(crate::metrics::MAILBOX_REFUSALS_TOTAL, "");
        let why = crate::event_error::EventError::MailboxFull(key.clone());
        if let JobKind::Guest(GuestEvent::SocketMessage { id, .. }) = &job.kind {
            let entry = self.sockets.remove(*id);
            if let Some(entry) = entry {
                let reason = "the actor has too many events waiting: try again later";
                entry.close(1013, reason.into());
                self.enqueue(
                    key,
                    Job::new(
                        GuestEvent::SocketClose {
                            id: *id,
                            code: 1013,
                            reason: reason.into(),
                        },
                        Vec::new(),
                    ),
                );
            }
            return;
        }
        crate::event_error::fail_job(job.kind, &why);
    }

    /// Starts worker `id` for `slot` on a thread of its own (one that
    /// waits from an earlier worker, or a new one); when it ends, the next
    /// mailbox waiting for a worker gets one.
    ///
    /// # Errors
    /// The system would start no thread: the worker never ran, and its
    /// jobs come back. The caller takes the mailbox's sender away, and then
    /// hands them to [`Host::worker_unstarted`].
    fn start_worker(self: &Arc<Self>, id: u64, slot: Arc<Mailbox>, rx: mpsc::Receiver<Job>) -> Result<(), Unstarted> {
        let run = NodeWorkerRun::Start {
            host: self.clone(),
            slot: slot.clone(),
            jobs: rx,
            id,
        };
        self.worker_threads
            .run(run)
            .map_err(|no| Self::unstarted(id, &slot, no))
    }

    /// What is left of `slot`'s worker `id`, whose run no thread took.
    fn unstarted(id: u64, slot: &Mailbox, no: worker_threads::NoThread<NodeWorkerRun>) -> Unstarted {
        let actor = slot.key.clone();
        tracing::error!(%actor, "cannot start a thread for the actor's worker: {}", no.error);
        Unstarted::new(
            id,
            no.run,
            EventError::NoThread {
                actor,
                source: no.error,
            },
        )
    }

    /// A worker found no thread: its jobs are answered (503, try again),
    /// and its place among the residents goes to the next that waits.
    /// Called once its mailbox's sender is gone and its lock let go.
    fn worker_unstarted(self: &Arc<Self>, unstarted: Unstarted) {
        let id = unstarted.answer();
        self.worker_left(id);
    }

    /// Worker `id` ended: start the next waiting mailbox's worker, if any.
    fn worker_left(self: &Arc<Self>, id: u64) {
        let mut id = id;
        while let Some((next_id, mailbox, rx)) = self.residency.left(id) {
            let Err(unstarted) = self.start_worker(next_id, mailbox.clone(), rx) else {
                return;
            };
            // No thread: its jobs are answered, and the next one may fare better.
            mailbox.lock().worker_left();
            id = unstarted.answer();
        }
    }

    /// A request came for a parked worker that runs requests where they are
    /// received: it runs on this thread, as the receiving one (ADR 048),
    /// and what it does not run here goes on on a thread of the node's.
    fn run_here(self: &Arc<Self>, slot: &Mailbox, parked: ParkedWorker) {
        if let Resumed::ToThread(parked) = parked.run.resume_here() {
            let mut inner = slot.lock();
            if let Some(unstarted) = self.resume_worker(slot, &mut inner, parked) {
                drop(inner);
                self.worker_unstarted(unstarted);
            }
        }
    }

    /// Whether a resident actor's requests run on the thread that received
    /// them (ADR 048): on a single node. A cluster's storage and calls to
    /// another node process wait on the network inside an event, which
    /// would hold an HTTP server's thread.
    pub(crate) fn runs_requests_here(&self) -> bool {
        self.cluster.is_none() && self.remote_calls.get().is_none()
    }

    /// A job came for a parked worker: it goes on with its run on a thread
    /// (one that waits from an earlier worker, or a new one). Called under
    /// the mailbox's lock (`inner`), as a worker is started, so that when no
    /// thread starts, no job finds the mailbox between the run dropped (its
    /// cell and receiver with it) and the mailbox marked as having no worker.
    /// Returns what is left of the worker when no thread started: the
    /// caller hands it to [`Host::worker_unstarted`] once it has let go of
    /// the lock.
    #[must_use]
    fn resume_worker(
        self: &Arc<Self>,
        slot: &Mailbox,
        inner: &mut MailboxState,
        parked: ParkedWorker,
    ) -> Option<Unstarted> {
        let id = parked.worker;
        let run = NodeWorkerRun::Resume {
            host: self.clone(),
            id,
            run: parked.run,
        };
        let no = self.worker_threads.run(run).err()?;
        // The run goes with its cell: the actor's files are closed (a
        // cluster hold lapses with its lease), and the jobs it had queued
        // are answered. The next job starts a new worker.
        inner.worker_left();
        Some(Self::unstarted(id, slot, no))
    }

    /// The idle sweep's look at one mailbox, under one lock so that an
    /// actor that got a job meanwhile is left alone: if its worker has been
    /// parked for `hibernate_after`, asks it to hibernate; otherwise, if for
    /// `rest_after` and its database is still open, closes it on this thread
    /// (ADR 045). Returns whether it closed a database.
    pub(crate) fn sweep_parked(
        self: &Arc<Self>,
        mailbox: &Arc<Mailbox>,
        rest_after: Duration,
        hibernate_after: Duration,
    ) -> bool {
        let mut inner = mailbox.lock();
        let Some(parked) = inner.parked_mut() else {
            return false;
        };
        let parked_for = parked.since.elapsed();
        if parked_for >= hibernate_after {
            self.send_hibernate(mailbox, inner);
            return false;
        }
        if parked_for >= rest_after && !parked.rested {
            parked.rested = true;
            return parked.run.rest();
        }
        false
    }

    /// Asks a resident's worker to hibernate after what it has queued; never
    /// starts a worker for it (a parked one goes on to hibernate).
    fn ask_to_hibernate(self: &Arc<Self>, victim: &Arc<Mailbox>) {
        self.send_hibernate(victim, victim.lock());
    }

    /// Queues a hibernation for the worker of `mailbox` (whose lock `inner`
    /// is), resuming it if it is parked; nothing when it has no worker.
    fn send_hibernate(self: &Arc<Self>, mailbox: &Mailbox, mut inner: std::sync::MutexGuard<'_, MailboxState>) {
        let Some(tx) = inner.sender() else { return };
        let (done, _) = tokio::sync::oneshot::channel();
        if tx.send(Job::new(WorkerJob::Hibernate { done }, Vec::new())).is_ok()
            && let Some(parked) = inner.take_parked()
            && let Some(unstarted) = self.resume_worker(mailbox, &mut inner, parked)
        {
            drop(inner);
            self.worker_unstarted(unstarted);
        }
    }

    /// An operator delete request is no longer queued here.
    pub(crate) fn operator_released(&self, req: &crate::operator::DeleteRequest) {
        self.pass_book.release_operator_request(&req.object);
    }
}

impl NodeServices for Host {
    fn alarm_set(&self) {
        self.wake_timer();
    }

    fn log(&self, key: &ActorKey, level: &'static str, message: &str) {
        self.record_log(key, level, message);
    }

    fn socket_send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), ()> {
        Host::socket_send(self, key, id, msg)
    }

    fn socket_close(&self, key: &ActorKey, id: u64, code: u16, reason: String) -> Result<(), ()> {
        let me = self.me.upgrade().ok_or(())?;
        me.socket_close_by_actor(key, id, code, reason)
    }

    fn sockets_of(&self, key: &ActorKey) -> Vec<u64> {
        Host::sockets_of(self, key)
    }

    fn call(
        &self,
        target: &ActorKey,
        caller: Option<ActorKey>,
        payload: Vec<u8>,
        chain: Vec<ActorKey>,
        limit: Duration,
    ) -> Result<Vec<u8>, CallFailure> {
        let me = self
            .me
            .upgrade()
            .ok_or_else(|| CallFailure::failed(FailureKind::ShuttingDown, job::SHUTTING_DOWN))?;
        me.call_blocking(target, caller, Arc::new(payload), chain, limit, CallRoute::FromHere)
    }
}

impl Host {
    /// What a new actor's imports are given.
    pub(crate) fn handles_for_imports(self: &Arc<Self>) -> NodeHandles {
        NodeHandles {
            services: self.clone(),
            clock: self.clock.clone(),
            alarms: self.alarms.clone(),
            metrics: self.metrics.clone(),
            event_timeout: self.config.event_timeout,
            memory_limit_bytes: self.config.memory_limit_bytes,
        }
    }
}
