//! The actor's connection with the guest's statements kept compiled beside
//! it, found again by their text (ADR 056).
//!
//! rusqlite's own statement cache takes the statement out of its map and
//! puts it back at every use, allocating a new key each time (an `Arc<str>`
//! copied from the caller's trimmed text) and hashing the text twice: about a fifth of
//! an `exec` from a guest (issue 25). These are a guest's few texts, run
//! over and over: they are kept in a short list, the last used first, and
//! a text is found by comparing it. A text found here also passed the
//! guard's checks of the text when it was compiled, so they are not made
//! again ([`KeptConnection::is_kept`]).

use rusqlite::{Connection, PrepFlags, Statement};
use std::cell::RefCell;
use std::ops::Deref;
use std::ptr::NonNull;

/// How many guest statements a connection keeps compiled: rusqlite's
/// default, as many as the guest kept before.
pub(super) const KEPT: usize = 16;

/// A text with its compiled statement.
struct Kept {
    sql: Box<str>,
    /// Borrows the connection of the same [`KeptConnection`]; the `'static`
    /// is a lie only this file tells, and only this file can see.
    stmt: Statement<'static>,
}

/// An actor's connection and the guest statements compiled on it.
pub(super) struct KeptConnection {
    kept: RefCell<Vec<Kept>>,
    /// The connection, on the heap so that it stays where the statements
    /// point when the actor's database moves (to a worker's thread, into a
    /// resting actor's slot). A pointer, not a `Box`: moving a `Box` would
    /// claim the connection uniquely again while the statements borrow it.
    /// Owned: made by `Box::leak`, given back in [`Drop`] or `close`.
    conn: NonNull<Connection>,
}

// SAFETY: a `Connection` is `Send`. The statements borrow only the
// connection of the same value, move with it, and are used through it on
// one thread at a time: `KeptConnection` is not `Sync` (the `RefCell`).
#[allow(unsafe_code)]
unsafe impl Send for KeptConnection {}

impl std::fmt::Debug for KeptConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptConnection")
            .field("conn", &**self)
            .field("kept", &self.kept.borrow().len())
            .finish()
    }
}

impl Deref for KeptConnection {
    type Target = Connection;
    #[allow(unsafe_code)]
    fn deref(&self) -> &Connection {
        // SAFETY: `conn` came from `Box::leak` and is freed only in
        // `drop` or `close`, which take the value; only shared references
        // to the connection are ever made.
        unsafe { self.conn.as_ref() }
    }
}

impl Drop for KeptConnection {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // The statements first: each finalizes through the connection, and
        // a connection with statements left would not close.
        self.kept.get_mut().clear();
        // SAFETY: made by `Box::leak` in `new`, and given back only here
        // or in `close`, which forgets the value after taking it.
        drop(unsafe { Box::from_raw(self.conn.as_ptr()) });
    }
}

/// True if a statement of this text may be kept: a rename is checked again
/// after every run (the guard's savepoint), so it is compiled each time.
fn may_keep(sql: &str) -> bool {
    !sql.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"RENAME"))
}

impl KeptConnection {
    pub(super) fn new(conn: Connection) -> Self {
        Self {
            kept: RefCell::new(Vec::with_capacity(KEPT)),
            conn: NonNull::from(Box::leak(Box::new(conn))),
        }
    }

    /// True if a statement compiled from exactly this text is kept: the text
    /// passed the guard's checks then, and holds no rename.
    pub(super) fn is_kept(&self, sql: &str) -> bool {
        self.kept.borrow().iter().any(|k| *k.sql == *sql)
    }

    /// Runs `f` on the statement compiled from `sql`: the kept one, or one
    /// compiled now and kept afterwards (the least recently used goes when
    /// [`KEPT`] are kept). Each run starts with no parameter bound, as
    /// rusqlite's cache left its statements: the bindings are cleared after
    /// `f` (which also drops SQLite's copies of texts and blobs). A
    /// statement `f` stops reading early is not left mid-way: rusqlite
    /// resets a statement when its rows are dropped and after `execute`.
    ///
    /// # Errors
    /// SQLite's, compiling the text, or `f`'s.
    pub(super) fn with_kept<T>(
        &self,
        sql: &str,
        f: impl FnOnce(&mut Statement<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        // Taken out while it runs, so nothing `f` reaches can find the list borrowed.
        let found = {
            let mut kept = self.kept.borrow_mut();
            kept.iter().position(|k| *k.sql == *sql).map(|i| kept.remove(i))
        };
        let mut entry = match found {
            Some(entry) => entry,
            None => {
                let mut stmt = self.prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)?;
                // A text of comments compiles to no statement (SQLite
                // expands nothing for it), which rusqlite's cache did not
                // keep either.
                if !may_keep(sql) || stmt.expanded_sql().is_none() {
                    return f(&mut stmt);
                }
                #[allow(unsafe_code)]
                // SAFETY: the statement borrows the connection `self.conn`
                // points to, which does not move when `self` does and is
                // freed only after the list is emptied (`drop`, `close`).
                let stmt = unsafe { std::mem::transmute::<Statement<'_>, Statement<'static>>(stmt) };
                Kept { sql: sql.into(), stmt }
            }
        };
        let r = f(&mut entry.stmt);
        if entry.stmt.parameter_count() > 0 {
            entry.stmt.clear_bindings();
        }
        let mut kept = self.kept.borrow_mut();
        kept.insert(0, entry);
        kept.truncate(KEPT);
        r
    }

    /// Finalizes the kept statements and closes the connection.
    ///
    /// # Errors
    /// SQLite's, closing the connection (which is then dropped, and closed
    /// as rusqlite closes one it drops).
    #[allow(unsafe_code)]
    pub(super) fn close(self) -> rusqlite::Result<()> {
        let mut this = std::mem::ManuallyDrop::new(self);
        // An emptied `Vec` holds no memory: nothing is left for the `Drop`
        // this skips.
        drop(std::mem::take(this.kept.get_mut()));
        // SAFETY: made by `Box::leak` in `new`; `this` is never dropped,
        // so this is the only place it is given back.
        let conn = unsafe { Box::from_raw(this.conn.as_ptr()) };
        (*conn).close().map_err(|(_, e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::StatementStatus;

    fn conn() -> KeptConnection {
        let c = KeptConnection::new(Connection::open_in_memory().expect("open"));
        c.execute_batch("CREATE TABLE t(x)").expect("table");
        c
    }

    fn runs(c: &KeptConnection, sql: &str) -> i32 {
        c.with_kept(sql, |s| Ok(s.get_status(StatementStatus::Run)))
            .expect("status")
    }

    #[test]
    fn a_text_is_compiled_once_and_run_from_then_on() {
        let c = conn();
        let sql = "INSERT INTO t VALUES (?1)";
        assert!(!c.is_kept(sql));
        for i in 0..3 {
            c.with_kept(sql, |s| s.execute([i])).expect("insert");
        }
        assert!(c.is_kept(sql));
        assert_eq!(runs(&c, sql), 3, "one compiled statement ran three times");
    }

    #[test]
    fn the_least_recently_used_goes_when_the_list_is_full() {
        let c = conn();
        let text = |i: usize| format!("SELECT {i}");
        for i in 0..=KEPT {
            c.with_kept(&text(i), |s| s.query_row([], |r| r.get::<_, i64>(0)))
                .expect("select");
        }
        assert!(!c.is_kept(&text(0)), "the first text went");
        assert!((1..=KEPT).all(|i| c.is_kept(&text(i))));
        c.with_kept(&text(1), |s| s.query_row([], |r| r.get::<_, i64>(0)))
            .expect("select");
        c.with_kept(&text(0), |s| s.query_row([], |r| r.get::<_, i64>(0)))
            .expect("select");
        assert!(c.is_kept(&text(1)), "a text used again moved to the front");
        assert!(!c.is_kept(&text(2)), "the least recently used went");
    }

    #[test]
    fn a_rename_and_a_failed_text_are_not_kept() {
        let c = conn();
        let rename = "ALTER TABLE t RENAME TO u";
        c.with_kept(rename, |s| s.execute([])).expect("rename");
        assert!(!c.is_kept(rename));
        c.with_kept("INSERT INTO nope VALUES (1)", |s| s.execute([]))
            .expect_err("no such table");
        assert!(!c.is_kept("INSERT INTO nope VALUES (1)"));
    }

    #[test]
    fn a_statement_left_mid_way_runs_again_from_its_start() {
        let c = conn();
        c.execute_batch("INSERT INTO t VALUES (1), (2), (3)").expect("rows");
        let sql = "SELECT x FROM t ORDER BY x";
        let first = |c: &KeptConnection| {
            c.with_kept(sql, |s| {
                let mut rows = s.query([])?;
                rows.next()?.expect("a row").get::<_, i64>(0)
            })
            .expect("first row")
        };
        assert_eq!(first(&c), 1);
        assert_eq!(first(&c), 1);
    }

    #[test]
    fn the_connection_closes_and_moves_with_its_statements() {
        let c = conn();
        c.with_kept("INSERT INTO t VALUES (1)", |s| s.execute([]))
            .expect("insert");
        // Moved to another thread, as a resting actor's database is.
        let c = std::thread::spawn(move || {
            c.with_kept("INSERT INTO t VALUES (1)", |s| s.execute([]))
                .expect("insert");
            c
        })
        .join()
        .expect("thread");
        let n: i64 = c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).expect("count");
        assert_eq!(n, 2);
        c.close().expect("closes with statements kept");
    }
}
