//! SQLite's per-connection counters, read by the tests of what a
//! connection keeps in memory (`lookaside`).

use super::ActorDb;
use std::os::raw::c_int;

/// `(now, most)` of the counter `op` (`SQLITE_DBSTATUS_*`) of `db`'s connection.
#[allow(unsafe_code)]
pub(super) fn db_status(db: &ActorDb, op: c_int) -> (c_int, c_int) {
    let (mut now, mut most) = (0, 0);
    // SAFETY: a live connection on this thread; both outputs are ints
    // SQLite writes during the call.
    let rc = unsafe { rusqlite::ffi::sqlite3_db_status(db.conn.handle(), op, &raw mut now, &raw mut most, 0) };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK, "sqlite3_db_status({op})");
    (now, most)
}
