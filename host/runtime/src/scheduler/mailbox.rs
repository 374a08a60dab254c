//! One actor's mailbox: the queue its worker takes jobs from, and the
//! state machine of where the actor stands (resident, hibernated, deleted),
//! written only by the transitions of [`MailboxState`].

use super::parked::ParkedWorker;
use super::queue_bound::QueueBound;
use super::request_overlap::RequestOverlap;
use super::residency::UsedAt;
use crate::address::ActorKey;
use crate::job::Job;
use serde::Serialize;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, mpsc};

/// Where an actor stands, as the admin API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActorStatus {
    /// In memory, its database open or, idle, closed until its next event (ADR 045).
    Resident,
    /// Only its files: the next event wakes it.
    Hibernated,
    /// Deleted by its last event; the next event creates a new, empty actor.
    Deleted,
}

/// What one actor's mailbox holds under its lock. Its status is written
/// here alone, by the transitions below.
pub(crate) struct MailboxState {
    /// Where its jobs go while it has a worker (running, parked, or
    /// waiting for a resident place); `None` once the worker left.
    pub(crate) sender: Option<mpsc::Sender<Job>>,
    status: ActorStatus,
    /// Moves on at each delete: socket events queued before it are dropped.
    pub(crate) generation: u64,
    /// Its last guest event here (set by its cell as each one ends).
    pub(crate) last_event: Option<crate::last_event::LastEvent>,
    /// Its worker, while the actor is resident and idle without a thread.
    pub(crate) parked: Option<ParkedWorker>,
    /// The node of another process that held it when its last job here
    /// found it held there (its events go to that node).
    pub(crate) held_elsewhere: Option<String>,
}

/// One actor's mailbox and status.
pub(crate) struct Mailbox {
    pub(crate) key: ActorKey,
    inner: Mutex<MailboxState>,
    /// When an event was last enqueued here (the residency's ticks): the
    /// least recently used resident is the first asked to hibernate.
    pub(crate) last_used: AtomicU64,
    /// How much waits in it from outside (ADR 012).
    pub(crate) bound: Arc<QueueBound>,
    /// How many requests came since its requests last overlapped (ADR 059).
    pub(crate) overlap: RequestOverlap,
}

impl UsedAt for Mailbox {
    fn used_at(&self) -> &AtomicU64 {
        &self.last_used
    }
}

impl MailboxState {
    /// A mailbox of an actor not resident here, with no worker.
    fn new() -> Self {
        Self {
            sender: None,
            status: ActorStatus::Hibernated,
            generation: 0,
            last_event: None,
            parked: None,
            held_elsewhere: None,
        }
    }

    /// Where the actor stands.
    pub(crate) fn status(&self) -> ActorStatus {
        self.status
    }

    /// Its files opened here: it is resident, and held by no other node.
    pub(crate) fn opened(&mut self) {
        self.status = ActorStatus::Resident;
        self.held_elsewhere = None;
    }

    /// Its files closed while its worker stays (to be opened again from the start).
    pub(crate) fn closed(&mut self) {
        self.status = ActorStatus::Hibernated;
    }

    /// Its last event deleted it: the next event creates a new, empty actor.
    pub(crate) fn deleted(&mut self) {
        self.status = ActorStatus::Deleted;
    }

    /// Its worker is gone (it hibernated the actor, or never started): the
    /// next job starts another. A resident actor is now hibernated; a
    /// deleted one stays deleted.
    pub(crate) fn worker_left(&mut self) {
        self.sender = None;
        if self.status == ActorStatus::Resident {
            self.status = ActorStatus::Hibernated;
        }
    }
}

impl Mailbox {
    /// A new mailbox for `key`, of an actor not resident here.
    pub(crate) fn new(key: ActorKey) -> Self {
        Self {
            key,
            inner: Mutex::new(MailboxState::new()),
            last_used: AtomicU64::new(0),
            bound: Arc::default(),
            overlap: RequestOverlap::default(),
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, MailboxState> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
