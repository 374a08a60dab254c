//! A removal of an actor's local files left unfinished (a failure, or a
//! crash): both storages finish it before the actor is used again.

use super::error::StorageError;
use crate::address::ActorKey;
use crate::deletion::{DeleteHow, parse_deletion_record};
use crate::state_store::StateStore;

/// Finishes a removal of the actor's local files that began and did not
/// finish (a failure, or a crash): the files go before the actor is used
/// again, never read as data. Returns how the actor was deleted, when this
/// finished a removal now.
///
/// # Errors
/// The removal failed again.
pub(crate) fn finish_unfinished_removal(
    files: &dyn StateStore,
    key: &ActorKey,
) -> Result<Option<DeleteHow>, StorageError> {
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

/// The error of a failed removal of the actor's files: unfinished when the
/// removal began on disk (the host finishes it before the next event, so the
/// delete still happens), otherwise a file error, and the data stays.
pub(crate) fn removal_failed(files: &dyn StateStore, key: &ActorKey, source: std::io::Error) -> StorageError {
    if files.removal_pending(key) {
        StorageError::RemovalUnfinished {
            key: key.clone(),
            source,
        }
    } else {
        StorageError::Files {
            what: format!("removing the files of {key} (none was removed; the actor keeps its data)"),
            source,
        }
    }
}
