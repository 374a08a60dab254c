//! The storage a runtime is built with, and what opening an actor finds.

use super::error::StorageError;
use super::open_actor::OpenActor;
use crate::address::ActorKey;
use crate::deletion::DeletionStatus;
use crate::state_store::StateStore;
use std::path::PathBuf;

/// How an event may open an actor.
#[derive(Debug, Clone)]
pub(crate) enum OpenMode {
    /// Creating it if it does not exist (a guest event).
    Create,
    /// Only if it exists (host jobs, alarms).
    Existing,
    /// Idle expiry: only if its ownership record is exactly this version and
    /// names nobody (ADR 0028 §4); otherwise [`Opened::Absent`].
    Unchanged(crate::bucket::ETag),
}

/// What [`ActorStorage::open`] found.
pub(crate) enum Opened {
    /// This node holds the actor now, its database open.
    Here(Box<OpenActor>),
    /// It does not exist and was not created.
    Absent,
    /// Another live node holds it: the event goes to that node.
    Elsewhere(String),
}

/// Where actors' durable state lives, chosen once when the runtime is built.
pub(crate) trait ActorStorage: Send + Sync + 'static {
    /// Takes the actor on this node and opens its database: finishes a removal
    /// left unfinished, then (cluster) acquires and restores the head, or
    /// says who holds it.
    ///
    /// # Errors
    /// The actor cannot be taken now (see [`StorageError`]); nothing is held then.
    fn open(&self, key: &ActorKey, mode: OpenMode) -> Result<Opened, StorageError>;

    /// Whether the actor exists: files (a single node) or history (a cluster).
    ///
    /// # Errors
    /// The answer is not known (a listing failed): never read that as "absent".
    fn exists(&self, key: &ActorKey) -> Result<bool, StorageError>;

    /// Whether the actor was deleted, from positive evidence only.
    fn deletion_status(&self, key: &ActorKey) -> DeletionStatus;

    /// The local database's path (a cache of the head in a cluster).
    fn db_path(&self, key: &ActorKey) -> PathBuf {
        self.local_files().db_path(key)
    }

    /// Every actor with a local database, for listings.
    fn local_actors(&self) -> Vec<ActorKey> {
        self.local_files().list()
    }

    /// Whether this node may serve its actors: false once a cluster node is
    /// cut off (it holds nothing, even what it still has resident). A
    /// single node always may.
    fn serving(&self) -> bool {
        true
    }

    /// Cuts this node off from its cluster (the `cut-off-after-answer`
    /// fault): from now on it holds nothing. A single node has no cluster:
    /// nothing happens, and the answer is false.
    fn cut_off_this_node(&self) -> bool {
        false
    }

    /// Removes an actor whose database cannot even be opened (it is
    /// damaged), leaving `record` as the deletion's record; true if this
    /// storage did. A cluster does not: its actor is the bucket's head, and a
    /// damaged local copy is replaced when the actor is next restored.
    ///
    /// # Errors
    /// The files could not all be removed (the removal finishes before the
    /// actor's next use).
    fn remove_unopenable(&self, key: &ActorKey, record: &str) -> Result<bool, StorageError> {
        let _ = (key, record);
        Ok(false)
    }

    /// Sets how long `app`'s history keeps every state restorable (its
    /// manifest's `retention`, ADR 064). A single node keeps no history.
    fn set_retention(&self, app: &str, window: std::time::Duration) {
        let _ = (app, window);
    }

    /// The local database files (the state on one node, a cache in a cluster).
    fn local_files(&self) -> &dyn StateStore;
}
