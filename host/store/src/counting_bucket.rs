//! A bucket that counts its requests by what they are for (issue 57: what a
//! cluster writes). A node process counts every request it makes this way,
//! and `/metrics` shows the counts (`wasmkeep_bucket_requests_total`), so an
//! operator sees what an idle node and a write cost, and the bench prints
//! them per idle node-hour and per acknowledged write.

use crate::bucket::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition};
use crate::keys;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a request is for, read from its key's place in the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Purpose {
    /// A node's lease (`cluster/nodes/`): liveness.
    Lease,
    /// The control lease (`cluster/control`): who runs the control pass.
    Control,
    /// A node's heartbeat for an app (`apps/<app>/nodes/`).
    Heartbeat,
    /// Other records of an app (its tombstone).
    App,
    /// An actor's history (`state/<app>/history/`).
    History,
    /// An actor's ownership record (`state/<app>/owners/`): its hold and
    /// the acknowledgement of each write.
    Record,
    /// The alarm index (`alarms/`).
    AlarmIndex,
    /// Operator delete requests and purge marks.
    Operator,
    /// Anything else (the cluster's secret, probes).
    Other,
}

impl Purpose {
    /// Every purpose, in order.
    pub const ALL: [Purpose; 9] = [
        Purpose::Lease,
        Purpose::Control,
        Purpose::Heartbeat,
        Purpose::App,
        Purpose::History,
        Purpose::Record,
        Purpose::AlarmIndex,
        Purpose::Operator,
        Purpose::Other,
    ];

    /// The purpose of a request on `key` (a listing's prefix counts too).
    pub fn of(key: &str) -> Self {
        if key.starts_with(keys::NODE_LEASES) {
            return Purpose::Lease;
        }
        if key.starts_with(keys::CONTROL_LEASE) {
            return Purpose::Control;
        }
        if key.starts_with(keys::ALARMS_ROOT) {
            return Purpose::AlarmIndex;
        }
        if let Some(rest) = key.strip_prefix("apps/") {
            return if rest.contains("/nodes/") || rest.ends_with("/nodes") {
                Purpose::Heartbeat
            } else {
                Purpose::App
            };
        }
        if let Some(rest) = key.strip_prefix(keys::STATE_ROOT) {
            // state/<tenant>/<app>/<part>/...
            let part = rest.split('/').nth(2).unwrap_or("");
            return match part {
                "history" => Purpose::History,
                "owners" => Purpose::Record,
                "deletes" | "purges" => Purpose::Operator,
                _ => Purpose::Other,
            };
        }
        Purpose::Other
    }

    /// Its name in metrics and the bench.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Lease => "lease",
            Purpose::Control => "control",
            Purpose::Heartbeat => "heartbeat",
            Purpose::App => "app",
            Purpose::History => "history",
            Purpose::Record => "record",
            Purpose::AlarmIndex => "alarm-index",
            Purpose::Operator => "operator",
            Purpose::Other => "other",
        }
    }
}

/// A request's verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    /// A read of one object.
    Get,
    /// A write of one object.
    Put,
    /// A delete of one object.
    Delete,
    /// A listing.
    List,
}

impl Verb {
    /// Every verb, in order.
    pub const ALL: [Verb; 4] = [Verb::Get, Verb::Put, Verb::Delete, Verb::List];

    /// Its name in metrics and the bench.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Put => "put",
            Verb::Delete => "delete",
            Verb::List => "list",
        }
    }
}

/// The counts: one per verb and purpose.
#[derive(Debug, Default)]
pub struct RequestCounts([[AtomicU64; Purpose::ALL.len()]; Verb::ALL.len()]);

impl RequestCounts {
    fn count(&self, verb: Verb, key: &str) {
        self.0[verb as usize][Purpose::of(key) as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// How many `verb` requests for `purpose` were made.
    pub fn get(&self, verb: Verb, purpose: Purpose) -> u64 {
        self.0[verb as usize][purpose as usize].load(Ordering::Relaxed)
    }

    /// Every count that is not zero, as (verb, purpose, count).
    pub fn nonzero(&self) -> Vec<(Verb, Purpose, u64)> {
        let mut out = Vec::new();
        for verb in Verb::ALL {
            for purpose in Purpose::ALL {
                let n = self.get(verb, purpose);
                if n > 0 {
                    out.push((verb, purpose, n));
                }
            }
        }
        out
    }
}

/// `inner`, with every request counted in `counts` (failed ones too: each
/// is a request the bucket bills).
pub struct CountingBucket {
    inner: Arc<dyn ObjectStore>,
    counts: Arc<RequestCounts>,
}

impl CountingBucket {
    /// Counts `inner`'s requests in `counts`.
    pub fn new(inner: Arc<dyn ObjectStore>, counts: Arc<RequestCounts>) -> Self {
        Self { inner, counts }
    }
}

impl ObjectStore for CountingBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.counts.count(Verb::Get, key);
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        self.counts.count(Verb::Put, key);
        self.inner.put(key, body, cond)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.counts.count(Verb::Delete, key);
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.counts.count(Verb::List, prefix);
        self.inner.list(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::ActorKey;
    use crate::bucket::MemoryBucket;
    use crate::clock::VirtualClock;

    #[test]
    fn keys_count_for_what_they_are() {
        let k = ActorKey::new("acme/shop", "cart", "c1");
        for (key, purpose) in [
            (keys::node_lease("n1"), Purpose::Lease),
            (keys::CONTROL_LEASE.to_owned(), Purpose::Control),
            (keys::heartbeat("acme/shop", "n1"), Purpose::Heartbeat),
            (keys::heartbeats("acme/shop"), Purpose::Heartbeat),
            (keys::tombstone("acme/shop"), Purpose::App),
            (keys::history_prefix(&k), Purpose::History),
            (keys::owner(&k), Purpose::Record),
            (keys::alarm(&k, 5), Purpose::AlarmIndex),
            (keys::delete_request(&k, "r1"), Purpose::Operator),
            (keys::purge_mark(&k), Purpose::Operator),
            (keys::CLUSTER_SECRET.to_owned(), Purpose::Other),
        ] {
            assert_eq!(Purpose::of(&key), purpose, "{key}");
        }
    }

    #[test]
    fn every_request_is_counted_once() {
        let counts = Arc::new(RequestCounts::default());
        let b = CountingBucket::new(
            Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default()))),
            counts.clone(),
        );
        b.put(&keys::node_lease("n1"), b"x", &PutCondition::None).expect("put");
        b.get(&keys::node_lease("n1")).expect("get");
        b.list(keys::NODE_LEASES).expect("list");
        b.delete(&keys::node_lease("n1")).expect("delete");
        for verb in Verb::ALL {
            assert_eq!(counts.get(verb, Purpose::Lease), 1, "{verb:?}");
        }
        assert_eq!(counts.nonzero().len(), 4);
    }
}
