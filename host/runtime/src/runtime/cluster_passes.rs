//! The cluster-passes handle: a cluster node's passes on demand (operator
//! deletes, tombstones, idle expiry) and what the bucket says of deletes and
//! live nodes.

use super::*;

/// A cluster node's passes run on demand, and what the bucket says of
/// deletes and live nodes: [`Runtime::passes`]. With the real clock a node
/// runs its passes by itself; tests with the virtual clock run them here.
#[derive(Clone, Copy)]
pub struct ClusterPasses<'a> {
    host: &'a Arc<Host>,
}

impl std::fmt::Debug for ClusterPasses<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterPasses").finish_non_exhaustive()
    }
}

impl Runtime {
    /// The cluster-passes handle: operator, control and expiry passes on
    /// demand, deletion status, live nodes, idle limits.
    pub fn passes(&self) -> ClusterPasses<'_> {
        ClusterPasses { host: &self.host }
    }
}

impl ClusterPasses<'_> {
    /// Whether the actor was deleted, from positive evidence in the bucket (a
    /// reset at the head of its history). On a single node there is no bucket
    /// and no such evidence: the answer is `unknown`.
    pub fn deletion_status(&self, key: &ActorKey) -> crate::deletion::DeletionStatus {
        self.host.storage().deletion_status(key)
    }

    /// The live nodes of this node's cluster (empty on a single node).
    pub fn live_nodes(&self) -> Vec<String> {
        self.host.cluster().map(|c| c.cluster.live_nodes()).unwrap_or_default()
    }

    /// The actor's records in the cluster's bucket, for the dashboard: its
    /// ownership record and its history, each object read back as what it
    /// is (an upload, a fence, a reset with its marker, a snapshot), with its
    /// version and when it was written; on a single node, its history
    /// directory's (ADR 064). `None` on a single node that keeps no history.
    ///
    /// # Errors
    /// The bucket could not be listed or read.
    pub fn actor_records(
        &self,
        key: &ActorKey,
    ) -> Option<Result<crate::actor_records::ActorRecords, crate::bucket::BucketError>> {
        if let Some(c) = self.host.cluster() {
            return Some(crate::actor_records::actor_records(c.cluster.bucket().as_ref(), key));
        }
        // A single node that keeps history (ADR 064): its directory is laid out as a bucket.
        let h = self.host.config().history.as_ref()?;
        let dir = crate::bucket::LocalDirBucket::new(h.dir.clone(), self.host.clock().clone());
        Some(crate::actor_records::actor_records(&dir, key))
    }

    /// Cluster: one control pass over the apps' operator delete requests
    /// (ADR 0028 §3): expired requests and outcomes are removed, and up to 16
    /// requests at a time are queued, each in its actor's mailbox, run by the
    /// node that holds it. Returns how many were queued (0 on a single node
    /// and on every node but the lowest live one). With the real clock a
    /// cluster node runs a pass every second by itself.
    pub fn run_operator_pass(&self) -> usize {
        passes::operator_pass(self.host)
    }

    /// Cluster: one whole control pass, as a node runs every second with the
    /// real clock: apps whose tombstone is in the bucket stop being served
    /// here (ADR 0028 §5), the others' heartbeats are written, and operator
    /// delete requests are queued.
    pub fn run_control_pass(&self) {
        passes::control_pass(self.host);
    }

    /// Whether this node stopped serving `app` (its tombstone was seen).
    pub fn app_stopped(&self, app: &str) -> bool {
        self.host.stops().app_stopped(app)
    }

    /// Sets (or with `None` removes) a class's `expire-after-idle`.
    ///
    /// # Errors
    /// [`RuntimeError::BadArgument`] for a limit below one hour.
    pub fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Result<(), RuntimeError> {
        let k = (app.to_owned(), class.to_owned());
        match limit {
            Some(d) if d < crate::manifest::MIN_EXPIRE_AFTER_IDLE => Err(RuntimeError::BadArgument(format!(
                "expire-after-idle for {app} {class}: {d:?} is below the minimum of one hour: give at least 3600 s (3600000 ms); no limit (0 in C) removes it"
            ))),
            Some(d) => {
                self.host
                    .pass_book()
                    .set_idle_limit(k, Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
                Ok(())
            }
            None => {
                self.host.pass_book().set_idle_limit(k, None);
                Ok(())
            }
        }
    }

    /// Cluster: one idle expiry pass (ADR 0028 §4), on the collecting node
    /// (the lowest live id; on others it does nothing). Candidates come from
    /// one listing of each limited class's ownership records: released and
    /// last written longer ago than the limit, not resident here, no socket.
    /// Each is deleted only if its record is still the version listed and its
    /// database has no pending alarm; at most 100 a pass, 4 at a time. With
    /// the real clock the collecting node runs a pass every 10 minutes.
    pub fn run_expiry_pass(&self) -> ExpiryPass {
        passes::expiry_pass(self.host)
    }
}
