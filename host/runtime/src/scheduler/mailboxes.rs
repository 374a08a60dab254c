//! Every actor's mailbox on one node, by key. The map's lock is held only
//! to find or list mailboxes, never while a mailbox's own lock is taken: a
//! mailbox may be held for a while (its database closing, ADR 045), and
//! a caller that lists them locks each after the map is let go.

use super::mailbox::Mailbox;
use crate::address::ActorKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The node's mailboxes.
#[derive(Default)]
pub(crate) struct Mailboxes {
    map: Mutex<HashMap<ActorKey, Arc<Mailbox>>>,
}

impl Mailboxes {
    fn map(&self) -> MutexGuard<'_, HashMap<ActorKey, Arc<Mailbox>>> {
        crate::unpoisoned::lock(&self.map)
    }

    /// `key`'s mailbox, made (for an actor not resident here) if it has none.
    pub(crate) fn of(&self, key: &ActorKey) -> Arc<Mailbox> {
        self.map()
            .entry(key.clone())
            .or_insert_with(|| Arc::new(Mailbox::new(key.clone())))
            .clone()
    }

    /// `key`'s mailbox, if it has one; makes none.
    pub(crate) fn get(&self, key: &ActorKey) -> Option<Arc<Mailbox>> {
        self.map().get(key).cloned()
    }

    /// Whether `key` has a mailbox here.
    pub(crate) fn contains(&self, key: &ActorKey) -> bool {
        self.map().contains_key(key)
    }

    /// Every mailbox, as it is now.
    pub(crate) fn all(&self) -> Vec<Arc<Mailbox>> {
        self.map().values().cloned().collect()
    }

    /// The keys of every mailbox, as they are now.
    pub(crate) fn keys(&self) -> Vec<ActorKey> {
        self.map().keys().cloned().collect()
    }
}
