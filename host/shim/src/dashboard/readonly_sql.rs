//! Reading an actor's database for the dashboard, read-only by construction:
//! the page's SQL is never trusted. Its own connection (WAL lets it read
//! beside the actor's), opened without create, `PRAGMA query_only`, and an
//! authorizer that allows reading and nothing else (no ATTACH, no pragma that
//! could turn `query_only` off), a deadline and a cap on what is read.

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one read may run (a page's query may be a cross join).
const DEADLINE: Duration = Duration::from_secs(2);
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
    #[error("the read ran past {DEADLINE:?}: ask for less")]
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

/// A read-only connection to one actor's database.
pub(crate) struct ReadOnlyDb {
    conn: Connection,
}

fn allow_reads_only(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Read { .. } | AuthAction::Select | AuthAction::Function { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        // Reading pragmas that describe the schema; none that sets anything.
        AuthAction::Pragma {
            pragma_name,
            pragma_value: _,
        } if matches!(
            pragma_name.to_ascii_lowercase().as_str(),
            "table_info" | "table_xinfo" | "index_list" | "index_info" | "foreign_key_list"
        ) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

impl ReadOnlyDb {
    /// Opens the database at `path` for reading.
    ///
    /// # Errors
    /// There is no database there, or it cannot be opened.
    pub(crate) fn open(path: &Path) -> Result<Self, ReadError> {
        if !path.is_file() {
            return Err(ReadError::NoDatabase);
        }
        // Read-write without create, held read-only by `query_only`: a WAL
        // database opened with SQLITE_OPEN_READONLY cannot be read while its
        // `-shm` is missing (a hibernated actor), and nothing here may create it.
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_millis(500))?;
        conn.execute_batch("PRAGMA query_only = ON")?;
        conn.authorizer(Some(allow_reads_only));
        Ok(Self { conn })
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

    /// Runs `f` under the deadline.
    fn guarded<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, ReadError> {
        let deadline = Instant::now() + DEADLINE;
        self.conn
            .progress_handler(10_000, Some(move || Instant::now() > deadline));
        let r = f(&self.conn);
        self.conn.progress_handler(0, None::<fn() -> bool>);
        Ok(r?)
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

    #[test]
    fn reads_and_cuts_and_never_writes() {
        let (_dir, path) = db();
        let ro = ReadOnlyDb::open(&path).expect("open");
        let tables = ro.tables().expect("tables");
        assert_eq!(tables.len(), 1, "the host's table is left out");
        assert_eq!((tables[0].name.as_str(), tables[0].rows), ("t", 2));
        let page = ro.page("t", 0, 10, Cut::At(4)).expect("page");
        assert_eq!(page.rows[0][1], json!({ "blob": "00ff" }));
        assert_eq!(page.rows[1][1], json!({ "text": "a lo", "length": 11 }));
        assert_eq!(ro.value("t", "b", 1).expect("value"), Some(json!("a long text")));
        for sql in [
            "DELETE FROM t",
            "INSERT INTO t VALUES (3, 3)",
            "PRAGMA query_only = OFF",
            "ATTACH 'other.db' AS o",
            "CREATE TABLE u(x)",
            "BEGIN IMMEDIATE",
            "SELECT 1; DELETE FROM t",
        ] {
            assert!(
                matches!(
                    ro.query(sql, 10, Cut::Whole),
                    Err(ReadError::NotReadOnly(_) | ReadError::Sql(_))
                ),
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
            ro.query(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
                1,
                Cut::Whole
            ),
            Err(ReadError::TooSlow)
        ));
    }
}
