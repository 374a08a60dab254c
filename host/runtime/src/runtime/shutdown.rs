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
use crate::node::Host;
use crate::passes;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The ordered shutdown (tellus's lesson: "stopped" is reported last, so
/// whoever waits on it knows everything is gone). See
/// [`Runtime::shutdown`](super::Runtime::shutdown).
pub(super) fn shut_down(host: &Arc<Host>) -> Shutdown {
    host.stops().stop_host();
    let mut report = Shutdown::default();
    let mine: std::collections::HashSet<ActorKey> = host.scheduler().keys().into_iter().collect();
    report.sockets_closed = host.close_sockets_where(|k| mine.contains(k), 1001, "going away");
    report.actors_released = super::admin::resident_count(host);
    // Each worker finishes its running event, answers what is queued behind
    // it (no guest code), then drops the instance and releases the actor.
    passes::hibernate_where(host, |_| true);
    host.scheduler().end_waiting_threads();
    report
}

/// How long the last handle's drop waits, after the shutdown, for the
/// node's threads to let go of it.
const LET_GO_WITHIN: Duration = Duration::from_millis(100);

/// The shutdown, then the node itself dropped here, once the workers that
/// released its actors let go of it (they do just after answering the
/// release). So the node is gone when the drop returns, and with it its
/// instance pool's claim on the process's address space: a runtime made
/// next gets a pool of its own. Without the wait the next runtime's claim
/// could come first, and that runtime would map each instance on demand
/// (measured: the benchmark's second wake row, tens of µs slower a wake).
/// A holder that stays longer (a caller's unanswered `PendingResponse`)
/// drops the node when it lets go.
fn shut_down_and_let_go(host: Arc<Host>) {
    shut_down(&host);
    let deadline = Instant::now() + LET_GO_WITHIN;
    while Arc::strong_count(&host) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Held by the runtime's handles and by nothing of the node's own, so its
/// drop is the last handle's: it shuts the node down, which breaks the
/// cycle above, and the node's threads end as they next look at it.
pub(super) struct LastHandle {
    /// Taken by the drop.
    host: Option<Arc<Host>>,
}

impl LastHandle {
    pub(super) fn new(host: Arc<Host>) -> Arc<Self> {
        Arc::new(Self { host: Some(host) })
    }
}

impl Drop for LastHandle {
    fn drop(&mut self) {
        let Some(host) = self.host.take() else { return };
        // A second shutdown finds nothing left to do: cheap after an
        // explicit one (the dev server's, a test host's).
        if tokio::runtime::Handle::try_current().is_err() {
            shut_down_and_let_go(host);
            return;
        }
        // On an async runtime's thread the shutdown may not block (its waits
        // would panic there, and abort the process when the drop comes while
        // a task unwinds or is dropped): it runs on a thread of its own, and
        // the drop returns at once. Should no thread start, the node lives
        // on until its actors' idle timeout, as it did before ADR 060.
        let _ = std::thread::Builder::new()
            .name("shutdown".into())
            .spawn(move || shut_down_and_let_go(host));
    }
}
