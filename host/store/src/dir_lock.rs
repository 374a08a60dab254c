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
    _file: File,
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
    /// Waits for the lock on `dir` (created as needed).
    ///
    /// # Errors
    /// The directory or its lock file could not be made or locked.
    pub fn acquire(dir: &Path, kind: LockKind) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))?;
        let op = match kind {
            LockKind::Shared => FlockOperation::LockShared,
            LockKind::Exclusive => FlockOperation::LockExclusive,
        };
        flock(&file, op)?;
        Ok(Self { _file: file })
    }
}
