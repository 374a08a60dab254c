//! The cluster's verbs of a [`TestHost`]: which node acts, cutting a node
//! off, operator deletes and app deletes through the bucket, and the passes.

use super::*;

impl TestHost {
    /// The node that acts for the whole host (due alarms, an actor's alarm):
    /// the lowest live one, as any live node of `serve --nodes N` would. A
    /// cut-off node holds nothing, so what it queued would never run.
    pub(super) fn acting_node(&self) -> Result<&Runtime, TestHostError> {
        let Some(cluster) = &self.cluster else {
            return self.runtime();
        };
        for rt in self.all_nodes()? {
            if rt.node_id().is_some_and(|id| cluster.is_live(id)) {
                return Ok(rt);
            }
        }
        self.runtime() // every node is cut off: node 1 refuses as it should
    }

    pub(super) fn bucket(&self) -> Result<&Arc<dyn wasmkeep_host::bucket::ObjectStore>, TestHostError> {
        self.cluster
            .as_ref()
            .map(|c| c.bucket())
            .ok_or(TestHostError::NeedsCluster)
    }

    /// Cuts node `n` off from the cluster: it holds nothing from now on, and
    /// the others take its actors over from the bucket.
    ///
    /// # Errors
    /// No such node, or a single node.
    pub fn cut_off(&self, n: usize) -> Result<(), TestHostError> {
        if self.cluster.is_none() {
            return Err(TestHostError::NeedsCluster);
        }
        Ok(self.node(n)?.dev().cut_off()?)
    }

    /// Asks for an operator delete of `key` as `wasmkeep-shim actor delete`
    /// does (a request in the bucket), and runs every node's control pass so
    /// that its holder carries it out; the request's id.
    ///
    /// # Errors
    /// A single node (use [`TestHost::delete_actor`]); no such actor.
    pub fn request_operator_delete(&self, key: &ActorKey) -> Result<String, TestHostError> {
        let req = wasmkeep_host::operator::request_delete(self.bucket()?.as_ref(), key)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        self.run_control_passes()?;
        for rt in self.all_nodes()? {
            rt.settle(key);
        }
        Ok(req.id)
    }

    /// Runs each node's control pass once (app tombstones, heartbeats,
    /// operator delete requests), as a moving clock does every second.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_control_passes(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.passes().run_control_pass();
        }
        Ok(())
    }

    /// Sets `expire-after-idle` of a class on every node (at least an hour;
    /// `None` removes it), as a manifest or `serve --expire-after-idle` does.
    ///
    /// # Errors
    /// Below an hour, or an unknown class.
    pub fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.passes().set_expire_after_idle(app, class, limit)?;
        }
        Ok(())
    }

    /// Runs each node's idle-expiry pass once; how many actors were expired.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_expiry_passes(&self) -> Result<usize, TestHostError> {
        Ok(self.all_nodes()?.map(|rt| rt.passes().run_expiry_pass().expired).sum())
    }

    /// Deletes an app as `wasmkeep-shim app delete` does: its tombstone,
    /// every node stops serving it (control passes), then its data goes.
    ///
    /// # Errors
    /// A single node; the bucket failed.
    pub fn delete_app(&self, app: &str) -> Result<(), TestHostError> {
        let bucket = self.bucket()?;
        let now = self.now_ms()?;
        wasmkeep_host::app_delete::write_tombstone(bucket.as_ref(), app, "test", now)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        self.run_control_passes()?;
        wasmkeep_host::app_delete::remove_data(bucket.as_ref(), app)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        Ok(())
    }

    /// Deletes an actor as an operator would ([`wasmkeep_host::Admin::delete_actor`]).
    ///
    /// # Errors
    /// The delete failed (the message says why).
    pub fn delete_actor(&self, key: &ActorKey) -> Result<wasmkeep_host::AdminDeleted, TestHostError> {
        Ok(self.runtime()?.admin().delete_actor(key)?)
    }

    /// Whether the actor was deleted, from positive evidence only
    /// ([`wasmkeep_host::ClusterPasses::deletion_status`]).
    ///
    /// # Errors
    /// The host is closed.
    pub fn deletion_status(&self, key: &ActorKey) -> Result<wasmkeep_host::deletion::DeletionStatus, TestHostError> {
        Ok(self.runtime()?.passes().deletion_status(key))
    }
}
