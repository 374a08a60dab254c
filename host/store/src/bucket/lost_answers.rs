//! [`LostAnswers`]: a bucket that loses the answers to some writes after
//! they landed (tests and the `contract-tests` feature only).

use super::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition, lock};
use std::sync::{Arc, Mutex};

/// What [`LostAnswers`] does after a write whose answer it loses landed.
pub type AfterLanding = Box<dyn Fn() + Send + Sync>;

/// Wraps a bucket and loses the answers to writes whose keys contain a
/// given part: the write lands, and the caller is told `Ambiguous`, as over
/// a connection that broke after the request went out. Reads work (unlike
/// [`FaultyBucket`](super::FaultyBucket)'s `upload-lands-but-fails`), so reading back
/// settles it.
pub struct LostAnswers {
    inner: Arc<dyn ObjectStore>,
    /// The part of the key, how many answers are still to lose, and what
    /// happens after each such write landed (another writer's write, say).
    rule: Mutex<Option<(String, u32, Option<AfterLanding>)>>,
    lost: Mutex<u32>,
}

impl LostAnswers {
    /// Wraps `inner`, losing nothing yet.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            rule: Mutex::new(None),
            lost: Mutex::new(0),
        }
    }

    /// Loses the answers to the next `count` writes of keys containing `part`.
    pub fn lose(&self, part: &str, count: u32) {
        *lock(&self.rule) = Some((part.to_owned(), count, None));
    }

    /// Loses the answer to the next write of a key containing `part`, and
    /// runs `then` right after it landed (another writer's write, say).
    pub fn lose_then(&self, part: &str, then: impl Fn() + Send + Sync + 'static) {
        *lock(&self.rule) = Some((part.to_owned(), 1, Some(Box::new(then))));
    }

    /// How many answers were lost so far.
    pub fn lost(&self) -> u32 {
        *lock(&self.lost)
    }
}

impl ObjectStore for LostAnswers {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let etag = self.inner.put(key, body, cond)?;
        let mut rule = lock(&self.rule);
        let Some((part, left, _)) = rule.as_mut() else {
            return Ok(etag);
        };
        if !key.contains(part.as_str()) {
            return Ok(etag);
        }
        *left -= 1;
        let then = if *left == 0 {
            rule.take().and_then(|r| r.2)
        } else {
            None
        };
        drop(rule);
        *lock(&self.lost) += 1;
        if let Some(then) = then {
            then();
        }
        Err(BucketError::Ambiguous(format!(
            "{key} (the answer was lost on purpose)"
        )))
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}
