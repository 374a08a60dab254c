//! The purge (issue 24, ADR 031): a deleted actor's bucket keeps nothing of
//! the generations before its reset. A delete writes a mark
//! (`keys::purge_mark`) before its reset; the holder erases what came before
//! the reset when the event ends. If that is cut short (the node killed, the
//! bucket failing), the control pass finishes it through the mark, as does
//! the next acquire of the actor. The mark stays [`MARK_KEPT_MS`] after its
//! last write, so that an upload of an earlier holder that lands late (a
//! paused process, below the reset) is erased too.

use crate::bucket::{BucketError, ObjectStore};
use crate::replica::{before_newest_reset, parse_history_key};

/// How long a mark stays once its purge is clean, by the bucket's clock: a
/// lease (10 s) plus a bucket client's wait for a write (30 s), and some.
pub const MARK_KEPT_MS: u64 = 60_000;

/// What one purge erased.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Objects erased.
    pub erased: usize,
    /// Objects that could not be erased (tried again on the next pass).
    pub failed: usize,
}

impl std::ops::AddAssign for Purged {
    fn add_assign(&mut self, other: Self) {
        self.erased += other.erased;
        self.failed += other.failed;
    }
}

/// Erases the objects under the history `prefix` that lie before its newest
/// reset. A history without a reset is left as it is.
///
/// # Errors
/// The listing failed.
pub fn purge_history(bucket: &dyn ObjectStore, prefix: &str) -> Result<Purged, BucketError> {
    let history: Vec<_> = bucket
        .list(prefix)?
        .into_iter()
        .filter_map(|m| parse_history_key(prefix, &m.key))
        .collect();
    let mut purged = Purged::default();
    for o in before_newest_reset(&history) {
        match bucket.delete(&o.key) {
            Ok(()) => purged.erased += 1,
            Err(_) => purged.failed += 1,
        }
    }
    Ok(purged)
}

/// One pass over `app`'s purge marks at `now` (the bucket's clock): each
/// mark's history is purged, and a mark whose purge is clean and older than
/// [`MARK_KEPT_MS`] is removed.
///
/// # Errors
/// Listing the marks failed (a mark's own failures count in `failed`).
pub fn pass(bucket: &dyn ObjectStore, app: &str, now: u64) -> Result<Purged, BucketError> {
    let mut total = Purged::default();
    for mark in bucket.list(&crate::keys::purges_of_app(app))? {
        let Some(prefix) = crate::keys::history_of_purge_mark(app, &mark.key) else {
            continue;
        };
        match purge_history(bucket, &prefix) {
            Ok(p) => {
                total += p;
                if p.failed == 0 && mark.last_modified + MARK_KEPT_MS <= now {
                    let _ = bucket.delete(&mark.key);
                }
            }
            Err(_) => total.failed += 1,
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::ActorKey;
    use crate::bucket::{MemoryBucket, PutCondition};
    use crate::clock::{Clock, VirtualClock};
    use std::sync::Arc;

    fn put(bucket: &dyn ObjectStore, key: &str) {
        bucket.put(key, b"x", &PutCondition::None).expect("put");
    }

    #[test]
    fn a_pass_erases_before_the_newest_reset_and_keeps_the_mark_a_while() {
        let clock = Arc::new(VirtualClock::default());
        let bucket = MemoryBucket::new(clock.clone());
        let k = ActorKey::new("t/app", "c", "a");
        let h = crate::keys::history_prefix(&k);
        for o in ["1-0.seg", "2-0.seg", "2-1.reset", "2-1.snap", "3-0.seg", "3-1.seg"] {
            let (pos, ext) = o.split_once('.').expect("pos");
            let (g, s) = pos.split_once('-').expect("g-s");
            let g: u64 = g.parse().expect("g");
            let s: u64 = s.parse().expect("s");
            put(&bucket, &format!("{h}{g:016x}-{s:016x}.{ext}"));
        }
        put(&bucket, &crate::keys::purge_mark(&k));
        let p = pass(&bucket, "t/app", clock.now_ms()).expect("pass");
        assert_eq!(p, Purged { erased: 2, failed: 0 });
        let left: Vec<String> = bucket.list(&h).expect("list").into_iter().map(|m| m.key).collect();
        assert_eq!(left.len(), 4, "the reset, its snapshot and what came after: {left:?}");
        assert_eq!(
            bucket.list(&crate::keys::purges_of_app("t/app")).expect("list").len(),
            1
        );
        // A late upload of an earlier holder, below the reset, within the mark's time.
        put(&bucket, &format!("{h}{:016x}-{:016x}.seg", 2, 0));
        clock.advance(MARK_KEPT_MS);
        assert_eq!(pass(&bucket, "t/app", clock.now_ms()).expect("pass").erased, 1);
        assert!(
            bucket
                .list(&crate::keys::purges_of_app("t/app"))
                .expect("list")
                .is_empty()
        );
    }
}
