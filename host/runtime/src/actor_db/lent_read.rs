//! Reading an actor's database from outside it (the dashboard), read-only
//! by construction. An actor's connection holds its file exclusively while
//! it is resident (ADR 040), so a reader cannot open a connection of its own
//! beside it: it runs in the actor's mailbox, on the actor's own connection
//! lent for the read, or, while the actor is hibernated, on a connection
//! opened for the read alone. Either way the reader's connection is
//! `query_only`, behind an authorizer that allows reading and nothing else
//! (no ATTACH, no pragma that could turn `query_only` off), and interrupted
//! at a deadline.

use super::ActorDb;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one lent read may run (a dashboard's query may be a cross join).
pub const LENT_READ_TIME: Duration = Duration::from_secs(2);

/// Why a connection for a read could not be had.
#[derive(Debug, thiserror::Error)]
pub enum LentReadError {
    /// The actor has no database file here.
    #[error("the actor has no database on this node")]
    NoDatabase,
    /// SQLite could not open or set up the connection.
    #[error("the actor's database could not be opened for reading: {0}")]
    Open(#[source] rusqlite::Error),
    /// The read never ran: the mailbox failed it (the host is shutting
    /// down, too many actors wait to be resident) or its worker stopped.
    #[error("the read did not run: {message}")]
    NotRun {
        /// Why, as answers name it.
        kind: crate::failure_kind::FailureKind,
        /// What happened.
        message: String,
    },
}

/// The authorizer of a lent read: reading, and the pragmas that describe
/// the schema; nothing that writes or sets anything.
fn allow_reads_only(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Read { .. } | AuthAction::Select | AuthAction::Function { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
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

/// Makes `conn` read-only (`query_only`, then the authorizer, which would
/// refuse the pragma) and interrupts its statements after [`LENT_READ_TIME`].
fn hold_to_reading(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA query_only = ON")?;
    conn.authorizer(Some(allow_reads_only));
    let deadline = Instant::now() + LENT_READ_TIME;
    conn.progress_handler(10_000, Some(move || Instant::now() > deadline));
    Ok(())
}

/// A read-only connection of its own to the database at `path`, which no
/// connection of the actor holds (it is hibernated).
///
/// # Errors
/// [`LentReadError::NoDatabase`] if there is no file; [`LentReadError::Open`]
/// if SQLite could not open it.
pub fn open_for_reading(path: &Path) -> Result<Connection, LentReadError> {
    if !path.is_file() {
        return Err(LentReadError::NoDatabase);
    }
    // Read-write without create, held read-only by `query_only`: a WAL
    // database opened with SQLITE_OPEN_READONLY cannot be read without a
    // `-shm`, and a hibernated actor has none.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(LentReadError::Open)?;
    conn.busy_timeout(Duration::from_millis(500))
        .map_err(LentReadError::Open)?;
    // As the actor's own connection (ADR 040): exclusive locking before the
    // first read, so SQLite keeps the WAL-index in this connection's heap
    // and makes no `-shm` that would stay beside a hibernated actor's file.
    // The WAL is kept on close (SQLite creates an empty one if the actor
    // had none, as the actor's own open does), and the close checkpoints
    // nothing into the file.
    conn.execute_batch("PRAGMA locking_mode=EXCLUSIVE")
        .map_err(LentReadError::Open)?;
    if let Err(code) = super::persist_wal::keep_wal_on_close(&conn) {
        tracing::debug!("SQLite would not keep the WAL after a read (code {code})");
    }
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .map_err(LentReadError::Open)?;
    hold_to_reading(&conn).map_err(LentReadError::Open)?;
    Ok(conn)
}

/// Puts back the actor's own authorizer, progress handler and writing when
/// a lent read ends, even if the reader panicked.
struct GiveBack<'a> {
    db: &'a ActorDb,
}

impl Drop for GiveBack<'_> {
    fn drop(&mut self) {
        self.db.guard_connection();
        if let Err(e) = self.db.conn.execute_batch("PRAGMA query_only = OFF") {
            // The actor could not write: better to know now than at its next event.
            tracing::error!("giving an actor's database back after a read: {e}");
        }
    }
}

impl ActorDb {
    /// Lends the actor's open connection to `read`, read-only and under
    /// [`LENT_READ_TIME`], and gives it back as it was: its guard, its
    /// deadline check, writable. Runs between two events, in the mailbox;
    /// `read` gets [`LentReadError::Open`] if the connection could not be
    /// made read-only.
    pub fn lend_for_reading(&self, read: impl FnOnce(Result<&Connection, LentReadError>)) {
        let give_back = GiveBack { db: self };
        match hold_to_reading(&self.conn) {
            Ok(()) => read(Ok(&self.conn)),
            Err(e) => read(Err(LentReadError::Open(e))),
        }
        drop(give_back);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql_types::SqlValue;

    fn actor_db() -> (tempfile::TempDir, std::path::PathBuf, ActorDb) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.db");
        let db = ActorDb::open(&path).expect("open");
        db.exec("CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, 'y')", &[])
            .expect("fill");
        (dir, path, db)
    }

    /// What a lent connection must refuse, and the code it refuses with.
    fn assert_reads_only(conn: &Connection) {
        let count: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .expect("read");
        assert_eq!(count, 2);
        for sql in [
            "DELETE FROM t",
            "INSERT INTO t VALUES (3, 3)",
            "PRAGMA query_only = OFF",
            "ATTACH 'other.db' AS o",
            "CREATE TABLE u(x)",
            "BEGIN IMMEDIATE",
        ] {
            let code = conn.execute_batch(sql).err().and_then(|e| e.sqlite_error_code());
            assert!(
                matches!(
                    code,
                    Some(rusqlite::ErrorCode::AuthorizationForStatementDenied | rusqlite::ErrorCode::ReadOnly)
                ),
                "{sql} must be refused as not allowed, got {code:?}"
            );
        }
        let slow = conn.query_row(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
            [],
            |r| r.get::<_, i64>(0),
        );
        assert_eq!(
            slow.err().and_then(|e| e.sqlite_error_code()),
            Some(rusqlite::ErrorCode::OperationInterrupted),
            "a read past its deadline is interrupted"
        );
    }

    #[test]
    fn a_resident_actors_file_is_held_by_its_connection_alone() {
        let (_dir, path, db) = actor_db();
        let (_, shm) = crate::state_store::sidecars(&path);
        assert!(
            !shm.exists(),
            "the WAL-index lives in the connection, not in a -shm file"
        );
        let other = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        let read = other.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
        assert_eq!(
            read.err().and_then(|e| e.sqlite_error_code()),
            Some(rusqlite::ErrorCode::DatabaseBusy),
            "another connection cannot read beside it: reads go through the mailbox"
        );
        drop(db);
    }

    #[test]
    fn a_lent_connection_reads_only_and_comes_back_as_it_was() {
        let (_dir, _path, db) = actor_db();
        let mut ran = false;
        db.lend_for_reading(|conn| {
            assert_reads_only(conn.expect("lent"));
            ran = true;
        });
        assert!(ran);
        db.exec("INSERT INTO t VALUES (3, 'z')", &[])
            .expect("the actor writes again");
        assert!(
            matches!(
                db.exec("ATTACH 'o.db' AS o", &[]),
                Err(crate::sql_types::SqlError::NotAllowed(_))
            ),
            "its guard is back"
        );
        db.set_deadline(Some(Instant::now()));
        let slow = db.query(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
            &[],
        );
        assert!(slow.is_err() && db.timed_out(), "its deadline check is back");
        db.set_deadline(None);
        assert_eq!(
            db.query("SELECT count(*) FROM t", &[]).expect("count").rows,
            vec![vec![SqlValue::Integer(3)]]
        );
    }

    #[test]
    fn a_closed_database_is_read_on_a_connection_of_its_own() {
        let (dir, path, db) = actor_db();
        db.close().expect("close");
        let conn = open_for_reading(&path).expect("open");
        assert_reads_only(&conn);
        drop(conn);
        assert!(matches!(
            open_for_reading(&dir.path().join("none.db")),
            Err(LentReadError::NoDatabase)
        ));
        assert!(!dir.path().join("none.db").exists(), "nothing is created");
    }

    #[test]
    fn a_read_of_a_hibernated_actor_leaves_its_files_as_they_were() {
        let (_dir, path, db) = actor_db();
        db.close().expect("close");
        let sidecar = |ext: &str| {
            let mut p = path.clone().into_os_string();
            p.push(ext);
            std::path::PathBuf::from(p)
        };
        assert!(sidecar("-wal").exists(), "a hibernated actor keeps its WAL");
        let conn = open_for_reading(&path).expect("open");
        assert_reads_only(&conn);
        drop(conn);
        assert!(!sidecar("-shm").exists(), "the read made no -shm beside the file");
        assert!(sidecar("-wal").exists(), "the read left the actor's WAL in place");
    }

    #[test]
    fn a_reader_that_opens_the_file_beside_a_waking_actor_only_delays_it() {
        let (_dir, path, db) = actor_db();
        db.close().expect("close");
        let reader = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE).expect("open");
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t")
            .expect("read lock");
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            reader.execute_batch("COMMIT").expect("end");
        });
        let db = ActorDb::open(&path).expect("the wake waits for the reader");
        db.exec("INSERT INTO t VALUES (3, 'z')", &[]).expect("write");
        release.join().expect("reader");
    }
}
