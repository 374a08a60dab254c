//! An actor this node holds, its database open: the one place that knows
//! what state the database is in within an event and whether the event's
//! writes are still kept. ADR 0028's reset is written here once, for
//! `delete-self`, `delete-self-durable`, the operator delete and idle expiry.

use super::error::StorageError;
use super::holding::Holding;
use crate::actor_db::{ActorDb, GuestSettings, META_DELETED, OpenError};
use crate::address::ActorKey;
use crate::deletion::DeleteHow;
use crate::operator::META_OPERATOR_DELETE;
use crate::sql_types::{SqlError, refusals};
use std::path::PathBuf;

/// The database as the current event may use it.
#[derive(Debug)]
enum DbState {
    /// Open and usable (boxed: the other states are small).
    Open(Box<ActorDb>),
    /// Closed while the actor waits for its next event, the hold kept: its
    /// files and the connection's memory given back (ADR 045). The next job
    /// opens it again from this path, with the guest's settings, before it runs.
    Resting(PathBuf, GuestSettings),
    /// A reset recorded the delete in this event.
    DeletedInEvent,
    /// A reset failed in this event: closed, files (or history) maybe still there.
    ClosedByFailedDelete,
    /// Closed for a restore, which replaced the file (ADR 064); the actor
    /// is let go after it.
    ClosedForRestore,
}

/// Where the actor's durable state stands in the current event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// As usual: the event's writes are kept when it ends.
    Kept,
    /// A reset recorded the delete: the event ends by finishing it.
    ResetRecorded,
    /// An upload was not acknowledged (cluster): the event's writes are not
    /// kept, and the next event restores what the bucket holds.
    WritesLost,
}

/// An actor held by this node with its database open.
pub(crate) struct OpenActor {
    key: ActorKey,
    db: DbState,
    holding: Box<dyn Holding>,
    durability: Durability,
    /// The deletion record (`<ms> <how>`) its database carries, read when it opened.
    previous_deletion: Option<String>,
    /// The last operator delete request carried out on this address (`<T> <id>`),
    /// read when it opened; every reset carries it over (ADR 0028 §3).
    operator_marker: Option<String>,
}

impl OpenActor {
    /// Wraps a database that `holding` holds.
    pub(crate) fn new(key: ActorKey, db: ActorDb, holding: Box<dyn Holding>) -> Self {
        Self {
            previous_deletion: db.meta_get(META_DELETED).ok().flatten(),
            operator_marker: db.meta_get(META_OPERATOR_DELETE).ok().flatten(),
            key,
            db: DbState::Open(Box::new(db)),
            holding,
            durability: Durability::Kept,
        }
    }

    /// The database, or why this event may not use it.
    ///
    /// # Errors
    /// `not-allowed` after a reset in this event (recorded or failed).
    pub(crate) fn db(&self) -> Result<&ActorDb, SqlError> {
        match &self.db {
            DbState::Open(db) => Ok(db),
            DbState::DeletedInEvent => Err(SqlError::NotAllowed(refusals::DELETED_IN_EVENT.into())),
            DbState::ClosedByFailedDelete => Err(SqlError::NotAllowed(refusals::CLOSED_BY_FAILED_DELETE.into())),
            DbState::ClosedForRestore => Err(SqlError::Internal(
                "the actor's database was restored in this job".into(),
            )),
            // The cell opens a resting database before any job that uses it.
            DbState::Resting(..) => Err(SqlError::Internal("the actor's database was not reopened".into())),
        }
    }

    /// The database if it is open.
    pub(crate) fn open_db(&self) -> Option<&ActorDb> {
        match &self.db {
            DbState::Open(db) => Some(db),
            DbState::DeletedInEvent
            | DbState::ClosedByFailedDelete
            | DbState::ClosedForRestore
            | DbState::Resting(..) => None,
        }
    }

    /// The actor waits for its next event: closes the database (folding the
    /// WAL into it) and keeps the hold, so an idle resident actor holds no
    /// file and none of SQLite's memory (ADR 045). Returns whether it closed
    /// it: one whose path is unknown, or whose guest set what a new
    /// connection could not be given again, stays open.
    pub(crate) fn rest(&mut self) -> bool {
        let DbState::Open(db) = &self.db else { return false };
        let (Some(path), Some(settings)) = (db.path(), db.guest_settings()) else {
            return false;
        };
        if let DbState::Open(db) = std::mem::replace(&mut self.db, DbState::Resting(path, settings)) {
            db.rollback_if_open();
            if let Err(e) = db.close() {
                tracing::warn!(actor = %self.key, "closing the database of an idle actor: {e}");
            }
        }
        true
    }

    /// Opens a resting database again, with the quota and the guest's
    /// settings it had; nothing when it is not resting. A file that went
    /// away is not created again empty.
    ///
    /// # Errors
    /// The file is gone, the process had no open file left, or SQLite could
    /// not open it or set it up: the database stays resting, and the caller
    /// lets the actor go so that the next open starts over (in a cluster,
    /// from the bucket).
    pub(crate) fn wake(&mut self, quota_bytes: u64) -> Result<(), OpenError> {
        let DbState::Resting(path, settings) = &self.db else {
            return Ok(());
        };
        let db = ActorDb::open_existing(path)?;
        db.set_quota(quota_bytes)?;
        db.restore_guest_settings(*settings)?;
        self.holding.reopened(&db)?;
        self.db = DbState::Open(Box::new(db));
        Ok(())
    }

    /// Whether a reset recorded the delete in this event.
    pub(crate) fn deleted_in_event(&self) -> bool {
        matches!(self.db, DbState::DeletedInEvent)
    }

    /// Where the event's durable state stands.
    pub(crate) fn durability(&self) -> Durability {
        self.durability
    }

    /// The record of the address's previous deletion, if its database carries one.
    pub(crate) fn previous_deletion(&self) -> Option<&str> {
        self.previous_deletion.as_deref()
    }

    /// The last operator delete request carried out on this address.
    pub(crate) fn operator_marker(&self) -> Option<&str> {
        self.operator_marker.as_deref()
    }

    /// The marker the next reset carries (an operator delete sets it first).
    pub(crate) fn set_operator_marker(&mut self, marker: String) {
        self.operator_marker = Some(marker);
    }

    /// After `exec-durable`: the database made durable now.
    ///
    /// # Errors
    /// Not acknowledged: from now on the event's writes are not kept.
    pub(crate) fn durable_write(&mut self) -> Result<(), StorageError> {
        let DbState::Open(db) = &self.db else { return Ok(()) };
        let r = self.holding.durable_write(db);
        if r.is_err() {
            self.durability = Durability::WritesLost;
        }
        r
    }

    /// The bookmark of the state as it is now (ADR 064), what the event
    /// wrote so far made durable first; `None` where no history is kept.
    ///
    /// # Errors
    /// Not acknowledged: from now on the event's writes are not kept.
    pub(crate) fn current_bookmark(&mut self) -> Result<Option<String>, StorageError> {
        let DbState::Open(db) = &self.db else { return Ok(None) };
        let r = self.holding.current_bookmark(db);
        // Only an upload not acknowledged loses the event's writes; a single
        // node's history that could not be read leaves them kept.
        if matches!(r, Err(StorageError::NotAcknowledged { .. })) {
            self.durability = Durability::WritesLost;
        }
        r
    }

    /// The bookmark of the last state written at or before `at_ms` (ADR 064).
    ///
    /// # Errors
    /// The history could not be listed.
    pub(crate) fn bookmark_for_time(&mut self, at_ms: u64) -> Result<Option<String>, StorageError> {
        self.holding.bookmark_for_time(at_ms)
    }

    /// Whether the actor's storage keeps a history to restore from.
    pub(crate) fn keeps_history(&self) -> bool {
        self.holding.keeps_history()
    }

    /// At the end of an event whose writes are kept.
    ///
    /// # Errors
    /// Not acknowledged: the caller gives the actor up.
    pub(crate) fn end_event(&mut self) -> Result<(), StorageError> {
        let DbState::Open(db) = &self.db else { return Ok(()) };
        self.holding.end_event(db)
    }

    /// ADR 0028's reset, the one routine: the database closed, then the delete
    /// recorded durably, carrying when and how and the operator marker. A
    /// retry after a failure is safe. On failure the database stays closed for
    /// the event; unless the removal is already under way on disk, the event's
    /// writes are not kept either.
    ///
    /// # Errors
    /// The delete is not known to be durable.
    pub(crate) fn reset(&mut self, how: DeleteHow, now_ms: u64) -> Result<(), StorageError> {
        if let DbState::Open(db) = std::mem::replace(&mut self.db, DbState::ClosedByFailedDelete) {
            db.rollback_if_open();
            // A failure to close still leaves files to remove.
            if let Err(e) = db.close_for_delete() {
                tracing::warn!(actor = %self.key, "closing before a delete: {e}");
            }
        }
        let record = how.record(now_ms);
        let mut marks = vec![(META_DELETED, record.as_str())];
        if let Some(m) = &self.operator_marker {
            // A request left behind never deletes an actor created after it ran.
            marks.push((META_OPERATOR_DELETE, m.as_str()));
        }
        match self.holding.reset(&marks, &record) {
            Ok(()) => {
                self.db = DbState::DeletedInEvent;
                self.durability = Durability::ResetRecorded;
                Ok(())
            }
            Err(e) => {
                if e.writes_lost() {
                    self.durability = Durability::WritesLost;
                }
                Err(e)
            }
        }
    }

    /// After a recorded reset: the history collected (cluster), the hold
    /// released, the local files removed.
    ///
    /// # Errors
    /// The local files could not be removed; the host finishes that before the
    /// actor's next event.
    pub(crate) fn finish_delete(mut self, how: DeleteHow, now_ms: u64) -> Result<(), StorageError> {
        self.holding.finish_delete(&how.record(now_ms))
    }

    /// A restore (ADR 064): the database closed, then the state at `to` put
    /// on the head and made the local copy. Returns what it did and the
    /// restored state's alarm; the caller lets the actor go after it.
    ///
    /// # Errors
    /// As [`Holding::restore`].
    pub(crate) fn restore(
        &mut self,
        to: crate::replica::Target,
    ) -> Result<(crate::job::Restored, Option<u64>), crate::error::RuntimeError> {
        if let DbState::Open(db) = std::mem::replace(&mut self.db, DbState::ClosedForRestore) {
            db.rollback_if_open();
            if let Err(e) = db.close() {
                tracing::warn!(actor = %self.key, "closing before a restore: {e}");
            }
        }
        self.holding.restore(to)
    }

    /// Hibernation: the database closed (an open transaction rolled back) and the hold released.
    pub(crate) fn release(mut self) {
        self.close();
        self.holding.release();
    }

    /// After a failure: the database closed and the hold forgotten; the next
    /// event restores what the bucket holds (cluster).
    pub(crate) fn give_up(mut self) {
        self.close();
        self.holding.give_up();
    }

    fn close(&mut self) {
        if let DbState::Open(db) = std::mem::replace(&mut self.db, DbState::ClosedByFailedDelete) {
            db.rollback_if_open();
            if let Err(e) = db.close() {
                tracing::warn!(actor = %self.key, "{e}");
            }
        }
    }
}
