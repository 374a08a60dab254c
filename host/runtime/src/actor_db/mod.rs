//! One actor's SQLite database, with the guard that keeps guest SQL inside it.
//!
//! Guest statements run under an authorizer that refuses, with `not-allowed`,
//! anything that reaches outside the actor's own database (ATTACH, VACUUM INTO,
//! load_extension, PRAGMAs that touch files or the journal), transaction
//! control written as SQL (the host must know whether a transaction is open),
//! and the host's own table `_wasmkeep_meta`, which holds the host metadata:
//! the on-init marker and the alarm. Metadata lives in the database so that it
//! goes with the data when the actor is deleted.
//!
//! The pieces, one file each, as workerd splits its actor SQLite: the guard
//! ([`guard`]), the transaction machine ([`transaction`]), the host's table
//! ([`host_table`]), the table dump and replication images ([`dump`]), the
//! one row reader ([`rows`]), SQLite's codes by name ([`sqlite_code`]) and
//! the guest's statements kept compiled beside the connection
//! ([`kept_statements`]).

mod batch;
mod data_version;
#[cfg(test)]
mod db_status;
mod dump;
mod guard;
mod guest_settings;
mod host_table;
mod kept_statements;
mod lent_read;
mod lookaside;
mod open_error;
mod persist_wal;
mod plain_path_vfs;
mod rows;
pub(crate) mod sqlite_code;
mod sqlite_error;
#[cfg(test)]
mod tests;
mod transaction;
mod wal_pages;

use crate::guest_counters::{HostChanges, register_total_changes};
use crate::sql_types::{QueryResult, SqlError, SqlValue, refusals};
use guard::Guard;
use host_table::{META_COLUMNS, migrate_meta_without_rowid};
use kept_statements::KeptConnection;
use rows::Param;
use rusqlite::hooks::AuthContext;
use rusqlite::{Connection, params_from_iter};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;
use transaction::TxMode;

use crate::unpoisoned::lock;
pub use guest_settings::GuestSettings;
pub use lent_read::{LENT_READ_TIME, LentReadError, open_for_reading};
pub use open_error::OpenError;
pub use wal_pages::PageChange;

/// How long an actor's statement waits for a lock another connection holds
/// (a listing reading a shortened name, `verify`) before it fails busy.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// Compiled statements rusqlite keeps for a connection: the host's own (the
/// guest's are kept beside the connection, [`kept_statements`]).
const STATEMENT_CACHE: usize = 8;

/// The host table guests may not touch.
pub const META_TABLE: &str = crate::state_store::HOST_TABLE;

/// Meta key: set once `on-init` returned for this database.
pub const META_INITIALIZED: &str = "initialized";
/// Meta key: the pending alarm, in ms since the epoch.
pub const META_ALARM: &str = "alarm";
/// Meta key: the deletion record (`<ms> <how>`) of the address's last deletion
/// before this database: a reset carries it, and a database created after a
/// single node's removal copies it from the removal record.
pub const META_DELETED: &str = "deleted";

/// The largest string or blob a guest statement may make or bind (64 MiB).
pub const MAX_VALUE_BYTES: i32 = 64 << 20;
/// The most a query's rows may add up to before the query is refused (64 MiB).
pub const MAX_RESULT_BYTES: usize = 64 << 20;

/// The most the admin API's table dump reads (its JSON is about twice this
/// at most, blobs being hex).
pub const MAX_DUMP_BYTES: usize = 16 << 20;
/// How long the admin API's table dump may read.
pub const DUMP_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// An open actor database.
#[derive(Debug)]
pub struct ActorDb {
    conn: KeptConnection,
    guard: Arc<Guard>,
    tx: std::cell::Cell<TxMode>,
    /// The quota [`ActorDb::set_quota`] set, for error messages.
    quota_bytes: std::cell::Cell<Option<u64>>,
    /// Rows the host's own writes changed, left out of the guest's `total_changes()`.
    host_changes: HostChanges,
    /// Set once the host table was seen to mark `on-init` as run: nothing
    /// removes the mark from an open database, so later events need not
    /// read it again (one statement less per event).
    initialized: std::cell::Cell<bool>,
    /// Where the last read of the WAL's pages stopped, while a cluster
    /// node tracks them (ADR 064).
    page_log: std::cell::RefCell<Option<wal_pages::PageLog>>,
}

/// How an `exec` runs its text.
enum Shape {
    /// Several statements allowed when there are no parameters.
    Batch,
    /// Exactly one statement.
    One,
}

impl ActorDb {
    /// Opens (or creates) the database at `path` in WAL mode and creates the host table.
    ///
    /// # Errors
    /// The process had no open file left ([`OpenError::OutOfFiles`]), or
    /// SQLite could not open or set up the file.
    pub fn open(path: &Path) -> Result<Self, OpenError> {
        Self::open_with(path, rusqlite::OpenFlags::default())
    }

    /// Opens the database at `path` as [`ActorDb::open`] does, but only if
    /// the file exists: a resting actor's database opening again (ADR 045)
    /// must not start over empty if its file went away.
    ///
    /// # Errors
    /// The file is missing, the process had no open file left, or SQLite
    /// could not open or set up the file.
    pub fn open_existing(path: &Path) -> Result<Self, OpenError> {
        Self::open_with(
            path,
            rusqlite::OpenFlags::default() - rusqlite::OpenFlags::SQLITE_OPEN_CREATE,
        )
    }

    fn open_with(path: &Path, flags: rusqlite::OpenFlags) -> Result<Self, OpenError> {
        // The path goes to the host's log, not into the message: the message
        // can reach an HTTP client, which has no business knowing the host's paths.
        let failed = |doing: &str, e: rusqlite::Error, out_of_files: bool| {
            tracing::warn!("{doing} {}: {e}", path.display());
            if out_of_files {
                return OpenError::OutOfFiles {
                    limit: crate::open_files::limit(),
                };
            }
            // SQLite's own message can carry the path: only its code's description goes out.
            let why = match &e {
                rusqlite::Error::SqliteFailure(code, _) => code.to_string(),
                other => other.to_string(),
            };
            OpenError::Sql(SqlError::Internal(format!("{doing} the actor's database: {why}")))
        };
        // SQLite says only that it could not open a file; whether the
        // process was out of files is what its failed `open` calls said,
        // which the VFS notes (ADR 055). One noted earlier on this thread
        // is not this open's.
        let _ = plain_path_vfs::take_open_shortage();
        let out_of_files = |e: &rusqlite::Error| {
            let shortage = plain_path_vfs::take_open_shortage();
            shortage && e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen)
        };
        // The host's own paths need none of SQLite's resolution (ADR 043).
        let conn = if plain_path_vfs::registered() {
            Connection::open_with_flags_and_vfs(path, flags, plain_path_vfs::NAME)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(|e| {
            let out = out_of_files(&e);
            failed("opening", e, out)
        })?;
        Self::configure(&conn)
            .map(|host_changes| Self::wrap(conn, host_changes))
            .map_err(|e| {
                let out = out_of_files(&e);
                failed("setting up", e, out)
            })
    }

    /// Sets the connection up for an actor; returns the host's share of its changes so far.
    fn configure(conn: &Connection) -> rusqlite::Result<HostChanges> {
        // First, before any statement takes a slot of the default lookaside.
        if let Err(code) = lookaside::make_small(conn) {
            tracing::debug!("SQLite kept its default lookaside (code {code}): 38 KiB more per open database");
        }
        // synchronous=NORMAL: an ordinary write is kept when the process dies and
        // is synced at the next checkpoint, as a node keeps an event's writes at its
        // end; exec-durable switches to FULL for its own commit.
        if let Err(code) = persist_wal::keep_wal_on_close(conn) {
            tracing::debug!("SQLite would not keep the WAL on close (code {code}): each wake creates it again");
        }
        // Exclusive locking before the first access in WAL mode: SQLite keeps
        // the WAL-index in the connection's heap instead of a shared `-shm`
        // file, so the first read of a wake neither maps nor rewrites it, and
        // no statement takes and drops shared-memory locks (ADR 040). Readers
        // from outside go through the actor's mailbox (`lent_read`); one that
        // opens the file anyway (the listing, `verify`) holds it for
        // microseconds, which the busy timeout waits out.
        conn.busy_timeout(BUSY_WAIT)?;
        conn.execute_batch(&format!(
            "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;
             PRAGMA journal_size_limit={}; PRAGMA wal_autocheckpoint={};
             CREATE TABLE IF NOT EXISTS main.{META_TABLE}{META_COLUMNS};",
            persist_wal::JOURNAL_SIZE_LIMIT,
            persist_wal::AUTOCHECKPOINT_PAGES
        ))?;
        migrate_meta_without_rowid(conn)?;
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
        // rusqlite's cache holds only the host's own statements (the host
        // table's read and writes, `exec`'s savepoint: up to six, ADR 041);
        // the guest's are kept beside the connection (ADR 056).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // The rows of the set-up (a migration of the host table) are the host's.
        let host_changes = HostChanges::default();
        host_changes.add(0, conn.total_changes());
        register_total_changes(conn, host_changes.clone())?;
        Ok(host_changes)
    }

    /// The actor's database over a connection [`ActorDb::configure`] set up.
    fn wrap(conn: Connection, host_changes: HostChanges) -> Self {
        let db = Self {
            conn: KeptConnection::new(conn),
            guard: Arc::new(Guard::default()),
            tx: std::cell::Cell::new(TxMode::Plain),
            quota_bytes: std::cell::Cell::new(None),
            host_changes,
            initialized: std::cell::Cell::new(false),
            page_log: std::cell::RefCell::new(None),
        };
        db.guard_connection();
        db
    }

    /// Puts the guard on the connection: its authorizer, and its deadline
    /// check every 10,000 steps.
    fn guard_connection(&self) {
        let g = self.guard.clone();
        self.conn.authorizer(Some(move |ctx: AuthContext<'_>| g.check(ctx)));
        let g = self.guard.clone();
        self.conn.progress_handler(10_000, Some(move || g.past_deadline()));
    }

    /// Caps the database at `bytes` (rounded down to whole pages): past it,
    /// writes fail with SQLite's "database or disk is full" (ADR 012).
    ///
    /// # Errors
    /// `internal` if SQLite refused the setting.
    pub fn set_quota(&self, bytes: u64) -> Result<(), SqlError> {
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("setting the actor's quota: {e}"));
        let page: u64 = self
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(internal)?;
        let pages = (bytes / page.max(512)).max(1);
        self.conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
            .map_err(internal)?;
        self.quota_bytes.set(Some(bytes));
        Ok(())
    }

    /// A counter that changes with every commit to the database, the
    /// host's own and one that changes only the schema or the header
    /// included: whether it changed between two readings tells whether an
    /// event wrote.
    pub fn data_version(&self) -> u32 {
        data_version::data_version(self)
    }

    /// Sets when guest SQL must stop (the event's deadline), or none.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        *lock(&self.guard.deadline) = deadline;
        self.guard.timed_out.store(false, Ordering::SeqCst);
    }

    /// True if the last guest statement was interrupted at the deadline: the
    /// event has run out of time and must end.
    pub fn timed_out(&self) -> bool {
        self.guard.timed_out.load(Ordering::SeqCst)
    }

    fn run(&self, sql: &str, params: &[SqlValue], shape: &Shape) -> Result<u64, SqlError> {
        match shape {
            Shape::One => self.guest(sql, |c| {
                c.with_kept(sql, |stmt| {
                    let n = stmt.execute(params_from_iter(params.iter().map(Param)))?;
                    Ok(n as u64)
                })
            }),
            // One PRAGMA changes no row, so it needs no savepoint; and SQLite
            // ignores some inside a transaction (`foreign_keys`), which a
            // savepoint opens: the guest's setting would be dropped unsaid.
            Shape::Batch if batch::is_one_pragma(sql) => self.guest(sql, |c| batch::run_text_counted(c, sql)),
            Shape::Batch => {
                // A batch runs inside a savepoint so that it changes nothing when
                // one of its statements is refused or fails.
                run_cached(&self.conn, &["SAVEPOINT wasmkeep_exec"]).map_err(|e| self.map_error(e))?;
                let r = self.guest(sql, |c| batch::run_text_counted(c, sql));
                let end: &[&str] = if r.is_ok() {
                    &["RELEASE wasmkeep_exec"]
                } else {
                    &["ROLLBACK TO wasmkeep_exec", "RELEASE wasmkeep_exec"]
                };
                if let Err(e) = run_cached(&self.conn, end) {
                    // ON CONFLICT ROLLBACK inside the batch already rolled the whole
                    // transaction back, savepoint included: nothing is left to undo.
                    if !self.conn.is_autocommit() {
                        return Err(self.map_error(e));
                    }
                }
                r
            }
        }
    }

    /// Runs guest SQL; see `storage.exec` in the WIT. A batch changes nothing
    /// unless all of it succeeds.
    ///
    /// # Errors
    /// `not-allowed` for forbidden statements, `sqlite` for SQLite's refusals.
    pub fn exec(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        let shape = if params.is_empty() { Shape::Batch } else { Shape::One };
        self.run(sql, params, &shape)
    }

    /// Runs one guest statement and syncs its commit to disk; see
    /// `storage.exec-durable` in the WIT. Inside `on-init` it runs in the
    /// host's transaction, whose commit is then synced.
    ///
    /// # Errors
    /// `not-allowed` inside a transaction or for forbidden statements, `sqlite`
    /// for SQLite's refusals, `internal` if the sync mode could not be set.
    pub fn exec_durable(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        if self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::OPEN_TRANSACTION.into()));
        }
        if let TxMode::Init { guest_open, .. } = self.mode() {
            self.tx.set(TxMode::Init {
                guest_open,
                durable: true,
            });
            return self.run(sql, params, &Shape::One);
        }
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("setting the sync mode: {e}"));
        self.conn.execute_batch("PRAGMA synchronous=FULL").map_err(internal)?;
        let r = self.run(sql, params, &Shape::One);
        self.conn.execute_batch("PRAGMA synchronous=NORMAL").map_err(internal)?;
        r
    }

    /// Runs one guest query; see `storage.query` in the WIT.
    ///
    /// # Errors
    /// `not-allowed` for forbidden statements, `sqlite` for SQLite's refusals
    /// (code 18, SQLITE_TOOBIG, when the rows exceed [`MAX_RESULT_BYTES`]).
    pub fn query(&self, sql: &str, params: &[SqlValue]) -> Result<QueryResult, SqlError> {
        let r = self.guest(sql, |c| {
            c.with_kept(sql, |stmt| {
                rows::read_rows(stmt, params_from_iter(params.iter().map(Param)), &mut 0, |bytes| {
                    (bytes > MAX_RESULT_BYTES).then_some(())
                })
            })
        })?;
        r.map_err(|()| SqlError::Sqlite {
            code: sqlite_code::TOOBIG,
            message: format!(
                "the rows add up to more than {} MiB: select fewer rows or columns (LIMIT/OFFSET)",
                MAX_RESULT_BYTES >> 20
            ),
        })
    }

    /// The file this connection opened, as it was given to [`ActorDb::open`].
    pub fn path(&self) -> Option<std::path::PathBuf> {
        self.conn.path().filter(|p| !p.is_empty()).map(std::path::PathBuf::from)
    }

    /// Closes the database (checkpointing the WAL).
    ///
    /// # Errors
    /// `internal` if SQLite could not close it cleanly.
    pub fn close(self) -> Result<(), SqlError> {
        self.close_inner()
    }

    /// Closes the database without folding the WAL into it first: for a
    /// delete, which removes both files next (the removal marker keeps a crash
    /// part way from exposing the older database file; ADR 003).
    ///
    /// # Errors
    /// `internal` if SQLite could not close it cleanly.
    pub fn close_for_delete(self) -> Result<(), SqlError> {
        let _ = self
            .conn
            .set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true);
        self.close_inner()
    }

    fn close_inner(self) -> Result<(), SqlError> {
        self.conn
            .close()
            .map_err(|e| SqlError::Internal(format!("closing the database: {e}")))
    }
}

/// Runs the host's own statements around a guest's, each from the
/// statement cache: they are the same few texts at every `exec`.
fn run_cached(conn: &Connection, statements: &[&str]) -> rusqlite::Result<()> {
    for sql in statements {
        conn.prepare_cached(sql)?.execute([])?;
    }
    Ok(())
}
