//! The per-actor storage seam: where an actor's database comes from, what
//! makes its writes durable, and ADR 0028's reset. One implementation is
//! chosen when the runtime is built, and the event path never asks which:
//!
//! - [`single_node::SingleNodeStorage`]: the database files are the state; a
//!   delete removes them (ADR 003).
//! - [`cluster_node::ClusterStorage`]: the bucket's history is the state; the
//!   local database is a cache of its head, held through a
//!   [`crate::replica::Replica`] (ADR 006).
//!
//! Both run the contract in `contract.rs`.

pub(crate) mod cluster_node;
#[cfg(test)]
mod contract;
pub(crate) mod open_actor;
pub(crate) mod single_node;

pub(crate) use open_actor::OpenActor;

use crate::actor_db::ActorDb;
use crate::address::ActorKey;
use crate::deletion::{DeleteHow, DeletionStatus, parse_deletion_record};
use crate::replica::ReplicaError;
use crate::sql_types::SqlError;
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

/// Why storage failed. Each variant says what happened and what follows.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// This node is cut off from its cluster: nothing it holds is valid.
    #[error("node {node} is cut off from the cluster: send the event to another node")]
    CutOff {
        /// This node.
        node: String,
    },
    /// The app has a tombstone: nothing of it is acquired again (ADR 0028 §5).
    #[error("app {app} was deleted (at {at_ms} ms, by {by}): nothing of it is served")]
    AppDeleted {
        /// The app.
        app: String,
        /// When the tombstone was written.
        at_ms: u64,
        /// Who wrote it.
        by: String,
    },
    /// The app's tombstone could not be read: whether it is deleted is not known.
    #[error("reading the tombstone of {app}: {source}")]
    TombstoneUnreadable {
        /// The app.
        app: String,
        /// Why.
        #[source]
        source: crate::app_delete::AppDeleteError,
    },
    /// Another node holds the actor and cannot be reached.
    #[error("{key} is held by node {node}, which does not answer; retry once its hold lapses")]
    HolderUnreachable {
        /// The actor.
        key: ActorKey,
        /// The holder.
        node: String,
    },
    /// The bucket could not be read or written.
    #[error("{what}: {source}")]
    Bucket {
        /// What the host was doing.
        what: String,
        /// The bucket's or the replica's error.
        #[source]
        source: ReplicaError,
    },
    /// An upload was not acknowledged: it is not known to be durable (it may
    /// still land). The event's writes are not kept; the next event restores
    /// what the bucket holds.
    #[error("the bucket did not acknowledge the upload ({source})")]
    NotAcknowledged {
        /// Why.
        #[source]
        source: ReplicaError,
    },
    /// A local file operation failed.
    #[error("{what}: {source}")]
    Files {
        /// What the host was doing.
        what: String,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// Removing a deleted actor's files began and did not finish; the marker
    /// on disk makes the host finish it before the actor's next event.
    #[error(
        "{key} was deleted, but removing its files failed ({source}); the host finishes the removal before its next event"
    )]
    RemovalUnfinished {
        /// The actor.
        key: ActorKey,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// The database failed.
    #[error(transparent)]
    Sql(#[from] SqlError),
}

impl StorageError {
    /// Whether a failed reset still deletes the actor: the removal began on
    /// disk and is finished before the next event (a single node). Otherwise
    /// the data stays and the actor is given up.
    pub(crate) fn delete_still_happens(&self) -> bool {
        matches!(self, StorageError::RemovalUnfinished { .. })
    }
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
    fn db_path(&self, key: &ActorKey) -> PathBuf;

    /// Every actor with a local database, for listings.
    fn local_actors(&self) -> Vec<ActorKey>;
}

/// What differs between single node and cluster once an actor is open: the
/// per-actor half of the seam, owned by [`OpenActor`].
pub(crate) trait Holding: Send {
    /// After `exec-durable`: the database as it is now is made durable.
    ///
    /// # Errors
    /// Not acknowledged; the caller stops keeping this event's writes.
    fn durable_write(&mut self, db: &ActorDb) -> Result<(), StorageError>;

    /// At the end of an event whose writes are kept.
    ///
    /// # Errors
    /// As [`Holding::durable_write`]; the actor is then given up.
    fn end_event(&mut self, db: &ActorDb) -> Result<(), StorageError>;

    /// ADR 0028's reset: records the delete durably, the database already
    /// closed. `marks` go into the reset's empty database (when and how, and
    /// the last operator request carried out); `record` is the same `<ms> <how>`.
    ///
    /// # Errors
    /// The delete is not known to be durable.
    fn reset(&mut self, marks: &[(&str, &str)], record: &str) -> Result<(), StorageError>;

    /// After a recorded reset, in this order: the history before it erased
    /// (cluster; a failure there is counted, never fatal), the hold released,
    /// the local files removed.
    ///
    /// # Errors
    /// The local files could not be removed (retried before the next event).
    fn finish_delete(&mut self, record: &str) -> Result<(), StorageError>;

    /// Lets the actor go (hibernation): the hold is released.
    fn release(&mut self);

    /// Gives the actor up after a failure: the hold is forgotten without a
    /// write, and the local files are no longer taken for the head.
    fn give_up(&mut self);
}

/// Finishes a removal of the actor's local files that began and did not
/// finish (a failure, or a crash): the files go before the actor is used
/// again, never read as data. Returns how the actor was deleted, when this
/// finished a removal now.
///
/// # Errors
/// The removal failed again.
fn finish_unfinished_removal(files: &dyn StateStore, key: &ActorKey) -> Result<Option<DeleteHow>, StorageError> {
    if !files.removal_pending(key) {
        return Ok(None);
    }
    // The marker keeps the record of the first attempt.
    let record = files.pending_removal_record(key).unwrap_or_default();
    files
        .remove(key, &record)
        .map_err(|source| StorageError::RemovalUnfinished {
            key: key.clone(),
            source,
        })?;
    Ok(parse_deletion_record(&record).map(|(_, how)| how))
}
