//! Node processes' leases in the bucket (docs/adr/028-node-processes.md).
//!
//! A node joins by writing its lease `cluster/nodes/<node>` at an epoch one
//! above the one it finds there (so epochs strictly increase per node id
//! across restarts), and renews it on a timer with a conditional write on the
//! ETag it last wrote. A node is live while its lease is unexpired on the
//! cluster's clock. A renewal that fails its condition means another process
//! took the node id (or cut the node off): this process is fenced for good.
//! Every body carries a nonce and a renewal count, because moto's ETag is the
//! body's MD5: two identical bodies would let a stale `If-Match` pass.

use crate::bucket::{BucketError, ETag, ObjectStore, PutCondition, put_read_back};
use crate::clock::Clock;
use crate::keys;
use crate::liveness::{Liveness, LivenessError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// What a lease object holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRecord {
    /// The node id.
    pub node: String,
    /// Its epoch: one more at each join of this node id.
    pub epoch: u64,
    /// Where it answers HTTP (`http://host:port`), if it serves.
    pub address: Option<String>,
    /// Until when it is live, on the cluster's clock (ms since the epoch); 0
    /// once it left or was cut off.
    pub expires_at_ms: u64,
    /// Writes of this epoch so far.
    pub renewals: u64,
    /// Random per process: no two processes write the same bytes.
    pub nonce: u64,
}

impl LeaseRecord {
    /// Whether the lease is unexpired at `now_ms`.
    pub fn is_live_at(&self, now_ms: u64) -> bool {
        self.expires_at_ms > now_ms
    }
}

/// Reads `node`'s lease (`None`: it never joined).
///
/// # Errors
/// The bucket failed, or the object is not a lease.
pub fn read_lease(bucket: &dyn ObjectStore, node: &str) -> Result<Option<(LeaseRecord, ETag)>, BucketError> {
    let key = keys::node_lease(node);
    match bucket.get(&key)? {
        None => Ok(None),
        Some((body, etag)) => serde_json::from_slice(&body)
            .map(|r| Some((r, etag)))
            .map_err(|e| BucketError::Unavailable(format!("{key} is not a lease: {e}"))),
    }
}

/// Reads the control lease (`None`: nobody took it yet).
///
/// # Errors
/// The bucket failed, or the object is not a lease.
pub fn read_control(bucket: &dyn ObjectStore) -> Result<Option<(LeaseRecord, ETag)>, BucketError> {
    match bucket.get(keys::CONTROL_LEASE)? {
        None => Ok(None),
        Some((body, etag)) => serde_json::from_slice(&body)
            .map(|r| Some((r, etag)))
            .map_err(|e| BucketError::Unavailable(format!("{} is not a lease: {e}", keys::CONTROL_LEASE))),
    }
}

/// Where this process's lease on a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseState {
    /// Held and renewed.
    Held,
    /// Cut off here, or left: not renewed any more.
    Given,
    /// A renewal failed its condition: another process took the node id.
    Fenced,
}

#[derive(Debug, Clone)]
struct HeldLease {
    record: LeaseRecord,
    etag: ETag,
    state: LeaseState,
}

/// Liveness by leases in the bucket, for the nodes this process runs.
pub struct BucketLeases {
    bucket: Arc<dyn ObjectStore>,
    clock: Arc<dyn Clock>,
    ttl_ms: u64,
    address: Option<String>,
    nonce: u64,
    held: Mutex<HashMap<String, HeldLease>>,
    /// The control lease, while one of this process's nodes holds it.
    control: Mutex<Option<(LeaseRecord, ETag)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The default lease: live for 10 s after each renewal.
pub const DEFAULT_TTL_MS: u64 = 10_000;

/// The control lease lives this many node leases (ADR 077).
pub const CONTROL_LIVES: u64 = 3;

/// The renewal thread looks this many times a lease's life: a renewal that
/// did not land is tried again a tenth of the life later, not half of it.
const LOOKS_PER_LIFE: u64 = 10;

impl BucketLeases {
    /// Leases in `bucket` lasting `ttl_ms` on `clock`; the nodes of this
    /// process answer HTTP at `address`.
    pub fn new(bucket: Arc<dyn ObjectStore>, clock: Arc<dyn Clock>, ttl_ms: u64, address: Option<String>) -> Self {
        Self {
            bucket,
            clock,
            ttl_ms,
            address,
            nonce: std::collections::hash_map::RandomState::new().build_hasher().finish(),
            held: Mutex::new(HashMap::new()),
            control: Mutex::new(None),
        }
    }

    /// How long a lease lasts after a renewal.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// How long the control lease lasts after a renewal: three node leases.
    /// Its passes (purges, idle expiry) are not urgent, and a killed holder's
    /// actors are taken over by their node leases' lapse, not by this one's;
    /// a longer life makes its renewals a third as many (ADR 077).
    pub fn control_ttl_ms(&self) -> u64 {
        self.ttl_ms.saturating_mul(CONTROL_LIVES)
    }

    /// The epoch this process holds `node` at, while it holds it.
    pub fn epoch(&self, node: &str) -> Option<u64> {
        lock(&self.held)
            .get(node)
            .filter(|h| h.state == LeaseState::Held)
            .map(|h| h.record.epoch)
    }

    /// Where this process's lease on `node` stands (`None`: never joined here).
    pub fn state(&self, node: &str) -> Option<LeaseState> {
        lock(&self.held).get(node).map(|h| h.state)
    }

    /// Renews every lease this process holds: a write on the ETag it last
    /// wrote. One whose condition fails is fenced; one the bucket did not
    /// take stays as it was (and lapses unless a later renewal lands).
    pub fn renew(&self) {
        self.renew_nodes(|_| true);
        self.hold_control();
    }

    /// Renews what is due: a node lease once half its life is gone, the
    /// control lease once half of its (longer) life is gone; a node that does
    /// not hold the control lease looks whether it lapsed as its own lease is
    /// renewed. A renewal that did not land stays due, so the next look (a
    /// tenth of the life later) tries again (ADR 077).
    pub fn renew_due(&self) {
        let now = self.clock.now_ms();
        let half = self.ttl_ms / 2;
        let renewed = self.renew_nodes(|h| h.record.expires_at_ms.saturating_sub(half) <= now);
        let control_due = lock(&self.control)
            .as_ref()
            .is_some_and(|(r, _)| r.expires_at_ms.saturating_sub(self.control_ttl_ms() / 2) <= now);
        let holds_control = lock(&self.control).is_some();
        if control_due || (!holds_control && renewed) {
            self.hold_control();
        }
    }

    /// Renews the held node leases `due` picks; whether any was written.
    fn renew_nodes(&self, due: impl Fn(&HeldLease) -> bool) -> bool {
        let now = self.clock.now_ms();
        let mut held = lock(&self.held);
        let mut renewed = false;
        for h in held.values_mut().filter(|h| h.state == LeaseState::Held && due(h)) {
            renewed = true;
            let mut record = h.record.clone();
            record.expires_at_ms = now + self.ttl_ms;
            record.renewals += 1;
            match self.write(&record, &PutCondition::IfMatch(h.etag.clone())) {
                Ok(etag) => {
                    h.record = record;
                    h.etag = etag;
                }
                // Any failure may hide a write of ours that landed (a lost
                // answer, a timeout, a retry refused by its own first try):
                // what the bucket holds decides. Fenced only when another
                // writer is proven (issue 57).
                Err(e) => match read_lease(self.bucket.as_ref(), &record.node) {
                    Ok(Some((found, etag))) if found.nonce == self.nonce && found.epoch == record.epoch => {
                        // Ours: this renewal (it landed) or an earlier one (it did not).
                        h.record = found;
                        h.etag = etag;
                    }
                    Ok(Some(_)) => {
                        tracing_free_warn(&record.node, "its lease was taken by another process: fenced");
                        h.state = LeaseState::Fenced;
                    }
                    Ok(None) | Err(_) => tracing_free_warn(&record.node, &format!("renewing its lease: {e}")),
                },
            }
        }
        renewed
    }

    /// Takes or renews the control lease (`cluster/control`) for the first
    /// node this process holds: renewed on its own ETag, taken over on the
    /// ETag read once it lapsed (or its holder left). One node of the cluster
    /// holds it at a time; that node runs the control pass and idle expiry.
    fn hold_control(&self) {
        let now = self.clock.now_ms();
        let mut control = lock(&self.control);
        let holder = control.as_ref().map(|(r, _)| r.node.clone());
        let mine = {
            let held = lock(&self.held);
            let mut nodes: Vec<&HeldLease> = held.values().filter(|h| h.state == LeaseState::Held).collect();
            // The node that holds it keeps it; otherwise the lowest id here tries.
            nodes.sort_by_key(|h| (Some(&h.record.node) != holder.as_ref(), h.record.node.clone()));
            nodes.first().map(|h| h.record.clone())
        };
        let Some(node) = mine else { return };
        let cond = match control.as_ref() {
            Some((record, etag)) if record.node == node.node => PutCondition::IfMatch(etag.clone()),
            _ => match read_control(self.bucket.as_ref()) {
                Ok(None) => PutCondition::IfAbsent,
                // Lapsed; or this node's, at an earlier epoch, or at this one
                // (a write of ours whose answer was lost and could not be read
                // back: the epoch is this process's alone, issue 57).
                Ok(Some((r, etag))) if !r.is_live_at(now) || (r.node == node.node && r.epoch <= node.epoch) => {
                    PutCondition::IfMatch(etag)
                }
                // Another node holds it, or the bucket did not answer: not this one.
                Ok(Some(_)) | Err(_) => {
                    *control = None;
                    return;
                }
            },
        };
        let renewals = control.as_ref().map_or(0, |(r, _)| r.renewals + 1);
        let record = LeaseRecord {
            expires_at_ms: now + self.control_ttl_ms(),
            renewals,
            ..node
        };
        let body = serde_json::to_vec(&record).unwrap_or_default();
        // A lost answer is settled by reading the lease back (issue 57).
        match put_read_back(self.bucket.as_ref(), keys::CONTROL_LEASE, &body, &cond) {
            Ok(etag) => *control = Some((record, etag)),
            Err(BucketError::PreconditionFailed(_)) => *control = None,
            // Not known to have landed: what this process held lapses unless
            // a renewal lands; the next round reads the lease, and one of
            // this node's at this epoch is taken back.
            Err(_) => {}
        }
    }

    /// Gives the control lease up if `node` holds it: written expired.
    fn give_control(&self, node: &str) {
        let mut control = lock(&self.control);
        if let Some((record, etag)) = control.take_if(|(r, _)| r.node == node) {
            let gone = LeaseRecord {
                expires_at_ms: 0,
                renewals: record.renewals + 1,
                ..record
            };
            let body = serde_json::to_vec(&gone).unwrap_or_default();
            let _ = self
                .bucket
                .put(keys::CONTROL_LEASE, &body, &PutCondition::IfMatch(etag));
        }
    }

    /// Renews the leases when due ([`Self::renew_due`]) on a thread of its
    /// own, looking a tenth of a lease's life apart, until `self` is dropped.
    pub fn start_renewing(self: &Arc<Self>) {
        let me: Weak<Self> = Arc::downgrade(self);
        let every = Duration::from_millis((self.ttl_ms / LOOKS_PER_LIFE).max(1));
        let spawned = std::thread::Builder::new()
            .name("wasmkeep-leases".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(every);
                    let Some(leases) = me.upgrade() else { return };
                    leases.renew_due();
                }
            });
        if let Err(e) = spawned {
            tracing_free_warn("*", &format!("the lease renewal thread did not start: {e}"));
        }
    }

    /// Writes `record` on `cond`; a lost answer is settled by reading the
    /// lease back (ours: written; another process's: `PreconditionFailed`).
    fn write(&self, record: &LeaseRecord, cond: &PutCondition) -> Result<ETag, BucketError> {
        let body = serde_json::to_vec(record).map_err(|e| BucketError::Unavailable(e.to_string()))?;
        put_read_back(self.bucket.as_ref(), &keys::node_lease(&record.node), &body, cond)
    }

    /// Writes `node`'s lease expired (left or cut off), on `etag`.
    fn expire(&self, node: &str, record: &LeaseRecord, etag: &ETag) {
        let mut gone = record.clone();
        gone.expires_at_ms = 0;
        gone.renewals += 1;
        gone.nonce = self.nonce;
        if let Err(e) = self.write(&gone, &PutCondition::IfMatch(etag.clone())) {
            tracing_free_warn(node, &format!("expiring its lease: {e}"));
        }
    }

    fn give(&self, node: &str) -> bool {
        self.give_control(node);
        let given = {
            let mut held = lock(&self.held);
            match held.get_mut(node) {
                Some(h) => {
                    let was = h.state;
                    h.state = LeaseState::Given;
                    (was == LeaseState::Held).then(|| (h.record.clone(), h.etag.clone()))
                }
                None => return false,
            }
        };
        if let Some((record, etag)) = given {
            self.expire(node, &record, &etag);
        }
        true
    }
}

/// The store has no logging of its own: warnings go to stderr, once each.
fn tracing_free_warn(node: &str, what: &str) {
    eprintln!("wasmkeep: node {node}: {what}");
}

impl Liveness for BucketLeases {
    fn join(&self, node: &str) -> Result<(), LivenessError> {
        let failed = |source| LivenessError::Lease {
            node: node.to_owned(),
            source,
        };
        // Two processes joining as one node at once: one wins, the other reads
        // again. A bucket that fails for a moment is tried again too.
        let mut last = BucketError::PreconditionFailed(keys::node_lease(node));
        // The epoch of this process's last write, if its outcome is not
        // known (kept through a read that fails after it).
        let mut ambiguous_epoch = None;
        for attempt in 0..8u64 {
            if attempt > 0 && !matches!(last, BucketError::PreconditionFailed(_)) {
                std::thread::sleep(Duration::from_millis(100 * attempt));
            }
            let found = match read_lease(self.bucket.as_ref(), node) {
                Ok(found) => found,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            // An ambiguous write of ours that landed: this process holds it.
            if let Some((r, etag)) = &found
                && r.nonce == self.nonce
                && Some(r.epoch) == ambiguous_epoch
                && lock(&self.held).get(node).is_none_or(|h| h.state != LeaseState::Held)
                && r.renewals == 0
                && r.expires_at_ms > self.clock.now_ms()
            {
                lock(&self.held).insert(
                    node.to_owned(),
                    HeldLease {
                        record: r.clone(),
                        etag: etag.clone(),
                        state: LeaseState::Held,
                    },
                );
                self.hold_control();
                return Ok(());
            }
            let record = LeaseRecord {
                node: node.to_owned(),
                epoch: found.as_ref().map_or(0, |(r, _)| r.epoch) + 1,
                address: self.address.clone(),
                expires_at_ms: self.clock.now_ms() + self.ttl_ms,
                renewals: 0,
                nonce: self.nonce,
            };
            let cond = found
                .as_ref()
                .map_or(PutCondition::IfAbsent, |(_, e)| PutCondition::IfMatch(e.clone()));
            let epoch = record.epoch;
            match self.write(&record, &cond) {
                Ok(etag) => {
                    lock(&self.held).insert(
                        node.to_owned(),
                        HeldLease {
                            record,
                            etag,
                            state: LeaseState::Held,
                        },
                    );
                    self.hold_control();
                    return Ok(());
                }
                Err(e) => {
                    ambiguous_epoch = matches!(e, BucketError::Ambiguous(_)).then_some(epoch);
                    last = e;
                }
            }
        }
        Err(failed(last))
    }

    fn is_live(&self, node: &str) -> bool {
        let now = self.clock.now_ms();
        if let Some(h) = lock(&self.held).get(node) {
            // Its own view ends a quarter of the lease early: it stops acting
            // as live before any other node may decide it is not.
            let margin = self.ttl_ms / 4;
            return h.state == LeaseState::Held && h.record.expires_at_ms.saturating_sub(margin) > now;
        }
        matches!(read_lease(self.bucket.as_ref(), node), Ok(Some((r, _))) if r.is_live_at(now))
    }

    fn cut_off(&self, node: &str) {
        if self.give(node) {
            return;
        }
        // Another process's node: its lease is written expired, on the ETag
        // read, so its next renewal fails its condition and fences it.
        if let Ok(Some((record, etag))) = read_lease(self.bucket.as_ref(), node) {
            self.expire(node, &record, &etag);
        }
    }

    fn leave(&self, node: &str) {
        self.give(node);
    }

    fn live_nodes(&self) -> Vec<String> {
        let Ok(listing) = self.bucket.list(keys::NODE_LEASES) else {
            return Vec::new();
        };
        let mut v: Vec<String> = listing
            .iter()
            .filter_map(|m| keys::node_of_lease(&m.key))
            .filter(|n| self.is_live(n))
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    }

    fn epoch(&self, node: &str) -> Option<u64> {
        BucketLeases::epoch(self, node)
    }

    fn address(&self, node: &str) -> Option<String> {
        let now = self.clock.now_ms();
        match read_lease(self.bucket.as_ref(), node) {
            Ok(Some((r, _))) if r.is_live_at(now) => r.address,
            _ => None,
        }
    }

    /// The node that holds the control lease, while it and its own lease are live.
    fn leads(&self, node: &str, _live_nodes: &[String]) -> bool {
        let now = self.clock.now_ms();
        let margin = self.ttl_ms / 4;
        let holds = lock(&self.control)
            .as_ref()
            .is_some_and(|(r, _)| r.node == node && r.expires_at_ms.saturating_sub(margin) > now);
        holds && self.is_live(node)
    }
}

#[cfg(test)]
mod tests;
