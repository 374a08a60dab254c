//! One actor's history in the bucket, as its holder on one node sees it
//! (ADR 0028 §1–2, after ADR 0007/0012/0020 as far as the seeds tell them).
//!
//! - **Hold.** Acquiring is a conditional write of the ownership record at a new
//!   generation (above every generation the record or the history has seen). A
//!   hold is valid while the record still names this node at that generation and
//!   the node is live.
//! - **History.** Objects `<generation>-<seq>.seg` (the database after an event,
//!   or after `exec-durable`), `.reset` (an empty database: a delete) and
//!   `.snap` (a snapshot at a reset). Positions order by generation, then seq.
//!   The head is the greatest position: restores follow the chain from the newest
//!   object of the highest generation.
//! - **Fence.** Right after acquiring and restoring, the holder uploads the
//!   restored state at its own generation. From then a late upload of an earlier
//!   holder (lower generation) can never become the head, and what the restore
//!   read is the state.
//! - **Acknowledged** means the upload completed and the hold was still valid
//!   afterwards.
//! - **Delete.** A purge mark, a reset on the head, then a snapshot at it,
//!   then every object before it is erased; the reset, the snapshot and the
//!   ownership record stay. An erase cut short is finished by the next
//!   acquire, or by a control pass through the mark (ADR 031, [`crate::purge`]).

use crate::address::ActorKey;
use crate::bucket::{BucketError, ETag, ObjectStore, PutCondition};
use crate::deletion::DeletionStatus;
use crate::faults::{FaultKind, Faults};
use crate::keys;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// A position in an actor's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pos {
    /// The holder's generation.
    pub generation: u64,
    /// The upload's number within the generation.
    pub seq: u64,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}-{:016x}", self.generation, self.seq)
    }
}

/// What a history object holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The database after writes.
    Segment,
    /// An empty database: the actor was deleted here.
    Reset,
    /// A snapshot of the empty database at a reset.
    Snapshot,
}

impl Kind {
    fn ext(self) -> &'static str {
        match self {
            Kind::Segment => "seg",
            Kind::Reset => "reset",
            Kind::Snapshot => "snap",
        }
    }
}

/// A history object's key parsed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryObject {
    /// Its key.
    pub key: String,
    /// Its position.
    pub pos: Pos,
    /// Its kind.
    pub kind: Kind,
}

/// Parses `<prefix><gen>-<seq>.<ext>`.
pub fn parse_history_key(prefix: &str, key: &str) -> Option<HistoryObject> {
    let rest = key.strip_prefix(prefix)?;
    let (pos, ext) = rest.split_once('.')?;
    let (g, s) = pos.split_once('-')?;
    let kind = match ext {
        "seg" => Kind::Segment,
        "reset" => Kind::Reset,
        "snap" => Kind::Snapshot,
        _ => return None,
    };
    Some(HistoryObject {
        key: key.to_owned(),
        pos: Pos {
            generation: u64::from_str_radix(g, 16).ok()?,
            seq: u64::from_str_radix(s, 16).ok()?,
        },
        kind,
    })
}

/// The ownership record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerRecord {
    /// The node that holds (or last held) the actor.
    pub node: String,
    /// Its generation; never goes down.
    pub generation: u64,
    /// True once the holder let it go (hibernation).
    pub released: bool,
    /// Uploads acknowledged in this generation: each one is acknowledged by
    /// rewriting this record on the ETag the holder last wrote, so an upload
    /// after another node's acquire fails the bucket's condition (ADR 028).
    /// It also keeps every write's bytes distinct (moto's ETag is their MD5).
    #[serde(default)]
    pub committed: u64,
}

/// Why a replica operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    /// The bucket failed; what was written is not known to be there.
    #[error(transparent)]
    Bucket(#[from] BucketError),
    /// The hold is not (or no longer) valid: another node holds the actor, or
    /// this node is cut off. Nothing written now can be acknowledged.
    #[error("the hold on the actor was lost (another node took it, or this node was cut off)")]
    HoldLost,
    /// The ownership record is not readable as one.
    #[error("the ownership record of {0} is corrupt")]
    CorruptRecord(String),
}

/// The outcome of an acquire.
#[derive(Debug)]
pub enum Acquired {
    /// This node holds the actor now; the bucket's head (its image and position), if any.
    Held {
        /// The database at the head, or none for an actor with no history.
        image: Option<Vec<u8>>,
        /// The head's position.
        head: Option<Pos>,
        /// Whether the head is a reset: the actor was deleted, and the image
        /// is the empty database it left.
        deleted: bool,
    },
    /// Another live node holds it.
    HeldBy(String),
}

/// Deliberately broken variants of the replica's rules, for the simulation to
/// prove it catches them. Never set outside tests.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// Acknowledge a delete's reset without checking the hold (after its hold ended).
    AckAfterHoldEnded,
    /// Erase the history before the delete's reset is acknowledged.
    EraseBeforeAck,
    /// Acknowledge every upload without its condition: no hold check, and
    /// the ownership record rewritten unconditionally (no fence at all). The
    /// process simulation must catch it with a paused holder (ADR 031).
    UploadWithoutCondition,
}

#[derive(Debug, Clone)]
struct Hold {
    generation: u64,
    etag: ETag,
}

/// One actor's replica on one node.
pub struct Replica {
    bucket: Arc<dyn ObjectStore>,
    faults: Arc<Faults>,
    key: ActorKey,
    node: String,
    hold: Option<Hold>,
    head: Option<Pos>,
    next_seq: u64,
    last_hash: Option<[u8; 32]>,
    broken: Option<Broken>,
}

fn hash(image: &[u8]) -> [u8; 32] {
    Sha256::digest(image).into()
}

impl Replica {
    /// A replica of `key` for `node`, holding nothing yet.
    pub fn new(bucket: Arc<dyn ObjectStore>, faults: Arc<Faults>, key: ActorKey, node: impl Into<String>) -> Self {
        Self {
            bucket,
            faults,
            key,
            node: node.into(),
            hold: None,
            head: None,
            next_seq: 0,
            last_hash: None,
            broken: None,
        }
    }

    /// Breaks a rule on purpose (the simulation's unsafe variants).
    #[doc(hidden)]
    pub fn set_broken(&mut self, broken: Option<Broken>) {
        self.broken = broken;
    }

    /// The actor.
    pub fn key(&self) -> &ActorKey {
        &self.key
    }

    /// The head as this holder knows it.
    pub fn head(&self) -> Option<Pos> {
        self.head
    }

    /// The generation held, if any.
    pub fn generation(&self) -> Option<u64> {
        self.hold.as_ref().map(|h| h.generation)
    }

    fn read_record(&self) -> Result<Option<(OwnerRecord, ETag)>, ReplicaError> {
        let key = keys::owner(&self.key);
        match self.bucket.get(&key)? {
            None => Ok(None),
            Some((body, etag)) => {
                let rec = serde_json::from_slice(&body).map_err(|_| ReplicaError::CorruptRecord(key))?;
                Ok(Some((rec, etag)))
            }
        }
    }

    /// The history's objects, in position order.
    ///
    /// # Errors
    /// The bucket failed.
    pub fn history(&self) -> Result<Vec<HistoryObject>, ReplicaError> {
        let prefix = keys::history_prefix(&self.key);
        let mut v: Vec<HistoryObject> = self
            .bucket
            .list(&prefix)?
            .into_iter()
            .filter_map(|m| parse_history_key(&prefix, &m.key))
            .collect();
        v.sort_by_key(|o| (o.pos, o.kind != Kind::Snapshot));
        Ok(v)
    }

    /// Takes the actor: a conditional write of the ownership record at a new
    /// generation, the restore of the head, and the fence.
    ///
    /// # Errors
    /// The bucket failed (nothing is held then), or the fence could not be uploaded.
    pub fn acquire(&mut self, live: &dyn Fn(&str) -> bool) -> Result<Acquired, ReplicaError> {
        let record = self.read_record()?;
        if let Some((rec, _)) = &record
            && !rec.released
            && rec.node != self.node
            && live(&rec.node)
        {
            return Ok(Acquired::HeldBy(rec.node.clone()));
        }
        self.acquire_over(record, live)
    }

    /// Acquires only if the ownership record is exactly the version `expect`
    /// (the ETag a listing showed) and names nobody (released): idle expiry's
    /// condition (ADR 0028 §4). One read decides, and the conditional write is
    /// on that read's ETag, so a wake in between makes this lose. `None`: the
    /// record changed or is held; nothing was written.
    ///
    /// # Errors
    /// As [`Replica::acquire`].
    pub fn acquire_unchanged(
        &mut self,
        expect: &ETag,
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Acquired>, ReplicaError> {
        let record = self.read_record()?;
        match &record {
            Some((rec, etag)) if etag == expect && rec.released => {}
            _ => return Ok(None),
        }
        match self.acquire_over(record, live)? {
            Acquired::HeldBy(_) => Ok(None),
            held => Ok(Some(held)),
        }
    }

    /// Writes the ownership record at a new generation over `record` (as read),
    /// then restores the head.
    fn acquire_over(
        &mut self,
        record: Option<(OwnerRecord, ETag)>,
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Acquired, ReplicaError> {
        let history = self.history()?;
        let highest = history.iter().map(|o| o.pos.generation).max().unwrap_or(0);
        let generation = record.as_ref().map_or(0, |(r, _)| r.generation).max(highest) + 1;
        let body = serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation,
            released: false,
            committed: 0,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))?;
        let cond = match &record {
            Some((_, etag)) => PutCondition::IfMatch(etag.clone()),
            None => PutCondition::IfAbsent,
        };
        let etag = match self.bucket.put(&keys::owner(&self.key), &body, &cond) {
            Ok(e) => e,
            Err(BucketError::PreconditionFailed(_)) => {
                // Another node acquired in between: it holds the actor now.
                let holder = self.read_record()?.map_or_else(String::new, |(r, _)| r.node);
                return Ok(Acquired::HeldBy(holder));
            }
            Err(e) => return Err(e.into()),
        };
        self.hold = Some(Hold { generation, etag });
        self.next_seq = 0;
        let head_object = history.iter().rev().find(|o| o.kind != Kind::Snapshot);
        let head = head_object.map(|o| o.pos);
        let deleted = head_object.is_some_and(|o| o.kind == Kind::Reset);
        let image = match head_object {
            // Purged since the listing: a reset landed above it meanwhile.
            // The next acquire lists again (nothing was fenced).
            Some(o) => Some(
                self.bucket
                    .get(&o.key)?
                    .map(|(b, _)| b)
                    .ok_or_else(|| BucketError::Unavailable(format!("{} went while it was restored", o.key)))?,
            ),
            None => None,
        };
        self.head = head;
        self.last_hash = image.as_deref().map(hash);
        if let Some(img) = &image {
            // The fence: the restored state at this generation.
            self.upload(Kind::Segment, img, live)?;
        }
        // A purge cut short (ADR 031): what lies before the newest reset goes
        // now; the restore above never reads it, and the fence is above it.
        for o in before_newest_reset(&history) {
            let _ = self.bucket.delete(&o.key);
        }
        Ok(Acquired::Held { image, head, deleted })
    }

    /// Whether the hold is still valid: the record names this node at its
    /// generation and the node is live.
    ///
    /// # Errors
    /// The bucket failed.
    pub fn holds(&mut self, live: &dyn Fn(&str) -> bool) -> Result<bool, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Ok(false);
        };
        if !live(&self.node) {
            return Ok(false);
        }
        if self.faults.take(FaultKind::LoseHold) {
            // Another node takes the actor over, as a node that believed this one dead would.
            let thief = OwnerRecord {
                node: format!("{}-usurper", self.node),
                generation: hold.generation + 1,
                released: false,
                committed: 0,
            };
            let body = serde_json::to_vec(&thief).unwrap_or_default();
            let _ = self.bucket.put(&keys::owner(&self.key), &body, &PutCondition::None);
        }
        Ok(match self.read_record()? {
            Some((rec, etag)) => {
                rec.node == self.node && rec.generation == hold.generation && !rec.released && etag == hold.etag
            }
            None => false,
        })
    }

    /// Uploads `image` as `kind` at the next position. Acknowledged (Ok) only
    /// if the upload completed and the hold was valid before and after it.
    ///
    /// # Errors
    /// `HoldLost` (nothing written, or written but not acknowledgeable), or the
    /// bucket's error (`Ambiguous`: it may have landed).
    pub fn upload(&mut self, kind: Kind, image: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Err(ReplicaError::HoldLost);
        };
        let check = !(self.broken == Some(Broken::AckAfterHoldEnded) && kind == Kind::Reset)
            && self.broken != Some(Broken::UploadWithoutCondition);
        if check && !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let pos = Pos {
            generation: hold.generation,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        let key = format!("{}{pos}.{}", keys::history_prefix(&self.key), kind.ext());
        self.bucket.put(&key, image, &PutCondition::IfAbsent)?;
        if check {
            self.commit(&hold, pos)?;
            if !live(&self.node) {
                return Err(ReplicaError::HoldLost);
            }
        } else if self.broken == Some(Broken::UploadWithoutCondition) {
            self.commit_unconditionally(&hold, pos)?;
        }
        if kind != Kind::Snapshot {
            self.head = Some(pos);
            self.last_hash = Some(hash(image));
        }
        Ok(pos)
    }

    /// Acknowledges the upload at `pos`: the ownership record rewritten on
    /// the ETag this hold last wrote. Another node's acquire since then
    /// rewrote the record, so the bucket refuses this write: the upload is
    /// not acknowledged, whatever this node believes about its liveness.
    fn commit(&mut self, hold: &Hold, pos: Pos) -> Result<(), ReplicaError> {
        let body = self.committed_record(hold, pos)?;
        match self.bucket.put(
            &keys::owner(&self.key),
            &body,
            &PutCondition::IfMatch(hold.etag.clone()),
        ) {
            Ok(etag) => {
                if let Some(h) = self.hold.as_mut() {
                    h.etag = etag;
                }
                Ok(())
            }
            Err(BucketError::PreconditionFailed(_)) => Err(ReplicaError::HoldLost),
            Err(e) => {
                // The record may or may not be ours now: the next check decides.
                Err(e.into())
            }
        }
    }

    /// The ownership record that acknowledges the upload at `pos`.
    fn committed_record(&self, hold: &Hold, pos: Pos) -> Result<Vec<u8>, ReplicaError> {
        serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation: hold.generation,
            released: false,
            committed: pos.seq + 1,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))
    }

    /// [`Broken::UploadWithoutCondition`]'s acknowledgement: the record
    /// rewritten whatever it holds now.
    fn commit_unconditionally(&mut self, hold: &Hold, pos: Pos) -> Result<(), ReplicaError> {
        let body = self.committed_record(hold, pos)?;
        let etag = self.bucket.put(&keys::owner(&self.key), &body, &PutCondition::None)?;
        if let Some(h) = self.hold.as_mut() {
            h.etag = etag;
        }
        Ok(())
    }

    /// Uploads `image` as a segment unless it is what the head already holds.
    ///
    /// # Errors
    /// As [`Replica::upload`].
    pub fn upload_if_changed(
        &mut self,
        image: &[u8],
        live: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Pos>, ReplicaError> {
        if self.last_hash == Some(hash(image)) {
            return Ok(None);
        }
        self.upload(Kind::Segment, image, live).map(Some)
    }

    /// The one delete routine: a reset (the empty database `empty`, with its
    /// marker) on the head, acknowledged while the hold is valid. Returns its
    /// position; [`Replica::collect_after_delete`] follows when the event ends.
    ///
    /// # Errors
    /// As [`Replica::upload`]: the delete is then not known to be durable.
    pub fn delete(&mut self, empty: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        // The mark first: if this node stops between the reset and its erase,
        // a control pass finds the purge to finish (ADR 031). Its body differs
        // each time, so its ETag does too (moto's is the body's MD5).
        let mark = format!("{} {}", self.node, self.hold.as_ref().map_or(0, |h| h.generation));
        self.bucket
            .put(&keys::purge_mark(&self.key), mark.as_bytes(), &PutCondition::None)?;
        if self.broken == Some(Broken::EraseBeforeAck) {
            for o in self.history()? {
                let _ = self.bucket.delete(&o.key);
            }
        }
        self.upload(Kind::Reset, empty, live)
    }

    /// After a reset at `reset` was acknowledged: a snapshot of the empty
    /// database there, then, once that is acknowledged, every object before it
    /// is erased. Returns how many objects could not be erased.
    ///
    /// # Errors
    /// The snapshot failed (nothing is erased then).
    pub fn collect_after_delete(
        &mut self,
        reset: Pos,
        empty: &[u8],
        live: &dyn Fn(&str) -> bool,
    ) -> Result<usize, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Err(ReplicaError::HoldLost);
        };
        if !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let key = format!("{}{reset}.{}", keys::history_prefix(&self.key), Kind::Snapshot.ext());
        self.bucket.put(&key, empty, &PutCondition::IfAbsent)?;
        let mut failed = 0;
        for o in self.history()? {
            if o.pos >= reset {
                continue;
            }
            // The holder's generation check before each erase (ADR 0012).
            if self.hold.as_ref().map(|h| h.generation) != Some(hold.generation) || !self.holds(live)? {
                return Err(ReplicaError::HoldLost);
            }
            if self.bucket.delete(&o.key).is_err() {
                failed += 1;
            }
        }
        Ok(failed)
    }

    /// Lets the actor go: the record says released (best effort: a record that
    /// cannot be written is taken over once this node is no longer live).
    ///
    /// # Errors
    /// The bucket failed.
    pub fn release(&mut self) -> Result<(), ReplicaError> {
        let Some(hold) = self.hold.take() else { return Ok(()) };
        let body = serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation: hold.generation,
            released: true,
            committed: self.next_seq,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))?;
        match self
            .bucket
            .put(&keys::owner(&self.key), &body, &PutCondition::IfMatch(hold.etag))
        {
            Ok(_) | Err(BucketError::PreconditionFailed(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Forgets the hold without writing (after a failure: the next acquire
    /// decides from the bucket).
    pub fn forget(&mut self) {
        self.hold = None;
        self.head = None;
        self.last_hash = None;
    }
}

/// The objects of `history` before its newest reset: the deleted
/// generations, which the purge erases (ADR 031). Never the head, which is
/// at or after that reset, and never the reset or its snapshot. Anyone may
/// erase them, holder or not: no restore reads them, and the generation a
/// new holder takes is above the reset, which stays.
pub fn before_newest_reset(history: &[HistoryObject]) -> impl Iterator<Item = &HistoryObject> {
    let newest_reset = history.iter().filter(|o| o.kind == Kind::Reset).map(|o| o.pos).max();
    history.iter().filter(move |o| newest_reset.is_some_and(|r| o.pos < r))
}

/// The ownership record of `key` as the bucket has it now (`None`: never held).
///
/// # Errors
/// The bucket failed, or the record is not one.
pub fn recorded_holder(bucket: &dyn ObjectStore, key: &ActorKey) -> Result<Option<OwnerRecord>, ReplicaError> {
    let object = keys::owner(key);
    match bucket.get(&object)? {
        None => Ok(None),
        Some((body, _)) => serde_json::from_slice(&body)
            .map(Some)
            .map_err(|_| ReplicaError::CorruptRecord(object)),
    }
}

/// Reads the marker `deleted = "<ms> <how>"` from a reset's empty database.
pub(crate) fn read_marker(image: &[u8]) -> Option<(u64, String)> {
    let mut conn = rusqlite::Connection::open_in_memory().ok()?;
    conn.deserialize_read_exact(rusqlite::MAIN_DB, image, image.len(), true)
        .ok()?;
    let value: String = conn
        .query_row("SELECT value FROM _wasmkeep_meta WHERE key = 'deleted'", [], |r| {
            r.get(0)
        })
        .ok()?;
    let (at, how) = value.split_once(' ')?;
    Some((at.parse().ok()?, how.to_owned()))
}

/// The deletion status of `key` in `bucket`.
pub fn deletion_status(bucket: &dyn ObjectStore, key: &ActorKey) -> DeletionStatus {
    let prefix = keys::history_prefix(key);
    let listing = match bucket.list(&prefix) {
        Ok(l) => l,
        Err(e) => return DeletionStatus::Unknown { reason: e.to_string() },
    };
    let head = listing
        .iter()
        .filter_map(|m| parse_history_key(&prefix, &m.key).map(|o| (o, m.last_modified)))
        .filter(|(o, _)| o.kind != Kind::Snapshot)
        .max_by_key(|(o, _)| o.pos);
    match head {
        None => DeletionStatus::NotDeleted,
        Some((o, _)) if o.kind != Kind::Reset => DeletionStatus::NotDeleted,
        Some((o, last_modified)) => match bucket.get(&o.key) {
            Err(e) => DeletionStatus::Unknown { reason: e.to_string() },
            // Listed a moment ago and gone now: erased or replaced meanwhile; ask again.
            Ok(None) => DeletionStatus::Unknown {
                reason: format!("{} changed while it was read", o.key),
            },
            Ok(Some((image, _))) => match read_marker(&image) {
                Some((at_ms, how)) => DeletionStatus::Deleted { at_ms, how },
                None => DeletionStatus::Deleted {
                    at_ms: last_modified,
                    how: "unknown".into(),
                },
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{MemoryBucket, ObjectMeta};
    use crate::clock::VirtualClock;
    use std::sync::Mutex;

    type Hook = Box<dyn FnOnce() + Send>;

    /// A bucket that runs a hook right after the first segment lands, and
    /// counts the writes refused by their condition.
    struct AfterSegmentLands {
        inner: Arc<dyn ObjectStore>,
        hook: Mutex<Option<Hook>>,
        refused: Mutex<usize>,
    }

    impl ObjectStore for AfterSegmentLands {
        fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
            self.inner.get(key)
        }
        fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
            let r = self.inner.put(key, body, cond);
            if matches!(r, Err(BucketError::PreconditionFailed(_))) {
                *self.refused.lock().expect("count") += 1;
            }
            if key.ends_with(".seg") {
                let hook = self.hook.lock().expect("hook").take();
                if let Some(h) = hook {
                    h();
                }
            }
            r
        }
        fn delete(&self, key: &str) -> Result<(), BucketError> {
            self.inner.delete(key)
        }
        fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
            self.inner.list(prefix)
        }
    }

    #[test]
    fn an_upload_after_another_node_acquired_is_refused_by_the_records_condition() {
        let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let hooked = Arc::new(AfterSegmentLands {
            inner: inner.clone(),
            hook: Mutex::new(None),
            refused: Mutex::new(0),
        });
        let key = ActorKey::new("t/a", "c", "x");
        let faults = Arc::new(Faults::default());
        let mut a = Replica::new(hooked.clone(), faults.clone(), key.clone(), "n1");
        // n1 believes itself live throughout (a paused process whose lease lapsed).
        let n1_thinks_live = |_: &str| true;
        assert!(matches!(a.acquire(&n1_thinks_live), Ok(Acquired::Held { .. })));
        a.upload(Kind::Segment, b"one", &n1_thinks_live)
            .expect("the first upload is acknowledged");
        let head_before = a.head();
        // Between n1's segment landing and its acknowledgement, n2 decides n1
        // is dead (its lease lapsed) and acquires.
        let (b_bucket, b_faults, b_key) = (inner.clone(), faults.clone(), key.clone());
        *hooked.hook.lock().expect("hook") = Some(Box::new(move || {
            let mut b = Replica::new(b_bucket, b_faults, b_key, "n2");
            let n1_dead = |n: &str| n != "n1";
            assert!(matches!(b.acquire(&n1_dead), Ok(Acquired::Held { .. })));
        }));
        let refused_before = *hooked.refused.lock().expect("count");
        let r = a.upload(Kind::Segment, b"two", &n1_thinks_live);
        assert!(matches!(r, Err(ReplicaError::HoldLost)), "not acknowledged: {r:?}");
        assert_eq!(
            *hooked.refused.lock().expect("count"),
            refused_before + 1,
            "the bucket refused the acknowledgement by its condition"
        );
        assert_eq!(a.head(), head_before, "the head n1 knows did not move");
        let record: OwnerRecord =
            serde_json::from_slice(&inner.get(&keys::owner(&key)).expect("get").expect("record").0).expect("json");
        assert_eq!(record.node, "n2", "n2 holds the actor");
        let mut b = Replica::new(inner, faults, key, "n2");
        let history = b.history().expect("history");
        let head = history.iter().rev().find(|o| o.kind != Kind::Snapshot).expect("a head");
        assert!(
            head.pos.generation > 1,
            "the head is n2's fence, above n1's late segment: {head:?}"
        );
        b.forget();
    }
}
