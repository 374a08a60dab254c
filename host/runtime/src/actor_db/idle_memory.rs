//! What an idle actor's connection gives back.
//!
//! A resident actor's connection keeps the pages it has read in its page
//! cache (about 4.4 KiB each) while it waits for its next event: about
//! 26 KiB of the heap of each resident counter (ADR 033). An actor idle for
//! a while hands them back; its next event reads what it needs again, from
//! the operating system's cache.

use super::ActorDb;

impl ActorDb {
    /// Frees the page cache's unused pages (all of them between events).
    #[allow(unsafe_code)]
    pub fn release_idle_memory(&self) {
        // SAFETY: `handle()` is the live connection owned by `self.conn`,
        // used on this thread for the duration of the call; the call only
        // frees memory SQLite itself holds and does not need.
        unsafe {
            rusqlite::ffi::sqlite3_db_release_memory(self.conn.handle());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::actor_db::ActorDb;
    use crate::actor_db::db_status::db_status;

    #[test]
    fn an_idle_connection_gives_its_page_cache_back_and_reads_again_after() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = ActorDb::open(&dir.path().join("a.db")).expect("open");
        db.exec("CREATE TABLE t(x)", &[]).expect("create");
        db.exec("INSERT INTO t VALUES (1), (2)", &[]).expect("insert");
        let before = db_status(&db, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED).0;
        db.release_idle_memory();
        let after = db_status(&db, rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED).0;
        assert!(
            after < before,
            "the page cache held {before} bytes before and {after} after"
        );
        let rows = db.query("SELECT sum(x) FROM t", &[]).expect("query").rows;
        assert_eq!(rows, vec![vec![crate::SqlValue::Integer(3)]]);
    }
}
