//! `serve --mode cluster --node-id ID`: this process is one node of a
//! cluster whose nodes are processes sharing a bucket, live by their leases
//! in it (docs/adr/028-node-processes.md).

use anyhow::Context as _;
use std::path::Path;
use std::sync::Arc;
use wasmkeep_shim::bucket::{LocalDirBucket, ObjectStore};
use wasmkeep_shim::clock::Clock;
use wasmkeep_shim::node_lease::{BucketLeases, LeaseState};
use wasmkeep_shim::{Cluster, Runtime, RuntimeConfig};

/// The bucket `--bucket` names: a URL (`bucket_url::open_bucket`), or a bare
/// directory (as before URLs), or `default_dir`. Also how to name it in messages.
///
/// # Errors
/// The URL does not open.
pub(crate) fn open_cluster_bucket(
    given: Option<&str>,
    default_dir: &Path,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<(Arc<dyn ObjectStore>, String)> {
    match given {
        Some(url) if url.contains("://") => {
            let bucket =
                wasmkeep_shim::bucket_url::open_bucket(url, clock).with_context(|| format!("--bucket {url}"))?;
            Ok((bucket, url.to_owned()))
        }
        Some(dir) => Ok((Arc::new(LocalDirBucket::new(dir, clock)), dir.to_owned())),
        None => Ok((
            Arc::new(LocalDirBucket::new(default_dir, clock)),
            default_dir.display().to_string(),
        )),
    }
}

/// This process's place in the cluster: its node and the node's lease.
pub(crate) struct Joined {
    cluster: Arc<Cluster>,
    leases: Arc<BucketLeases>,
    node: String,
    /// The cluster's tokens: shown when a call is carried to another node
    /// process and asked of one carried here (ADR 034, ADR 074).
    tokens: wasmkeep_shim::cluster_calls::ClusterTokens,
}

impl Joined {
    /// The node's id.
    pub(crate) fn node(&self) -> &str {
        &self.node
    }

    /// The cluster's tokens for calls between node processes.
    pub(crate) fn tokens(&self) -> wasmkeep_shim::cluster_calls::ClusterTokens {
        self.tokens.clone()
    }

    /// Resolves once the node is fenced: another process joined as this
    /// node id, or somebody cut it off. It never holds anything again.
    pub(crate) async fn fenced(&self) {
        while self.leases.state(&self.node) != Some(LeaseState::Fenced) {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }

    /// After an ordered stop: the lease is given up, so others take the
    /// node's actors at once.
    /// `serve --testing-break-the-fence`: uploads acknowledged without their
    /// condition, for the process simulation only (ADR 031).
    pub(crate) fn break_the_fence_for_tests(&self) {
        self.cluster
            .break_for_tests(wasmkeep_shim::replica::Broken::UploadWithoutCondition);
    }

    pub(crate) fn leave(&self) {
        self.cluster.leave(&self.node);
    }
}

/// Joins the cluster on `bucket` as `node`, advertising `address`, with a
/// lease of `lease_ms` renewed on a thread of its own. Calls between node
/// processes show `tokens`, or without them the bucket's `cluster/secret`.
///
/// # Errors
/// The lease could not be taken, or the node did not start.
pub(crate) fn start(
    bucket: Arc<dyn ObjectStore>,
    clock: Arc<dyn Clock>,
    node: &str,
    address: &str,
    lease_ms: u64,
    config: RuntimeConfig,
    tokens: Option<wasmkeep_shim::cluster_calls::ClusterTokens>,
) -> anyhow::Result<(Joined, Runtime)> {
    // Every request this node makes is counted by purpose (`/metrics`,
    // wasmkeep_bucket_requests_total; issue 57).
    let counts = Arc::new(wasmkeep_shim::counting_bucket::RequestCounts::default());
    let bucket: Arc<dyn ObjectStore> = Arc::new(wasmkeep_shim::counting_bucket::CountingBucket::new(
        bucket,
        counts.clone(),
    ));
    let tokens = match tokens {
        Some(t) => t,
        None => wasmkeep_shim::cluster_calls::ClusterTokens::new(
            &wasmkeep_shim::cluster_calls::cluster_secret(bucket.as_ref())?,
            None,
        ),
    };
    let leases = Arc::new(BucketLeases::new(
        bucket.clone(),
        clock.clone(),
        lease_ms,
        Some(address.to_owned()),
    ));
    let cluster = Cluster::of_node_processes(bucket, clock, leases.clone());
    let rt = Runtime::new_node(config, cluster.clone(), node)?;
    rt.admin().metrics().show_bucket_requests(counts);
    leases.start_renewing();
    Ok((
        Joined {
            cluster,
            leases,
            node: node.to_owned(),
            tokens,
        },
        rt,
    ))
}
