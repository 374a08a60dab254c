//! The host's table in each actor database (`_wasmkeep_meta`): its rows, and
//! keeping the host's writes there out of what the guest's SQL reads
//! (`changes()`, `total_changes()`, `last_insert_rowid()`).

use super::{ActorDb, META_TABLE};
use crate::sql_types::SqlError;
use rusqlite::{Connection, OptionalExtension};

/// The host table's columns. WITHOUT ROWID: SQLite does not record inserts
/// into such a table in `last_insert_rowid()`, so the host's writes (an
/// alarm, the on-init mark) never change what the guest's SQL reads there
/// (issue: "nothing the host does may be visible to the guest's SQL").
pub(super) const META_COLUMNS: &str = "(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID";

/// A database made before the host table was WITHOUT ROWID gets the new
/// table, with its rows, in one transaction.
pub(super) fn migrate_meta_without_rowid(conn: &Connection) -> rusqlite::Result<()> {
    if !meta_has_rowid(conn) {
        return Ok(());
    }
    // `_wasmkeep…` names are the host's; a table a guest once took by a
    // rename (before renames were checked) gives way.
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         DROP TABLE IF EXISTS main.{META_TABLE}_new;
         CREATE TABLE main.{META_TABLE}_new{META_COLUMNS};
         INSERT INTO main.{META_TABLE}_new(key, value) SELECT key, value FROM main.{META_TABLE};
         DROP TABLE main.{META_TABLE};
         ALTER TABLE main.{META_TABLE}_new RENAME TO {META_TABLE};
         COMMIT;"
    ))
}

/// True if the host table records rowids (made before it was WITHOUT
/// ROWID). Every open asks, so it asks the schema SQLite has already read
/// (`sqlite3_table_column_metadata` on the column `rowid`), not the schema
/// table with a statement: that query was about 5% of a wake (issue 25,
/// ADR 041). A table without rowids has no such column, so SQLite answers
/// with an error; so does a missing table, which set-up has just created.
#[allow(unsafe_code)]
pub(super) fn meta_has_rowid(conn: &Connection) -> bool {
    let table = std::ffi::CString::new(META_TABLE).unwrap_or_default();
    // SAFETY: `handle()` is the live connection owned by `conn`, used on
    // this thread for the duration of the call; the three names are
    // NUL-terminated strings that outlive it, and SQLite writes nothing
    // through the null output pointers.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_table_column_metadata(
            conn.handle(),
            c"main".as_ptr(),
            table.as_ptr(),
            c"rowid".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    rc == rusqlite::ffi::SQLITE_OK
}

/// The host table's read, write and removal, made once: each runs from the
/// statement cache, looked up by its text at every call.
struct MetaSql {
    get: String,
    set: String,
    remove: String,
}

static META_SQL: std::sync::LazyLock<MetaSql> = std::sync::LazyLock::new(|| MetaSql {
    get: format!("SELECT value FROM main.{META_TABLE} WHERE key = ?1"),
    set: format!(
        "INSERT INTO main.{META_TABLE}(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    ),
    remove: format!("DELETE FROM main.{META_TABLE} WHERE key = ?1"),
});

/// Above this many rows, [`ActorDb::meta_set`] does not put `changes()` back
/// (it would insert and roll back that many rows).
const MOST_CHANGES_RESTORED: u64 = 100_000;

impl ActorDb {
    /// Reads a host meta value.
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn meta_get(&self, key: &str) -> Result<Option<String>, SqlError> {
        // Cached: a wake reads four keys (a removal's record, an operator's
        // marker, the alarm, the on-init mark) and an event may read the
        // alarm again; one compile per open serves them all (issue 25).
        self.conn
            .prepare_cached(&META_SQL.get)
            .and_then(|mut stmt| stmt.query_row([key], |r| r.get(0)).optional())
            .map_err(|e| SqlError::Internal(format!("reading host metadata: {e}")))
    }

    /// Whether `on-init` has run on this database (its mark is in the host
    /// table); read from the file until it is, then remembered.
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn is_initialized(&self) -> Result<bool, SqlError> {
        if !self.initialized.get() && self.meta_get(super::META_INITIALIZED)?.is_some() {
            self.initialized.set(true);
        }
        Ok(self.initialized.get())
    }

    /// Writes (or with `None` removes) a host meta value.
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn meta_set(&self, key: &str, value: Option<&str>) -> Result<(), SqlError> {
        // What the guest's SQL reads in changes() now: put back after the write.
        let guest_changes = self.conn.changes();
        let total_before = self.conn.total_changes();
        let r = match value {
            Some(v) => self
                .conn
                .prepare_cached(&META_SQL.set)
                .and_then(|mut stmt| stmt.execute([key, v])),
            None => self
                .conn
                .prepare_cached(&META_SQL.remove)
                .and_then(|mut stmt| stmt.execute([key])),
        };
        r.map(|_| ())
            .map_err(|e| SqlError::Internal(format!("writing host metadata: {e}")))?;
        self.restore_changes(guest_changes);
        // The write and the putting back are the host's rows, not the guest's.
        self.host_changes.add(total_before, self.conn.total_changes());
        Ok(())
    }

    /// Makes `changes()` read `n` again after a write of the host's: SQLite
    /// has no way to set it, but it reports the last completed statement's
    /// count even when a savepoint rolls that statement back. So `n` rows go
    /// into the host table inside a savepoint that is rolled back (nothing
    /// is written; no rowid is recorded, the table being WITHOUT ROWID).
    fn restore_changes(&self, n: u64) {
        // Most often nothing is to do, or one statement does it.
        if self.conn.changes() == n {
            return;
        }
        if n == 0 {
            if let Err(e) = self
                .conn
                .execute_batch(&format!("DELETE FROM main.{META_TABLE} WHERE 0"))
            {
                tracing::warn!("putting changes() back after a host write: {e}");
            }
            return;
        }
        if n > MOST_CHANGES_RESTORED {
            tracing::debug!("changes() not put back after a host write: {n} rows is too many");
            return;
        }
        let restored = self
            .conn
            .execute_batch("SAVEPOINT wasmkeep_changes")
            .and_then(|()| {
                self.conn.execute(
                    &format!(
                        "WITH RECURSIVE c(i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM c WHERE i < ?1)
                         INSERT INTO main.{META_TABLE}(key, value) SELECT '~changes-' || i, '' FROM c"
                    ),
                    [n],
                )
            })
            .and_then(|_| {
                self.conn
                    .execute_batch("ROLLBACK TO wasmkeep_changes; RELEASE wasmkeep_changes")
            });
        if let Err(e) = restored {
            tracing::warn!("putting changes() back after a host write: {e}");
            let _ = self
                .conn
                .execute_batch("ROLLBACK TO wasmkeep_changes; RELEASE wasmkeep_changes");
        }
    }
}
