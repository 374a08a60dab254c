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

use crate::address::ActorKey;
use crate::alarm_index::AlarmIndex;
use crate::clock::Clock;
use crate::component_cache::ComponentCache;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::failure_kind::FailureKind;
use crate::faults::Faults;
use crate::http_types::SocketMessage;
use crate::imports::{HostState, NodeHandles, NodeServices};
use crate::job::{self, CallFailure, GuestEvent, Job, JobKind};
use crate::metrics::Metrics;
use crate::remote_calls::{CallRoute, RemoteCall};
use crate::scheduler::{ActorStatus, Refused, Scheduler};
use crate::sockets::{NOT_READING, SocketTable};
use crate::storage::ActorStorage;
pub(crate) use crate::unpoisoned::lock;
pub(crate) use app_table::{AppTable, Class};
pub(crate) use log_book::LogBook;
pub use log_book::LogLine;
pub(crate) use parts::HostParts;
use serde::Serialize;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use stops::Stops;
use wasmtime::Engine;
use wasmtime::component::Linker;

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
    /// Its actors' mailboxes and their workers.
    scheduler: Arc<Scheduler>,
    sockets: Arc<SocketTable>,
    cache: ComponentCache,
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
    /// How a call reaches an actor held by a node of another process:
    /// installed once at start-up by a node process's dev server (ADR 034).
    remote_calls: std::sync::OnceLock<Arc<dyn crate::remote_calls::RemoteCalls>>,
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
        let rec = match crate::replica::recorded_holder(c.bucket.as_ref(), key) {
            Ok(rec) => rec?,
            Err(e) => {
                // Not known now: the job runs here, where opening the actor
                // asks the bucket again and answers what it says.
                tracing::warn!(actor = %key, "reading the actor's ownership record: {e}");
                return None;
            }
        };
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

    /// Whether `key` exists, for an `existing` class: resident here says so
    /// without a listing; otherwise the storage is asked (in a cluster, a
    /// bucket listing). A socket's opening asks here; a request's worker asks
    /// the storage itself, knowing its own cell is not resident.
    ///
    /// # Errors
    /// The storage could not tell: never read as absent.
    pub(crate) fn exists(&self, key: &ActorKey) -> Result<bool, crate::storage::StorageError> {
        if self.scheduler.is_resident(key) {
            return Ok(true);
        }
        self.storage.exists(key)
    }

    /// Whether an ordered shutdown began.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stops.host_stopped()
    }

    /// Whether no guest code of `app` runs here any more (the host stopping,
    /// or the app deleted).
    pub(crate) fn halted(&self, app: &str) -> bool {
        self.is_stopping() || self.stops.app_stopped(app)
    }

    /// Puts a job in the actor's mailbox (the scheduler wakes a worker if
    /// it has none); a job its full mailbox has no room for is refused by
    /// its kind (ADR 012).
    pub(crate) fn enqueue(self: &Arc<Self>, key: &ActorKey, job: Job) {
        if let Err(Refused(job)) = self.scheduler.enqueue(key, job, self.runs_requests_here()) {
            self.refuse_queue_full(key, *job);
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

    /// Whether a resident actor's requests run on the thread that received
    /// them (ADR 048): on a single node. A cluster's storage and calls to
    /// another node process wait on the network inside an event, which
    /// would hold an HTTP server's thread.
    pub(crate) fn runs_requests_here(&self) -> bool {
        self.cluster.is_none() && self.remote_calls.get().is_none()
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

    fn socket_send(&self, key: &ActorKey, id: u64, msg: SocketMessage) -> Result<(), crate::sockets::SocketGone> {
        Host::socket_send(self, key, id, msg)
    }

    fn socket_close(
        &self,
        key: &ActorKey,
        id: u64,
        code: u16,
        reason: String,
    ) -> Result<(), crate::sockets::SocketGone> {
        let me = self.me.upgrade().ok_or(crate::sockets::SocketGone::NotOpen)?;
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
