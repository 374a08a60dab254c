//! A smaller lookaside for an actor's connection.
//!
//! SQLite gives each connection a lookaside, a private pool for its small
//! allocations, of 40 slots of 1,200 bytes by default: 48 KiB allocated at
//! open and kept until close. An actor's connection stays open while the
//! actor is resident, and a heap profile of 300 resident counters
//! (`heaptrack` of `wasmkeep-bench --resident-child`) put this one block at
//! 48 of the 123 KiB of heap each actor held (issue 25, ADR 033). The
//! connection keeps a lookaside, only a smaller one; a small allocation that
//! finds no free slot goes to the heap, as it does once the default pool is
//! used up.

use rusqlite::Connection;
use std::os::raw::{c_int, c_void};

/// Slot size and count: 8 slots of 1,200 bytes (9,600 bytes, which SQLite
/// splits into 6 slots of 1,200 and 18 of 128) serve an actor's statements'
/// small objects; larger ones, and those that find no free slot, go to the
/// heap.
const SLOT_BYTES: c_int = 1200;
const SLOTS: c_int = 8;

/// Sets `conn`'s lookaside to [`SLOTS`] × [`SLOT_BYTES`], allocated by SQLite.
///
/// # Errors
/// SQLite's code when it refused (`SQLITE_BUSY` once the lookaside is in
/// use); the caller then keeps the default, which is correct, only larger.
#[allow(unsafe_code)]
pub(super) fn make_small(conn: &Connection) -> Result<(), c_int> {
    // SAFETY: `handle()` is the live connection owned by `conn`, used on this
    // thread for the duration of the call. SQLITE_DBCONFIG_LOOKASIDE takes a
    // buffer pointer (null: SQLite allocates the pool itself), the slot size
    // and the slot count, all read during the call only.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_db_config(
            conn.handle(),
            rusqlite::ffi::SQLITE_DBCONFIG_LOOKASIDE,
            std::ptr::null_mut::<c_void>(),
            SLOT_BYTES,
            SLOTS,
        )
    };
    if rc == rusqlite::ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

#[cfg(test)]
mod tests {
    /// The slots of the small pool: SQLite splits its 9,600 bytes into 6
    /// slots of 1,200 bytes and 18 of 128 (its two-size lookaside); the
    /// default 48,000 bytes make 30 and 93.
    const POOL_SLOTS: c_int = 24;
    use crate::actor_db::ActorDb;
    use crate::actor_db::db_status::db_status;
    use std::os::raw::c_int;

    #[test]
    fn a_fresh_connection_takes_the_small_lookaside() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        assert_eq!(super::make_small(&conn), Ok(()));
    }

    #[test]
    fn an_actors_connection_uses_no_more_than_the_small_lookaside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = ActorDb::open(&dir.path().join("a.db")).expect("open");
        db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INTEGER)", &[])
            .expect("create");
        db.exec("CREATE INDEX t_name ON t(name)", &[]).expect("index");
        for i in 0..50 {
            db.exec(
                "INSERT INTO t(name, n) VALUES (?1, ?2)",
                &[crate::SqlValue::Text(format!("n{i}")), crate::SqlValue::Integer(i)],
            )
            .expect("insert");
        }
        db.query("SELECT name, sum(n) FROM t GROUP BY name ORDER BY 2 DESC", &[])
            .expect("query");
        let (_, most) = db_status(&db, rusqlite::ffi::SQLITE_DBSTATUS_LOOKASIDE_USED);
        assert!(most > 0, "the connection has a lookaside");
        assert!(
            most <= POOL_SLOTS,
            "{most} slots in use at once: more than the small pool has, so the default lookaside is back"
        );
    }
}
