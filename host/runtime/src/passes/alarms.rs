//! Alarms: due ones queued as jobs, each on the node that holds its actor.

use super::holders::held_by_another_process;
use crate::address::ActorKey;
use crate::job::{GuestEvent, Job};
use crate::node::Host;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Queues an alarm job for every due entry not already `in_flight`; returns the new ones.
pub(crate) fn queue_due(
    host: &Arc<Host>,
    in_flight: &HashMap<ActorKey, oneshot::Receiver<bool>>,
) -> Vec<(ActorKey, oneshot::Receiver<bool>)> {
    // A stopped node runs no alarm (its job would be answered "not run" and
    // the entry stay due), and queues none: each queued job would start a
    // worker that holds the node (ADR 060).
    if host.is_stopping() {
        return Vec::new();
    }
    let now = host.clock().now_ms();
    let due = match host.alarms().due(now) {
        Ok(d) => d,
        Err(e) => {
            tracing::error!("reading the alarm index: {e}");
            return Vec::new();
        }
    };
    let mut queued = Vec::new();
    for (key, _) in due {
        if in_flight.contains_key(&key) {
            continue; // its alarm job is still queued
        }
        if let Some(rx) = queue_alarm(host, &key) {
            queued.push((key, rx));
        }
    }
    queued
}

/// Queues the alarm job of `key`, due now per the index; what it answers
/// once its event has ended (whether `on-alarm` ran). None when this node
/// does not wake it: its app is not loaded here, or a live node of another
/// process holds it (its holder wakes it; this node does once the holder's
/// lease lapses).
pub(crate) fn queue_alarm(host: &Arc<Host>, key: &ActorKey) -> Option<oneshot::Receiver<bool>> {
    if host.class(key).is_err() || held_by_another_process(host, key) {
        return None;
    }
    let (tx, rx) = oneshot::channel();
    host.enqueue(key, Job::new(GuestEvent::Alarm { ran: tx }, Vec::new()));
    Some(rx)
}
