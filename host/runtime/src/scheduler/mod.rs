//! The scheduler (`driver`): it puts jobs in actors' mailboxes and starts,
//! resumes, parks and ends their workers. Its mechanisms are a file each: an
//! actor's mailbox and the state machine of where it stands, the node's
//! mailboxes by key, the parked worker a mailbox keeps, the cap on resident
//! actors and who waits for a place, the bound on what waits in one mailbox,
//! whether an actor's requests overlap and which run where they are
//! received, the threads workers run on, what it does with idle actors, and
//! what it tells of its mailboxes. It knows jobs, not what runs
//! them: the node hands it its worker loop, and the worker runs jobs in the
//! actor's cell.

mod driver;
mod idle;
mod listing;
mod mailbox;
mod mailboxes;
mod parked;
pub(crate) mod queue_bound;
pub(crate) mod reads_here;
mod request_overlap;
pub(crate) mod residency;
#[cfg(test)]
mod tests;
mod worker_threads;

pub(crate) use driver::{Refused, Scheduler, StartWorker};
pub use mailbox::ActorStatus;
pub(crate) use mailbox::Mailbox;
pub(crate) use parked::{ParkedRun, ParkedWorker, Resumed, WorkerEnd};
