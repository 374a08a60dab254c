//! Cluster mode: emulated nodes in one process sharing a bucket, with
//! ownership records at generations (who holds an actor) and liveness.

use crate::address::ActorKey;
use crate::bucket::ObjectStore;
use crate::job::Job;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

/// What the nodes of one cluster share.
pub struct Cluster {
    bucket: Arc<dyn ObjectStore>,
    clock: Arc<dyn crate::clock::Clock>,
    /// Each node's mailboxes; a node whose runtime is gone is not live.
    nodes: Mutex<HashMap<String, Weak<dyn NodeMailboxes>>>,
    cut_off: Mutex<HashSet<String>>,
    alarms: Arc<dyn crate::alarm_index::AlarmIndex>,
    sockets: Arc<crate::sockets::SocketTable>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Cluster {
    /// A cluster over `bucket` on `clock`. Its nodes share the clock and one
    /// alarm index (an alarm is woken wherever its actor is held).
    pub fn new(bucket: Arc<dyn ObjectStore>, clock: Arc<dyn crate::clock::Clock>) -> Arc<Self> {
        Arc::new(Self {
            bucket,
            clock,
            nodes: Mutex::new(HashMap::new()),
            cut_off: Mutex::new(HashSet::new()),
            alarms: Arc::new(crate::alarm_index::MemoryAlarmIndex::default()),
            sockets: Arc::default(),
        })
    }

    /// The shared bucket.
    pub fn bucket(&self) -> &Arc<dyn ObjectStore> {
        &self.bucket
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

    pub(crate) fn join(&self, node: &str, mailboxes: Weak<dyn NodeMailboxes>) {
        lock(&self.nodes).insert(node.to_owned(), mailboxes);
        lock(&self.cut_off).remove(node);
    }

    /// Whether `node` runs and is reachable: its holds are valid only then.
    pub fn is_live(&self, node: &str) -> bool {
        // One lock at a time: never hold one while taking the other.
        let cut = lock(&self.cut_off).contains(node);
        !cut && lock(&self.nodes).get(node).is_some_and(|w| w.strong_count() > 0)
    }

    /// Cuts `node` off: from now on it holds nothing, and others may take its actors.
    pub fn cut_off(&self, node: &str) {
        lock(&self.cut_off).insert(node.to_owned());
    }

    /// The mailboxes of a live node, to send it an actor's event.
    pub(crate) fn node(&self, node: &str) -> Option<Arc<dyn NodeMailboxes>> {
        if !self.is_live(node) {
            return None;
        }
        lock(&self.nodes).get(node).and_then(Weak::upgrade)
    }

    /// The live nodes' ids.
    pub fn live_nodes(&self) -> Vec<String> {
        let all: Vec<String> = lock(&self.nodes).keys().cloned().collect();
        let mut v: Vec<String> = all.into_iter().filter(|n| self.is_live(n)).collect();
        v.sort();
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
