//! One actor's records in the bucket read back for people (the dashboard's
//! timeline, docs/adr/025-dashboard.md): its ownership record, and each
//! object of its history as what it is — an upload, the fence a new holder
//! wrote, a reset with its deletion marker, a snapshot. The layout is
//! [`crate::keys`]'s; the rules are [`crate::replica`]'s (ADR 006).

use crate::address::ActorKey;
use crate::bucket::{BucketError, ETag, ObjectStore};
use crate::history::parse_listed;
use crate::keys;
use crate::replica::{Kind, OwnerRecord, Pos, read_marker};
use serde::Serialize;

/// What one object of the history is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HistoryEntry {
    /// The database after an event (or inside `exec-durable`), whole: every
    /// upload before ADR 064, and since then a restore or a fork's start.
    Upload,
    /// The pages an event changed (or a compacted run of events), on the
    /// state at `parent` (ADR 064).
    Pages {
        /// The position it applies to, as a bookmark.
        parent: String,
    },
    /// The first upload of a new holder: the image it restored, written at
    /// its own generation so that a late upload of an earlier holder can
    /// never become the head. Told apart by its place: the first of its
    /// generation, with something of an earlier generation before it.
    Fence,
    /// An empty database: the actor was deleted here.
    Reset {
        /// When, on the deleting node's clock (ms), from the reset's marker.
        deleted_at: Option<u64>,
        /// How (`self`, `self_durable`, `operator`, `expired`), from the
        /// marker; `None` for a reset without one.
        how: Option<String>,
    },
    /// A whole image of the state at its position: at a reset, before the
    /// objects before it are erased; elsewhere, where restores begin.
    Snapshot,
}

/// One object of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryRecord {
    /// What it is.
    #[serde(flatten)]
    pub entry: HistoryEntry,
    /// The holder's generation.
    pub generation: u64,
    /// Its number within the generation.
    pub seq: u64,
    /// Whether it is the head (what the next holder restores).
    pub head: bool,
    /// Its position as a bookmark (`restore --to` takes it; bookmarks sort
    /// as positions do).
    pub bookmark: String,
    /// Its key.
    pub key: String,
    /// Its version.
    pub etag: ETag,
    /// When it was written, on the bucket's clock (ms).
    pub at: u64,
    /// When it was written, on the writer's clock (ms): what a restore to a
    /// time goes by (the bucket's time for an object from before ADR 064).
    pub written_at: u64,
}

/// The ownership record as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnerView {
    /// The node that holds (or last held) the actor.
    pub node: String,
    /// Its generation.
    pub generation: u64,
    /// Whether its holder let it go (hibernation).
    pub released: bool,
    /// Its key.
    pub key: String,
    /// Its version.
    pub etag: ETag,
    /// When it was written, on the bucket's clock (ms).
    pub at: u64,
}

/// An actor's records in the bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActorRecords {
    /// Its ownership record; `None` if no node ever held it, or if it is
    /// not readable as one (`owner_unreadable` then).
    pub owner: Option<OwnerView>,
    /// The ownership record is there but is not one.
    pub owner_unreadable: bool,
    /// Its history, oldest first.
    pub history: Vec<HistoryRecord>,
}

/// Reads `key`'s records: two listings, the ownership record, and each
/// reset's marker (a delete's history keeps only the reset and its
/// snapshot, so there are few).
///
/// # Errors
/// The bucket could not be listed or read.
pub fn actor_records(bucket: &dyn ObjectStore, key: &ActorKey) -> Result<ActorRecords, BucketError> {
    let owner_key = keys::owner(key);
    // A listing is by prefix: another name may begin with this one's.
    let owner_meta = bucket.list(&owner_key)?.into_iter().find(|m| m.key == owner_key);
    let (owner, owner_unreadable) = match owner_meta {
        None => (None, false),
        Some(meta) => match bucket.get(&owner_key)? {
            None => (None, false),
            Some((body, etag)) => match serde_json::from_slice::<OwnerRecord>(&body) {
                Ok(r) => (
                    Some(OwnerView {
                        node: r.node,
                        generation: r.generation,
                        released: r.released,
                        key: owner_key,
                        etag,
                        at: meta.last_modified,
                    }),
                    false,
                ),
                Err(_) => (None, true),
            },
        },
    };
    let prefix = keys::history_prefix(key);
    let mut objects: Vec<_> = bucket
        .list(&prefix)?
        .into_iter()
        .filter_map(|m| parse_listed(&prefix, &m.key, m.last_modified).map(|o| (o, m)))
        .collect();
    // In the order written: a reset (or an upload) before the snapshot at
    // its position, a compacted page set before the one it replaced.
    objects.sort_by_key(|(o, _)| (o.pos, o.kind == Kind::Snapshot, std::cmp::Reverse(o.parent)));
    let head = objects
        .iter()
        .filter(|(o, _)| o.kind != Kind::Snapshot)
        .map(|(o, _)| o.pos)
        .max();
    let lowest = objects.iter().map(|(o, _)| o.pos.generation).min();
    let mut history = Vec::with_capacity(objects.len());
    for (o, meta) in objects {
        let entry = match o.kind {
            Kind::Segment | Kind::Pages if is_fence(o.pos, lowest) => HistoryEntry::Fence,
            Kind::Segment => HistoryEntry::Upload,
            Kind::Pages => HistoryEntry::Pages {
                parent: o.parent.map(|p| p.to_string()).unwrap_or_default(),
            },
            Kind::Snapshot => HistoryEntry::Snapshot,
            Kind::Reset => {
                // Erased since the listing: shown without its marker.
                let marker = bucket.get(&o.key)?.and_then(|(image, _)| read_marker(&image));
                HistoryEntry::Reset {
                    deleted_at: marker.as_ref().map(|(at, _)| *at),
                    how: marker.map(|(_, how)| how),
                }
            }
        };
        history.push(HistoryRecord {
            entry,
            generation: o.pos.generation,
            seq: o.pos.seq,
            head: Some(o.pos) == head && o.kind != Kind::Snapshot,
            bookmark: o.pos.to_string(),
            key: o.key,
            etag: meta.etag,
            at: meta.last_modified,
            written_at: o.at_ms,
        });
    }
    Ok(ActorRecords {
        owner,
        owner_unreadable,
        history,
    })
}

/// A holder that restored an image uploads it first thing at its own
/// generation (seq 0); a holder that found nothing to restore has no fence,
/// and then nothing of an earlier generation is in the history either (a
/// delete's collection keeps its reset).
fn is_fence(pos: Pos, lowest_generation: Option<u64>) -> bool {
    pos.seq == 0 && lowest_generation.is_some_and(|g| g < pos.generation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::MemoryBucket;
    use crate::clock::VirtualClock;
    use crate::faults::Faults;
    use crate::replica::Replica;
    use std::sync::Arc;

    fn kinds(r: &ActorRecords) -> Vec<(String, u64, u64, bool)> {
        r.history
            .iter()
            .map(|h| {
                let kind = serde_json::to_value(&h.entry).expect("json")["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                (kind, h.generation, h.seq, h.head)
            })
            .collect()
    }

    #[test]
    fn uploads_the_fence_a_reset_and_its_snapshot_read_back_as_what_they_are() {
        let bucket: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let key = ActorKey::new("t/a", "c", "n");
        let live = |_: &str| true;
        assert_eq!(
            actor_records(bucket.as_ref(), &key).expect("records"),
            ActorRecords {
                owner: None,
                owner_unreadable: false,
                history: Vec::new()
            }
        );
        let mut one = Replica::new(bucket.clone(), Arc::new(Faults::default()), key.clone(), "node-1");
        one.acquire(&live).expect("acquire");
        one.upload_if_changed(b"v1", &live).expect("upload");
        one.upload_if_changed(b"v2", &live).expect("upload");
        one.release().expect("release");
        let mut two = Replica::new(bucket.clone(), Arc::new(Faults::default()), key.clone(), "node-2");
        two.acquire(&live).expect("acquire");
        let r = actor_records(bucket.as_ref(), &key).expect("records");
        assert_eq!(
            kinds(&r),
            vec![
                ("upload".into(), 1, 0, false),
                ("upload".into(), 1, 1, false),
                ("fence".into(), 2, 0, true),
            ]
        );
        let reset = two.delete(b"not a database", &live).expect("reset");
        two.collect_after_delete(reset, b"not a database", &live)
            .expect("collect");
        two.release().expect("release");
        let mut three = Replica::new(bucket.clone(), Arc::new(Faults::default()), key.clone(), "node-3");
        three.acquire(&live).expect("acquire");
        let r = actor_records(bucket.as_ref(), &key).expect("records");
        assert_eq!(
            kinds(&r),
            vec![
                ("reset".into(), 2, 1, false),
                ("snapshot".into(), 2, 1, false),
                ("fence".into(), 3, 0, true),
            ],
            "what was before the reset was erased; the next holder fenced the reset's image: {r:?}"
        );
        assert_eq!(
            r.history[0].entry,
            HistoryEntry::Reset {
                deleted_at: None,
                how: None
            },
            "a reset without a marker says so"
        );
        let owner = r.owner.expect("owner");
        assert_eq!(
            (owner.node.as_str(), owner.generation, owner.released),
            ("node-3", 3, false)
        );
    }

    #[test]
    fn a_first_holder_has_uploads_and_no_fence() {
        let bucket: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let key = ActorKey::new("t/a", "c", "n");
        let live = |_: &str| true;
        let mut one = Replica::new(bucket.clone(), Arc::new(Faults::default()), key.clone(), "node-1");
        one.acquire(&live).expect("acquire");
        one.upload_if_changed(b"v1", &live).expect("upload");
        one.upload_if_changed(b"v2", &live).expect("upload");
        let r = actor_records(bucket.as_ref(), &key).expect("records");
        assert_eq!(
            kinds(&r),
            vec![("upload".into(), 1, 0, false), ("upload".into(), 1, 1, true)]
        );
        bucket
            .put(&keys::owner(&key), b"{", &crate::bucket::PutCondition::None)
            .expect("put");
        let r = actor_records(bucket.as_ref(), &key).expect("records");
        assert!(r.owner.is_none() && r.owner_unreadable);
    }
}
