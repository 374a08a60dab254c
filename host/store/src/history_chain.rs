//! Reading an actor's history as a chain (ADR 064): which objects make the
//! state at a position, the state at a time, and what a collection under a
//! retention window keeps, erases and compacts. Everything here works from
//! a listing ([`crate::history`]'s keys carry kinds, times and parents);
//! only [`state_at`] reads bodies.

use crate::bucket::{BucketError, ObjectStore};
use crate::history::{HistoryObject, Kind, Pos};
use crate::page_set::{Body, PageSet, PageSetError};
use std::collections::{BTreeMap, BTreeSet};

/// Why the state at a position could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// No state was written at or before the time asked for.
    #[error(
        "the history holds no state written at or before {0} ms: pick a later time, or a bookmark the actor's history lists"
    )]
    NoStateAtTime(u64),
    /// No object stands at the position asked for.
    #[error("the history holds no state at {0}")]
    NoSuchPosition(Pos),
    /// A page set's parent is not in the bucket: history was lost.
    #[error("the history's chain is broken: {missing}, the parent of {child}, is not in the bucket")]
    Broken {
        /// The parent that is missing.
        missing: Pos,
        /// The object whose parent it is.
        child: String,
    },
    /// A page set names a parent at or above itself.
    #[error("{0} names a parent at or above its own position")]
    Loop(String),
    /// An object went between the listing and its read (erased meanwhile).
    #[error("{0} went while the history was read")]
    Gone(String),
    /// An object's body is not what its key says.
    #[error("{key} is not readable: {source}")]
    Unreadable {
        /// The object.
        key: String,
        /// Why.
        source: PageSetError,
    },
    /// The bucket failed.
    #[error(transparent)]
    Bucket(#[from] BucketError),
}

/// The objects at each position, sorted (see [`crate::history::sort`]).
fn by_position(history: &[HistoryObject]) -> BTreeMap<Pos, Vec<&HistoryObject>> {
    let mut m: BTreeMap<Pos, Vec<&HistoryObject>> = BTreeMap::new();
    for o in history {
        m.entry(o.pos).or_default().push(o);
    }
    m
}

/// The object a restore reads at a position: a whole one if there is one
/// (a reset first: it carries the deletion's marks, which the snapshot a
/// delete's collection writes at it does not), else the page set on the
/// lowest parent (a compacted one over the commit it replaced).
fn read_at<'a>(at: &[&'a HistoryObject]) -> Option<&'a HistoryObject> {
    let whole = [Kind::Reset, Kind::Segment, Kind::Snapshot]
        .iter()
        .find_map(|k| at.iter().find(|o| o.kind == *k));
    whole
        .or_else(|| at.iter().filter(|o| o.kind == Kind::Pages).min_by_key(|o| o.parent))
        .copied()
}

/// The objects that make the state at `target`, base first: a whole
/// object, then the page sets on it in order.
///
/// # Errors
/// No object at `target`, or a parent missing (the chain is broken).
pub fn chain(history: &[HistoryObject], target: Pos) -> Result<Vec<&HistoryObject>, ChainError> {
    let at = by_position(history);
    chain_in(&at, target)
}

fn chain_in<'a>(at: &BTreeMap<Pos, Vec<&'a HistoryObject>>, target: Pos) -> Result<Vec<&'a HistoryObject>, ChainError> {
    let mut out: Vec<&'a HistoryObject> = Vec::new();
    let mut pos = target;
    loop {
        let objects = at.get(&pos).map(Vec::as_slice).unwrap_or_default();
        let Some(o) = read_at(objects) else {
            return Err(match out.last() {
                None => ChainError::NoSuchPosition(target),
                Some(child) => ChainError::Broken {
                    missing: pos,
                    child: child.key.clone(),
                },
            });
        };
        out.push(o);
        match o.parent {
            None => break,
            Some(parent) if parent >= o.pos => return Err(ChainError::Loop(o.key.clone())),
            Some(parent) => pos = parent,
        }
    }
    out.reverse();
    Ok(out)
}

/// The newest position of the history (its head): the greatest position of
/// an object that is not a snapshot.
pub fn head(history: &[HistoryObject]) -> Option<&HistoryObject> {
    history
        .iter()
        .filter(|o| o.kind != Kind::Snapshot)
        .max_by_key(|o| o.pos)
}

/// The newest reset's position: nothing before it may come back.
pub fn newest_reset(history: &[HistoryObject]) -> Option<Pos> {
    history.iter().filter(|o| o.kind == Kind::Reset).map(|o| o.pos).max()
}

/// The position of the last state written at or before `at_ms`.
pub fn position_at_time(history: &[HistoryObject], at_ms: u64) -> Option<Pos> {
    history
        .iter()
        .filter(|o| o.kind != Kind::Snapshot && o.at_ms <= at_ms)
        .map(|o| o.pos)
        .max()
}

/// How many objects of a chain are read at once: a chain of a thousand
/// page sets is a thousand GETs, which over S3 take seconds one after
/// another.
const READS_AT_ONCE: usize = 16;

/// Reads `objects` from `bucket`, several at once, in their order.
fn read_all(bucket: &dyn ObjectStore, objects: &[&HistoryObject]) -> Result<Vec<Vec<u8>>, ChainError> {
    let read = |o: &HistoryObject| -> Result<Vec<u8>, ChainError> {
        Ok(bucket.get(&o.key)?.ok_or_else(|| ChainError::Gone(o.key.clone()))?.0)
    };
    if objects.len() <= 1 {
        return objects.iter().map(|o| read(o)).collect();
    }
    let per = objects.len().div_ceil(READS_AT_ONCE.min(objects.len()));
    std::thread::scope(|scope| {
        let readers: Vec<_> = objects
            .chunks(per)
            .map(|share| scope.spawn(move || share.iter().map(|o| read(o)).collect::<Result<Vec<_>, _>>()))
            .collect();
        let mut out = Vec::with_capacity(objects.len());
        for r in readers {
            match r.join() {
                Ok(bodies) => out.extend(bodies?),
                Err(_) => {
                    return Err(ChainError::Bucket(BucketError::Unavailable(
                        "a reader of the chain panicked".into(),
                    )));
                }
            }
        }
        Ok(out)
    })
}

/// Applies a chain's bodies, in order, to an empty database.
fn build(objects: &[&HistoryObject], bodies: &std::collections::HashMap<&str, Vec<u8>>) -> Result<Vec<u8>, ChainError> {
    let mut image = Vec::new();
    for o in objects {
        let bytes = bodies
            .get(o.key.as_str())
            .ok_or_else(|| ChainError::Gone(o.key.clone()))?;
        let unreadable = |source| ChainError::Unreadable {
            key: o.key.clone(),
            source,
        };
        // The key says what the body is: a whole object is an image as it
        // stands (as every upload before ADR 064 was).
        if o.kind.is_whole() {
            image.clone_from(bytes);
            continue;
        }
        match Body::decode(bytes.clone()).map_err(unreadable)? {
            Body::Image(whole) => image = whole,
            Body::Pages(set) => set.apply(&mut image).map_err(unreadable)?,
        }
    }
    Ok(image)
}

/// The position of the last state written at or before `at_ms` that a
/// restore may go to: none before the newest reset (a guest's
/// `bookmark-for-time`).
pub fn restorable_at_time(history: &[HistoryObject], at_ms: u64) -> Option<Pos> {
    let floor = newest_reset(history);
    position_at_time(history, at_ms).filter(|p| floor.is_none_or(|r| *p >= r))
}

/// The database at `target`, read from `bucket` along its chain.
///
/// # Errors
/// As [`chain`], or an object unreadable or gone, or the bucket failed.
pub fn state_at(bucket: &dyn ObjectStore, history: &[HistoryObject], target: Pos) -> Result<Vec<u8>, ChainError> {
    let mut states = states_at(bucket, history, &[target])?;
    Ok(states.pop().unwrap_or_default())
}

/// The databases at each of `targets`, reading each object their chains
/// share once.
///
/// # Errors
/// As [`state_at`].
pub fn states_at(
    bucket: &dyn ObjectStore,
    history: &[HistoryObject],
    targets: &[Pos],
) -> Result<Vec<Vec<u8>>, ChainError> {
    let at = by_position(history);
    let chains = targets
        .iter()
        .map(|t| chain_in(&at, *t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut wanted: Vec<&HistoryObject> = Vec::new();
    let mut seen = BTreeSet::new();
    for o in chains.iter().flatten() {
        if seen.insert(o.key.as_str()) {
            wanted.push(o);
        }
    }
    let bodies: std::collections::HashMap<&str, Vec<u8>> = wanted
        .iter()
        .map(|o| o.key.as_str())
        .zip(read_all(bucket, &wanted)?)
        .collect();
    chains.iter().map(|c| build(c, &bodies)).collect()
}

/// The page sets of a chain, read and merged into one (compaction).
///
/// # Errors
/// An object unreadable or gone, or the bucket failed.
pub fn merged_pages(bucket: &dyn ObjectStore, run: &[HistoryObject]) -> Result<Option<PageSet>, ChainError> {
    let mut merged: Option<PageSet> = None;
    for o in run {
        let bytes = bucket.get(&o.key)?.ok_or_else(|| ChainError::Gone(o.key.clone()))?.0;
        let unreadable = |source| ChainError::Unreadable {
            key: o.key.clone(),
            source,
        };
        let Body::Pages(set) = Body::decode(bytes).map_err(unreadable)? else {
            return Err(ChainError::Unreadable {
                key: o.key.clone(),
                source: PageSetError::UnknownFormat(Vec::new()),
            });
        };
        match merged.as_mut() {
            None => merged = Some(set),
            Some(m) => m.merge(set).map_err(unreadable)?,
        }
    }
    Ok(merged)
}

/// A run of page sets outside the window merged into one at its last
/// position, on the parent of its first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// The page sets merged, in order; the last one's position is the merged one's.
    pub run: Vec<HistoryObject>,
    /// The parent the merged set applies to.
    pub parent: Pos,
}

/// What a collection does (ADR 064).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectionPlan {
    /// Objects no state the window keeps needs, nor the head: erased.
    pub erase: Vec<HistoryObject>,
    /// A run outside the window to merge, if any.
    pub compact: Option<Compaction>,
    /// A chain that could not be followed: nothing is erased then.
    pub broken: Option<ChainError>,
}

/// What a collection at `now_ms` keeps under a window of `window_ms`:
/// every state written inside the window, the state at the window's start,
/// and the head, each with its chain to a whole object. Everything else
/// goes. Of the chain of the window's start, the page sets no other kept
/// state reads on its own way are merged into one.
pub fn plan_collection(history: &[HistoryObject], now_ms: u64, window_ms: u64) -> CollectionPlan {
    let at = by_position(history);
    let start = now_ms.saturating_sub(window_ms);
    let Some(head) = head(history).map(|o| o.pos) else {
        return CollectionPlan::default();
    };
    let at_start = position_at_time(history, start);
    let mut kept_positions: BTreeSet<Pos> = history
        .iter()
        .filter(|o| o.kind != Kind::Snapshot && o.at_ms > start)
        .map(|o| o.pos)
        .collect();
    kept_positions.insert(head);
    if let Some(p) = at_start {
        kept_positions.insert(p);
    }
    let mut chains: BTreeMap<Pos, Vec<&HistoryObject>> = BTreeMap::new();
    for p in &kept_positions {
        match chain_in(&at, *p) {
            Ok(c) => {
                chains.insert(*p, c);
            }
            Err(e) => {
                return CollectionPlan {
                    broken: Some(e),
                    ..CollectionPlan::default()
                };
            }
        }
    }
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    for p in &kept_positions {
        // Every object at a kept position stays: it is what places the state there.
        for o in at.get(p).map(Vec::as_slice).unwrap_or_default() {
            needed.insert(o.key.as_str());
        }
    }
    for c in chains.values() {
        needed.extend(c.iter().map(|o| o.key.as_str()));
    }
    let compact = at_start.and_then(|q| compaction_of(q, &chains, &kept_positions));
    let erase = history
        .iter()
        .filter(|o| !needed.contains(o.key.as_str()))
        .cloned()
        .collect();
    CollectionPlan {
        erase,
        compact,
        broken: None,
    }
}

/// The run of the window start's chain that only it reads: page sets after
/// the last object another kept state reads on its own way, or is kept for.
fn compaction_of(q: Pos, chains: &BTreeMap<Pos, Vec<&HistoryObject>>, kept: &BTreeSet<Pos>) -> Option<Compaction> {
    let own = chains.get(&q)?;
    let mut shared: BTreeSet<&str> = BTreeSet::new();
    for (p, c) in chains {
        if *p == q || c.iter().any(|o| o.pos == q) {
            continue;
        }
        shared.extend(c.iter().map(|o| o.key.as_str()));
    }
    // From the top of q's chain down, the page sets nobody else reads.
    let mut run: Vec<HistoryObject> = Vec::new();
    let mut parent = None;
    for o in own.iter().rev() {
        let mine = o.kind == Kind::Pages && !shared.contains(o.key.as_str()) && (o.pos == q || !kept.contains(&o.pos));
        if !mine {
            parent = Some(o.pos);
            break;
        }
        run.push((*o).clone());
    }
    run.reverse();
    let parent = parent.or_else(|| run.first().and_then(|o| o.parent))?;
    (run.len() >= 2).then_some(Compaction { run, parent })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{MemoryBucket, PutCondition};
    use crate::clock::VirtualClock;
    use crate::history::{pages_key, parse_history_key, whole_key};
    use std::sync::Arc;

    const P: &str = "h/";

    fn pos(generation: u64, seq: u64) -> Pos {
        Pos { generation, seq }
    }

    fn whole(p: Pos, at: u64) -> HistoryObject {
        parse_history_key(P, &whole_key(P, p, at, Kind::Segment)).expect("key")
    }

    fn pages(p: Pos, at: u64, parent: Pos) -> HistoryObject {
        parse_history_key(P, &pages_key(P, p, at, parent)).expect("key")
    }

    fn positions(objects: &[&HistoryObject]) -> Vec<Pos> {
        objects.iter().map(|o| o.pos).collect()
    }

    #[test]
    fn a_chain_follows_parents_to_a_whole_object_and_skips_what_it_does_not_name() {
        // n1's late page set 1-3 landed after n2's fence on 1-2.
        let h = vec![
            whole(pos(1, 0), 1),
            pages(pos(1, 1), 2, pos(1, 0)),
            pages(pos(1, 2), 3, pos(1, 1)),
            pages(pos(1, 3), 9, pos(1, 2)),
            pages(pos(2, 0), 4, pos(1, 2)),
            pages(pos(2, 1), 5, pos(2, 0)),
        ];
        let c = chain(&h, pos(2, 1)).expect("chain");
        assert_eq!(
            positions(&c),
            vec![pos(1, 0), pos(1, 1), pos(1, 2), pos(2, 0), pos(2, 1)]
        );
        assert_eq!(position_at_time(&h, 4), Some(pos(2, 0)));
        assert_eq!(position_at_time(&h, 0), None);
        let mut broken = h.clone();
        broken.remove(1);
        assert!(matches!(chain(&broken, pos(2, 1)), Err(ChainError::Broken { missing, .. }) if missing == pos(1, 1)));
        assert!(matches!(chain(&h, pos(7, 0)), Err(ChainError::NoSuchPosition(_))));
    }

    #[test]
    fn a_collection_keeps_the_window_and_its_start_and_merges_the_run_before() {
        let mut h = vec![whole(pos(1, 0), 10)];
        for s in 1..=6 {
            h.push(pages(pos(1, s), 10 + s, pos(1, s - 1)));
        }
        // The window starts at 14: 1-4 is the state there; 1-5 and 1-6 are inside.
        let plan = plan_collection(&h, 24, 10);
        assert!(plan.broken.is_none());
        assert!(plan.erase.is_empty(), "every object is on the chain: {:?}", plan.erase);
        let c = plan.compact.expect("a run to merge");
        assert_eq!(c.parent, pos(1, 0));
        assert_eq!(
            c.run.iter().map(|o| o.pos).collect::<Vec<_>>(),
            vec![pos(1, 1), pos(1, 2), pos(1, 3), pos(1, 4)]
        );
        // A snapshot at 1-5 makes everything before it unneeded (the window
        // starts at 16 now: the head, 1-6, is the state there).
        h.push(parse_history_key(P, &whole_key(P, pos(1, 5), 15, Kind::Snapshot)).expect("snap"));
        let plan = plan_collection(&h, 24, 8);
        assert_eq!(
            plan.erase.iter().map(|o| o.pos).collect::<Vec<_>>(),
            vec![pos(1, 0), pos(1, 1), pos(1, 2), pos(1, 3), pos(1, 4), pos(1, 5)],
            "the page set at 1-5 too: its snapshot is what the chain reads there"
        );
        assert!(plan.compact.is_none());
    }

    #[test]
    fn a_collection_never_merges_what_another_kept_state_reads() {
        // 2-0 reads 1-2 (the fence on the head n2 restored); 1-3 is late.
        let h = vec![
            whole(pos(1, 0), 1),
            pages(pos(1, 1), 2, pos(1, 0)),
            pages(pos(1, 2), 3, pos(1, 1)),
            pages(pos(1, 3), 3, pos(1, 2)),
            pages(pos(2, 0), 50, pos(1, 2)),
        ];
        let plan = plan_collection(&h, 60, 20);
        // The state at 40 is 1-3 (the greatest position written by then):
        // of its chain only 1-3 is its own, and one page set is no run.
        assert!(plan.compact.is_none(), "{:?}", plan.compact);
        assert!(plan.erase.is_empty(), "both chains are kept: {:?}", plan.erase);
    }

    #[test]
    fn the_state_at_a_position_is_built_from_the_bucket() {
        let bucket = MemoryBucket::new(Arc::new(VirtualClock::default()));
        let mut img = vec![0u8; 1024];
        img[..16].copy_from_slice(b"SQLite format 3\0");
        img[16..18].copy_from_slice(&512u16.to_be_bytes());
        let base = whole(pos(1, 0), 1);
        bucket.put(&base.key, &img, &PutCondition::IfAbsent).expect("put");
        let mut set = PageSet::new(512, 3);
        set.insert(3, vec![7; 512]);
        let top = pages(pos(1, 1), 2, pos(1, 0));
        bucket
            .put(&top.key, &set.encode(), &PutCondition::IfAbsent)
            .expect("put");
        let h = vec![base, top];
        let state = state_at(&bucket, &h, pos(1, 1)).expect("state");
        assert_eq!(state.len(), 1536);
        assert!(state[1024..].iter().all(|b| *b == 7));
        assert_eq!(state_at(&bucket, &h, pos(1, 0)).expect("base"), img);
    }
}
