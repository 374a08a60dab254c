//! The ordered shutdown, and the handles' count that runs it when the last
//! [`Runtime`](super::Runtime) handle is dropped (ADR 060).
//!
//! The node holds its actors, and a resident actor holds its node (its cell
//! and its worker's run each keep an `Arc<Host>`). Without a shutdown,
//! dropping every handle left that cycle alive until the idle timeout
//! hibernated the last actor: the node's threads, engine, instance pool
//! (and its claim on the process's address space), open databases and, in a
//! cluster, its holds, all outlived the runtime.

use super::Shutdown;
use crate::address::ActorKey;
use crate::node::{Host, lock};
use crate::passes;
use std::sync::Arc;

/// The ordered shutdown (tellus's lesson: "stopped" is reported last, so
/// whoever waits on it knows everything is gone). See
/// [`Runtime::shutdown`](super::Runtime::shutdown).
pub(super) fn shut_down(host: &Arc<Host>) -> Shutdown {
    host.stops().stop_host();
    let mut report = Shutdown::default();
    let mine: std::collections::HashSet<ActorKey> = lock(host.actors()).keys().cloned().collect();
    report.sockets_closed = host.close_sockets_where(|k| mine.contains(k), 1001, "going away");
    report.actors_released = super::admin::resident_count(host);
    // Each worker finishes its running event, answers what is queued behind
    // it (no guest code), then drops the instance and releases the actor.
    passes::hibernate_where(host, |_| true);
    host.end_waiting_worker_threads();
    report
}

/// Held by the runtime's handles and by nothing of the node's own, so its
/// drop is the last handle's: it shuts the node down, which breaks the
/// cycle above, and the node's threads end as they next look at it.
pub(super) struct LastHandle {
    host: Arc<Host>,
}

impl LastHandle {
    pub(super) fn new(host: Arc<Host>) -> Arc<Self> {
        Arc::new(Self { host })
    }
}

impl Drop for LastHandle {
    fn drop(&mut self) {
        // A second shutdown finds nothing left to do: cheap after an
        // explicit one (the dev server's, a test host's).
        if tokio::runtime::Handle::try_current().is_err() {
            shut_down(&self.host);
            return;
        }
        // On an async runtime's thread the shutdown may not block (its waits
        // would panic there, and abort the process when the drop comes
        // while a task unwinds or is dropped): it runs on a thread of its
        // own, and the drop returns at once. Should no thread
        // start, the node lives on until its actors' idle timeout, as it
        // did before ADR 060.
        let host = self.host.clone();
        let _ = std::thread::Builder::new().name("shutdown".into()).spawn(move || {
            shut_down(&host);
        });
    }
}
