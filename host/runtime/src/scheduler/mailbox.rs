//! One actor's mailbox: the queue its worker takes jobs from, and the
//! state machine of where the actor stands (resident, hibernated, deleted)
//! and where its worker is (none, on a thread or waiting for one, parked).
//! Every field of [`MailboxState`] is private: it changes only by the
//! transitions below, under the mailbox's lock.

use super::parked::ParkedWorker;
use super::queue_bound::QueueBound;
use super::request_overlap::RequestOverlap;
use super::residency::UsedAt;
use crate::address::ActorKey;
use crate::job::Job;
use crate::last_event::LastEvent;
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

/// What one actor's mailbox holds under its lock, written only by the
/// transitions below.
pub(crate) struct MailboxState {
    /// Where its jobs go while it has a worker (running, parked, or
    /// waiting for a resident place); `None` once the worker left.
    sender: Option<mpsc::Sender<Job>>,
    status: ActorStatus,
    /// Moves on at each delete: socket events queued before it are dropped.
    generation: u64,
    /// Its last guest event here (set by its cell as each one ends).
    last_event: Option<LastEvent>,
    /// Its worker, while the actor is resident and idle without a thread.
    parked: Option<ParkedWorker>,
    /// The node of another process that held it when its last job here
    /// found it held there (its events go to that node).
    held_elsewhere: Option<String>,
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

    /// A delete began: socket events queued before it belong to the deleted
    /// actor, and run no guest code.
    pub(crate) fn next_generation(&mut self) {
        self.generation += 1;
    }

    /// Which incarnation its queued socket events belong to.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Its last guest event here, and how it ended.
    pub(crate) fn last_event(&self) -> Option<LastEvent> {
        self.last_event
    }

    /// A guest event ended.
    pub(crate) fn record_last(&mut self, event: LastEvent) {
        self.last_event = Some(event);
    }

    /// A job found it held by `node`, a node of another process.
    pub(crate) fn held_by(&mut self, node: String) {
        self.held_elsewhere = Some(node);
    }

    /// Where the actor stands as a listing shows it, and the node of another
    /// process that holds it: a mailbox with a worker counts as resident
    /// (its actor opens as the worker's next job runs), unless its last
    /// event deleted it; a worker that found the actor held by another
    /// process's node keeps its mailbox here while the actor is resident
    /// there.
    pub(crate) fn as_listed(&self) -> (ActorStatus, Option<String>) {
        let elsewhere = self
            .held_elsewhere
            .clone()
            .filter(|_| self.has_worker() && self.status != ActorStatus::Resident);
        let status = if self.has_worker() && self.status != ActorStatus::Deleted {
            ActorStatus::Resident
        } else {
            self.status
        };
        (status, elsewhere)
    }

    /// Whether it has a worker (on a thread, parked, or waiting for a resident place).
    pub(crate) fn has_worker(&self) -> bool {
        self.sender.is_some()
    }

    /// Where its jobs go, while it has a worker.
    pub(crate) fn sender(&self) -> Option<&mpsc::Sender<Job>> {
        self.sender.as_ref()
    }

    /// A worker was given its jobs (it starts now, or waits for a resident place).
    pub(crate) fn worker_given(&mut self, tx: mpsc::Sender<Job>) {
        self.sender = Some(tx);
    }

    /// Its worker gave back its thread and waits here for the next job (ADR
    /// 044); only through [`Mailbox::park_unless_queued`], which looks for a
    /// job that came first.
    fn park(&mut self, parked: ParkedWorker) {
        self.parked = Some(parked);
    }

    /// Its parked worker, taken to go on with its run.
    pub(crate) fn take_parked(&mut self) -> Option<ParkedWorker> {
        self.parked.take()
    }

    /// Its parked worker, if it has one.
    pub(crate) fn parked(&self) -> Option<&ParkedWorker> {
        self.parked.as_ref()
    }

    /// Since when its worker has been parked with its database open: one
    /// that can still rest.
    pub(crate) fn parked_unrested_since(&self) -> Option<std::time::Instant> {
        self.parked.as_ref().filter(|p| !p.rested).map(|p| p.since)
    }

    /// Closes its parked worker's database (ADR 045), once: marked first,
    /// so that neither the idle sweep nor a shortage of files asks again.
    /// Returns whether it closed one.
    pub(crate) fn rest_parked(&mut self) -> bool {
        match self.parked.as_mut() {
            Some(p) if !p.rested => {
                p.rested = true;
                p.run.rest()
            }
            _ => false,
        }
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

    /// Its worker leaves, unless a job came meanwhile: under the mailbox's
    /// lock, so that a job enqueued from now on starts a new worker, `jobs`
    /// is looked at once more; when it is empty, `on_leaving` runs, still
    /// under the lock (a worker hibernates there, so that no new worker opens
    /// the actor's files meanwhile), and the worker is gone. Returns the job
    /// that came, for the worker to go on with.
    pub(crate) fn leave_unless_queued(&self, jobs: &mpsc::Receiver<Job>, on_leaving: impl FnOnce()) -> Option<Job> {
        let mut inner = self.lock();
        if let Ok(job) = jobs.try_recv() {
            return Some(job);
        }
        on_leaving();
        inner.worker_left();
        None
    }

    /// Its worker parks: it gives back its thread and waits here for the
    /// next job (ADR 044), unless a job came meanwhile. Under the mailbox's
    /// lock, so that a job enqueued from now on finds the worker parked and
    /// resumes it, `queued` looks at the worker's jobs once more; when it
    /// finds none, `park` makes what the mailbox keeps of the run.
    ///
    /// # Errors
    /// A job came: the run comes back with it, for the worker to go on with
    /// (boxed: a race, rarely taken, and the run is large).
    pub(crate) fn park_unless_queued<R>(
        &self,
        mut run: R,
        queued: impl FnOnce(&mut R) -> Option<Job>,
        park: impl FnOnce(R) -> ParkedWorker,
    ) -> Result<(), Box<(R, Job)>> {
        let mut inner = self.lock();
        if let Some(job) = queued(&mut run) {
            return Err(Box::new((run, job)));
        }
        inner.park(park(run));
        Ok(())
    }

    /// A hibernation: under the mailbox's lock, `close` closes the actor's
    /// files (so that no listing sees it resident with its files closed),
    /// then the worker leaves as [`Mailbox::leave_unless_queued`] does,
    /// unless a job came meanwhile, which it goes on with (opening the actor
    /// again).
    pub(crate) fn close_then_leave_unless_queued(
        &self,
        jobs: &mpsc::Receiver<Job>,
        close: impl FnOnce(),
    ) -> Option<Job> {
        let mut inner = self.lock();
        close();
        if let Ok(job) = jobs.try_recv() {
            return Some(job);
        }
        inner.worker_left();
        None
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, MailboxState> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
