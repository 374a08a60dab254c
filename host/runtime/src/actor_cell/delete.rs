//! ADR 0028 §1, the one delete routine, for `delete-self`,
//! `delete-self-durable`, the operator delete and idle expiry.

use super::ActorCell;
use crate::deletion::DeleteHow;
use crate::metrics::{DELETE_FAILURES_TOTAL, DELETES_TOTAL};
use crate::storage::StorageError;

/// Why a delete was not recorded (its data stays).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeleteError {
    /// The routine ran for an actor that is not resident: a host bug.
    #[error("host bug: the delete ran for an actor that is not resident")]
    NotResident,
    /// The reset was not recorded; the actor was given up.
    #[error(transparent)]
    NotRecorded(#[from] StorageError),
}

impl From<DeleteError> for crate::error::RuntimeError {
    fn from(e: DeleteError) -> Self {
        match e {
            DeleteError::NotResident => crate::error::RuntimeError::host(e.to_string()),
            DeleteError::NotRecorded(e) => crate::error::RuntimeError::Storage(Box::new(e)),
        }
    }
}

impl ActorCell {
    /// The reset (unless the event already recorded it), then the history
    /// collected, the hold released and the local files removed, then
    /// sockets closed with 1000 "actor deleted", the alarm forgotten and the
    /// actor marked deleted. A reset that fails gives the actor up and its
    /// data stays, unless the removal is already under way on disk (a single
    /// node): that finishes before the next event.
    ///
    /// # Errors
    /// The delete was not recorded; the data stays.
    pub(crate) fn delete(&mut self, how: DeleteHow) -> Result<(), DeleteError> {
        let host = &self.host;
        let key = &self.mailbox.key;
        let Some(r) = self.resident.as_mut() else {
            return Err(DeleteError::NotResident);
        };
        let now = host.clock().now_ms();
        let actor = &mut r.store.data_mut().actor;
        let mut files_removed = true;
        if !actor.deleted_in_event() {
            match actor.reset(how, now) {
                Ok(()) => host.metrics().inc(DELETES_TOTAL, how.label()),
                Err(e) if e.delete_still_happens() => {
                    host.metrics().inc(DELETE_FAILURES_TOTAL, how.label());
                    tracing::error!(actor = %key, "{e}");
                    files_removed = false;
                }
                Err(e) => {
                    host.metrics().inc(DELETE_FAILURES_TOTAL, how.label());
                    tracing::warn!(actor = %key, "the delete ({}) was not recorded ({e}); the data stays", how.label());
                    self.give_up();
                    return Err(e.into());
                }
            }
        }
        if let Some(r) = self.resident.take() {
            let actor = r.store.into_data().actor;
            if files_removed && let Err(e) = actor.finish_delete(how, now) {
                tracing::error!(actor = %key, "{e}");
                files_removed = false;
            }
        }
        self.mark_deleted(files_removed);
        Ok(())
    }

    /// The end of any delete: socket events queued for the deleted actor run
    /// no guest code from here, its sockets are closed, its alarm is
    /// forgotten once its files are gone, and it is marked deleted.
    pub(super) fn mark_deleted(&self, files_removed: bool) {
        let key = &self.mailbox.key;
        self.mailbox.next_generation();
        self.host.close_sockets_of_deleted(key);
        if files_removed {
            let _ = self.host.alarms().remove(key);
        }
        self.mailbox.deleted();
    }
}
