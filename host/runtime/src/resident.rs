//! An actor resident on this node: its wasmtime store (with its imports'
//! state and its storage) and, once needed, its instance. The actor cell
//! (`actor_cell`) opens, lets go and deletes it.

use crate::bindings::Actor;
use crate::imports::HostState;
use crate::node::{Class, Host};
use std::sync::Arc;
use wasmtime::Store;

/// A resident actor: its store (with the database) and, once needed, its instance.
pub(crate) struct Resident {
    pub(crate) store: Store<HostState>,
    pub(crate) instance: Option<Actor>,
    /// The class the instance was made from: when `serve --watch` reloads
    /// it, the instance is replaced before its next event.
    pub(crate) class: Option<Arc<Class>>,
    /// The node's reload count when `class` was last known current.
    pub(crate) reloads_seen: u64,
}

impl Resident {
    /// Whether its instance comes from a class since replaced. One atomic
    /// load per event; the class is looked up only after some reload.
    pub(crate) fn class_replaced(&mut self, host: &Host, key: &crate::address::ActorKey) -> bool {
        let reloads = host.class_reloads();
        if reloads == self.reloads_seen {
            return false;
        }
        let replaced = match (&self.class, host.class(key)) {
            (Some(had), Ok(current)) => !Arc::ptr_eq(had, &current),
            _ => false,
        };
        self.reloads_seen = reloads;
        replaced
    }
}
