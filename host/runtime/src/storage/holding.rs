//! The per-actor half of the seam: what differs between a single node and a
//! cluster once an actor is open. [`super::OpenActor`] owns one.

use super::error::StorageError;
use crate::actor_db::ActorDb;

/// What differs between single node and cluster once an actor is open: the
/// per-actor half of the seam, owned by [`OpenActor`].
pub(crate) trait Holding: Send {
    /// The database opened again after it rested (ADR 045): what the
    /// holding set on the connection when it first opened, set again.
    ///
    /// # Errors
    /// SQLite refused; the actor is let go and opened afresh.
    fn reopened(&mut self, _db: &ActorDb) -> Result<(), crate::sql_types::SqlError> {
        Ok(())
    }

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

    /// Puts the state at `to` on the head at a new position and makes it
    /// the local database, which is closed (ADR 064). Returns what it did
    /// and the restored state's alarm. A single node keeps no history.
    ///
    /// # Errors
    /// `BadArgument` where no history is kept, or for a target refused
    /// (before a delete, or no state then); `Event` when the history failed.
    fn restore(
        &mut self,
        to: crate::replica::Target,
    ) -> Result<(crate::job::Restored, Option<u64>), crate::error::RuntimeError> {
        let _ = to;
        Err(crate::error::RuntimeError::BadArgument(
            "this actor cannot be restored: its node keeps no history".into(),
        ))
    }

    /// The position of the state as it is now, as a bookmark (ADR 064):
    /// what the event wrote so far is made durable first, as
    /// [`Holding::durable_write`] does. `None` where no history is kept.
    ///
    /// # Errors
    /// As [`Holding::durable_write`].
    fn current_bookmark(&mut self, db: &ActorDb) -> Result<Option<String>, StorageError> {
        let _ = db;
        Ok(None)
    }

    /// The bookmark of the last state written at or before `at_ms`;
    /// `Ok(None)` where no state was (or no history is kept).
    ///
    /// # Errors
    /// The history could not be listed.
    fn bookmark_for_time(&mut self, at_ms: u64) -> Result<Option<String>, StorageError> {
        let _ = at_ms;
        Ok(None)
    }

    /// Whether this storage keeps a history to restore from.
    fn keeps_history(&self) -> bool {
        false
    }

    /// Lets the actor go (hibernation): the hold is released.
    fn release(&mut self);

    /// Gives the actor up after a failure: the hold is forgotten without a
    /// write, and the local files are no longer taken for the head.
    fn give_up(&mut self);
}
