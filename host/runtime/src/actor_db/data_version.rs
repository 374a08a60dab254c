//! SQLite's data version of an actor's database: a counter that changes
//! with every commit to it, one that only changes the schema or the header
//! included (`total_changes` counts rows, and misses those).

use super::ActorDb;

/// The data version of `db`'s main database (`SQLITE_FCNTL_DATA_VERSION`).
#[allow(unsafe_code)]
pub(super) fn data_version(db: &ActorDb) -> u32 {
    let mut version: u32 = 0;
    // SAFETY: a live connection on this thread; SQLite writes one unsigned
    // 32-bit int to the pointer during the call, as the opcode documents.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            db.conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_DATA_VERSION,
            (&raw mut version).cast(),
        )
    };
    debug_assert_eq!(rc, rusqlite::ffi::SQLITE_OK, "SQLITE_FCNTL_DATA_VERSION");
    version
}
