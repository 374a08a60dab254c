//! What the dashboard's routes share: the host, the app this server serves,
//! and the other nodes of its local cluster.

use wasmkeep_host::{ActorKey, LastEvent, Runtime};

/// The dashboard routes' state.
#[derive(Clone)]
pub(crate) struct DashCtx {
    pub rt: Runtime,
    pub app: String,
    /// The counters over the last minutes.
    pub metrics: super::metrics_history::MetricsHistory,
    /// Every node of this node's cluster when one process serves them all
    /// (`serve --nodes N`), for who holds what; empty otherwise.
    pub cluster: Vec<Runtime>,
}

impl DashCtx {
    /// This state aimed at `node` of the local cluster (the page asks the
    /// node that holds the actor it shows), or at this node when `node` is
    /// none or not one of the cluster's.
    pub(crate) fn on(mut self, node: Option<&str>) -> Self {
        if let Some(rt) = node.and_then(|n| self.cluster.iter().find(|r| r.node_id() == Some(n))) {
            self.rt = rt.clone();
        }
        self
    }

    /// The actor's last event: the newest any node of the local cluster ran
    /// (each node records the events it ran), or this node's.
    pub(crate) fn last_event(&self, key: &ActorKey) -> Option<LastEvent> {
        let nodes = if self.cluster.is_empty() {
            std::slice::from_ref(&self.rt)
        } else {
            &self.cluster[..]
        };
        nodes
            .iter()
            .filter_map(|rt| rt.admin().last_event(key))
            .reduce(|a, b| if b.is_newer_than(&a) { b } else { a })
    }

    /// The actor `class`/`name` of this server's app.
    pub(crate) fn key(&self, class: String, name: String) -> ActorKey {
        ActorKey::new(self.app.clone(), class, name)
    }
}
