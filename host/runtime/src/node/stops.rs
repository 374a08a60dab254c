//! What has stopped on a node: the whole host (an ordered shutdown began) or
//! single apps (their tombstone was seen). Every event asks before it runs
//! guest code, so the common answer, "nothing stopped", costs two atomic
//! loads and no lock; waiters subscribe to hear of each new stop.

use std::collections::HashSet;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The node's stops.
pub(crate) struct Stops {
    /// Set once an ordered shutdown began: no new guest code runs.
    host: AtomicBool,
    /// Apps this node stopped serving (their tombstone was seen).
    apps: RwLock<HashSet<String>>,
    /// Whether `apps` has any entry: keeps the lock off every event's path.
    any_app: AtomicBool,
    /// Bumped whenever something stops: waiters look again.
    generation: tokio::sync::watch::Sender<u64>,
}

impl Default for Stops {
    fn default() -> Self {
        Self {
            host: AtomicBool::new(false),
            apps: RwLock::default(),
            any_app: AtomicBool::new(false),
            generation: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl Stops {
    /// The ordered shutdown began.
    pub(crate) fn stop_host(&self) {
        self.host.store(true, Ordering::Release);
        self.generation.send_modify(|g| *g += 1);
    }

    /// This node stops serving `app`.
    pub(crate) fn stop_app(&self, app: &str) {
        self.apps
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(app.to_owned());
        self.any_app.store(true, Ordering::Release);
        self.generation.send_modify(|g| *g += 1);
    }

    /// Whether the ordered shutdown began.
    pub(crate) fn host_stopped(&self) -> bool {
        self.host.load(Ordering::Acquire)
    }

    /// Whether this node stopped serving `app`.
    pub(crate) fn app_stopped(&self, app: &str) -> bool {
        self.any_app.load(Ordering::Acquire)
            && self
                .apps
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .contains(app)
    }

    /// Hears of each new stop.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
