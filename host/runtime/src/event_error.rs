//! Why an event could not run or did not finish, kept typed up to the
//! boundary: the dev server answers by cause, a caller's `call` gets the
//! message, and the log says which.

use crate::address::ActorKey;
use crate::failure_kind::FailureKind;
use crate::http_types::HttpResponse;
use crate::job::{CallFailure, GuestEvent, HostJob, JobKind};
use crate::storage::StorageError;

/// Why an event failed.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The class is `existing` and the actor does not exist.
    #[error("no such actor: {0} (its class is `existing`: only calls from the app create actors)")]
    NoSuchActor(ActorKey),
    /// The app or class is not loaded here (any more).
    #[error("{0}")]
    NotLoaded(String),
    /// The host is shutting down, or stopped serving the app.
    #[error("{}", crate::job::SHUTTING_DOWN)]
    ShuttingDown,
    /// The node is at its resident-actor cap and as many actors wait for a
    /// slot already.
    #[error(
        "this node is at its cap of {limit} resident actors and as many wait already: try again shortly \
         (the answer says when, in Retry-After)"
    )]
    Overloaded {
        /// The cap.
        limit: usize,
    },
    /// The node had no room to instantiate the actor: every memory slot of
    /// its instance pool is held by a resident actor (ADR 042), or the
    /// process could not map more memory (`vm.max_map_count`, or memory).
    /// One has to hibernate first; the text says which and what to change.
    #[error("{0}")]
    NoRoomToInstantiate(String),
    /// The system would not start a thread for the actor's worker (it is at
    /// its limit on threads or memory): its events are answered 503, to be
    /// tried again.
    #[error(
        "this node could not start a thread for {actor}'s worker ({source}): try again shortly; if it goes on, \
         raise the host process's limit on threads (ulimit -u, systemd's TasksMax) or lower its resident-actor \
         cap (serve --max-resident)"
    )]
    NoThread {
        /// The actor.
        actor: ActorKey,
        /// Why the system would not.
        source: std::io::Error,
    },
    /// Too many events from outside wait for this actor already.
    #[error("{0} has too many events waiting (256, or 32 MiB of bodies): try again shortly (Retry-After says when)")]
    MailboxFull(ActorKey),
    /// The actor's storage could not be opened or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The guest failed: instantiation, `on-init`, a trap, a timeout.
    #[error("{0}")]
    Guest(String),
    /// The host failed where it should not have.
    #[error("host bug: {0}")]
    Host(String),
}

impl EventError {
    /// Its kind, as answers and tests name it.
    pub fn kind(&self) -> FailureKind {
        match self {
            EventError::NoSuchActor(_) => FailureKind::NoSuchActor,
            EventError::NotLoaded(_) => FailureKind::NotLoaded,
            EventError::ShuttingDown => FailureKind::ShuttingDown,
            EventError::Overloaded { .. } | EventError::NoRoomToInstantiate(_) | EventError::NoThread { .. } => {
                FailureKind::Overloaded
            }
            EventError::MailboxFull(_) => FailureKind::MailboxFull,
            EventError::Storage(e) => e.kind(),
            EventError::Guest(_) => FailureKind::Guest,
            EventError::Host(_) => FailureKind::Host,
        }
    }

    /// The host's answer to a request that failed for this reason.
    pub(crate) fn answer(&self) -> HttpResponse {
        let mut r = HttpResponse::host_failure(self.kind(), self.to_string());
        if let EventError::Storage(StorageError::HolderUnreachable { key, node, address }) = self {
            r.held_elsewhere = Some(Box::new(crate::error::HeldElsewhere {
                key: key.clone(),
                node: node.clone(),
                address: address.clone(),
            }));
        }
        r
    }
}

/// Answers a job that could not run, by its cause.
pub(crate) fn fail_job(kind: JobKind, why: &EventError) {
    match kind {
        JobKind::Guest(event) => fail_guest_event(event, why),
        JobKind::Host(job) => fail_host_job(job, why),
        JobKind::Worker(job) => job.answer(),
    }
    tracing::warn!("event failed: {why}");
}

/// Answers a guest event that could not run (a socket's events have no one
/// waiting: the socket's own close tells its client).
fn fail_guest_event(event: GuestEvent, why: &EventError) {
    match event {
        GuestEvent::Request { respond, .. } => {
            let _ = respond.send(why.answer());
        }
        GuestEvent::Call { reply, .. } => {
            let _ = reply.send(Err(CallFailure::failed(why.kind(), why.to_string())));
        }
        GuestEvent::Alarm { ran } => {
            let _ = ran.send(false);
        }
        GuestEvent::SocketOpen { .. } | GuestEvent::SocketMessage { .. } | GuestEvent::SocketClose { .. } => {}
    }
}

/// Answers a host job that could not run.
fn fail_host_job(job: HostJob, why: &EventError) {
    match job {
        HostJob::Inspect { reply } => {
            let _ = reply.send(Err(why.to_runtime_error()));
        }
        HostJob::LentRead { read } => read(Err(crate::actor_db::LentReadError::NotRun {
            kind: why.kind(),
            message: why.to_string(),
        })),
        // The request stays in the bucket for a later pass.
        HostJob::OperatorDelete { .. } => {}
        HostJob::AdminDelete { done } => {
            let _ = done.send(Err(why.to_runtime_error()));
        }
        HostJob::Restore { done, .. } => {
            let _ = done.send(Err(why.to_runtime_error()));
        }
        HostJob::Expire { done, .. } => {
            let _ = done.send(false);
        }
    }
}

impl From<EventError> for crate::error::RuntimeError {
    /// A job that could not run, as the API's error: a holder in another
    /// node process is named (the caller may carry the job there), a
    /// storage failure keeps its kind, anything else is the event's.
    fn from(e: EventError) -> Self {
        use crate::error::{HeldElsewhere, RuntimeError};
        match e {
            EventError::Storage(StorageError::HolderUnreachable { key, node, address }) => {
                RuntimeError::HolderUnreachable(Box::new(HeldElsewhere { key, node, address }))
            }
            EventError::Storage(e) => RuntimeError::Storage(Box::new(e)),
            e => RuntimeError::event(e.kind(), e.to_string()),
        }
    }
}

impl EventError {
    /// The API's error for a job this failure kept from running, its kind
    /// kept (a job's answer has only a borrow of the failure: it is shared
    /// by every job the failure answers).
    fn to_runtime_error(&self) -> crate::error::RuntimeError {
        use crate::error::{HeldElsewhere, RuntimeError};
        match self {
            EventError::Storage(StorageError::HolderUnreachable { key, node, address }) => {
                RuntimeError::HolderUnreachable(Box::new(HeldElsewhere {
                    key: key.clone(),
                    node: node.clone(),
                    address: address.clone(),
                }))
            }
            e => RuntimeError::event(e.kind(), e.to_string()),
        }
    }
}
