//! Cluster: idle expiry: the collecting node deletes actors whose class
//! sets `expire-after-idle` and that have been idle past it.

use crate::job::{HostJob, Job};
use crate::node::Host;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What one idle expiry pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpiryPass {
    /// Released records older than their class's limit.
    pub candidates: usize,
    /// Actors deleted.
    pub expired: usize,
}

/// At most this many expiries per pass ...
pub const EXPIRIES_PER_PASS: usize = 100;
/// ... and this many at a time.
pub const EXPIRIES_AT_ONCE: usize = 4;

/// One idle expiry pass (ADR 0028 §4); see [`crate::ClusterPasses::run_expiry_pass`].
pub(crate) fn expiry_pass(host: &Arc<Host>) -> ExpiryPass {
    let mut pass = ExpiryPass::default();
    let Some(c) = host.cluster() else { return pass };
    if host.is_stopping() || !c.cluster.leads(&c.node) {
        return pass;
    }
    // The clock before the listing: a slow listing never makes a record look idler.
    let now = host.clock().now_ms();
    let limits = host.pass_book().idle_limits();
    let mut candidates = Vec::new();
    // Versions listed this pass: a skipped version no longer listed is dropped,
    // so the skip list never outgrows the records.
    let mut seen = HashMap::new();
    for ((app, class), limit) in limits {
        let prefix = crate::keys::owners_of_class(&app, &class);
        let listed = match c.bucket.list(&prefix) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(app = %app, class = %class, "idle expiry: listing owners: {e}");
                continue;
            }
        };
        for m in listed {
            seen.insert(m.key.clone(), m.etag.clone());
            let Some(key) = crate::keys::actor_of_owner(&app, &class, &m.key) else {
                continue;
            };
            if m.last_modified.saturating_add(limit) > now {
                continue;
            }
            if host.pass_book().expiry_skips(&m.key, &m.etag) {
                continue;
            }
            // Resident here or with a socket: active (the job never takes a hold it has).
            let resident = host.scheduler().is_resident(&key);
            if resident || !host.sockets_of(&key).is_empty() {
                continue;
            }
            candidates.push((key, m.key, m.etag));
        }
    }
    host.pass_book().keep_expiry_skips(&seen);
    pass.candidates = candidates.len();
    host.metrics()
        .add(crate::metrics::EXPIRY_CANDIDATES_TOTAL, "", candidates.len() as u64);
    for batch in candidates
        .chunks(EXPIRIES_AT_ONCE)
        .take(EXPIRIES_PER_PASS / EXPIRIES_AT_ONCE)
    {
        let waits: Vec<_> = batch
            .iter()
            .map(|(key, _, etag)| {
                let (tx, rx) = oneshot::channel();
                host.enqueue(
                    key,
                    Job::new(
                        HostJob::Expire {
                            etag: etag.clone(),
                            done: tx,
                        },
                        Vec::new(),
                    ),
                );
                rx
            })
            .collect();
        for ((_, record, etag), rx) in batch.iter().zip(waits) {
            if rx.blocking_recv().unwrap_or(false) {
                pass.expired += 1;
            } else {
                host.pass_book().skip_expiry(record.clone(), etag.clone());
            }
        }
    }
    pass
}
