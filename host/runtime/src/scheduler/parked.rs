//! A resident actor's worker that gave back its thread (ADR 044): what the
//! mailbox keeps of it until the next job resumes it. The scheduler does not
//! know the actor's cell: the worker that parks hands it a [`ParkedRun`].

use crate::job::Job;
use std::sync::mpsc;

/// How a worker's run on a thread ended.
pub(crate) enum WorkerEnd {
    /// The actor hibernated (or its worker failed): the worker is gone.
    Left,
    /// The actor stays resident without a thread: its worker waits in its
    /// mailbox (`MailboxState::parked`) for the next job (ADR 044).
    Parked,
}

/// The rest of a parked worker's run: its cell (store, instance, database)
/// and its mailbox's receiver. The worker module makes it, so that this
/// module does not depend on the worker that depends on it.
pub(crate) trait ParkedRun: Send {
    /// Goes on with the worker's run on this thread (a job came).
    fn resume(self: Box<Self>) -> WorkerEnd;
    /// Runs the requests that came on the calling thread, the one that
    /// received them, and parks again when none is left (ADR 048).
    fn resume_here(self: Box<Self>) -> Resumed;
    /// Closes the actor's database while it waits; it opens again at its
    /// next job (ADR 045). Returns whether it closed it.
    fn rest(&mut self) -> bool;
    /// Ends the run without going on (no thread would run it): its cell
    /// goes, closing the actor's files as a hibernation does, and the jobs
    /// it holds come back, one it had taken first.
    fn into_jobs(self: Box<Self>) -> (Option<Job>, mpsc::Receiver<Job>);
}

/// How a run on a caller's thread ([`ParkedRun::resume_here`]) ended.
pub(crate) enum Resumed {
    /// It ran what came and is parked in its mailbox again.
    Parked,
    /// A job that does not run on a caller's thread came, a request was
    /// slow, or it has run its share: it goes on on a thread of the node's.
    ToThread(ParkedWorker),
}

/// A resident actor's worker that gave back its thread while the actor
/// waits for an event: the next job resumes its run on a thread of the node's.
pub(crate) struct ParkedWorker {
    /// The worker's id in the residency.
    worker: u64,
    /// When it parked: the idle sweep rests it after a while and hibernates
    /// it at the idle timeout.
    since: std::time::Instant,
    /// Whether the sweep has closed its database (ADR 045).
    rested: bool,
    /// Whether the next request may run on the thread that receives it: the
    /// last one it ran was a quick read, and (by default) the actor's
    /// requests overlap (ADR 048, ADR 059).
    runs_here: bool,
    /// Its cell and its mailbox's receiver, resumed by the next job.
    run: Box<dyn ParkedRun>,
}

impl ParkedWorker {
    /// Worker `worker`'s `run`, parked now with its database open;
    /// `runs_here`: its next request may run on the thread that receives it.
    pub(crate) fn new(worker: u64, runs_here: bool, run: Box<dyn ParkedRun>) -> Self {
        Self {
            worker,
            since: std::time::Instant::now(),
            rested: false,
            runs_here,
            run,
        }
    }

    /// The worker's id in the residency.
    pub(super) fn worker(&self) -> u64 {
        self.worker
    }

    /// When it parked.
    pub(super) fn since(&self) -> std::time::Instant {
        self.since
    }

    /// Whether its database was closed while it waits.
    pub(super) fn rested(&self) -> bool {
        self.rested
    }

    /// Whether its next request may run on the thread that receives it.
    pub(crate) fn runs_here(&self) -> bool {
        self.runs_here
    }

    /// Closes its database (ADR 045), once: marked first, so that neither
    /// the idle sweep nor a shortage of files asks again. Returns whether
    /// it closed it.
    pub(super) fn rest_once(&mut self) -> bool {
        if self.rested {
            return false;
        }
        self.rested = true;
        self.run.rest()
    }

    /// Its run, to go on with.
    pub(super) fn into_run(self) -> Box<dyn ParkedRun> {
        self.run
    }
}
