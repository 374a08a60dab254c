//! A local cluster: nodes in this process sharing a bucket in a local
//! directory. `serve --nodes N`, the test host, the conformance runner and
//! the host's tests all bring theirs up here, so a node is named, configured
//! and joined to its cluster one way.

use crate::bucket::LocalDirBucket;
use crate::clock::{Clock, SystemClock, VirtualClock};
use crate::cluster::Cluster;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::runtime::Runtime;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A cluster and its nodes, node 1 first.
pub struct LocalCluster {
    /// The cluster: its bucket, clock and directory of nodes.
    pub cluster: Arc<Cluster>,
    /// Nodes `node-1` to `node-N`.
    pub nodes: Vec<Runtime>,
}

impl Cluster {
    /// A cluster whose bucket is the local directory `bucket_dir` (created as
    /// needed), on `clock`.
    pub fn over_local_dir(bucket_dir: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Arc<Self> {
        Self::new(Arc::new(LocalDirBucket::new(bucket_dir, clock.clone())), clock)
    }

    /// Starts nodes `node-1` to `node-{count}` of this cluster in this
    /// process; node `i` (from 1) runs with `config_of(i)`.
    ///
    /// # Errors
    /// The first node that could not start ([`Runtime::new_node`]).
    pub fn start_nodes(
        self: &Arc<Self>,
        count: usize,
        mut config_of: impl FnMut(usize) -> RuntimeConfig,
    ) -> Result<Vec<Runtime>, RuntimeError> {
        (1..=count)
            .map(|i| Runtime::new_node(config_of(i), self.clone(), &format!("node-{i}")))
            .collect()
    }

    /// The usual local cluster of `count` nodes in `dir`: the bucket in
    /// `dir/bucket`, node `i`'s files in `dir/node-i`, every node with
    /// `config` (its `data_dir` replaced), on a virtual clock when
    /// `config.virtual_clock` says so, else the system's.
    ///
    /// # Errors
    /// The first node that could not start ([`Runtime::new_node`]).
    pub fn local(dir: &Path, count: usize, config: &RuntimeConfig) -> Result<LocalCluster, RuntimeError> {
        let clock: Arc<dyn Clock> = if config.virtual_clock {
            Arc::new(VirtualClock::default())
        } else {
            Arc::new(SystemClock)
        };
        let cluster = Self::over_local_dir(dir.join("bucket"), clock);
        let nodes = cluster.start_nodes(count, |i| RuntimeConfig {
            data_dir: dir.join(format!("node-{i}")),
            ..config.clone()
        })?;
        Ok(LocalCluster { cluster, nodes })
    }
}
