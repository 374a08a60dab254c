//! The idle sweep: closes the databases of resident actors whose workers
//! parked (gave back their threads, ADR 044) once they have waited ten
//! seconds (ADR 045), and hibernates them once they have waited out the idle
//! timeout.
//! A worker that keeps its thread times out by itself; a parked one has no
//! thread to do it, so this looks once a second.

use crate::node::Host;
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
            let mut rested_since_trim = 0;
            loop {
                std::thread::sleep(SWEEP_EVERY);
                let Some(host) = weak.upgrade() else { return };
                rested_since_trim += sweep(&host);
                if rested_since_trim >= TRIM_AFTER_RESTS {
                    // What the closed connections freed lies between the
                    // instances' allocations in glibc's arenas, which keep
                    // it unless asked (ADR 045).
                    crate::freed_memory::give_back();
                    rested_since_trim = 0;
                }
            }
        })
        .map(drop)
}

/// Closes the database of each parked actor idle for [`REST_AFTER`] (ADR
/// 045), and asks each one idle for the idle timeout to hibernate: the job
/// resumes its worker, which hibernates it and ends. Returns how many
/// databases it closed.
fn sweep(host: &Arc<Host>) -> usize {
    // A worker parks after waiting this long, so its idle time is this more
    // than its time parked.
    let idle = host.config().idle_timeout.saturating_sub(crate::worker::RELEASE_AFTER);
    let rest = REST_AFTER.saturating_sub(crate::worker::RELEASE_AFTER);
    host.scheduler().sweep_idle(rest, idle)
}

/// How many databases the sweep closes before it gives what they freed back
/// to the system: about 19 MiB at 75 KiB each. Trimming walks every arena,
/// about a tenth of a second with a GiB of heap, so it is not done for a
/// few: what they freed is reused by the next allocations anyway.
const TRIM_AFTER_RESTS: usize = 256;

/// How long a resident actor waits for an event before it closes its
/// database (ADR 045). Reopening it adds about 0.2 ms to the next event, so
/// an actor whose events come more often than this keeps it open, and a
/// node pays that at most once per actor every ten seconds. (At or past the
/// idle timeout the actor hibernates instead.)
pub(crate) const REST_AFTER: Duration = Duration::from_secs(10);
