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
    pub(crate) worker: u64,
    /// When it parked: the idle sweep rests it after a while and hibernates
    /// it at the idle timeout.
    pub(crate) since: std::time::Instant,
    /// Whether the sweep has closed its database (ADR 045).
    pub(crate) rested: bool,
    /// Whether the next request may run on the thread that receives it: the
    /// last one it ran was a quick read, and (by default) the actor's
    /// requests overlap (ADR 048, ADR 059).
    pub(crate) runs_here: bool,
    /// Its cell and its mailbox's receiver, resumed by the next job.
    pub(crate) run: Box<dyn ParkedRun>,
}
