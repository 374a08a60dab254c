//! What a node gives a thread to run: a worker's start, or a parked
//! worker's next stretch. When the system starts no thread, the run comes
//! back, and the jobs it holds are answered (503, try again) instead of
//! being dropped unanswered.

use super::Host;
use crate::event_error::{EventError, fail_job};
use crate::job::Job;
use crate::scheduler::worker_threads;
use crate::scheduler::{Mailbox, ParkedRun, WorkerEnd};
use std::sync::{Arc, mpsc};

/// A run of one actor's worker on a thread of the node's.
pub(super) enum NodeWorkerRun {
    /// Worker `id` starts for `slot`, with the mailbox's jobs.
    Start {
        host: Arc<Host>,
        slot: Arc<Mailbox>,
        jobs: mpsc::Receiver<Job>,
        id: u64,
    },
    /// Parked worker `id` goes on with its run (a job came).
    Resume {
        host: Arc<Host>,
        id: u64,
        run: Box<dyn ParkedRun>,
    },
}

impl worker_threads::WorkerRun for NodeWorkerRun {
    fn run(self) {
        let (host, id, end) = match self {
            NodeWorkerRun::Start { host, slot, jobs, id } => {
                let end = (host.spawn_worker)(&host, &slot, jobs, id);
                (host, id, end)
            }
            NodeWorkerRun::Resume { host, id, run } => (host, id, run.resume()),
        };
        if let WorkerEnd::Left = end {
            host.worker_left(id);
        }
    }
}

impl NodeWorkerRun {
    /// Gives up the run, which never ran: a parked worker's cell goes (its
    /// files close, as a hibernation's do), and the jobs it held come back:
    /// one it had taken from its mailbox already, and the mailbox's receiver.
    fn into_jobs(self) -> (Option<Job>, mpsc::Receiver<Job>) {
        match self {
            NodeWorkerRun::Start { jobs, .. } => (None, jobs),
            NodeWorkerRun::Resume { run, .. } => run.into_jobs(),
        }
    }
}

/// What is left of a worker that found no thread: its id among the
/// residents, its jobs, and why. Boxed: the path is rare, and what it holds
/// is large.
#[must_use = "its jobs wait for an answer (Host::worker_unstarted)"]
pub(super) struct Unstarted(Box<UnstartedParts>);

struct UnstartedParts {
    id: u64,
    first: Option<Job>,
    rest: mpsc::Receiver<Job>,
    why: EventError,
}

impl Unstarted {
    /// What is left of worker `id`, whose `run` no thread took.
    pub(super) fn new(id: u64, run: NodeWorkerRun, why: EventError) -> Self {
        let (first, rest) = run.into_jobs();
        Self(Box::new(UnstartedParts { id, first, rest, why }))
    }

    /// Answers its jobs with why it did not run. The mailbox's sender must
    /// be gone first (under its lock), so that no job comes after. Returns
    /// the worker's id, whose resident place is now free.
    pub(super) fn answer(self) -> u64 {
        let UnstartedParts { id, first, rest, why } = *self.0;
        for job in first.into_iter().chain(rest.try_iter()) {
            fail_job(job.kind, &why);
        }
        id
    }
}
