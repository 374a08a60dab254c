//! The scheduler: it puts jobs in actors' mailboxes and starts, resumes,
//! parks and ends their workers, over the resident cap (`residency`) and
//! the node's worker threads (`worker_threads`), and what it gives a thread
//! to run (`WorkerRun`): a worker's start, or a parked worker's next
//! stretch. When the system starts no thread, the run comes back, and the
//! jobs it holds are answered (503, try again) instead of being dropped
//! unanswered. It owns every mailbox and
//! drives the transitions of each one's state (`mailbox`). What a worker
//! runs is the node's: it hands the scheduler its worker loop at start-up
//! ([`StartWorker`]), and a parked worker's run comes back as a
//! [`ParkedRun`], as a tokio scheduler runs tasks through a vtable without
//! naming their futures (ADR 086).

use super::mailbox::{ActorStatus, Mailbox, MailboxState};
use super::mailboxes::Mailboxes;
use super::parked::{ParkedRun, ParkedWorker, Resumed, WorkerEnd};
use super::residency::{Admission, Residency};
use super::worker_threads::{self, WorkerThreads};
use crate::address::ActorKey;
use crate::event_error::{EventError, fail_job};
use crate::job::{Job, WorkerJob};
use crate::metrics::Metrics;
use std::sync::{Arc, MutexGuard, mpsc};
use std::time::Duration;

/// How a worker's run begins: the node's worker loop for worker `id` of a
/// mailbox, with the mailbox's jobs. Returns how the run ended.
pub(crate) type StartWorker = Box<dyn Fn(&Arc<Mailbox>, mpsc::Receiver<Job>, u64) -> WorkerEnd + Send + Sync>;

/// A job the mailbox had no room for (ADR 012), unanswered: the node
/// answers it by its kind.
pub(crate) struct Refused(pub(crate) Box<Job>);

/// How many threads of ended workers a node keeps for the next wakes.
const IDLE_WORKER_THREADS: usize = 16;
/// How long such a thread waits for a worker before it ends.
const IDLE_WORKER_THREAD_LINGER: Duration = Duration::from_secs(10);

/// One node's scheduler.
pub(crate) struct Scheduler {
    mailboxes: Mailboxes,
    /// The resident-actor cap and the mailboxes waiting for a worker.
    residency: Residency<Mailbox>,
    /// Threads kept from workers that ended, for the next to start.
    threads: Arc<WorkerThreads<WorkerRun>>,
    /// The node's worker loop.
    start: StartWorker,
    metrics: Arc<Metrics>,
}

impl Scheduler {
    /// A scheduler with no mailbox, at most `max_resident` actors resident.
    pub(crate) fn new(max_resident: usize, start: StartWorker, metrics: Arc<Metrics>) -> Self {
        Self {
            mailboxes: Mailboxes::default(),
            residency: Residency::new(max_resident),
            threads: WorkerThreads::new(IDLE_WORKER_THREADS, IDLE_WORKER_THREAD_LINGER),
            start,
            metrics,
        }
    }

    /// Every mailbox of the node.
    pub(super) fn mailboxes(&self) -> &Mailboxes {
        &self.mailboxes
    }

    /// `key`'s mailbox, made if it has none.
    pub(crate) fn mailbox(&self, key: &ActorKey) -> Arc<Mailbox> {
        self.mailboxes.of(key)
    }

    /// Whether an actor waits for a resident place (an idle worker then
    /// leaves at once, to free one).
    pub(crate) fn anyone_waiting(&self) -> bool {
        self.residency.anyone_waiting()
    }

    /// Whether events may be queued here for `key`: its worker runs, or its
    /// mailbox waits for a resident place. Creates no mailbox.
    pub(crate) fn has_queue(&self, key: &ActorKey) -> bool {
        self.mailboxes.get(key).is_some_and(|s| s.lock().has_worker())
    }

    /// Whether `key` is resident here now (its instance kept by its worker).
    pub(crate) fn is_resident(&self, key: &ActorKey) -> bool {
        // The map's lock is let go before the mailbox's: a mailbox may be
        // held for a while (its database closing, ADR 045).
        self.mailboxes
            .get(key)
            .is_some_and(|s| s.lock().status() == ActorStatus::Resident)
    }

    /// For the node's tests: whether the system refuses to start new
    /// worker threads, as it does when out of threads.
    #[cfg(test)]
    pub(crate) fn refuse_new_threads(&self, refuse: bool) {
        self.threads
            .refuse_new
            .store(refuse, std::sync::atomic::Ordering::Relaxed);
    }

    /// After the shutdown released every actor: the worker threads waiting
    /// for another run end now, instead of after their linger (ADR 060).
    pub(crate) fn end_waiting_threads(&self) {
        self.threads.close();
    }

    /// Runs worker `id`'s start (on a thread the scheduler gave it).
    fn run_start(&self, slot: &Arc<Mailbox>, jobs: mpsc::Receiver<Job>, id: u64) -> WorkerEnd {
        (self.start)(slot, jobs, id)
    }

    /// Puts a job in the actor's mailbox, waking a worker if it has none.
    /// At the resident-actor cap the mailbox waits for a worker while the
    /// least recently used residents hibernate; when too many wait, the job
    /// is refused (503 with `Retry-After`). `here`: a request may run on the
    /// calling thread, the one that received it (ADR 048; a single node).
    ///
    /// # Errors
    /// The mailbox is full (ADR 012): the job comes back, unanswered, for
    /// the node to refuse by its kind.
    pub(crate) fn enqueue(self: &Arc<Self>, key: &ActorKey, job: Job, here: bool) -> Result<(), Refused> {
        let slot = self.mailbox(key);
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
                None => return Err(Refused(Box::new(job))),
            }
        }
        let here = here && job.kind.runs_where_received();
        let mut inner = slot.lock();
        job.generation = inner.generation();
        let job = match inner.sender() {
            Some(tx) => match tx.send(job) {
                Ok(()) => {
                    match inner.take_parked() {
                        // An actor whose database the idle sweep closed
                        // reopens it on a thread of the node's, not the
                        // receiving one (ADR 059).
                        Some(parked) if here && parked.runs_here() && !parked.rested() => {
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
                    return Ok(());
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
                let why = EventError::Overloaded {
                    limit: self.residency.limit(),
                };
                while let Ok(job) = rx.try_recv() {
                    fail_job(job.kind, &why);
                }
            }
        }
        Ok(())
    }

    /// Starts worker `id` for `slot` on a thread of its own (one that
    /// waits from an earlier worker, or a new one); when it ends, the next
    /// mailbox waiting for a worker gets one.
    ///
    /// # Errors
    /// The system would start no thread: the worker never ran, and its
    /// jobs come back. The caller takes the mailbox's sender away, and then
    /// hands them to [`Scheduler::worker_unstarted`].
    fn start_worker(self: &Arc<Self>, id: u64, slot: Arc<Mailbox>, rx: mpsc::Receiver<Job>) -> Result<(), Unstarted> {
        let run = WorkerRun::Start {
            scheduler: self.clone(),
            slot: slot.clone(),
            jobs: rx,
            id,
        };
        self.threads.run(run).map_err(|no| Self::unstarted(id, &slot, no))
    }

    /// What is left of `slot`'s worker `id`, whose run no thread took.
    fn unstarted(id: u64, slot: &Mailbox, no: worker_threads::NoThread<WorkerRun>) -> Unstarted {
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
        if let Resumed::ToThread(parked) = parked.into_run().resume_here() {
            let mut inner = slot.lock();
            if let Some(unstarted) = self.resume_worker(slot, &mut inner, parked) {
                drop(inner);
                self.worker_unstarted(unstarted);
            }
        }
    }

    /// A job came for a parked worker: it goes on with its run on a thread
    /// (one that waits from an earlier worker, or a new one). Called under
    /// the mailbox's lock (`inner`), as a worker is started, so that when no
    /// thread starts, no job finds the mailbox between the run dropped (its
    /// cell and receiver with it) and the mailbox marked as having no worker.
    /// Returns what is left of the worker when no thread started: the
    /// caller hands it to [`Scheduler::worker_unstarted`] once it has let go of
    /// the lock.
    #[must_use]
    fn resume_worker(
        self: &Arc<Self>,
        slot: &Mailbox,
        inner: &mut MailboxState,
        parked: ParkedWorker,
    ) -> Option<Unstarted> {
        let id = parked.worker();
        let run = WorkerRun::Resume {
            scheduler: self.clone(),
            id,
            run: parked.into_run(),
        };
        let no = self.threads.run(run).err()?;
        // The run goes with its cell: the actor's files are closed (a
        // cluster hold lapses with its lease), and the jobs it had queued
        // are answered. The next job starts a new worker.
        inner.worker_left();
        Some(Self::unstarted(id, slot, no))
    }

    /// Asks a resident's worker to hibernate after what it has queued; never
    /// starts a worker for it (a parked one goes on to hibernate).
    fn ask_to_hibernate(self: &Arc<Self>, victim: &Arc<Mailbox>) {
        self.send_hibernate(victim, victim.lock());
    }

    /// Queues a hibernation for the worker of `mailbox` (whose lock `inner`
    /// is), resuming it if it is parked; nothing when it has no worker.
    pub(super) fn send_hibernate(self: &Arc<Self>, mailbox: &Mailbox, mut inner: MutexGuard<'_, MailboxState>) {
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
}

/// A run of one actor's worker on a thread of the node's.
pub(crate) enum WorkerRun {
    /// Worker `id` starts for `slot`, with the mailbox's jobs.
    Start {
        scheduler: Arc<Scheduler>,
        slot: Arc<Mailbox>,
        jobs: mpsc::Receiver<Job>,
        id: u64,
    },
    /// Parked worker `id` goes on with its run (a job came).
    Resume {
        scheduler: Arc<Scheduler>,
        id: u64,
        run: Box<dyn ParkedRun>,
    },
}

impl worker_threads::WorkerRun for WorkerRun {
    fn run(self) {
        let (scheduler, id, end) = match self {
            WorkerRun::Start {
                scheduler,
                slot,
                jobs,
                id,
            } => {
                let end = scheduler.run_start(&slot, jobs, id);
                (scheduler, id, end)
            }
            WorkerRun::Resume { scheduler, id, run } => (scheduler, id, run.resume()),
        };
        if let WorkerEnd::Left = end {
            scheduler.worker_left(id);
        }
    }
}

impl WorkerRun {
    /// Gives up the run, which never ran: a parked worker's cell goes (its
    /// files close, as a hibernation's do), and the jobs it held come back:
    /// one it had taken from its mailbox already, and the mailbox's receiver.
    fn into_jobs(self) -> (Option<Job>, mpsc::Receiver<Job>) {
        match self {
            WorkerRun::Start { jobs, .. } => (None, jobs),
            WorkerRun::Resume { run, .. } => run.into_jobs(),
        }
    }
}

/// What is left of a worker that found no thread: its id among the
/// residents, its jobs, and why. Boxed: the path is rare, and what it holds
/// is large.
#[must_use = "its jobs wait for an answer (Scheduler::worker_unstarted)"]
struct Unstarted(Box<UnstartedParts>);

struct UnstartedParts {
    id: u64,
    first: Option<Job>,
    rest: mpsc::Receiver<Job>,
    why: EventError,
}

impl Unstarted {
    /// What is left of worker `id`, whose `run` no thread took.
    fn new(id: u64, run: WorkerRun, why: EventError) -> Self {
        let (first, rest) = run.into_jobs();
        Self(Box::new(UnstartedParts { id, first, rest, why }))
    }

    /// Answers its jobs with why it did not run. The mailbox's sender must
    /// be gone first (under its lock), so that no job comes after. Returns
    /// the worker's id, whose resident place is now free.
    fn answer(self) -> u64 {
        let UnstartedParts { id, first, rest, why } = *self.0;
        for job in first.into_iter().chain(rest.try_iter()) {
            fail_job(job.kind, &why);
        }
        id
    }
}
