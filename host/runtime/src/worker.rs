//! One actor's worker: takes jobs from its mailbox one at a time and gives
//! each to the actor's cell ([`ActorCell::run_job`]). After a second with
//! nothing to do it gives back its thread and waits in the mailbox, parked,
//! until a job resumes it on a thread or the idle sweep hibernates the actor
//! at the idle timeout (ADR 044), having closed its database after ten
//! seconds (ADR 045); with an idle timeout under five seconds it
//! keeps its thread and hibernates the actor itself.

use crate::actor_cell::ActorCell;
use crate::job::{EventKind, Job};
use crate::node::{ActorStatus, Host, Mailbox, ParkedRun, ParkedWorker, WorkerEnd};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// Worker `id`'s loop: runs until the mailbox stays empty for the idle
/// timeout, or parks once it has waited [`RELEASE_AFTER`] (ADR 044).
pub(crate) fn run(host: &Arc<Host>, slot: &Arc<Mailbox>, rx: mpsc::Receiver<Job>, id: u64) -> WorkerEnd {
    let cell = ActorCell::new(Arc::clone(host), Arc::clone(slot));
    serve(Arc::clone(host), Arc::clone(slot), rx, cell, id)
}

fn serve(host: Arc<Host>, slot: Arc<Mailbox>, rx: mpsc::Receiver<Job>, mut cell: ActorCell, id: u64) -> WorkerEnd {
    loop {
        // While actors wait for a resident slot, an idle worker leaves at once.
        let idle = if host.residency().anyone_waiting() {
            Duration::ZERO
        } else {
            host.config().idle_timeout
        };
        let job = match spin_then_wait(&rx, idle, &cell) {
            Ok(job) => job,
            Err(Waited::Idle) => {
                let mut inner = slot.lock();
                if let Ok(job) = rx.try_recv() {
                    drop(inner);
                    job
                } else {
                    // Under the mailbox's lock: a job enqueued from now on
                    // finds the worker parked and resumes it on a thread.
                    inner.parked = Some(ParkedWorker {
                        worker: id,
                        since: std::time::Instant::now(),
                        rested: false,
                        run: Box::new(Parked {
                            host: Arc::clone(&host),
                            slot: Arc::clone(&slot),
                            rx,
                            cell,
                            id,
                        }),
                    });
                    return WorkerEnd::Parked;
                }
            }
            Err(Waited::Timeout) => {
                let mut inner = slot.lock();
                if let Ok(job) = rx.try_recv() {
                    drop(inner);
                    job
                } else {
                    // Hibernate under the slot's lock so no new worker opens the files meanwhile.
                    cell.hibernate();
                    inner.sender = None;
                    if inner.status == ActorStatus::Resident {
                        inner.status = ActorStatus::Hibernated;
                    }
                    return WorkerEnd::Left;
                }
            }
            Err(Waited::Disconnected) => {
                cell.hibernate();
                return WorkerEnd::Left;
            }
        };
        if let EventKind::Hibernate { done } = job.kind {
            let mut inner = slot.lock();
            cell.hibernate();
            if let Ok(next) = rx.try_recv() {
                drop(inner);
                let _ = done.send(());
                cell.run_job(next);
                continue;
            }
            inner.sender = None;
            if inner.status == ActorStatus::Resident {
                inner.status = ActorStatus::Hibernated;
            }
            let _ = done.send(());
            return WorkerEnd::Left;
        }
        let lent_read = matches!(job.kind, EventKind::LentRead { .. });
        cell.run_job(job);
        if lent_read && !cell.is_resident() {
            // A read of a hibernated actor left it hibernated: its worker
            // does not stay on to be listed as resident until the idle timeout.
            let mut inner = slot.lock();
            if let Ok(next) = rx.try_recv() {
                drop(inner);
                cell.run_job(next);
                continue;
            }
            inner.sender = None;
            return WorkerEnd::Left;
        }
    }
}

/// A parked worker's run, as its mailbox keeps it (ADR 044).
struct Parked {
    host: Arc<Host>,
    slot: Arc<Mailbox>,
    rx: mpsc::Receiver<Job>,
    cell: ActorCell,
    id: u64,
}

impl ParkedRun for Parked {
    fn resume(self: Box<Self>) -> WorkerEnd {
        let Parked {
            host,
            slot,
            rx,
            cell,
            id,
        } = *self;
        serve(host, slot, rx, cell, id)
    }

    fn rest(&mut self) -> bool {
        self.cell.rest()
    }
}

/// Why [`spin_then_wait`] came back without a job.
enum Waited {
    /// The idle timeout passed: the actor hibernates.
    Timeout,
    /// [`RELEASE_AFTER`] passed, the actor is resident and the idle timeout
    /// is long enough for the idle sweep to keep it: the worker may park.
    Idle,
    /// The mailbox's sender is gone.
    Disconnected,
}

impl From<mpsc::RecvTimeoutError> for Waited {
    fn from(e: mpsc::RecvTimeoutError) -> Self {
        match e {
            mpsc::RecvTimeoutError::Timeout => Waited::Timeout,
            mpsc::RecvTimeoutError::Disconnected => Waited::Disconnected,
        }
    }
}

/// Waits for the next job. A busy actor's next event often comes within
/// microseconds (one client, request after request); parking the thread and
/// waking it again costs more than that, so look briefly before parking.
/// After [`RELEASE_AFTER`] of waiting, a resident actor's worker parks
/// (ADR 044); another waits on until `idle`.
fn spin_then_wait(rx: &mpsc::Receiver<Job>, idle: Duration, cell: &ActorCell) -> Result<Job, Waited> {
    let spin_until = std::time::Instant::now() + SPIN;
    while std::time::Instant::now() < spin_until {
        match rx.try_recv() {
            Ok(job) => return Ok(job),
            Err(mpsc::TryRecvError::Disconnected) => return Err(Waited::Disconnected),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    if idle <= RELEASE_AFTER {
        return rx.recv_timeout(idle).map_err(Waited::from);
    }
    match rx.recv_timeout(RELEASE_AFTER) {
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Only a resident actor has something to keep while its worker
            // parks. A worker whose actor is not open here (absent, held
            // elsewhere, given up, failed to open) has nothing to keep: it
            // ends now rather than hold a thread and a resident place for
            // the idle timeout, and the next job starts another.
            if !cell.is_resident() {
                return Err(Waited::Timeout);
            }
            if idle >= PARK_FROM_IDLE_TIMEOUT {
                return Err(Waited::Idle);
            }
            rx.recv_timeout(idle - RELEASE_AFTER).map_err(Waited::from)
        }
        got => got.map_err(Waited::from),
    }
}

/// The shortest idle timeout at which an idle resident's worker parks: the
/// idle sweep that hibernates parked actors looks once a second, so it keeps
/// a timeout of this length to within a fifth (ADR 044).
pub(crate) const PARK_FROM_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a resident actor waits for an event before its worker parks
/// (ADR 044): long enough that a steady client's actor keeps its thread,
/// short against the idle timeout.
pub(crate) const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// How long a worker looks for its next job before it parks.
const SPIN: Duration = Duration::from_micros(100);
