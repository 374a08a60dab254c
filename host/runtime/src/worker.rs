//! One actor's worker thread: takes jobs from its mailbox one at a time and
//! gives each to the actor's cell ([`ActorCell::run_job`]); after the idle
//! timeout with nothing to do, it hibernates the actor and ends.

use crate::actor_cell::ActorCell;
use crate::job::{EventKind, Job};
use crate::node::{ActorStatus, Host, Mailbox};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The worker loop: runs until the mailbox stays empty for the idle timeout.
pub(crate) fn run(host: &Arc<Host>, slot: &Arc<Mailbox>, rx: &mpsc::Receiver<Job>) {
    let mut cell = ActorCell::new(Arc::clone(host), Arc::clone(slot));
    loop {
        // While actors wait for a resident slot, an idle worker leaves at once.
        let idle = if host.residency().anyone_waiting() {
            Duration::ZERO
        } else {
            host.config().idle_timeout
        };
        let job = match spin_then_wait(rx, idle, &cell) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) => {
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
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                cell.hibernate();
                return;
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
            return;
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
            return;
        }
    }
}

/// Waits for the next job. A busy actor's next event often comes within
/// microseconds (one client, request after request); parking the thread and
/// waking it again costs more than that, so look briefly before parking.
/// After [`RELEASE_AFTER`] of waiting, the actor gives back what only a
/// running actor needs, and waits on until `idle`.
fn spin_then_wait(rx: &mpsc::Receiver<Job>, idle: Duration, cell: &ActorCell) -> Result<Job, mpsc::RecvTimeoutError> {
    let spin_until = std::time::Instant::now() + SPIN;
    while std::time::Instant::now() < spin_until {
        match rx.try_recv() {
            Ok(job) => return Ok(job),
            Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvTimeoutError::Disconnected),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    if idle <= RELEASE_AFTER {
        return rx.recv_timeout(idle);
    }
    match rx.recv_timeout(RELEASE_AFTER) {
        Err(mpsc::RecvTimeoutError::Timeout) => {
            cell.went_idle();
            rx.recv_timeout(idle - RELEASE_AFTER)
        }
        got => got,
    }
}

/// How long a resident actor waits for an event before it gives back its
/// page cache: long enough that a steady client's actor never reads its
/// pages again, short against the idle timeout (ADR 033).
const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// How long a worker looks for its next job before it parks.
const SPIN: Duration = Duration::from_micros(100);
