//! Keeps the actor's WAL file when its database closes.
//!
//! By default SQLite deletes `-wal` and `-shm` when the last connection
//! closes, so every wake created both again: two new inodes, two `fchown`s,
//! the shm's eight page writes, and two unlinks at hibernation. On ext4 the
//! inode allocation alone was the largest kernel cost of a wake (issue 25).
//! With `SQLITE_FCNTL_PERSIST_WAL` the files stay; the close still
//! checkpoints, and with a journal size limit set the WAL is truncated to
//! zero bytes, so a hibernated actor keeps an empty WAL. (Since ADR 040 the
//! connection holds its file in exclusive locking mode and makes no shm.)
//! Deletes remove both sidecars (`state_store::sidecars`), as before.
//! How long the WAL grows between checkpoints is here too (ADR 054).

use rusqlite::Connection;
use std::os::raw::{c_int, c_void};

/// What the WAL is truncated to after a checkpoint while the actor is
/// resident (at close it is truncated to zero): more than it holds at
/// [`AUTOCHECKPOINT_PAGES`], so that it is not truncated at all. After a
/// checkpoint SQLite starts the WAL again at its head; a file cut back to
/// 4 MiB (this limit before ADR 061) then grew page by page, and each
/// commit past the cut allocated its page in the page cache and on disk
/// again, 4 µs of a one-row commit's 12 µs here. A file that keeps its
/// length is written over instead. What a resident actor holds on disk at
/// most does not change: its WAL reached this length before each
/// checkpoint anyway.
pub(super) const JOURNAL_SIZE_LIMIT: u64 = 48 << 20;

/// The WAL's length when a commit of one page reaches
/// [`AUTOCHECKPOINT_PAGES`]: its 32-byte header, then a 24-byte header and
/// a 4 KiB page (the host's page size, SQLite's default) a frame.
const WAL_AT_CHECKPOINT: u64 = 32 + AUTOCHECKPOINT_PAGES as u64 * (24 + 4096);
const _: () = assert!(
    JOURNAL_SIZE_LIMIT > WAL_AT_CHECKPOINT,
    "the WAL would be cut after each checkpoint"
);

/// The WAL's length in pages past which a commit checkpoints it. A
/// checkpoint syncs the WAL and the database on the actor's thread, so the
/// commit that triggers it waits for two `fsync`s (0.15 ms at the median,
/// 4 ms at the 90th percentile while a bench writes), and every event queued
/// behind it too. SQLite's default, 1,000 pages, checkpointed a counter
/// taking POSTs every few hundred commits; ten times as many pages make ten
/// times fewer of those waits (ADR 054). The WAL of a resident actor that
/// writes much grows to about 40 MiB, and after the checkpoint starts again
/// at its head in a file that keeps its length ([`JOURNAL_SIZE_LIMIT`]);
/// the close at hibernation checkpoints it whatever its length and
/// truncates it to zero.
pub(super) const AUTOCHECKPOINT_PAGES: u32 = 10_000;

/// Asks SQLite to keep the WAL (and shm) of `conn`'s main database on close.
///
/// # Errors
/// SQLite refused the file control (a VFS without it); the caller then
/// keeps SQLite's default, which is correct, only slower to wake.
#[allow(unsafe_code)]
pub(super) fn keep_wal_on_close(conn: &Connection) -> Result<(), c_int> {
    let mut on: c_int = 1;
    // SAFETY: `handle()` is the live connection owned by `conn`, used on this
    // thread only for the duration of the call; "main" is a NUL-terminated
    // schema name; the argument for SQLITE_FCNTL_PERSIST_WAL is a pointer to
    // an int that SQLite reads (and writes back) during the call.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&raw mut on).cast::<c_void>(),
        )
    };
    if rc == rusqlite::ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}
