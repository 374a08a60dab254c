//! Reading an actor's database for the dashboard: the page's SQL is never
//! trusted. The connection is the one the runtime lends for a read in the
//! actor's mailbox ([`wasmkeep_host::Admin::read_database`], ADR 040), which
//! allows reading only and interrupts a read at its deadline; here are the
//! dashboard's own caps on what is read, and the statement's check that it
//! only reads.

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::{Value, json};
use wasmkeep_host::LENT_READ_TIME;
/// At most this many bytes of values per answer.
const MAX_BYTES: usize = 8 << 20;
/// The host's own table: not the actor's data, left out of the listing.
const HOST_TABLE: &str = "_wasmkeep_meta";

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// The actor has no database here.
    #[error("no such actor here: it has no database on this node")]
    NoDatabase,
    /// The SQL would do more than read.
    #[error("refused: the dashboard's SQL is read-only ({0})")]
    NotReadOnly(String),
    /// The read ran past its deadline.
    #[error("the read ran past {LENT_READ_TIME:?}: ask for less")]
    TooSlow,
    /// No such table.
    #[error("no such table: {0}")]
    NoSuchTable(String),
    /// SQLite's error (bad SQL, a damaged file).
    #[error("{0}")]
    Sql(String),
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::OperationInterrupted) => Self::TooSlow,
            Some(rusqlite::ErrorCode::AuthorizationForStatementDenied) => Self::NotReadOnly(e.to_string()),
            _ if e.to_string().contains("not authorized") => Self::NotReadOnly(e.to_string()),
            _ => Self::Sql(e.to_string()),
        }
    }
}

/// How values longer than a limit are shown: cut, with their full length.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cut {
    /// Whole values.
    Whole,
    /// Text and blobs cut at this many bytes.
    At(usize),
}

/// Rows read.
#[derive(Debug)]
pub(crate) struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// More rows were there than the cap let through.
    pub truncated: bool,
}

/// A table and its size.
#[derive(Debug)]
pub(crate) struct TableInfo {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: i64,
}

/// The dashboard's reads of one actor's database, on a lent read-only connection.
pub(crate) struct ReadOnlyDb<'c> {
    conn: &'c Connection,
}

impl<'c> ReadOnlyDb<'c> {
    /// The dashboard's reads on `conn`, which the runtime holds to reading.
    pub(crate) fn new(conn: &'c Connection) -> Self {
        Self { conn }
    }

    /// The actor's tables (the host's own left out), their columns and row counts.
    ///
    /// # Errors
    /// The schema cannot be read.
    pub(crate) fn tables(&self) -> Result<Vec<TableInfo>, ReadError> {
        let names: Vec<String> = self
            .conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for name in names.into_iter().filter(|n| n != HOST_TABLE) {
            let q = quote(&name);
            let rows: i64 = self.guarded(|c| c.query_row(&format!("SELECT count(*) FROM {q}"), [], |r| r.get(0)))?;
            let columns = self
                .conn
                .prepare(&format!("SELECT * FROM {q} LIMIT 0"))?
                .column_names()
                .into_iter()
                .map(str::to_owned)
                .collect();
            out.push(TableInfo { name, columns, rows });
        }
        Ok(out)
    }

    /// Whether `table` is one of the actor's tables.
    fn check_table(&self, table: &str) -> Result<(), ReadError> {
        let found: i64 = self.conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        if found == 0 || table == HOST_TABLE {
            return Err(ReadError::NoSuchTable(table.to_owned()));
        }
        Ok(())
    }

    /// A page of `table`'s rows, in its storage order.
    ///
    /// # Errors
    /// No such table, or the read failed.
    pub(crate) fn page(&self, table: &str, offset: u64, limit: u64, cut: Cut) -> Result<Rows, ReadError> {
        self.check_table(table)?;
        let sql = format!("SELECT * FROM {} LIMIT {limit} OFFSET {offset}", quote(table));
        self.query(&sql, usize::try_from(limit).unwrap_or(usize::MAX), cut)
    }

    /// One whole value: the `column` of the row at `offset` in the order
    /// [`ReadOnlyDb::page`] reads.
    ///
    /// # Errors
    /// No such table, column or row, or the read failed.
    pub(crate) fn value(&self, table: &str, column: &str, offset: u64) -> Result<Option<Value>, ReadError> {
        self.check_table(table)?;
        let sql = format!("SELECT {} FROM {} LIMIT 1 OFFSET {offset}", quote(column), quote(table));
        let rows = self.query(&sql, 1, Cut::Whole)?;
        Ok(rows.rows.into_iter().next().and_then(|r| r.into_iter().next()))
    }

    /// Runs the page's `sql` (read-only), at most `max_rows` rows.
    ///
    /// # Errors
    /// The SQL would write, is not valid, or ran too long.
    pub(crate) fn query(&self, sql: &str, max_rows: usize, cut: Cut) -> Result<Rows, ReadError> {
        self.guarded(|c| {
            let mut stmt = c.prepare(sql)?;
            if !stmt.readonly() {
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_AUTH),
                    Some("not authorized: the statement writes".into()),
                ));
            }
            let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
            let n = columns.len();
            let mut rows = Vec::new();
            let mut bytes = 0usize;
            let mut truncated = false;
            let mut it = stmt.query([])?;
            while let Some(row) = it.next()? {
                if rows.len() >= max_rows || bytes > MAX_BYTES {
                    truncated = true;
                    break;
                }
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let (v, size) = value_json(row.get_ref(i)?, cut);
                    bytes += size;
                    out.push(v);
                }
                rows.push(out);
            }
            Ok(Rows {
                columns,
                rows,
                truncated,
            })
        })
    }

    /// Runs `f`, its error by kind (the lent connection interrupts it at its deadline).
    fn guarded<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, ReadError> {
        Ok(f(self.conn)?)
    }
}

/// An identifier quoted for SQLite.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A value as the dashboard shows it, and about how many bytes it took:
/// blobs as `{"blob": hex}`; past the cut, `{"text"|"blob": prefix, "length": n}`.
fn value_json(v: ValueRef<'_>, cut: Cut) -> (Value, usize) {
    let limit = match cut {
        Cut::Whole => usize::MAX,
        Cut::At(n) => n,
    };
    match v {
        ValueRef::Null => (Value::Null, 4),
        ValueRef::Integer(i) => (json!(i), 8),
        ValueRef::Real(f) => (json!(f), 8),
        ValueRef::Text(t) => {
            let s = String::from_utf8_lossy(t);
            if t.len() > limit {
                let mut end = limit;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                (json!({ "text": &s[..end], "length": t.len() }), end)
            } else {
                (json!(s), t.len())
            }
        }
        ValueRef::Blob(b) => {
            if b.len() > limit {
                (
                    json!({ "blob": hex::encode(&b[..limit]), "length": b.len() }),
                    limit * 2,
                )
            } else {
                (json!({ "blob": hex::encode(b) }), b.len() * 2)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.db");
        let c = Connection::open(&path).expect("open");
        c.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t(a, b); INSERT INTO t VALUES (1, x'00ff'), (2, 'a long text');
             CREATE TABLE _wasmkeep_meta(k);",
        )
        .expect("fill");
        (dir, path)
    }

    /// The dashboard's own part; what the lent connection refuses (writes,
    /// ATTACH, pragmas, a read past its deadline) is the runtime's, tested
    /// with `lent_read`.
    #[test]
    fn reads_and_cuts_and_refuses_statements_that_write() {
        let (_dir, path) = db();
        let conn = Connection::open(&path).expect("open");
        let ro = ReadOnlyDb::new(&conn);
        let tables = ro.tables().expect("tables");
        assert_eq!(tables.len(), 1, "the host's table is left out");
        assert_eq!((tables[0].name.as_str(), tables[0].rows), ("t", 2));
        let page = ro.page("t", 0, 10, Cut::At(4)).expect("page");
        assert_eq!(page.rows[0][1], json!({ "blob": "00ff" }));
        assert_eq!(page.rows[1][1], json!({ "text": "a lo", "length": 11 }));
        assert_eq!(ro.value("t", "b", 1).expect("value"), Some(json!("a long text")));
        for sql in ["DELETE FROM t", "INSERT INTO t VALUES (3, 3)", "CREATE TABLE u(x)"] {
            assert!(
                matches!(ro.query(sql, 10, Cut::Whole), Err(ReadError::NotReadOnly(_))),
                "{sql} must be refused"
            );
        }
        assert_eq!(
            ro.query("SELECT count(*) FROM t", 10, Cut::Whole).expect("count").rows[0][0],
            json!(2)
        );
        assert!(matches!(
            ro.page("nope", 0, 1, Cut::Whole),
            Err(ReadError::NoSuchTable(_))
        ));
        assert!(matches!(
            ro.page("_wasmkeep_meta", 0, 1, Cut::Whole),
            Err(ReadError::NoSuchTable(_))
        ));
    }
}
