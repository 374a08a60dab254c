//! [`MemoryBucket`]: objects held in memory (the simulation's bucket, and tests').

use super::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition, etag_of, lock};
use crate::clock::Clock;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Objects by key (body, ETag, last modified) and a write counter.
type MemoryObjects = (BTreeMap<String, (Vec<u8>, ETag, u64)>, u64);

/// Objects held in memory.
pub struct MemoryBucket {
    objects: Mutex<MemoryObjects>,
    clock: Arc<dyn Clock>,
}

impl MemoryBucket {
    /// An empty bucket whose last-modified times come from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            objects: Mutex::new((BTreeMap::new(), 0)),
            clock,
        }
    }
}

impl ObjectStore for MemoryBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        Ok(lock(&self.objects).0.get(key).map(|(b, e, _)| (b.clone(), e.clone())))
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let mut g = lock(&self.objects);
        let current = g.0.get(key).map(|(_, e, _)| e.clone());
        let ok = match cond {
            PutCondition::None => true,
            PutCondition::IfAbsent => current.is_none(),
            PutCondition::IfMatch(e) => current.as_ref() == Some(e),
        };
        if !ok {
            return Err(BucketError::PreconditionFailed(key.to_owned()));
        }
        g.1 += 1;
        let etag = etag_of(body, g.1);
        let now = self.clock.now_ms();
        g.0.insert(key.to_owned(), (body.to_vec(), etag.clone(), now));
        Ok(etag)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        lock(&self.objects).0.remove(key);
        Ok(())
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        Ok(lock(&self.objects)
            .0
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, (_, e, t))| ObjectMeta {
                key: k.clone(),
                etag: e.clone(),
                last_modified: *t,
            })
            .collect())
    }
}
