//! What a node's passes keep between runs. The node holds it (its passes
//! run on it) and the passes read and write it through its operations; each
//! owns its lock, and none is held while a pass waits on the bucket.

use crate::bucket::ETag;
use crate::unpoisoned::lock;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, mpsc};

/// An app and a class, as `expire-after-idle` is set for them.
pub(crate) type AppClass = (String, String);

/// What the node's passes keep between runs.
#[derive(Default)]
pub(crate) struct PassBook {
    /// Wakes the alarm timer (a sooner alarm was set).
    timer_wake: Mutex<Option<mpsc::Sender<()>>>,
    /// Operator delete requests queued here and not finished (bucket keys).
    operator_in_flight: Mutex<HashSet<String>>,
    /// `expire-after-idle` by (app, class), in ms.
    idle_limits: Mutex<HashMap<AppClass, u64>>,
    /// Idle expiry: ownership record versions found changed or held, not tried
    /// again at that version (long-resident actors would take every pass's
    /// budget), by record: one version of each is skipped, the last found.
    expiry_skipped: Mutex<HashMap<String, ETag>>,
    /// Apps whose serving mark this node process wrote, by the lease epoch
    /// it named (ADR 077): written once per epoch.
    serving_marked: Mutex<HashMap<String, u64>>,
}

impl PassBook {
    /// The alarm timer's wake, set once its thread starts.
    pub(crate) fn set_timer_wake(&self, tx: mpsc::Sender<()>) {
        *lock(&self.timer_wake) = Some(tx);
    }

    /// Wakes the alarm timer, if it runs.
    pub(crate) fn wake_timer(&self) {
        if let Some(tx) = lock(&self.timer_wake).as_ref() {
            let _ = tx.send(());
        }
    }

    /// Counts an operator delete request as queued here; false if it
    /// already is, or if `limit` are.
    pub(crate) fn claim_operator_request(&self, object: &str, limit: usize) -> bool {
        let mut in_flight = lock(&self.operator_in_flight);
        in_flight.len() < limit && in_flight.insert(object.to_owned())
    }

    /// An operator delete request is no longer queued here.
    pub(crate) fn release_operator_request(&self, object: &str) {
        lock(&self.operator_in_flight).remove(object);
    }

    /// Sets (`Some`, in ms) or removes `expire-after-idle` for an app's class.
    pub(crate) fn set_idle_limit(&self, app_class: AppClass, ms: Option<u64>) {
        let mut limits = lock(&self.idle_limits);
        match ms {
            Some(ms) => limits.insert(app_class, ms),
            None => limits.remove(&app_class),
        };
    }

    /// Every `expire-after-idle` set, in ms.
    pub(crate) fn idle_limits(&self) -> Vec<(AppClass, u64)> {
        lock(&self.idle_limits).iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Whether idle expiry skips this version of an ownership record.
    pub(crate) fn expiry_skips(&self, record: &str, etag: &ETag) -> bool {
        lock(&self.expiry_skipped).get(record) == Some(etag)
    }

    /// Idle expiry skips this version of an ownership record from now on.
    pub(crate) fn skip_expiry(&self, record: String, etag: ETag) {
        lock(&self.expiry_skipped).insert(record, etag);
    }

    /// Forgets skipped versions the last listing no longer had (`listed`:
    /// each record's version as listed).
    pub(crate) fn keep_expiry_skips(&self, listed: &HashMap<String, ETag>) {
        lock(&self.expiry_skipped).retain(|record, etag| listed.get(record) == Some(etag));
    }

    /// Writes `app`'s serving mark with `write` unless it was written at
    /// this lease `epoch` already (a node process writes it once per epoch;
    /// nodes of one process, with no epoch, every pass). Under the book's
    /// lock, so that two passes at once write it once and a stopping app's
    /// `forget_served` is not undone by a write that began before it.
    ///
    /// # Errors
    /// `write`'s: the mark is written again at the next pass.
    pub(crate) fn mark_serving_once<E>(
        &self,
        app: &str,
        epoch: Option<u64>,
        write: impl FnOnce() -> Result<(), E>,
    ) -> Result<(), E> {
        let mut marked = lock(&self.serving_marked);
        if epoch.is_some() && marked.get(app).copied() == epoch {
            return Ok(());
        }
        write()?;
        if let Some(epoch) = epoch {
            marked.insert(app.to_owned(), epoch);
        }
        Ok(())
    }

    /// `app` is gone here: its mark is written again if it comes back.
    pub(crate) fn forget_served(&self, app: &str) {
        lock(&self.serving_marked).remove(app);
    }
}
