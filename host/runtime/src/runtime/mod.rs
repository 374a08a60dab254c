//! The runtime: the public API of one node's host, that the dev server, the
//! test harnesses and the conformance runner all use. It builds the node
//! (choosing its storage once) and hands events to actors' mailboxes.

mod admin;
mod answer_spin;
mod apps;
mod cluster_passes;
mod dev_controls;
mod events;
mod shutdown;
#[cfg(test)]
mod tests;

pub use admin::Admin;
pub use cluster_passes::ClusterPasses;
pub use dev_controls::DevControls;

use crate::address::ActorKey;
use crate::bindings::ActorPre;
use crate::component_cache::CacheOutcome;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::failure_kind::FailureKind;
use crate::faults::Faults;
use crate::http_types::{HttpRequest, HttpResponse, SocketMessage};
use crate::imports::HostState;
use crate::job::{self, CallFailure, GuestEvent, HostJob, Job, WorkerJob};
use crate::job::{AdminDeleted, Restored};
use crate::manifest::{Access, ClassSpec, Manifest};
use crate::metrics::Metrics;
use crate::node::{ActorInfo, Class, Host, LogLine};
use crate::node_builder;
use crate::passes::{self, ExpiryPass, queue_due};
use crate::scheduler::ActorStatus;
use crate::sockets::OutboundReceiver;
use crate::sql_types::QueryResult;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The local host. Cheap to clone; every clone is the same host. Dropping
/// the last clone shuts the host down as [`Runtime::shutdown`] does, and
/// returns once its actors are released; on an async runtime's thread it
/// returns at once, and the release follows on a thread of its own (ADR 060).
#[derive(Clone)]
pub struct Runtime {
    host: Arc<Host>,
    /// Shared by the clones only: its drop is the last clone's.
    _last: Arc<shutdown::LastHandle>,
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
        crate::block_on::block_on(self.answer(Duration::ZERO))
    }

    /// Waits asynchronously. Dropping this (or the future) before the answer
    /// came, as when the client went away, gives the event up if it has not
    /// started.
    pub async fn recv(self) -> HttpResponse {
        self.answer(ANSWER_SPIN).await
    }

    /// The answer, looked for during `spin` before parking on it. A thread
    /// blocked in [`PendingResponse::wait`] has nothing else to run: it
    /// parks at once.
    async fn answer(self, spin: Duration) -> HttpResponse {
        let Self {
            mut rx,
            ticket,
            host,
            app,
        } = self;
        let no_answer = || HttpResponse::host_failure(FailureKind::Host, "the event ended without an answer");
        let ended = |r: Result<HttpResponse, _>| r.unwrap_or_else(|_| no_answer());
        // A request run on the thread that received it (ADR 048) has its
        // answer already: no turn to spin, no clock. A receiver that found
        // its sender gone is spent, and polling it again would panic.
        match rx.try_recv() {
            Ok(r) => return r,
            Err(tokio::sync::oneshot::error::TryRecvError::Closed) => return no_answer(),
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
        }
        // A short event answers within tens of microseconds. A task that
        // parks on the answer lets its worker thread sleep, and the answer
        // then waits for that thread to be woken and scheduled again (about
        // as long as the event itself on this hardware). Yielding for a
        // while instead keeps the thread polling, as the actor's worker
        // looks for its next job before it parks (ADR 037).
        // One waiter spins at a time; the others park at once (`answer_spin`).
        let turn = if spin.is_zero() {
            None
        } else {
            answer_spin::ANSWER_SPIN_TURNS.take()
        };
        if let Some(_turn) = turn {
            let spin_until = std::time::Instant::now() + spin;
            while std::time::Instant::now() < spin_until {
                match rx.try_recv() {
                    Ok(r) => return r,
                    Err(tokio::sync::oneshot::error::TryRecvError::Empty) => tokio::task::yield_now().await,
                    Err(tokio::sync::oneshot::error::TryRecvError::Closed) => return no_answer(),
                }
            }
        }
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
    /// The node's host, for the crate's own tests.
    #[cfg(test)]
    pub(crate) fn host(&self) -> &Arc<Host> {
        &self.host
    }

    fn from_host(host: Arc<Host>) -> Self {
        Self {
            _last: shutdown::LastHandle::new(host.clone()),
            host,
        }
    }

    /// Starts a runtime: the engine, the data directory, the alarm timer.
    ///
    /// # Errors
    /// The engine cannot be configured or the data directory cannot be created.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        node_builder::build_host(config, None).map(Self::from_host)
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
            return Err(RuntimeError::BadArgument(format!(
                "node id {node:?} must be non-empty and have no '/'"
            )));
        }
        node_builder::build_host(config, Some((cluster, node.to_owned()))).map(Self::from_host)
    }

    /// This node's id in its cluster (none on a single node).
    pub fn node_id(&self) -> Option<&str> {
        self.host.cluster().map(|c| c.node.as_str())
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &RuntimeConfig {
        self.host.config()
    }

    /// Whether the class lets an event from outside reach `key`; its access.
    /// The class's access, for an event from outside the app: an `internal`
    /// class refuses it. Whether an `existing` class's actor exists is asked
    /// once per event, where the event is (`Host::exists`): a request's
    /// worker asks before it runs (off the async thread, and not a second
    /// time); a socket's opening asks in [`Runtime::open_socket`].
    fn check_outside_access(&self, key: &ActorKey) -> Result<Access, RuntimeError> {
        let access = self.host.class(key)?.access;
        match access {
            Access::Open | Access::Existing => Ok(access),
            Access::Internal => Err(RuntimeError::Internal(key.class.clone())),
        }
    }

    /// The ordered shutdown (tellus's lesson: "stopped" is reported last, so
    /// whoever waits on it knows everything is gone). In order: no new guest
    /// code runs; events still queued are answered at once (503 over HTTP,
    /// `failed` to calls) instead of waiting; running events finish; every
    /// WebSocket is closed with 1001 "going away"; every actor is released
    /// (instance dropped, database closed, hold let go in a cluster). It
    /// returns only when all of that is done. A guest that traps or a worker
    /// that panics does not stop the sequence. Calling it again is harmless.
    /// Dropping the last handle runs it too (ADR 060); on an async runtime,
    /// call [`Runtime::shutdown_async`] first, so the drop has nothing left
    /// to wait for.
    pub fn shutdown(&self) -> Shutdown {
        shutdown::shut_down(&self.host)
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
}

/// How long a waiter for an answer yields before it parks (ADR 037).
const ANSWER_SPIN: Duration = Duration::from_micros(100);
