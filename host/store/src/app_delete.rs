//! Deleting an app (ADR 0028 §5) in a cluster's bucket: the tombstone first,
//! nodes stop serving the app when they see it, then every key under the
//! app's two prefixes but the tombstone. `serve --recreate` removes the
//! tombstone only once nothing else is left.

use crate::bucket::{BucketError, ObjectStore, PutCondition};
use crate::keys;
use serde::{Deserialize, Serialize};

/// A node whose heartbeat is older than this no longer serves the app.
pub const NODE_TTL_MS: u64 = 5_000;

/// Who deleted the app, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tombstone {
    /// Who ran the command (`$USER`, else "operator").
    pub by: String,
    /// When, in ms since the epoch.
    pub at_ms: u64,
}

/// Why an app delete or a recreate could not go on.
#[derive(Debug, thiserror::Error)]
pub enum AppDeleteError {
    /// The bucket failed.
    #[error("the bucket failed: {0}")]
    Bucket(#[from] BucketError),
    /// A tombstone that is not one this host wrote.
    #[error("the tombstone {0} cannot be read; remove it by hand only if you know what wrote it")]
    CorruptTombstone(String),
    /// `--recreate` while the delete has not finished.
    #[error(
        "app {app} was deleted, but {remaining} key(s) of it remain in the bucket: run `wasmkeep-shim app delete --app {app}` again to finish, then --recreate"
    )]
    NotFinished {
        /// The app.
        app: String,
        /// How many keys besides the tombstone.
        remaining: usize,
    },
}

/// Writes the tombstone (create-if-absent). An existing one is not an error:
/// it is returned, and the command resumes.
///
/// # Errors
/// The bucket's error, or a tombstone that cannot be read.
pub fn write_tombstone(bucket: &dyn ObjectStore, app: &str, by: &str, now: u64) -> Result<Tombstone, AppDeleteError> {
    let t = Tombstone {
        by: by.to_owned(),
        at_ms: now,
    };
    let body = serde_json::to_vec(&t).map_err(|e| BucketError::Unavailable(e.to_string()))?;
    // A lost answer is settled by reading the tombstone back (issue 57).
    match crate::bucket::put_read_back(bucket, &keys::tombstone(app), &body, &PutCondition::IfAbsent) {
        Ok(_) => Ok(t),
        Err(BucketError::PreconditionFailed(_)) => {
            read_tombstone(bucket, app)?.ok_or_else(|| AppDeleteError::CorruptTombstone(keys::tombstone(app)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The app's tombstone, if it has one.
///
/// # Errors
/// The bucket's error, or a tombstone that cannot be read.
pub fn read_tombstone(bucket: &dyn ObjectStore, app: &str) -> Result<Option<Tombstone>, AppDeleteError> {
    match bucket.get(&keys::tombstone(app))? {
        None => Ok(None),
        Some((body, _)) => serde_json::from_slice(&body)
            .map(Some)
            .map_err(|_| AppDeleteError::CorruptTombstone(keys::tombstone(app))),
    }
}

/// The nodes whose heartbeat for the app is younger than [`NODE_TTL_MS`].
///
/// # Errors
/// The bucket's error.
pub fn serving_nodes(bucket: &dyn ObjectStore, app: &str, now: u64) -> Result<Vec<String>, BucketError> {
    let prefix = keys::heartbeats(app);
    Ok(bucket
        .list(&prefix)?
        .into_iter()
        .filter(|m| m.last_modified + NODE_TTL_MS >= now)
        .filter_map(|m| m.key.strip_prefix(&prefix).map(str::to_owned))
        .collect())
}

/// Every key under `state/<app>/`, `apps/<app>/` and `alarms/<app>/` but the tombstone.
///
/// # Errors
/// The bucket's error.
pub fn remaining_keys(bucket: &dyn ObjectStore, app: &str) -> Result<Vec<String>, BucketError> {
    let tomb = keys::tombstone(app);
    let mut keys = Vec::new();
    for prefix in [keys::app_state(app), keys::app_records(app), keys::alarms_of_app(app)] {
        keys.extend(bucket.list(&prefix)?.into_iter().map(|m| m.key).filter(|k| *k != tomb));
    }
    Ok(keys)
}

/// Removes every key of the app but the tombstone, listing again until a
/// listing comes back empty (a late write is removed too). Returns how many.
///
/// # Errors
/// The bucket's error.
pub fn remove_data(bucket: &dyn ObjectStore, app: &str) -> Result<usize, BucketError> {
    let mut removed = 0;
    for _ in 0..100 {
        let keys = remaining_keys(bucket, app)?;
        if keys.is_empty() {
            return Ok(removed);
        }
        for k in keys {
            bucket.delete(&k)?;
            removed += 1;
        }
    }
    Err(BucketError::Unavailable(format!(
        "keys of {app} keep appearing: a node still writes; stop it and run again"
    )))
}

/// `serve --recreate`: removes the tombstone, refused while anything else of
/// the app remains. Nothing to do when there is no tombstone.
///
/// # Errors
/// [`AppDeleteError::NotFinished`], or the bucket's error.
pub fn recreate(bucket: &dyn ObjectStore, app: &str) -> Result<(), AppDeleteError> {
    if read_tombstone(bucket, app)?.is_none() {
        return Ok(());
    }
    let remaining = remaining_keys(bucket, app)?.len();
    if remaining > 0 {
        return Err(AppDeleteError::NotFinished {
            app: app.to_owned(),
            remaining,
        });
    }
    bucket.delete(&keys::tombstone(app))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{LostAnswers, MemoryBucket};
    use crate::clock::VirtualClock;
    use std::sync::Arc;

    #[test]
    fn a_tombstone_whose_answer_was_lost_is_written() {
        let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let lossy = LostAnswers::new(inner.clone());
        lossy.lose("/deleted", 1);
        let t = write_tombstone(&lossy, "t/a", "ops", 7).expect("the tombstone landed");
        assert_eq!(lossy.lost(), 1);
        assert_eq!(read_tombstone(inner.as_ref(), "t/a").expect("read"), Some(t));
    }
}
