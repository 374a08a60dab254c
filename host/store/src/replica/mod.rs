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
use crate::bucket::{BucketError, ETag, ObjectStore, PutCondition, put_read_back};
use crate::clock::{Clock, SystemClock};
use crate::deletion::DeletionStatus;
use crate::faults::{FaultKind, Faults};
pub use crate::history::{HistoryObject, Kind, Pos, parse_history_key};
use crate::history::{pages_key, parse_listed, sort, whole_key};
use crate::history_chain::{self, ChainError};
use crate::keys;
use crate::page_set::{PageSet, image_page_size};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;

mod begin;
mod collect;
mod restore;

pub use restore::{Target, fork};

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
    /// The history could not be read as a chain (ADR 064).
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A restore to a position before the newest delete: what a delete
    /// removed never comes back (ADR 0028).
    #[error("{target} is before the actor's delete at {reset}: nothing from before a delete comes back")]
    BeforeDelete {
        /// The position asked for.
        target: Pos,
        /// The newest reset.
        reset: Pos,
    },
    /// The state asked for was written before the actor's last delete (a
    /// single node whose history had not recorded the delete yet).
    #[error(
        "{target} was written before the actor was deleted (at {deleted_at_ms} ms): nothing from before a delete comes back"
    )]
    DeletedSince {
        /// The position asked for.
        target: Pos,
        /// When the delete was recorded.
        deleted_at_ms: u64,
    },
    /// A fork's new actor already has a history (or is held).
    #[error("{0} already exists: a fork makes a new actor")]
    ForkTargetExists(String),
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
    /// A compaction that leaves out the first page set of the run it
    /// merges: a restore through it misses that commit's pages (ADR 064).
    CompactionDropsASegment,
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
    /// Page sets uploaded on the newest whole object, and their bytes: when
    /// a snapshot is due (ADR 064).
    since_whole: (u64, u64),
    clock: Arc<dyn Clock>,
    /// The only writer there is (a single node's own history): an upload
    /// needs no check of the hold and no acknowledgement in the record.
    sole_writer: bool,
    broken: Option<Broken>,
}

/// How many page sets may stand on one whole object before a snapshot is due.
pub const SNAPSHOT_AFTER_SETS: u64 = 1_000;
/// How many bytes of page sets may stand on one whole object before a
/// snapshot is due, at least (a larger database allows its own size).
pub const SNAPSHOT_AFTER_BYTES: u64 = 4 << 20;

/// What a collection did (ADR 064).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// Objects erased.
    pub erased: usize,
    /// Objects that could not be erased (a later collection tries again).
    pub failed: usize,
    /// Page sets merged into one.
    pub merged: usize,
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
            since_whole: (0, 0),
            clock: Arc::new(SystemClock),
            sole_writer: false,
            broken: None,
        }
    }

    /// Marks this replica the only writer of its history (a single node's
    /// own, ADR 064): uploads are put without checking the hold or
    /// rewriting the ownership record, which only a cluster's several
    /// writers need.
    #[must_use]
    pub fn sole_writer(mut self) -> Self {
        self.sole_writer = true;
        self
    }

    /// Times the objects this replica writes by `clock` (the node's, virtual
    /// in tests), not the system's.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
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
            .filter_map(|m| parse_listed(&prefix, &m.key, m.last_modified))
            .collect();
        sort(&mut v);
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
        if !self.take_generation(record.as_ref(), &history)? {
            // Another node acquired in between: it holds the actor now.
            let holder = self.read_record()?.map_or_else(String::new, |(r, _)| r.node);
            return Ok(Acquired::HeldBy(holder));
        }
        let head_object = history_chain::head(&history);
        let head = head_object.map(|o| o.pos);
        let deleted = head_object.is_some_and(|o| o.kind == Kind::Reset);
        let image = match head {
            // An object gone since the listing (a reset landed above it
            // meanwhile) fails here; the next acquire lists again (nothing
            // was fenced).
            Some(p) => {
                let chain = history_chain::chain(&history, p)?;
                self.since_whole = (chain.len().saturating_sub(1) as u64, 0);
                Some(history_chain::state_at(self.bucket.as_ref(), &history, p)?)
            }
            None => None,
        };
        self.head = head;
        self.last_hash = image.as_deref().map(hash);
        if let Some(img) = &image {
            // The fence: the restored state at this generation, as a page
            // set on the head that names no page (ADR 064), or the whole
            // image where it is no database to count pages in.
            match image_page_size(img) {
                Some(size) => {
                    let pages = u32::try_from(img.len() / size as usize).unwrap_or(u32::MAX);
                    self.upload_pages(&PageSet::new(size, pages), live)?;
                }
                None => {
                    self.upload(Kind::Segment, img, live)?;
                }
            }
        }
        // A purge cut short (ADR 031): what lies before the newest reset goes
        // now; the restore above never reads it, and the fence is above it.
        for o in before_newest_reset(&history) {
            let _ = self.bucket.delete(&o.key);
        }
        Ok(Acquired::Held { image, head, deleted })
    }

    /// Writes the ownership record at a generation above every one the
    /// record (as read) and `history` have seen, on the record's version:
    /// this node holds the actor from now. False when another writer got
    /// there first (nothing is held then).
    ///
    /// # Errors
    /// The bucket failed.
    fn take_generation(
        &mut self,
        record: Option<&(OwnerRecord, ETag)>,
        history: &[HistoryObject],
    ) -> Result<bool, ReplicaError> {
        let highest = history.iter().map(|o| o.pos.generation).max().unwrap_or(0);
        let generation = record.map_or(0, |(r, _)| r.generation).max(highest) + 1;
        let body = serde_json::to_vec(&OwnerRecord {
            node: self.node.clone(),
            generation,
            released: false,
            committed: 0,
        })
        .map_err(|_| ReplicaError::CorruptRecord(keys::owner(&self.key)))?;
        let cond = match record {
            Some((_, etag)) => PutCondition::IfMatch(etag.clone()),
            None => PutCondition::IfAbsent,
        };
        // A lost answer is settled by reading the record back: ours, held;
        // another node's, it got there first (issue 57).
        let etag = match put_read_back(self.bucket.as_ref(), &keys::owner(&self.key), &body, &cond) {
            Ok(e) => e,
            Err(BucketError::PreconditionFailed(_)) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        self.hold = Some(Hold { generation, etag });
        self.next_seq = 0;
        Ok(true)
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
        let prefix = keys::history_prefix(&self.key);
        let at_ms = self.clock.now_ms();
        let pos = self.put_acknowledged(kind, image, live, |pos| whole_key(&prefix, pos, at_ms, kind))?;
        if kind != Kind::Snapshot {
            self.last_hash = Some(hash(image));
            self.since_whole = (0, 0);
        }
        Ok(pos)
    }

    /// Uploads the pages an event changed as a page set on the head
    /// (ADR 064). Acknowledged as [`Replica::upload`] is.
    ///
    /// # Errors
    /// As [`Replica::upload`]; `HoldLost` also when nothing stands at the
    /// head to put the pages on (the caller uploads the whole image then).
    pub fn upload_pages(&mut self, set: &PageSet, live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let Some(parent) = self.head else {
            return Err(ReplicaError::HoldLost);
        };
        let prefix = keys::history_prefix(&self.key);
        let at_ms = self.clock.now_ms();
        let body = set.encode();
        let pos = self.put_acknowledged(Kind::Pages, &body, live, |pos| pages_key(&prefix, pos, at_ms, parent))?;
        // What the head holds is no longer known as one image.
        self.last_hash = None;
        self.since_whole.0 += 1;
        self.since_whole.1 += body.len() as u64;
        Ok(pos)
    }

    /// Whether a snapshot of the head is due: more page sets, or more of
    /// their bytes, on the newest whole object than a restore should replay
    /// for a database of `db_bytes`.
    pub fn snapshot_due(&self, db_bytes: u64) -> bool {
        self.since_whole.0 >= SNAPSHOT_AFTER_SETS || self.since_whole.1 >= db_bytes.max(SNAPSHOT_AFTER_BYTES)
    }

    /// Writes `image`, the state at the head, as a snapshot there: restores
    /// begin at it from now on. Not an acknowledgement of anything: the
    /// state was acknowledged when its page set was.
    ///
    /// # Errors
    /// `HoldLost`, or the bucket failed (a later snapshot tries again).
    pub fn snapshot(&mut self, image: &[u8], live: &dyn Fn(&str) -> bool) -> Result<Pos, ReplicaError> {
        let Some(head) = self.head else {
            return Err(ReplicaError::HoldLost);
        };
        if !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let key = whole_key(
            &keys::history_prefix(&self.key),
            head,
            self.clock.now_ms(),
            Kind::Snapshot,
        );
        put_read_back(self.bucket.as_ref(), &key, image, &PutCondition::IfAbsent)?;
        self.since_whole = (0, 0);
        Ok(head)
    }

    /// Puts `body` at the next position under the key `key_at` makes, and
    /// acknowledges it: the hold checked before, the record rewritten on
    /// its ETag after.
    fn put_acknowledged(
        &mut self,
        kind: Kind,
        body: &[u8],
        live: &dyn Fn(&str) -> bool,
        key_at: impl Fn(Pos) -> String,
    ) -> Result<Pos, ReplicaError> {
        let Some(hold) = self.hold.clone() else {
            return Err(ReplicaError::HoldLost);
        };
        let check = !(self.broken == Some(Broken::AckAfterHoldEnded) && kind == Kind::Reset)
            && self.broken != Some(Broken::UploadWithoutCondition)
            && !self.sole_writer;
        if check && !self.holds(live)? {
            return Err(ReplicaError::HoldLost);
        }
        let pos = Pos {
            generation: hold.generation,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        // A lost answer is settled by reading the object back: our bytes, it
        // landed; another writer's at our position, nothing of ours can be
        // acknowledged (issue 57).
        match put_read_back(self.bucket.as_ref(), &key_at(pos), body, &PutCondition::IfAbsent) {
            Ok(_) => {}
            Err(BucketError::PreconditionFailed(_)) => return Err(ReplicaError::HoldLost),
            Err(e) => return Err(e.into()),
        }
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
        }
        Ok(pos)
    }

    /// Acknowledges the upload at `pos`: the ownership record rewritten on
    /// the ETag this hold last wrote. Another node's acquire since then
    /// rewrote the record, so the bucket refuses this write: the upload is
    /// not acknowledged, whatever this node believes about its liveness.
    fn commit(&mut self, hold: &Hold, pos: Pos) -> Result<(), ReplicaError> {
        let body = self.committed_record(hold, pos)?;
        // A lost answer is settled by reading the record back: our bytes,
        // acknowledged (on the ETag read); another node's, the hold is lost.
        match put_read_back(
            self.bucket.as_ref(),
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
                // Reading back settled nothing: the record may or may not be
                // ours now; not acknowledged, and the next check decides.
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
        put_read_back(
            self.bucket.as_ref(),
            &keys::purge_mark(&self.key),
            mark.as_bytes(),
            &PutCondition::None,
        )?;
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
        let key = whole_key(
            &keys::history_prefix(&self.key),
            reset,
            self.clock.now_ms(),
            Kind::Snapshot,
        );
        put_read_back(self.bucket.as_ref(), &key, empty, &PutCondition::IfAbsent)?;
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
        match put_read_back(
            self.bucket.as_ref(),
            &keys::owner(&self.key),
            &body,
            &PutCondition::IfMatch(hold.etag),
        ) {
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
        self.since_whole = (0, 0);
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
    let value = read_meta(image, "deleted")?;
    let (at, how) = value.split_once(' ')?;
    Some((at.parse().ok()?, how.to_owned()))
}

/// Reads the host meta value `key` from a database image (a reset's empty
/// database carries the delete's marks there).
pub(crate) fn read_meta(image: &[u8], key: &str) -> Option<String> {
    let mut conn = rusqlite::Connection::open_in_memory().ok()?;
    conn.deserialize_read_exact(rusqlite::MAIN_DB, image, image.len(), true)
        .ok()?;
    conn.query_row("SELECT value FROM _wasmkeep_meta WHERE key = ?1", [key], |r| r.get(0))
        .ok()
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
mod tests;
