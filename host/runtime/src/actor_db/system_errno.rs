//! The system's error behind SQLite's last failure on a connection: SQLite
//! says `SQLITE_CANTOPEN` for a WAL it could not open whatever the cause,
//! and the cause decides what the host does (ADR 055).

use rusqlite::Connection;

/// The `errno` of the system call behind `conn`'s last failure
/// (`sqlite3_system_errno`), zero when there was none.
#[allow(unsafe_code)]
pub(super) fn of(conn: &Connection) -> i32 {
    // SAFETY: a live connection on this thread; the call only reads a field
    // of it.
    unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) }
}
