//! What a node gives a thread to run: a worker's start, or a parked
//! worker's next stretch. When the system starts no thread, the run comes
//! back, and the jobs it holds are answered (503, try again) instead of
//! being dropped unanswered.

use super::{Host, Mailbox, ParkedRun, WorkerEnd, worker_threads};
use crate::event_error::{EventError, fail_job};
use crate::job::Job;
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
    /// files close, as a hibernation's do), and the jobs it held come back.
    pub(super) fn into_jobs(self) -> UnrunJobs {
        match self {
            NodeWorkerRun::Start { jobs, .. } => UnrunJobs {
                first: None,
                rest: jobs,
            },
            NodeWorkerRun::Resume { run, .. } => {
                let (first, rest) = run.into_jobs();
                UnrunJobs { first, rest }
            }
        }
    }
}

/// What is left of a worker that found no thread: its id among the
/// residents, its jobs, and why.
/// Boxed: the path is rare, and what it holds is large.
#[must_use = "its jobs wait for an answer (Host::worker_unstarted)"]
pub(super) struct Unstarted(Box<UnstartedParts>);

struct UnstartedParts {
    id: u64,
    jobs: UnrunJobs,
    why: EventError,
}

impl Unstarted {
    pub(super) fn new(id: u64, jobs: UnrunJobs, why: EventError) -> Self {
        Self(Box::new(UnstartedParts { id, jobs, why }))
    }

    /// Answers its jobs with why it did not run. The mailbox's sender must
    /// be gone first (under its lock), so that no job comes after. Returns
    /// the worker's id, whose resident place is now free.
    pub(super) fn answer(self) -> u64 {
        let UnstartedParts { id, jobs, why } = *self.0;
        jobs.answer(&why);
        id
    }
}

/// The jobs of a worker that found no thread.
pub(super) struct UnrunJobs {
    /// One it had taken from its mailbox already.
    first: Option<Job>,
    /// The rest, in its mailbox's receiver.
    rest: mpsc::Receiver<Job>,
}

impl UnrunJobs {
    /// Answers each with `why`.
    fn answer(self, why: &EventError) {
        for job in self.first.into_iter().chain(self.rest.try_iter()) {
            fail_job(job.kind, why);
        }
    }
}
