//! What the dashboard's routes share: the host, the app this server serves,
//! and the last events the server saw.

use super::activity::Activity;
use wasmkeep_host::{ActorKey, Runtime};

/// The dashboard routes' state.
#[derive(Clone)]
pub(crate) struct DashCtx {
    pub rt: Runtime,
    pub app: String,
    pub activity: Activity,
    /// Every node of this node's cluster when one process serves them all
    /// (`serve --nodes N`), for who holds what; empty otherwise.
    pub cluster: Vec<Runtime>,
}

impl DashCtx {
    /// The actor `class`/`name` of this server's app.
    pub(crate) fn key(&self, class: String, name: String) -> ActorKey {
        ActorKey::new(self.app.clone(), class, name)
    }
}
