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

/// Where a mailbox's worker is.
enum WorkerAt {
    /// It has none: the next job starts one.
    Gone,
    /// On a thread, or waiting for a resident place: its jobs go to the sender.
    Given(mpsc::Sender<Job>),
    /// The actor is resident and idle, and its worker gave back its thread
    /// (ADR 044): the next job resumes its run.
    Parked(mpsc::Sender<Job>, ParkedWorker),
}

/// What one actor's mailbox holds under its lock, written only by the
/// transitions below.
pub(super) struct MailboxState {
    /// Its worker, and where its jobs go while it has one.
    worker: WorkerAt,
    status: ActorStatus,
    /// Moves on at each delete: socket events queued before it are dropped.
    generation: u64,
    /// Its last guest event here (set by its cell as each one ends).
    last_event: Option<LastEvent>,
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
            worker: WorkerAt::Gone,
            status: ActorStatus::Hibernated,
            generation: 0,
            last_event: None,
            held_elsewhere: None,
        }
    }

    /// Where the actor stands.
    pub(super) fn status(&self) -> ActorStatus {
        self.status
    }

    /// Its files opened here: it is resident, and held by no other node.
    pub(super) fn opened(&mut self) {
        self.status = ActorStatus::Resident;
        self.held_elsewhere = None;
    }

    /// Its files closed while its worker stays (to be opened again from the start).
    pub(super) fn closed(&mut self) {
        self.status = ActorStatus::Hibernated;
    }

    /// Its last event deleted it: the next event creates a new, empty actor.
    pub(super) fn deleted(&mut self) {
        self.status = ActorStatus::Deleted;
    }

    /// A delete began: socket events queued before it belong to the deleted
    /// actor, and run no guest code.
    pub(super) fn next_generation(&mut self) {
        self.generation += 1;
    }

    /// Which incarnation its queued socket events belong to.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Its last guest event here, and how it ended.
    pub(super) fn last_event(&self) -> Option<LastEvent> {
        self.last_event
    }

    /// A guest event ended.
    pub(super) fn record_last(&mut self, event: LastEvent) {
        self.last_event = Some(event);
    }

    /// A job found it held by `node`, a node of another process.
    pub(super) fn held_by(&mut self, node: String) {
        self.held_elsewhere = Some(node);
    }

    /// Where the actor stands as a listing shows it, and the node of another
    /// process that holds it: a mailbox with a worker counts as resident
    /// (its actor opens as the worker's next job runs), unless its last
    /// event deleted it; a worker that found the actor held by another
    /// process's node keeps its mailbox here while the actor is resident
    /// there.
    pub(super) fn as_listed(&self) -> (ActorStatus, Option<String>) {
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
    pub(super) fn has_worker(&self) -> bool {
        !matches!(self.worker, WorkerAt::Gone)
    }

    /// Where its jobs go, while it has a worker.
    pub(super) fn sender(&self) -> Option<&mpsc::Sender<Job>> {
        match &self.worker {
            WorkerAt::Gone => None,
            WorkerAt::Given(tx) | WorkerAt::Parked(tx, _) => Some(tx),
        }
    }

    /// A worker was given its jobs (it starts now, or waits for a resident place).
    pub(super) fn worker_given(&mut self, tx: mpsc::Sender<Job>) {
        self.worker = WorkerAt::Given(tx);
    }

    /// Its worker gave back its thread and waits here for the next job (ADR
    /// 044); only through [`Mailbox::park_unless_queued`], which looks for a
    /// job that came first. Only a worker that was given the mailbox's jobs
    /// parks: one that left has no run to keep (it is dropped, closing the
    /// actor's files).
    fn park(&mut self, parked: ParkedWorker) {
        self.worker = match std::mem::replace(&mut self.worker, WorkerAt::Gone) {
            WorkerAt::Given(tx) | WorkerAt::Parked(tx, _) => WorkerAt::Parked(tx, parked),
            WorkerAt::Gone => {
                debug_assert!(false, "a worker parked in a mailbox it had left");
                WorkerAt::Gone
            }
        };
    }

    /// Its parked worker, taken to go on with its run (its jobs still go to it).
    pub(super) fn take_parked(&mut self) -> Option<ParkedWorker> {
        match std::mem::replace(&mut self.worker, WorkerAt::Gone) {
            WorkerAt::Parked(tx, parked) => {
                self.worker = WorkerAt::Given(tx);
                Some(parked)
            }
            other => {
                self.worker = other;
                None
            }
        }
    }

    /// Its parked worker, if it has one.
    pub(super) fn parked(&self) -> Option<&ParkedWorker> {
        match &self.worker {
            WorkerAt::Parked(_, parked) => Some(parked),
            _ => None,
        }
    }

    /// Since when its worker has been parked with its database open: one
    /// that can still rest.
    pub(super) fn parked_unrested_since(&self) -> Option<std::time::Instant> {
        self.parked().filter(|p| !p.rested()).map(ParkedWorker::since)
    }

    /// Closes its parked worker's database (ADR 045), once: marked first,
    /// so that neither the idle sweep nor a shortage of files asks again.
    /// Returns whether it closed one.
    pub(super) fn rest_parked(&mut self) -> bool {
        match &mut self.worker {
            WorkerAt::Parked(_, parked) => parked.rest_once(),
            _ => false,
        }
    }

    /// Its worker is gone (it hibernated the actor, or never started): the
    /// next job starts another. A resident actor is now hibernated; a
    /// deleted one stays deleted.
    pub(super) fn worker_left(&mut self) {
        self.worker = WorkerAt::Gone;
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

    /// Its files opened here ([`MailboxState::opened`]).
    pub(crate) fn opened(&self) {
        self.lock().opened();
    }

    /// Its files closed while its worker stays ([`MailboxState::closed`]).
    pub(crate) fn closed(&self) {
        self.lock().closed();
    }

    /// Its last event deleted it ([`MailboxState::deleted`]).
    pub(crate) fn deleted(&self) {
        self.lock().deleted();
    }

    /// A delete began: socket events queued before it are dropped
    /// ([`MailboxState::next_generation`]).
    pub(crate) fn next_generation(&self) {
        self.lock().next_generation();
    }

    /// Which incarnation its queued socket events belong to.
    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation()
    }

    /// A guest event ended ([`MailboxState::record_last`]).
    pub(crate) fn record_last(&self, event: LastEvent) {
        self.lock().record_last(event);
    }

    /// A job found it held by `node`, a node of another process
    /// ([`MailboxState::held_by`]).
    pub(crate) fn held_by(&self, node: String) {
        self.lock().held_by(node);
    }

    /// Whether its worker is parked now, and if so whether its next request
    /// may run on the thread that receives it (for the node's tests).
    #[cfg(test)]
    pub(crate) fn parked_runs_here(&self) -> Option<bool> {
        self.lock().parked().map(ParkedWorker::runs_here)
    }

    /// Its state, under its lock: for the scheduler, whose transitions
    /// take several steps under one lock.
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, MailboxState> {
        crate::unpoisoned::lock(&self.inner)
    }
}
