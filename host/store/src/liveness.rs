//! Which nodes of a cluster are live, chosen once at start-up: nodes in one
//! process ([`InProcessLiveness`], `serve --nodes N` and every test host) or
//! node processes holding leases in the bucket ([`crate::node_lease::BucketLeases`],
//! `serve --node-id`). A node's holds are valid only while it is live
//! (ADR 006); what refuses a node that stopped being live is the ownership
//! record's condition, not this answer (docs/adr/028-node-processes.md).

use std::collections::HashSet;
use std::sync::Mutex;

/// Why a node could not join.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LivenessError {
    /// The bucket failed while the node's lease was taken.
    #[error("the lease of node {node} could not be taken: {source}")]
    Lease {
        /// The node.
        node: String,
        /// What the bucket said.
        source: crate::bucket::BucketError,
    },
}

/// The cluster's view of its nodes.
pub trait Liveness: Send + Sync {
    /// `node` is live from now (a node that was cut off is live again).
    ///
    /// # Errors
    /// The node could not be made live (its lease could not be taken).
    fn join(&self, node: &str) -> Result<(), LivenessError>;
    /// Whether `node` is live: its holds are valid only then.
    fn is_live(&self, node: &str) -> bool;
    /// `node` is not live from now on; others may take its actors.
    fn cut_off(&self, node: &str);
    /// `node` stops in order (its actors were released): not live any more.
    fn leave(&self, node: &str);
    /// The live nodes' ids, sorted.
    fn live_nodes(&self) -> Vec<String>;
    /// Where a live node answers HTTP (`http://host:port`), if it said.
    fn address(&self, node: &str) -> Option<String>;
    /// The epoch this process holds `node` at, when its liveness is a lease
    /// in the bucket that others read (node processes); `None` for nodes of
    /// one process, whom nobody outside it can see.
    fn epoch(&self, _node: &str) -> Option<u64> {
        None
    }
    /// Whether `node` runs the cluster's control pass and idle expiry now:
    /// one node at a time. By default the lowest of `live_nodes` (the
    /// cluster's live nodes, sorted; ADR 008).
    fn leads(&self, node: &str, live_nodes: &[String]) -> bool {
        live_nodes.first().map(String::as_str) == Some(node)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Nodes of one process: live from joining until cut off or gone.
#[derive(Default)]
pub struct InProcessLiveness {
    joined: Mutex<HashSet<String>>,
    cut_off: Mutex<HashSet<String>>,
}

impl Liveness for InProcessLiveness {
    fn join(&self, node: &str) -> Result<(), LivenessError> {
        lock(&self.joined).insert(node.to_owned());
        lock(&self.cut_off).remove(node);
        Ok(())
    }

    fn is_live(&self, node: &str) -> bool {
        // One lock at a time: never hold one while taking the other.
        let cut = lock(&self.cut_off).contains(node);
        !cut && lock(&self.joined).contains(node)
    }

    fn cut_off(&self, node: &str) {
        lock(&self.cut_off).insert(node.to_owned());
    }

    fn leave(&self, node: &str) {
        lock(&self.joined).remove(node);
    }

    fn live_nodes(&self) -> Vec<String> {
        let all: Vec<String> = lock(&self.joined).iter().cloned().collect();
        let mut v: Vec<String> = all.into_iter().filter(|n| self.is_live(n)).collect();
        v.sort();
        v
    }

    fn address(&self, _node: &str) -> Option<String> {
        None
    }
}

/// The contract every [`Liveness`] passes.
#[cfg(any(test, feature = "contract-tests"))]
pub mod contract {
    use super::Liveness;

    /// Joining, cutting off, leaving and joining again, over nodes `a`, `b`
    /// and `c` (none joined before).
    ///
    /// # Panics
    /// Where `l` breaks the contract.
    pub fn check(l: &dyn Liveness) {
        assert!(!l.is_live("a"), "a node that never joined is not live");
        assert!(l.live_nodes().is_empty(), "nobody is live yet: {:?}", l.live_nodes());
        l.join("b").expect("join b");
        l.join("a").expect("join a");
        assert!(l.is_live("a") && l.is_live("b"), "joined nodes are live");
        assert_eq!(l.live_nodes(), ["a", "b"], "live nodes, sorted");
        l.cut_off("a");
        assert!(!l.is_live("a"), "a node cut off is not live");
        assert!(l.is_live("b"), "cutting one off leaves the others live");
        assert_eq!(l.live_nodes(), ["b"]);
        l.join("a").expect("join a again");
        assert!(l.is_live("a"), "a node that joins again is live again");
        l.join("c").expect("join c");
        l.leave("c");
        assert!(!l.is_live("c"), "a node that left is not live");
        assert_eq!(l.live_nodes(), ["a", "b"]);
        let live = l.live_nodes();
        let leaders: Vec<&str> = ["a", "b", "c"].into_iter().filter(|n| l.leads(n, &live)).collect();
        assert_eq!(leaders.len(), 1, "exactly one live node leads: {leaders:?}");
        assert!(l.is_live(leaders[0]), "and it is live");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_process_liveness_meets_the_contract() {
        contract::check(&InProcessLiveness::default());
    }
}
