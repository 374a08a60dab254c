//! What a node's passes keep between runs. The node holds it (its passes
//! run on it) and the passes read and write it; neither reaches into the
//! other's fields for it.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, mpsc};

/// What the node's passes keep between runs.
#[derive(Default)]
pub(crate) struct PassBook {
    /// Wakes the alarm timer (a sooner alarm was set).
    pub(crate) timer_wake: Mutex<Option<mpsc::Sender<()>>>,
    /// Operator delete requests queued here and not finished (bucket keys).
    pub(crate) operator_in_flight: Mutex<HashSet<String>>,
    /// `expire-after-idle` by (app, class), in ms.
    pub(crate) idle_limits: Mutex<HashMap<(String, String), u64>>,
    /// Idle expiry: ownership record versions found changed or held, not tried
    /// again at that version (long-resident actors would take every pass's budget).
    pub(crate) expiry_skipped: Mutex<HashSet<(String, crate::bucket::ETag)>>,
    /// Apps whose serving mark this node process wrote, by the lease epoch
    /// it named (ADR 077): written once per epoch.
    pub(crate) serving_marked: Mutex<HashMap<String, u64>>,
}
