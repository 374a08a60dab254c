//! Who holds an actor, as the passes ask before they queue a job for it:
//! this node (its mailbox, or the ownership record), or a node of another
//! process.

use crate::address::ActorKey;
use crate::node::Host;
use std::sync::Arc;

/// Whether this node holds `key`: it has its mailbox (the actor is, or was
/// lately, held here), or the bucket's ownership record names this node. A
/// node process killed while it held the actor and started again under the
/// same id holds it by the record and has no mailbox for it yet; the leader
/// leaves it to this node, since the record names a live node (ADR 031).
pub(super) fn held_here(host: &Arc<Host>, key: &ActorKey) -> bool {
    if host.scheduler().has_mailbox(key) {
        return true;
    }
    host.cluster()
        .is_some_and(|c| match crate::replica::recorded_holder(c.bucket.as_ref(), key) {
            Ok(rec) => rec.is_some_and(|rec| !rec.released && rec.node == c.node),
            Err(e) => {
                // Not known now: taken as not held here; a later pass asks again.
                tracing::warn!(actor = %key, "operator delete: reading the actor's ownership record: {e}");
                false
            }
        })
}

/// Whether a live node of another process holds `key` (node processes share
/// the alarm index in the bucket; a node of this process gets the job
/// through its mailbox instead).
pub(super) fn held_by_another_process(host: &Arc<Host>, key: &ActorKey) -> bool {
    host.remote_holder(key).is_some()
}
