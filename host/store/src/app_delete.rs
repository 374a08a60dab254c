//! Deleting an app (ADR 0028 §5) in a cluster's bucket: the tombstone first,
//! nodes stop serving the app when they see it, then every key under the
//! app's two prefixes but the tombstone. `serve --recreate` removes the
//! tombstone only once nothing else is left.

use crate::bucket::{BucketError, ObjectStore, PutCondition};
use crate::keys;
use serde::{Deserialize, Serialize};

/// A mark without an epoch (written by nodes of one process, every control
/// pass) older than this no longer says its node serves the app.
pub const NODE_TTL_MS: u64 = 5_000;

/// What a node writes at `apps/<app>/nodes/<node>` while it serves the app
/// (ADR 077).
///
/// A node process writes it once per lease epoch: its lease says whether it
/// is live, so the mark need not be rewritten to stay true, and `app delete`
/// reads the lease. Nodes of one process have no lease in the bucket: their
/// mark has no epoch, and they write it again every control pass, a
/// heartbeat that lapses after [`NODE_TTL_MS`]. The empty body of marks
/// written before this record existed reads as one without an epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServingMark {
    /// The epoch of the writer's lease, for a node process.
    #[serde(default)]
    pub epoch: Option<u64>,
}

/// Writes `node`'s mark that it serves `app`.
///
/// # Errors
/// The bucket's error.
pub fn write_serving_mark(
    bucket: &dyn ObjectStore,
    app: &str,
    node: &str,
    epoch: Option<u64>,
) -> Result<(), BucketError> {
    let body = serde_json::to_vec(&ServingMark { epoch }).map_err(|e| BucketError::Unavailable(e.to_string()))?;
    bucket
        .put(&keys::heartbeat(app, node), &body, &PutCondition::None)
        .map(|_| ())
}

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

/// The nodes that serve `app` at `now`: those whose mark names the epoch of
/// a lease of theirs live at `now`, and those whose mark without an epoch is
/// younger than [`NODE_TTL_MS`].
///
/// # Errors
/// The bucket's error, or a lease that cannot be read: the caller cannot
/// tell, so it must not go on as if the node had stopped.
pub fn serving_nodes(bucket: &dyn ObjectStore, app: &str, now: u64) -> Result<Vec<String>, BucketError> {
    let prefix = keys::heartbeats(app);
    let mut serving = Vec::new();
    for meta in bucket.list(&prefix)? {
        let Some(node) = meta.key.strip_prefix(&prefix) else {
            continue;
        };
        let Some((body, _)) = bucket.get(&meta.key)? else {
            continue; // taken back since the listing
        };
        let mark: ServingMark = serde_json::from_slice(&body).unwrap_or_default();
        let serves = match mark.epoch {
            Some(epoch) => matches!(
                crate::node_lease::read_lease(bucket, node)?,
                Some((lease, _)) if lease.epoch == epoch && lease.is_live_at(now)
            ),
            None => meta.last_modified + NODE_TTL_MS >= now,
        };
        if serves {
            serving.push(node.to_owned());
        }
    }
    Ok(serving)
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
    use crate::clock::{Clock, VirtualClock};
    use std::sync::Arc;

    /// ADR 077: a node process's mark is written once and stays true while
    /// its lease at that epoch is live; a mark of an earlier epoch, or of a
    /// lapsed lease, names no serving node; a mark without an epoch is a
    /// heartbeat that lapses after NODE_TTL_MS.
    #[test]
    fn a_node_process_serves_while_its_lease_at_the_marked_epoch_is_live() {
        use crate::liveness::Liveness;
        use crate::node_lease::BucketLeases;
        let clock = Arc::new(VirtualClock::default());
        let bucket: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(clock.clone()));
        let leases = BucketLeases::new(bucket.clone(), clock.clone(), 10_000, None);
        leases.join("n1").expect("join");
        let epoch = leases.epoch("n1");
        write_serving_mark(bucket.as_ref(), "t/a", "n1", epoch).expect("mark");
        write_serving_mark(bucket.as_ref(), "t/a", "in-process", None).expect("heartbeat");
        let now = || clock.now_ms();
        assert_eq!(
            serving_nodes(bucket.as_ref(), "t/a", now()).expect("list"),
            ["in-process", "n1"]
        );
        // A minute on, renewed and never rewritten, the mark still holds; the
        // heartbeat that was not rewritten has lapsed.
        for _ in 0..12 {
            clock.advance(5_000);
            leases.renew();
        }
        assert_eq!(serving_nodes(bucket.as_ref(), "t/a", now()).expect("list"), ["n1"]);
        // The process dies: once its lease lapses, it serves nothing.
        clock.advance(10_001);
        assert!(serving_nodes(bucket.as_ref(), "t/a", now()).expect("list").is_empty());
        // A later process of the node id that does not serve the app: its
        // epoch is not the marked one.
        let again = BucketLeases::new(bucket.clone(), clock.clone(), 10_000, None);
        again.join("n1").expect("join again");
        assert!(again.is_live("n1"));
        assert!(serving_nodes(bucket.as_ref(), "t/a", now()).expect("list").is_empty());
    }

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
