//! Why storage failed: each variant says what happened and what follows.

use crate::actor_db::OpenError;
use crate::address::ActorKey;
use crate::replica::ReplicaError;
use crate::sql_types::SqlError;

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
    #[error("reading the tombstone of {app}: {source}; the app's state is not known, try again")]
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
        /// Where the holder answers HTTP, when it is a node process that
        /// said: the dev server forwards a request there (ADR 028).
        address: Option<String>,
    },
    /// The bucket could not be read or written.
    #[error("{what}: {source}; the bucket may be unavailable for a moment, try again")]
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
    #[error("{what}: {source}; check that the data directory is writable and has free space")]
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
    /// The process had no open file left for the actor's database, even
    /// after the node closed the databases of its idle actors (ADR 055).
    #[error(
        "this node has no open file left for {key}'s database (its open-files limit is {}): try again shortly \
         (Retry-After says when); if it happens often, raise the limit (ulimit -n, LimitNOFILE=) or serve fewer \
         resident actors (--max-resident)",
        crate::open_files::describe(*limit)
    )]
    OutOfFiles {
        /// The actor.
        key: ActorKey,
        /// The process's open-files limit when it was read.
        limit: Option<u64>,
    },
    /// The database failed.
    #[error(transparent)]
    Sql(#[from] SqlError),
}

impl StorageError {
    /// Its kind, as answers name it.
    pub fn kind(&self) -> crate::failure_kind::FailureKind {
        use crate::failure_kind::FailureKind;
        match self {
            StorageError::AppDeleted { .. } => FailureKind::AppDeleted,
            StorageError::CutOff { .. } => FailureKind::CutOff,
            StorageError::HolderUnreachable { .. } => FailureKind::HolderUnreachable,
            StorageError::Bucket { .. } => FailureKind::Bucket,
            StorageError::NotAcknowledged { .. } => FailureKind::NotAcknowledged,
            StorageError::TombstoneUnreadable { .. } => FailureKind::TombstoneUnreadable,
            StorageError::RemovalUnfinished { .. } => FailureKind::RemovalUnfinished,
            StorageError::Files { .. } => FailureKind::Files,
            StorageError::OutOfFiles { .. } => FailureKind::Overloaded,
            StorageError::Sql(_) => FailureKind::Sql,
        }
    }

    /// The storage's error for `key`'s database that did not open.
    pub(crate) fn not_opened(key: &ActorKey, e: OpenError) -> Self {
        match e {
            OpenError::OutOfFiles { limit } => StorageError::OutOfFiles {
                key: key.clone(),
                limit,
            },
            OpenError::Sql(e) => StorageError::Sql(e),
        }
    }

    /// Whether a failed reset still deletes the actor: the removal began on
    /// disk and is finished before the next event (a single node). Otherwise
    /// the data stays and the actor is given up.
    pub(crate) fn delete_still_happens(&self) -> bool {
        matches!(self, StorageError::RemovalUnfinished { .. })
    }

    /// Whether a failed reset loses the event's writes: a cluster's reset
    /// that was not acknowledged (the next event restores what the bucket
    /// holds). A single node's failed removal keeps them, whether it began
    /// (it is finished before the next event) or not (nothing was removed,
    /// and the event's end tries the delete again: ADR 053).
    pub(crate) fn writes_lost(&self) -> bool {
        !matches!(
            self,
            StorageError::RemovalUnfinished { .. } | StorageError::Files { .. }
        )
    }
}
