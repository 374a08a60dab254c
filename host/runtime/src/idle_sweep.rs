//! The idle sweep: hibernates resident actors whose workers parked (gave
//! back their threads, ADR 044) once they have waited out the idle timeout.
//! A worker that keeps its thread times out by itself; a parked one has no
//! thread to do it, so this looks once a second.

use crate::node::{Host, Mailbox, lock};
use std::sync::Arc;
use std::time::Duration;

/// How often the sweep looks.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Starts the node's sweep when its idle timeout lets workers park. It ends
/// with the node.
///
/// # Errors
/// The system would not start its thread: without it parked actors would
/// never hibernate, so the node does not start either.
pub(crate) fn start(host: &Arc<Host>) -> std::io::Result<()> {
    if host.config().idle_timeout < crate::worker::PARK_FROM_IDLE_TIMEOUT {
        return Ok(());
    }
    let weak = Arc::downgrade(host);
    std::thread::Builder::new()
        .name("idle sweep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(SWEEP_EVERY);
                let Some(host) = weak.upgrade() else { return };
                hibernate_parked_past_idle(&host);
            }
        })
        .map(drop)
}

/// Asks each parked actor that has been idle for the idle timeout to
/// hibernate: the job resumes its worker, which hibernates it and ends.
pub(crate) fn hibernate_parked_past_idle(host: &Arc<Host>) {
    // A worker parks after waiting this long, so its idle time is this more
    // than its time parked.
    let idle = host.config().idle_timeout.saturating_sub(crate::worker::RELEASE_AFTER);
    let mailboxes: Vec<Arc<Mailbox>> = lock(host.actors()).values().cloned().collect();
    for mailbox in mailboxes {
        host.hibernate_if_parked_for(&mailbox, idle);
    }
}
