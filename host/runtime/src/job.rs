//! What goes into an actor's mailbox: events for guest code and jobs of the
//! host's own, with the ticket that lets a waiter give up on one still queued.

use crate::address::ActorKey;
use crate::failure_kind::FailureKind;
use crate::http_types::{HttpRequest, HttpResponse, SocketMessage};
use crate::sql_types::QueryResult;
use std::sync::{Arc, mpsc};
use tokio::sync::oneshot;

/// A call's failure, as the WIT's `call-error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// Not delivered: `kind` says why (no such app or class, a call cycle).
    Refused {
        /// Why, as answers and tests name it.
        kind: FailureKind,
        /// What happened and what to do.
        message: String,
    },
    /// The callee answered with an error (its own words: no host kind).
    Rejected(String),
    /// The callee's event failed: `kind` says how (the guest failed, the
    /// host is shutting down, no answer in time, ...).
    Failed {
        /// How, as answers and tests name it.
        kind: FailureKind,
        /// What happened and what to do.
        message: String,
    },
}

impl CallFailure {
    /// Its variant, as the WIT's `call-error` and every harness name it:
    /// `refused`, `rejected` or `failed` (the host's kind of it is
    /// [`CallFailure::failure`]).
    pub fn variant(&self) -> &'static str {
        match self {
            CallFailure::Refused { .. } => "refused",
            CallFailure::Rejected(_) => "rejected",
            CallFailure::Failed { .. } => "failed",
        }
    }

    /// The host's kind of the failure (none when the callee rejected the call itself).
    pub fn failure(&self) -> Option<FailureKind> {
        match self {
            CallFailure::Refused { kind, .. } | CallFailure::Failed { kind, .. } => Some(*kind),
            CallFailure::Rejected(_) => None,
        }
    }

    /// What it says happened.
    pub fn message(&self) -> &str {
        match self {
            CallFailure::Refused { message, .. } | CallFailure::Failed { message, .. } => message,
            CallFailure::Rejected(m) => m,
        }
    }

    /// A failure of the callee's event, of `kind`.
    pub(crate) fn failed(kind: FailureKind, message: impl Into<String>) -> Self {
        CallFailure::Failed {
            kind,
            message: message.into(),
        }
    }
}

/// What a restore did (ADR 064).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Restored {
    /// The position whose state was restored, as a bookmark.
    pub from: String,
    /// The new head, where the restored state now stands.
    pub at: String,
    /// The head before the restore: restoring to it undoes this one.
    pub undo: String,
}

/// What the admin API's delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminDeleted {
    /// Deleted through the one delete routine (sockets closed first).
    Deleted,
    /// Its database could not be opened (damaged): its files were removed.
    RemovedUnopenable,
    /// There was no such actor.
    Absent,
}

/// A reader from outside the actor, given a read-only connection to its
/// database, or why none could be had.
pub(crate) type LentRead =
    Box<dyn FnOnce(Result<&rusqlite::Connection, crate::actor_db::LentReadError>) + Send + 'static>;

/// What a job in an actor's mailbox is. Each kind is run in one place:
/// guest events by the guest call ([`crate::guest_call`]), host jobs by the
/// actor's cell (`actor_cell::host_jobs`), worker jobs by the worker; a job
/// that cannot run is answered by `event_error::fail_job`.
pub(crate) enum JobKind {
    /// An event that runs the actor's guest code.
    Guest(GuestEvent),
    /// The host's own work on the actor: no guest code runs.
    Host(HostJob),
    /// The worker's own: a hibernation, or a test host's wait.
    Worker(WorkerJob),
}

/// An event that runs the actor's guest code (the WIT's exports).
pub(crate) enum GuestEvent {
    Request {
        req: HttpRequest,
        respond: oneshot::Sender<HttpResponse>,
        /// From outside, to an `existing` class: checked when it runs, once.
        require_existing: bool,
    },
    Call {
        caller: Option<ActorKey>,
        /// Shared, so that a call kept for another node process (ADR 034)
        /// costs no copy of it.
        payload: std::sync::Arc<Vec<u8>>,
        reply: mpsc::Sender<Result<Vec<u8>, CallFailure>>,
    },
    Alarm {
        ran: oneshot::Sender<bool>,
    },
    SocketOpen {
        id: u64,
        path: String,
    },
    SocketMessage {
        id: u64,
        msg: SocketMessage,
    },
    SocketClose {
        id: u64,
        code: u16,
        reason: String,
    },
}

/// The host's own work on one actor, in its mailbox so that it runs between
/// its events; runs no guest code.
pub(crate) enum HostJob {
    /// Read the actor's tables.
    Inspect {
        reply: oneshot::Sender<Result<Vec<(String, QueryResult)>, crate::error::RuntimeError>>,
    },
    /// A read of the actor's database from outside it (the dashboard), on a
    /// read-only connection (ADR 040); never wakes it.
    LentRead { read: LentRead },
    /// The admin API's delete of one node's actor (works when its database
    /// cannot be opened).
    AdminDelete {
        done: oneshot::Sender<Result<AdminDeleted, crate::error::RuntimeError>>,
    },
    /// Put the state at an earlier position on the actor's head (ADR 064);
    /// the instance is dropped after it.
    Restore {
        to: crate::replica::Target,
        done: oneshot::Sender<Result<Restored, crate::error::RuntimeError>>,
    },
    /// Carry out an operator delete request.
    OperatorDelete { req: crate::operator::DeleteRequest },
    /// Idle expiry: delete the actor if its ownership record is still this
    /// version and it has no alarm and no socket.
    Expire {
        etag: crate::bucket::ETag,
        done: oneshot::Sender<bool>,
    },
}

impl HostJob {
    /// Whether it stops with the app, as guest events do: an operator
    /// delete and an idle expiry do not run once the host or the app is
    /// stopping (the next node that holds the actor carries them out); a
    /// read, an admin delete and a restore answer whatever happens.
    pub(crate) fn stops_with_the_app(&self) -> bool {
        matches!(self, HostJob::OperatorDelete { .. } | HostJob::Expire { .. })
    }
}

/// The worker's own jobs: they change where the actor runs, never its state.
pub(crate) enum WorkerJob {
    /// Every earlier job has run (a test host's wait).
    Barrier { done: oneshot::Sender<()> },
    /// Drop the instance and close the database.
    Hibernate { done: oneshot::Sender<()> },
}

impl WorkerJob {
    /// Tells its waiter it is done.
    pub(crate) fn answer(self) {
        match self {
            WorkerJob::Barrier { done } | WorkerJob::Hibernate { done } => {
                let _ = done.send(());
            }
        }
    }
}

impl From<GuestEvent> for JobKind {
    fn from(e: GuestEvent) -> Self {
        JobKind::Guest(e)
    }
}

impl From<HostJob> for JobKind {
    fn from(j: HostJob) -> Self {
        JobKind::Host(j)
    }
}

impl From<WorkerJob> for JobKind {
    fn from(j: WorkerJob) -> Self {
        JobKind::Worker(j)
    }
}

impl JobKind {
    /// Whether it is a request (the only job that may run on the thread
    /// that received it, ADR 048).
    pub(crate) fn is_request(&self) -> bool {
        matches!(self, JobKind::Guest(GuestEvent::Request { .. }))
    }

    /// Whether it may run on the thread that received it: a request, or a
    /// barrier (a test host's wait for what is queued runs where a request
    /// would, so that waiting on one does not move the worker).
    pub(crate) fn runs_where_received(&self) -> bool {
        matches!(
            self,
            JobKind::Guest(GuestEvent::Request { .. }) | JobKind::Worker(WorkerJob::Barrier { .. })
        )
    }

    /// Whether it is a read from outside, which never wakes the actor.
    pub(crate) fn is_lent_read(&self) -> bool {
        matches!(self, JobKind::Host(HostJob::LentRead { .. }))
    }

    /// The bytes an event from outside brings (requests, calls, socket
    /// opens and messages), for its mailbox's bound; `None` for the host's
    /// own jobs, which are never refused.
    pub(crate) fn outside_bytes(&self) -> Option<usize> {
        match self {
            JobKind::Guest(e) => e.outside_bytes(),
            JobKind::Host(_) | JobKind::Worker(_) => None,
        }
    }
}

impl GuestEvent {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            GuestEvent::Request { .. } => "request",
            GuestEvent::Call { .. } => "call",
            GuestEvent::Alarm { .. } => "alarm",
            GuestEvent::SocketOpen { .. } => "socket_open",
            GuestEvent::SocketMessage { .. } => "socket_message",
            GuestEvent::SocketClose { .. } => "socket_close",
        }
    }

    /// Its name as an actor's last event.
    pub(crate) fn name(&self) -> crate::last_event::EventKindName {
        use crate::last_event::EventKindName as N;
        match self {
            GuestEvent::Request { .. } => N::Request,
            GuestEvent::Call { .. } => N::Call,
            GuestEvent::Alarm { .. } => N::Alarm,
            GuestEvent::SocketOpen { .. } => N::SocketOpen,
            GuestEvent::SocketMessage { .. } => N::SocketMessage,
            GuestEvent::SocketClose { .. } => N::SocketClose,
        }
    }

    /// The bytes it brings from outside; `None` for an alarm (the host's own).
    fn outside_bytes(&self) -> Option<usize> {
        match self {
            GuestEvent::Request { req, .. } => Some(req.body.len() + req.path.len()),
            GuestEvent::Call { payload, .. } => Some(payload.len()),
            GuestEvent::SocketMessage { msg, .. } => Some(crate::sockets::message_size(msg)),
            GuestEvent::SocketOpen { path, .. } => Some(path.len()),
            GuestEvent::Alarm { .. } | GuestEvent::SocketClose { .. } => None,
        }
    }
}

/// Where a queued event stands, shared by the job and whoever waits for its
/// answer: during a shutdown a waiter answers a job still queued at once
/// (and the worker then skips it); a running one is left to finish.
pub(crate) type Ticket = Arc<std::sync::atomic::AtomicU8>;
/// Queued: neither started nor given up.
pub(crate) const QUEUED: u8 = 0;
/// Its guest code started.
pub(crate) const RUNNING: u8 = 1;
/// Answered without running (the host is shutting down); never runs.
pub(crate) const ABANDONED: u8 = 2;

/// Moves a ticket from queued to `to`; false if it had already moved.
pub(crate) fn take_ticket(t: &Ticket, to: u8) -> bool {
    t.compare_exchange(
        QUEUED,
        to,
        std::sync::atomic::Ordering::AcqRel,
        std::sync::atomic::Ordering::Acquire,
    )
    .is_ok()
}

/// The answer every event gets once the host is shutting down.
pub(crate) const SHUTTING_DOWN: &str =
    "the host is shutting down: the event was not run (send it again once the host is back)";

/// A mailbox entry.
pub(crate) struct Job {
    pub(crate) kind: JobKind,
    /// Actors waiting on this one (calls), for cycle detection.
    pub(crate) chain: Vec<ActorKey>,
    /// The actor's generation when the job was queued (stamped by `enqueue`):
    /// socket events of an earlier generation belong to a deleted actor.
    pub(crate) generation: u64,
    pub(crate) ticket: Ticket,
    /// A socket message's share of its socket's inbound budget, given back
    /// when the job is dropped (once it ran, or was skipped).
    pub(crate) inbound_share: Option<tokio::sync::OwnedSemaphorePermit>,
    /// Its place in its mailbox's bound (events from outside only).
    pub(crate) queued_share: Option<crate::scheduler::queue_bound::QueuedShare>,
}

impl Job {
    pub(crate) fn new(kind: impl Into<JobKind>, chain: Vec<ActorKey>) -> Self {
        Self {
            kind: kind.into(),
            chain,
            generation: 0,
            ticket: Arc::default(),
            inbound_share: None,
            queued_share: None,
        }
    }

    /// The worker's own job, taken out of it (a worker job carries no
    /// shares: none came from outside).
    ///
    /// # Errors
    /// It is not a worker's job: it comes back whole, for the actor's cell.
    #[allow(
        clippy::result_large_err,
        reason = "the error is the job itself, moved on to the cell as every job is moved"
    )]
    pub(crate) fn into_worker_job(self) -> Result<WorkerJob, Self> {
        if !matches!(self.kind, JobKind::Worker(_)) {
            return Err(self);
        }
        match self.kind {
            JobKind::Worker(job) => Ok(job),
            kind => Err(Self { kind, ..self }),
        }
    }
}
