//! A lock file that serialises a local-directory bucket's conditional writes
//! across processes (node processes sharing `file://`; docs/adr/028): an
//! `flock(2)` on `<dir>/.lock`, exclusive for writes, shared for reads. The
//! kernel drops it when its holder dies, so a node killed mid-write leaves no
//! lock behind.

use rustix::fs::{FlockOperation, flock};
use std::fs::File;
use std::path::Path;

/// The lock file's name in the bucket's directory (never an object's key).
pub const LOCK_FILE: &str = ".lock";

/// A held lock; dropping it (closing the file) lets it go.
#[derive(Debug)]
pub struct DirLock {
    /// `None`: a reader that may not write the directory, of a bucket no
    /// writer has locked yet (there is no lock file to share).
    _file: Option<File>,
}

/// How a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// Readers: many at once, never during a write.
    Shared,
    /// A writer: alone.
    Exclusive,
}

impl DirLock {
    /// Waits for the lock on `dir`. A writer makes the directory and the
    /// lock file as needed. A reader opens the lock file for reading only
    /// (`flock(2)` needs no more), so a user who may read the bucket but
    /// not write it can read it (`verify`, issue 57); when there is no lock
    /// file yet, it makes one as a writer would, and reads without one if it
    /// may not (no writer has written there yet: each makes the file first).
    ///
    /// # Errors
    /// The directory or its lock file could not be made, opened or locked.
    pub fn acquire(dir: &Path, kind: LockKind) -> std::io::Result<Self> {
        if kind == LockKind::Shared {
            match File::open(dir.join(LOCK_FILE)) {
                Ok(file) => {
                    flock(&file, FlockOperation::LockShared)?;
                    return Ok(Self { _file: Some(file) });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            return match Self::created(dir, FlockOperation::LockShared) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
                    ) =>
                {
                    Ok(Self { _file: None })
                }
                other => other,
            };
        }
        Self::created(dir, FlockOperation::LockExclusive)
    }

    /// The lock file opened for writing (the directory and the file made as
    /// needed), then locked by `op`.
    fn created(dir: &Path, op: FlockOperation) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))?;
        flock(&file, op)?;
        Ok(Self { _file: Some(file) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader never opens the lock file for writing. Tested as root,
    /// where permissions do not bite: a lock "file" that is a directory can
    /// be opened for reading and locked, never opened for writing. (Before,
    /// a shared lock opened it for writing, and a reader without write
    /// access to the bucket failed: `Permission denied`.)
    #[test]
    fn a_reader_opens_the_lock_for_reading_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(LOCK_FILE)).expect("a lock that only reading opens");
        DirLock::acquire(dir.path(), LockKind::Shared).expect("a reader locks it");
        let writer = DirLock::acquire(dir.path(), LockKind::Exclusive);
        assert!(writer.is_err(), "a writer opens it for writing: {writer:?}");
    }

    /// Readers share the lock and a writer waits for them.
    #[test]
    fn readers_share_and_a_writer_waits() {
        let dir = tempfile::tempdir().expect("tempdir");
        drop(DirLock::acquire(dir.path(), LockKind::Exclusive).expect("made"));
        let (a, b) = (
            DirLock::acquire(dir.path(), LockKind::Shared).expect("a"),
            DirLock::acquire(dir.path(), LockKind::Shared).expect("b"),
        );
        let file = File::open(dir.path().join(LOCK_FILE)).expect("open");
        assert!(
            flock(&file, FlockOperation::NonBlockingLockExclusive).is_err(),
            "no writer while readers hold it"
        );
        drop((a, b));
        flock(&file, FlockOperation::NonBlockingLockExclusive).expect("a writer once they are gone");
    }
}
