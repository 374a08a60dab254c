//! [`FaultyBucket`]: a bucket that fails on purpose when the faults say so.

use super::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition, lock};
use crate::faults::{FaultKind, Faults};
use std::sync::{Arc, Mutex};

/// Wraps a bucket and fails on purpose when the faults say so:
/// `fail-upload` (a write fails and does not land), `upload-lands-but-fails`
/// (it lands, the caller is told it failed, and the read of that key that
/// follows fails too: the ambiguous case that reading back cannot settle,
/// which the conformance cases of ADR 0028's `internal` rely on; ADR 066),
/// `fail-erase` (a delete fails).
pub struct FaultyBucket {
    inner: Arc<dyn ObjectStore>,
    faults: Arc<Faults>,
    /// The key an `upload-lands-but-fails` wrote last, until it is read once.
    unreadable: Mutex<Option<String>>,
}

impl FaultyBucket {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ObjectStore>, faults: Arc<Faults>) -> Self {
        Self {
            inner,
            faults,
            unreadable: Mutex::new(None),
        }
    }
}

impl ObjectStore for FaultyBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        if lock(&self.unreadable).take_if(|k| k == key).is_some() {
            return Err(BucketError::Unavailable(format!(
                "injected fault: upload-lands-but-fails ({key} cannot be read back)"
            )));
        }
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        // A fault armed for "the next upload" is for the delete's reset, not
        // the purge mark written just before it (ADR 031).
        if crate::keys::is_purge_mark(key) {
            return self.inner.put(key, body, cond);
        }
        if self.faults.take(FaultKind::FailUpload) {
            return Err(BucketError::Unavailable(format!("injected fault: fail-upload ({key})")));
        }
        let etag = self.inner.put(key, body, cond)?;
        if self.faults.take(FaultKind::UploadLandsButFails) {
            *lock(&self.unreadable) = Some(key.to_owned());
            return Err(BucketError::Ambiguous(key.to_owned()));
        }
        Ok(etag)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        if self.faults.take(FaultKind::FailErase) {
            return Err(BucketError::Unavailable(format!("injected fault: fail-erase ({key})")));
        }
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}
