//! What every restore does once its history put the state on the head
//! (ADR 064): the actor's database becomes the restored image, its alarm is
//! read back for the index, and the replica's refusals become the API's kinds.

use crate::actor_db::{ActorDb, META_ALARM};
use crate::address::ActorKey;
use crate::error::RuntimeError;
use crate::failure_kind::FailureKind;
use crate::history_chain::ChainError;
use crate::replica::ReplicaError;
use std::path::{Path, PathBuf};

fn sidecar(db: &Path, ext: &str) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(ext);
    PathBuf::from(p)
}

/// Makes the (closed) database at `db` the image `image`: its WAL and shm
/// go, the image is written beside it, synced, and renamed over it.
///
/// # Errors
/// The file could not be written.
pub(crate) fn write_restored(db: &Path, image: &[u8]) -> std::io::Result<()> {
    let (wal, shm) = crate::state_store::sidecars(db);
    let _ = std::fs::remove_file(wal);
    let _ = std::fs::remove_file(shm);
    let tmp = sidecar(db, ".restoring");
    std::fs::write(&tmp, image)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, db)
}

/// The alarm the database at `db` holds (its own record of it).
pub(crate) fn restored_alarm(db: &Path) -> Option<u64> {
    let db = ActorDb::open_existing(db).ok()?;
    let at = db
        .meta_get(META_ALARM)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<u64>().ok());
    let _ = db.close();
    at
}

/// A restore's failure as the API names it: a target refused is
/// `bad-argument`, the bucket's failure `bucket`; anything else failed on
/// the way (`event`).
pub(crate) fn restore_error(key: &ActorKey, e: ReplicaError) -> RuntimeError {
    match e {
        ReplicaError::BeforeDelete { .. }
        | ReplicaError::DeletedSince { .. }
        | ReplicaError::Chain(ChainError::NoStateAtTime(_) | ChainError::NoSuchPosition(_)) => {
            RuntimeError::BadArgument(e.to_string())
        }
        other => {
            let kind = match other {
                ReplicaError::Bucket(_) => FailureKind::Bucket,
                _ => FailureKind::Event,
            };
            RuntimeError::event(
                kind,
                format!(
                    "restoring {key}: {other}; the head may or may not have moved: read the history, then try again"
                ),
            )
        }
    }
}
