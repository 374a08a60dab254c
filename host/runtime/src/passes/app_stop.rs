//! Cluster: a node stops serving an app whose tombstone it saw, and the
//! node hibernates the actors it picks (all at once, or one after another).

use crate::address::ActorKey;
use crate::job::{Job, WorkerJob};
use crate::node::Host;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Cluster: stops serving `app` here because its tombstone was seen
/// (ADR 0028 §5): no more guest code; events still queued answered at
/// once; running ones finish; sockets closed with 1001; alarms stopped;
/// actors released; the heartbeat and the node's local files of the app
/// removed; then the app is unloaded.
pub(crate) fn stop_app(host: &Arc<Host>, app: &str) {
    host.stops().stop_app(app);
    tracing::warn!(app = %app, "the app was deleted (tombstone): this node stops serving it");
    host.close_sockets_where(|k| k.app == app, 1001, "going away");
    hibernate_where(host, |k| k.app == app);
    // What is left behind here is only tidiness: the app is stopped either
    // way, and its actors' state is the bucket's (the tombstone's).
    match host.alarms().due(u64::MAX) {
        Ok(due) => {
            for (k, _) in due.into_iter().filter(|(k, _)| k.app == app) {
                if let Err(e) = host.alarms().remove(&k) {
                    tracing::warn!(actor = %k, "forgetting the stopped app's alarm: {e}");
                }
            }
        }
        Err(e) => tracing::warn!(app = %app, "listing the stopped app's alarms to forget them: {e}"),
    }
    if let Some(c) = host.cluster() {
        host.pass_book().forget_served(app);
        if let Err(e) = c.records_bucket().delete(&crate::keys::heartbeat(app, &c.node)) {
            tracing::warn!(app = %app, "deleting this node's heartbeat of the stopped app: {e}");
        }
    }
    let mut dir = host.config().data_dir.join("state");
    for part in app.split('/') {
        dir.push(part);
    }
    if let Err(e) = std::fs::remove_dir_all(&dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(app = %app, "removing {}: {e}", dir.display());
    }
    host.apps().remove(app);
}

/// Hibernates every resident actor `which` picks, after its queued jobs,
/// and waits for all of them (a worker that panicked counts as done).
pub(crate) fn hibernate_where(host: &Arc<Host>, which: impl Fn(&ActorKey) -> bool) {
    let keys: Vec<ActorKey> = host.scheduler().keys().into_iter().filter(|k| which(k)).collect();
    let mut waits = Vec::new();
    for key in keys {
        if host.scheduler().has_queue(&key) {
            let (tx, rx) = oneshot::channel();
            host.enqueue(&key, Job::new(WorkerJob::Hibernate { done: tx }, Vec::new()));
            waits.push(rx);
        }
    }
    for w in waits {
        let _ = w.blocking_recv();
    }
}

/// Hibernates every resident actor `which` picks one after another, in the
/// order of their keys, each after its queued jobs and waited for before
/// the next: what each one's release writes meets the node's armed faults
/// in the same order every time (ADR 080). [`hibernate_where`] hibernates
/// them all at once, in whatever order their workers get to it.
pub(crate) fn hibernate_in_turn(host: &Arc<Host>, which: impl Fn(&ActorKey) -> bool) {
    let mut keys: Vec<ActorKey> = host.scheduler().keys().into_iter().filter(|k| which(k)).collect();
    keys.sort();
    for key in keys {
        hibernate_where(host, |k| *k == key);
    }
}
