//! The bucket nodes of a cluster share, behind an object-store trait with the
//! conditional writes ADR 0028 relies on: create-if-absent and
//! replace-if-ETag-matches, and listings with ETags and last-modified times.
//!
//! Two implementations here: a local directory (`local_dir`: the default and
//! `file://`, keyed as in ADR 0028: `state/<tenant>/<app>/…`,
//! `apps/<tenant>/<app>/…`) and memory (`memory`: for the simulation); S3,
//! Azure, GCS and object_store's memory are `object_store_bucket` (ADR 027).
//! [`FaultyBucket`] (`faulty`) wraps any of them and fails on purpose, and
//! `LostAnswers` (`lost_answers`, for tests) loses the answers to writes that
//! landed. The contract test (`contract`) is run by every implementation.

use sha2::{Digest, Sha256};
use std::sync::Mutex;

/// An object's version: changes with every write of it.
pub type ETag = String;

/// What a listing says of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The key.
    pub key: String,
    /// Its version.
    pub etag: ETag,
    /// When it was last written, on the bucket's clock (ms since the epoch).
    pub last_modified: u64,
}

/// When a write may happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutCondition {
    /// Always.
    None,
    /// Only if no object has the key (If-None-Match: *).
    IfAbsent,
    /// Only if the object's ETag is this one (If-Match).
    IfMatch(ETag),
}

/// Why a bucket call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BucketError {
    /// The condition did not hold; nothing was written.
    #[error("precondition failed for {0}")]
    PreconditionFailed(String),
    /// The bucket did not answer or refused; the write did not land.
    #[error("the bucket failed: {0}")]
    Unavailable(String),
    /// The write landed but the caller was told it failed (the ambiguous case).
    #[error("the bucket reported a failure for {0} (the write may have landed)")]
    Ambiguous(String),
}

/// An object store with conditional writes.
pub trait ObjectStore: Send + Sync + 'static {
    /// Reads an object and its ETag.
    ///
    /// # Errors
    /// The bucket failed.
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError>;
    /// Writes an object if `cond` holds; returns its new ETag.
    ///
    /// # Errors
    /// `PreconditionFailed` when `cond` does not hold; `Unavailable` or
    /// `Ambiguous` when the bucket failed.
    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError>;
    /// Deletes an object (no error if it is absent).
    ///
    /// # Errors
    /// The bucket failed; the object may remain.
    fn delete(&self, key: &str) -> Result<(), BucketError>;
    /// Every object whose key starts with `prefix`, in key order.
    ///
    /// # Errors
    /// The bucket failed.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError>;
}

/// Writes `body` at `key` on `cond`, and settles by reading the key back an
/// outcome the bucket left unknown (`Ambiguous`: an answer lost, a timeout
/// after the request went out, a 5xx after the write landed, a retry refused
/// by its own first attempt). Every write the cluster depends on goes
/// through here (issue 57, ADR 066):
///
/// - the object holds `body`: the write landed, and its ETag is returned
///   (every body the host writes where this matters carries a nonce, a
///   generation or a count, so nobody else writes the same bytes);
/// - it holds other bytes that prove another writer (`IfAbsent`: someone
///   created it; `IfMatch`: its version is not the one named any more, or it
///   is gone): `PreconditionFailed`, as if the condition had failed at once;
/// - anything else (absent after a create, still the version named, other
///   bytes after an unconditional write, or the read failed): still
///   `Ambiguous`, saying what the read found. The write may land yet; the
///   caller treats it as not acknowledged.
///
/// # Errors
/// As [`ObjectStore::put`]: `PreconditionFailed` when the condition failed
/// or another writer is proven, `Unavailable` when the write did not land,
/// `Ambiguous` when reading back did not settle it.
pub fn put_read_back(
    bucket: &dyn ObjectStore,
    key: &str,
    body: &[u8],
    cond: &PutCondition,
) -> Result<ETag, BucketError> {
    let why = match bucket.put(key, body, cond) {
        Err(BucketError::Ambiguous(why)) => why,
        other => return other,
    };
    let found = match bucket.get(key) {
        Ok(Some((current, etag))) if current == body => return Ok(etag),
        Ok(found) => found,
        Err(e) => return Err(BucketError::Ambiguous(format!("{why}; reading it back failed: {e}"))),
    };
    let proven = match (cond, &found) {
        (PutCondition::IfAbsent, Some(_)) => Some("another writer created it"),
        (PutCondition::IfMatch(named), Some((_, etag))) if etag != named => {
            Some("another writer replaced the version named")
        }
        (PutCondition::IfMatch(_), None) => Some("it is gone: another writer removed it"),
        _ => None,
    };
    match proven {
        Some(how) => Err(BucketError::PreconditionFailed(format!(
            "{key} (read back after {why}: {how})"
        ))),
        None => Err(BucketError::Ambiguous(format!(
            "{why}; read back: {}",
            if found.is_some() {
                "the object holds other bytes, or the version named: this write may land yet"
            } else {
                "nothing there yet: this write may land yet"
            }
        ))),
    }
}

fn etag_of(body: &[u8], counter: u64) -> ETag {
    let mut h = Sha256::new();
    h.update(body);
    h.update(counter.to_le_bytes());
    hex::encode(&h.finalize()[..12])
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

mod faulty;
mod local_dir;
#[cfg(any(test, feature = "contract-tests"))]
mod lost_answers;
mod memory;

pub use faulty::FaultyBucket;
pub use local_dir::LocalDirBucket;
#[cfg(any(test, feature = "contract-tests"))]
pub use lost_answers::{AfterLanding, LostAnswers};
pub use memory::MemoryBucket;

/// The contract every [`ObjectStore`] must pass.
#[cfg(any(test, feature = "contract-tests"))]
pub mod contract;
