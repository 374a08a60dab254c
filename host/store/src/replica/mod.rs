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
use crate::faults::Faults;
pub use crate::history::{HistoryObject, Kind, Pos, parse_history_key};
use crate::history::{parse_listed, sort};
use crate::history_chain::ChainError;
use crate::keys;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;

mod acquire;
mod begin;
mod collect;
mod delete;
mod restore;
mod upload;

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
