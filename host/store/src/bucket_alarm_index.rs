//! The alarm index in the bucket, for node processes (docs/adr/028): any node
//! lists which actors' alarms are due and wakes them, so an alarm set on a
//! node that died is taken over with its actor. An entry is a hint, as every
//! index is (`alarm_index`): its key carries the time
//! (`alarms/<app>/<class>/<encoded name>/<at>`), so one listing shows every
//! entry's time, and its body the actor's full address (a long name is
//! shortened in keys).

use crate::address::ActorKey;
use crate::alarm_index::{AlarmIndex, AlarmIndexError};
use crate::bucket::{ObjectStore, PutCondition};
use crate::keys;
use std::sync::Arc;

/// Alarm entries as objects in the bucket.
pub struct BucketAlarmIndex {
    bucket: Arc<dyn ObjectStore>,
}

impl BucketAlarmIndex {
    /// The index in `bucket`.
    pub fn new(bucket: Arc<dyn ObjectStore>) -> Self {
        Self { bucket }
    }

    /// The entries of one actor: their keys and times.
    fn entries_of(&self, key: &ActorKey) -> Result<Vec<(String, u64)>, AlarmIndexError> {
        Ok(self
            .bucket
            .list(&keys::alarms_of_actor(key))?
            .into_iter()
            .filter_map(|m| keys::alarm_time(&m.key).map(|at| (m.key, at)))
            .collect())
    }

    /// Every entry's key and time.
    fn all(&self) -> Result<Vec<(String, u64)>, AlarmIndexError> {
        Ok(self
            .bucket
            .list(keys::ALARMS_ROOT)?
            .into_iter()
            .filter_map(|m| keys::alarm_time(&m.key).map(|at| (m.key, at)))
            .collect())
    }
}

impl AlarmIndex for BucketAlarmIndex {
    fn set(&self, key: &ActorKey, at: u64) -> Result<(), AlarmIndexError> {
        let body = serde_json::to_vec(key)
            .map_err(|e| AlarmIndexError::Bucket(crate::bucket::BucketError::Unavailable(e.to_string())))?;
        let new = keys::alarm(key, at);
        // The new entry first: a failure in between leaves an extra hint, never none.
        // A lost answer is settled by reading the entry back (issue 57).
        crate::bucket::put_read_back(self.bucket.as_ref(), &new, &body, &PutCondition::None)?;
        for (old, _) in self.entries_of(key)? {
            if old != new {
                self.bucket.delete(&old)?;
            }
        }
        Ok(())
    }

    fn remove(&self, key: &ActorKey) -> Result<(), AlarmIndexError> {
        for (old, _) in self.entries_of(key)? {
            self.bucket.delete(&old)?;
        }
        Ok(())
    }

    fn get(&self, key: &ActorKey) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self.entries_of(key)?.into_iter().map(|(_, at)| at).min())
    }

    fn due(&self, now: u64) -> Result<Vec<(ActorKey, u64)>, AlarmIndexError> {
        let mut v = Vec::new();
        for (object, at) in self.all()?.into_iter().filter(|(_, at)| *at <= now) {
            // Removed since the listing: nothing to wake.
            let Some((body, _)) = self.bucket.get(&object)? else {
                continue;
            };
            match serde_json::from_slice::<ActorKey>(&body) {
                Ok(key) => v.push((key, at)),
                Err(_) => continue,
            }
        }
        v.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        v.dedup_by(|a, b| a.0 == b.0);
        Ok(v)
    }

    fn next_at(&self) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self.all()?.into_iter().map(|(_, at)| at).min())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{LocalDirBucket, MemoryBucket};
    use crate::clock::VirtualClock;

    #[test]
    fn the_bucket_index_meets_the_alarm_index_contract() {
        let clock = Arc::new(VirtualClock::default());
        crate::alarm_index::contract::check(&BucketAlarmIndex::new(Arc::new(MemoryBucket::new(clock.clone()))));
        let dir = tempfile::tempdir().expect("tempdir");
        crate::alarm_index::contract::check(&BucketAlarmIndex::new(Arc::new(LocalDirBucket::new(dir.path(), clock))));
    }

    #[test]
    fn an_alarm_whose_entry_lost_its_answer_is_set() {
        let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let lossy = Arc::new(crate::bucket::LostAnswers::new(inner.clone()));
        let key = ActorKey::new("acme/shop", "cart", "a");
        let index = BucketAlarmIndex::new(lossy.clone());
        index.set(&key, 10).expect("set");
        lossy.lose("alarms/", 1);
        index
            .set(&key, 20)
            .expect("the entry landed: set, and the old one removed");
        assert_eq!(lossy.lost(), 1);
        assert_eq!(BucketAlarmIndex::new(inner).get(&key).expect("get"), Some(20));
    }

    #[test]
    fn an_entry_set_by_one_process_is_due_for_another_with_a_long_name() {
        let clock = Arc::new(VirtualClock::default());
        let bucket: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(clock));
        let long = ActorKey::new("acme/shop", "cart", "x".repeat(500));
        BucketAlarmIndex::new(bucket.clone()).set(&long, 10).expect("set");
        let other = BucketAlarmIndex::new(bucket);
        assert_eq!(
            other.due(10).expect("due"),
            vec![(long.clone(), 10)],
            "the full name comes back"
        );
        other.remove(&long).expect("remove");
        assert_eq!(other.next_at().expect("next"), None);
    }
}
