//! Cluster mode: nodes sharing a bucket, with ownership records at
//! generations (who holds an actor) and liveness, chosen at start-up: nodes
//! of one process, or node processes holding leases in the bucket
//! (docs/adr/028-node-processes.md).

use crate::address::ActorKey;
use crate::bucket::ObjectStore;
use crate::job::Job;
use crate::liveness::{InProcessLiveness, Liveness, LivenessError};
use crate::unpoisoned::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// What the nodes of one cluster share.
pub struct Cluster {
    bucket: Arc<dyn ObjectStore>,
    clock: Arc<dyn crate::clock::Clock>,
    /// The mailboxes of this process's nodes; one whose runtime is gone is not live.
    nodes: Mutex<HashMap<String, Weak<dyn NodeMailboxes>>>,
    liveness: Arc<dyn Liveness>,
    alarms: Arc<dyn crate::alarm_index::AlarmIndex>,
    sockets: Arc<crate::sockets::SocketTable>,
    /// A rule broken on purpose, for the process simulation (never set
    /// outside tests; ADR 031).
    broken: Mutex<Option<crate::replica::Broken>>,
}

impl Cluster {
    /// A cluster over `bucket` on `clock`. Its nodes share the clock and one
    /// alarm index (an alarm is woken wherever its actor is held).
    pub fn new(bucket: Arc<dyn ObjectStore>, clock: Arc<dyn crate::clock::Clock>) -> Arc<Self> {
        Self::with_liveness(bucket, clock, Arc::new(InProcessLiveness::default()))
    }

    /// A cluster over `bucket` on `clock` whose nodes are live as `liveness`
    /// says: [`InProcessLiveness`] for nodes of this process, or
    /// [`crate::node_lease::BucketLeases`] for node processes.
    pub fn with_liveness(
        bucket: Arc<dyn ObjectStore>,
        clock: Arc<dyn crate::clock::Clock>,
        liveness: Arc<dyn Liveness>,
    ) -> Arc<Self> {
        let alarms = Arc::new(crate::alarm_index::MemoryAlarmIndex::default());
        Self::from_parts(bucket, clock, liveness, alarms)
    }

    /// The cluster of node processes: live by `liveness` (their leases), and
    /// with the alarm index in the bucket, so that any node wakes an alarm
    /// whose actor's holder died (docs/adr/028-node-processes.md).
    pub fn of_node_processes(
        bucket: Arc<dyn ObjectStore>,
        clock: Arc<dyn crate::clock::Clock>,
        liveness: Arc<dyn Liveness>,
    ) -> Arc<Self> {
        let alarms = Arc::new(crate::bucket_alarm_index::BucketAlarmIndex::new(bucket.clone()));
        Self::from_parts(bucket, clock, liveness, alarms)
    }

    fn from_parts(
        bucket: Arc<dyn ObjectStore>,
        clock: Arc<dyn crate::clock::Clock>,
        liveness: Arc<dyn Liveness>,
        alarms: Arc<dyn crate::alarm_index::AlarmIndex>,
    ) -> Arc<Self> {
        Arc::new(Self {
            bucket,
            clock,
            nodes: Mutex::new(HashMap::new()),
            liveness,
            alarms,
            sockets: Arc::default(),
            broken: Mutex::new(None),
        })
    }

    /// The shared bucket.
    pub fn bucket(&self) -> &Arc<dyn ObjectStore> {
        &self.bucket
    }

    /// Breaks a replica rule on every node of this cluster from now on: the
    /// process simulation's proof that it catches a broken fence (ADR 031).
    /// Never set outside tests.
    #[doc(hidden)]
    pub fn break_for_tests(&self, broken: crate::replica::Broken) {
        *lock(&self.broken) = Some(broken);
    }

    pub(crate) fn broken(&self) -> Option<crate::replica::Broken> {
        *lock(&self.broken)
    }

    /// The cluster's clock.
    pub fn clock(&self) -> &Arc<dyn crate::clock::Clock> {
        &self.clock
    }

    pub(crate) fn sockets(&self) -> Arc<crate::sockets::SocketTable> {
        self.sockets.clone()
    }

    pub(crate) fn alarms(&self) -> Arc<dyn crate::alarm_index::AlarmIndex> {
        self.alarms.clone()
    }

    pub(crate) fn join(&self, node: &str, mailboxes: Weak<dyn NodeMailboxes>) -> Result<(), LivenessError> {
        self.liveness.join(node)?;
        lock(&self.nodes).insert(node.to_owned(), mailboxes);
        Ok(())
    }

    /// `node` of this process stopped in order (its actors released): not
    /// live any more, so others take its actors at once.
    pub fn leave(&self, node: &str) {
        self.liveness.leave(node);
    }

    /// Whether `node` runs and is reachable: its holds are valid only then.
    pub fn is_live(&self, node: &str) -> bool {
        // A node of this process whose runtime is gone is not live, whatever its lease says.
        let gone = lock(&self.nodes).get(node).is_some_and(|w| w.strong_count() == 0);
        !gone && self.liveness.is_live(node)
    }

    /// Cuts `node` off: from now on it holds nothing, and others may take its actors.
    pub fn cut_off(&self, node: &str) {
        self.liveness.cut_off(node);
    }

    /// Where `node` answers HTTP, when it is a live node of another process
    /// that advertised an address: an event for an actor it holds is
    /// forwarded there.
    pub fn address(&self, node: &str) -> Option<String> {
        self.liveness.address(node)
    }

    /// The epoch `node` of this process holds its lease at, among node
    /// processes (`None` for nodes of one process).
    pub fn epoch(&self, node: &str) -> Option<u64> {
        self.liveness.epoch(node)
    }

    /// The mailboxes of a live node, to send it an actor's event.
    pub(crate) fn node(&self, node: &str) -> Option<Arc<dyn NodeMailboxes>> {
        if !self.is_live(node) {
            return None;
        }
        lock(&self.nodes).get(node).and_then(Weak::upgrade)
    }

    /// Whether `node` runs the control pass and idle expiry: the lowest live
    /// id in one process, the control lease's holder among node processes.
    pub fn leads(&self, node: &str) -> bool {
        self.is_live(node) && self.liveness.leads(node, &self.live_nodes())
    }

    /// The live nodes' ids, sorted.
    pub fn live_nodes(&self) -> Vec<String> {
        let mut v = self.liveness.live_nodes();
        v.retain(|n| self.is_live(n));
        v
    }
}

/// How a node is reached: it takes an event into the mailbox of one of its
/// actors. The directory holds this, never another node's runtime.
pub(crate) trait NodeMailboxes: Send + Sync {
    /// Queues `job` for `key` on this node.
    fn deliver(&self, key: &ActorKey, job: Job);
}

/// A runtime's place in a cluster: the cluster, its node id, and the bucket
/// as this node reaches it (through its own faults).
pub(crate) struct ClusterNode {
    pub(crate) cluster: Arc<Cluster>,
    pub(crate) node: String,
    pub(crate) bucket: Arc<dyn ObjectStore>,
}

impl ClusterNode {
    /// The bucket without the injected faults, for the host's own records
    /// (heartbeats, operator requests' bookkeeping). A fault armed for "the
    /// next upload" or "the next erase" is for an actor's; a pass that runs
    /// in between (every second on a node process) must not take it.
    pub(crate) fn records_bucket(&self) -> &Arc<dyn ObjectStore> {
        self.cluster.bucket()
    }
}
