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
//! Longer than the ~600 lines a file keeps to: the guard (the authorizer's
//! rules), the connection it guards and their tests are one concern, and
//! splitting the rules from the connection would let one change without the
//! other.

use crate::guest_counters::{HostChanges, register_total_changes};
use crate::sql_types::{QueryResult, SqlError, SqlValue, refusals};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, ToSql, params_from_iter};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

/// PRAGMAs a guest may run: they read or set per-connection behaviour of its
/// own database and touch no file.
const ALLOWED_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "foreign_keys",
    "defer_foreign_keys",
    "integrity_check",
    "quick_check",
    "user_version",
    "application_id",
    "data_version",
    "recursive_triggers",
    "case_sensitive_like",
    "collation_list",
    "function_list",
    "pragma_list",
    "module_list",
    "freelist_count",
    "page_count",
    "page_size",
];

/// The largest string or blob a guest statement may make or bind (64 MiB).
pub const MAX_VALUE_BYTES: i32 = 64 << 20;
/// The most a query's rows may add up to before the query is refused (64 MiB).
pub const MAX_RESULT_BYTES: usize = 64 << 20;

/// The most the admin API's table dump reads (its JSON is about twice this
/// at most, blobs being hex).
pub const MAX_DUMP_BYTES: usize = 16 << 20;
/// How long the admin API's table dump may read.
pub const DUMP_TIME: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Debug, Default)]
struct Guard {
    /// True while guest SQL runs; the host's own statements pass unchecked.
    guest: AtomicBool,
    /// Why the authorizer refused the last statement.
    denied: Mutex<Option<String>>,
    /// When the current event's time is up: guest SQL still running then is interrupted.
    deadline: Mutex<Option<Instant>>,
    /// Set when a statement was interrupted at the deadline.
    timed_out: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Guard {
    fn deny(&self, why: String) -> Authorization {
        *lock(&self.denied) = Some(why);
        Authorization::Deny
    }

    /// Called every few thousand SQLite VM steps: true interrupts the statement.
    fn past_deadline(&self) -> bool {
        if !self.guest.load(Ordering::SeqCst) {
            return false;
        }
        let late = lock(&self.deadline).is_some_and(|d| Instant::now() >= d);
        if late {
            self.timed_out.store(true, Ordering::SeqCst);
        }
        late
    }

    fn check(&self, ctx: AuthContext<'_>) -> Authorization {
        if !self.guest.load(Ordering::SeqCst) {
            return Authorization::Allow;
        }
        let is_meta = |t: &str| t.to_ascii_lowercase().starts_with("_wasmkeep");
        match ctx.action {
            AuthAction::Attach { .. } | AuthAction::Detach { .. } => {
                self.deny("ATTACH and DETACH reach outside the actor's database".into())
            }
            AuthAction::Pragma { pragma_name, .. } => {
                if ALLOWED_PRAGMAS.iter().any(|p| p.eq_ignore_ascii_case(pragma_name)) {
                    Authorization::Allow
                } else {
                    self.deny(format!(
                        "PRAGMA {pragma_name} is reserved to the host (it touches files or the journal)"
                    ))
                }
            }
            AuthAction::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
                self.deny("load_extension is not available to actors".into())
            }
            AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => {
                self.deny("transactions are opened with storage begin/commit/rollback, not with SQL text".into())
            }
            // The host's table, and any object named like it: a TEMP table of that
            // name would shadow it for the host's statements, a trigger on it would
            // run guest SQL when the host writes.
            AuthAction::Read { table_name, .. }
            | AuthAction::Insert { table_name }
            | AuthAction::Update { table_name, .. }
            | AuthAction::Delete { table_name }
            | AuthAction::DropTable { table_name }
            | AuthAction::DropTempTable { table_name }
            | AuthAction::CreateTable { table_name }
            | AuthAction::CreateTempTable { table_name }
            | AuthAction::AlterTable { table_name, .. }
            | AuthAction::CreateIndex { table_name, .. }
            | AuthAction::CreateTempIndex { table_name, .. }
            | AuthAction::CreateTrigger { table_name, .. }
            | AuthAction::CreateTempTrigger { table_name, .. }
            | AuthAction::CreateView { view_name: table_name }
            | AuthAction::CreateTempView { view_name: table_name }
            | AuthAction::CreateVtable { table_name, .. }
                if is_meta(table_name) =>
            {
                self.deny(format!("{table_name} is the host's table"))
            }
            AuthAction::CreateIndex { index_name: name, .. }
            | AuthAction::CreateTempIndex { index_name: name, .. }
            | AuthAction::CreateTrigger { trigger_name: name, .. }
            | AuthAction::CreateTempTrigger { trigger_name: name, .. }
                if is_meta(name) =>
            {
                self.deny(format!("{name} is a name reserved to the host"))
            }
            // A TEMP object lives outside the actor's database (in the system's
            // temp space, beyond the data directory and the actor's quota) and
            // is gone when the actor hibernates (ADR 012).
            AuthAction::CreateTempTable { .. }
            | AuthAction::CreateTempIndex { .. }
            | AuthAction::CreateTempTrigger { .. }
            | AuthAction::CreateTempView { .. } => self.deny(TEMP_REFUSAL.into()),
            // `CREATE TABLE temp.t` is reported as an ordinary create in the temp schema.
            AuthAction::CreateTable { .. }
            | AuthAction::CreateIndex { .. }
            | AuthAction::CreateTrigger { .. }
            | AuthAction::CreateView { .. }
                if ctx.database_name.is_some_and(|d| d.eq_ignore_ascii_case("temp")) =>
            {
                self.deny(TEMP_REFUSAL.into())
            }
            _ => Authorization::Allow,
        }
    }

    fn take_denial(&self) -> Option<String> {
        lock(&self.denied).take()
    }
}

/// Why TEMP objects are refused (ADR 012).
const TEMP_REFUSAL: &str = "TEMP tables, indexes, views and triggers are not available to actors: they would live \
                            outside the actor's database and its quota, and vanish when it hibernates; use a table \
                            in the database";

/// An open actor database.
#[derive(Debug)]
pub struct ActorDb {
    conn: Connection,
    guard: Arc<Guard>,
    tx: std::cell::Cell<TxMode>,
    /// The quota [`ActorDb::set_quota`] set, for error messages.
    quota_bytes: std::cell::Cell<Option<u64>>,
    /// Rows the host's own writes changed, left out of the guest's `total_changes()`.
    host_changes: HostChanges,
}

/// Whose transaction is open. `on-init` runs inside one of the host's, so
/// that its writes and the mark that it ran commit together: a trap or a
/// crash inside it leaves nothing, and the next event runs it again on an
/// empty database (ADR 012). The guest's own transaction calls then use a
/// savepoint inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxMode {
    /// No host transaction: the guest's `begin` is SQLite's `BEGIN`.
    Plain,
    /// Inside `on-init`'s host transaction.
    Init {
        /// The guest's `begin` opened its savepoint.
        guest_open: bool,
        /// An `exec-durable` ran: the commit is synced.
        durable: bool,
    },
}

struct Param<'a>(&'a SqlValue);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(f) => ValueRef::Real(*f),
            SqlValue::Text(s) => ValueRef::Text(s.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn from_value_ref(v: ValueRef<'_>) -> SqlValue {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
    }
}

fn value_bytes(v: &SqlValue) -> usize {
    match v {
        SqlValue::Text(t) => t.len(),
        SqlValue::Blob(b) => b.len(),
        _ => 8,
    }
}

/// True if the SQL text, comments, quoted strings and case aside, has the
/// keyword `VACUUM`: plain VACUUM needs an attach the host forbids, and VACUUM
/// INTO writes a file; neither reaches the authorizer as such.
fn mentions_vacuum(sql: &str) -> bool {
    // Most statements do not contain the letters at all: skip the tokenizer.
    if !sql.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"vacuum")) {
        return false;
    }
    let mut cur = String::new();
    let mut chars = sql.chars().peekable();
    let mut found = false;
    let mut end_word = |cur: &mut String| {
        if cur == "VACUUM" {
            found = true;
        }
        cur.clear();
    };
    while let Some(c) = chars.next() {
        if matches!(c, '\'' | '"' | '`' | '[') {
            let close = if c == '[' { ']' } else { c };
            for c2 in chars.by_ref() {
                if c2 == close {
                    break;
                }
            }
        } else if c == '-' && chars.peek() == Some(&'-') {
            for c2 in chars.by_ref() {
                if c2 == '\n' {
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for c2 in chars.by_ref() {
                if prev == '*' && c2 == '/' {
                    break;
                }
                prev = c2;
            }
        } else if c.is_alphanumeric() || c == '_' {
            cur.push(c.to_ascii_uppercase());
            continue;
        }
        end_word(&mut cur);
    }
    end_word(&mut cur);
    found
}

/// Why the admin API's table dump stopped early.
enum DumpStop {
    TooLarge,
    TooSlow,
}

/// The host table's columns. WITHOUT ROWID: SQLite does not record inserts
/// into such a table in `last_insert_rowid()`, so the host's writes (an
/// alarm, the on-init mark) never change what the guest's SQL reads there
/// (issue: "nothing the host does may be visible to the guest's SQL").
const META_COLUMNS: &str = "(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID";

/// A database made before the host table was WITHOUT ROWID gets the new
/// table, with its rows, in one transaction.
fn migrate_meta_without_rowid(conn: &Connection) -> rusqlite::Result<()> {
    let sql: String = conn.query_row(
        "SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = ?1",
        [META_TABLE],
        |r| r.get(0),
    )?;
    if sql.to_ascii_uppercase().contains("WITHOUT ROWID") {
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

/// Above this many rows, [`ActorDb::meta_set`] does not put `changes()` back
/// (it would insert and roll back that many rows).
const MOST_CHANGES_RESTORED: u64 = 100_000;

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
    /// SQLite could not open or set up the file.
    pub fn open(path: &Path) -> Result<Self, SqlError> {
        // The path goes to the host's log, not into the message: the message
        // can reach an HTTP client, which has no business knowing the host's paths.
        let failed = |doing: &str, e: rusqlite::Error| {
            tracing::warn!("{doing} {}: {e}", path.display());
            // SQLite's own message can carry the path: only its code's description goes out.
            let why = match &e {
                rusqlite::Error::SqliteFailure(code, _) => code.to_string(),
                other => other.to_string(),
            };
            SqlError::Internal(format!("{doing} the actor's database: {why}"))
        };
        let conn = Connection::open(path).map_err(|e| failed("opening", e))?;
        Self::setup(conn).map_err(|e| failed("setting up", e))
    }

    fn setup(conn: Connection) -> rusqlite::Result<Self> {
        // synchronous=NORMAL: an ordinary write is kept when the process dies and
        // is synced at the next checkpoint, as a node keeps an event's writes at its
        // end; exec-durable switches to FULL for its own commit.
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;
             CREATE TABLE IF NOT EXISTS main.{META_TABLE}{META_COLUMNS};"
        ))?;
        migrate_meta_without_rowid(&conn)?;
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_ATTACHED, 0)?;
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)?;
        let guard = Arc::new(Guard::default());
        let g = guard.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| g.check(ctx)));
        let g = guard.clone();
        conn.progress_handler(10_000, Some(move || g.past_deadline()));
        // The rows of the set-up (a migration of the host table) are the host's.
        let host_changes = HostChanges::default();
        host_changes.add(0, conn.total_changes());
        register_total_changes(&conn, host_changes.clone())?;
        Ok(Self {
            conn,
            guard,
            tx: std::cell::Cell::new(TxMode::Plain),
            quota_bytes: std::cell::Cell::new(None),
            host_changes,
        })
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

    fn guest<T>(&self, sql: &str, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, SqlError> {
        if mentions_vacuum(sql) {
            return Err(SqlError::NotAllowed(
                "VACUUM is not available to actors: the host manages the database file".into(),
            ));
        }
        if sql.trim().trim_matches(';').trim().is_empty() {
            return Err(SqlError::Sqlite {
                code: 1,
                message: "the SQL text is empty".into(),
            });
        }
        // The authorizer sees only a renamed table's old name: a rename is
        // checked afterwards, and undone if it took a name of the host's.
        let renames = sql.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"RENAME"));
        if renames {
            self.conn
                .execute_batch("SAVEPOINT wasmkeep_rename")
                .map_err(|e| self.map_error(e))?;
        }
        // A denial is always followed by an error, which map_error consumes.
        self.guard.guest.store(true, Ordering::SeqCst);
        let r = f(&self.conn);
        self.guard.guest.store(false, Ordering::SeqCst);
        let r = r.map_err(|e| self.map_error(e));
        if renames {
            return self.check_renames(r);
        }
        r
    }

    /// Ends the savepoint around a guest statement that renames: undone if a
    /// table, index, view or trigger now has a name reserved to the host.
    fn check_renames<T>(&self, r: Result<T, SqlError>) -> Result<T, SqlError> {
        let taken: Option<String> = self
            .conn
            .query_row(
                &format!(
                    "SELECT name FROM main.sqlite_schema WHERE name LIKE '\\_wasmkeep%' ESCAPE '\\' AND name != '{META_TABLE}' \
                     AND name NOT LIKE 'sqlite_autoindex_{META_TABLE}%' LIMIT 1"
                ),
                [],
                |row| row.get(0),
            )
            .optional()
            .unwrap_or(None);
        let end = if r.is_ok() && taken.is_none() {
            "RELEASE wasmkeep_rename"
        } else {
            "ROLLBACK TO wasmkeep_rename; RELEASE wasmkeep_rename"
        };
        // SQLite may have ended the transaction itself (ON CONFLICT ROLLBACK).
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch(end);
        }
        match taken {
            Some(name) if r.is_ok() => Err(SqlError::NotAllowed(format!("{name} is a name reserved to the host"))),
            _ => r,
        }
    }

    fn map_error(&self, e: rusqlite::Error) -> SqlError {
        if let Some(why) = self.guard.take_denial() {
            return SqlError::NotAllowed(why);
        }
        match e {
            rusqlite::Error::SqliteFailure(err, _) if err.extended_code & 0xff == 13 => SqlError::Sqlite {
                code: 13,
                message: self.full_message(),
            },
            rusqlite::Error::SqliteFailure(err, msg) => SqlError::Sqlite {
                code: err.extended_code & 0xff,
                message: msg.unwrap_or_else(|| err.to_string()),
            },
            rusqlite::Error::InvalidParameterCount(given, expected) => SqlError::Sqlite {
                code: 25,
                message: format!("the statement takes {expected} parameters, {given} were given"),
            },
            rusqlite::Error::MultipleStatement => SqlError::Sqlite {
                code: 1,
                message: "the text must be one statement here (with parameters, in query and in exec-durable)".into(),
            },
            other => SqlError::Sqlite {
                code: 1,
                message: other.to_string(),
            },
        }
    }

    /// SQLITE_FULL's message: the actor's quota, or the host's disk. The
    /// failed statement's pages are gone again, so the page count cannot
    /// tell; the disk's free space can (under 1 MiB free: the disk is full).
    fn full_message(&self) -> String {
        let disk_free = self
            .conn
            .path()
            .and_then(|p| Path::new(p).parent().map(Path::to_path_buf))
            .and_then(|dir| rustix::fs::statvfs(&dir).ok())
            .map(|v| v.f_bavail.saturating_mul(v.f_frsize));
        let disk_full = disk_free.is_some_and(|free| free < 1 << 20);
        match self.quota_bytes.get() {
            Some(q) if !disk_full => format!(
                "the actor's database is at its quota of {} MiB: delete rows (or delete the actor) to write again \
                 (the host's operator sets the quota: serve --max-actor-mib)",
                q >> 20
            ),
            _ => "the host's disk is full: the write was not made; deleting rows or actors frees space".into(),
        }
    }

    fn run(&self, sql: &str, params: &[SqlValue], shape: &Shape) -> Result<u64, SqlError> {
        match shape {
            Shape::One => self.guest(sql, |c| {
                let mut stmt = c.prepare_cached(sql)?;
                let n = stmt.execute(params_from_iter(params.iter().map(Param)))?;
                Ok(n as u64)
            }),
            Shape::Batch => {
                // A batch runs inside a savepoint so that it changes nothing when
                // one of its statements is refused or fails.
                self.conn
                    .execute_batch("SAVEPOINT wasmkeep_exec")
                    .map_err(|e| self.map_error(e))?;
                let r = self.guest(sql, |c| {
                    let before = c.total_changes();
                    c.execute_batch(sql)?;
                    Ok(c.total_changes().saturating_sub(before))
                });
                let end = if r.is_ok() {
                    "RELEASE wasmkeep_exec"
                } else {
                    "ROLLBACK TO wasmkeep_exec; RELEASE wasmkeep_exec"
                };
                if let Err(e) = self.conn.execute_batch(end) {
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

    /// Where the transactions stand, noticing when SQLite itself rolled the
    /// host's `on-init` transaction back (an `ON CONFLICT ROLLBACK`): the
    /// guest's statements after it run on their own, as they would outside.
    fn mode(&self) -> TxMode {
        let mode = self.tx.get();
        if matches!(mode, TxMode::Init { .. }) && self.conn.is_autocommit() {
            self.tx.set(TxMode::Plain);
            return TxMode::Plain;
        }
        mode
    }

    /// Opens the host's transaction around `on-init`.
    ///
    /// # Errors
    /// `internal` if SQLite could not begin it.
    pub fn begin_init(&self) -> Result<(), SqlError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| SqlError::Internal(format!("opening on-init's transaction: {e}")))?;
        self.tx.set(TxMode::Init {
            guest_open: false,
            durable: false,
        });
        Ok(())
    }

    /// `on-init` returned: rolls back a transaction of the guest's it left
    /// open (true if there was one), marks the database initialized, keeps
    /// the actor's full `name` (its file name may be shortened with a hash)
    /// and commits these with what `on-init` wrote.
    ///
    /// # Errors
    /// `internal` if the mark or the commit failed (nothing of `on-init` is
    /// then kept).
    pub fn finish_init(&self, name: &str) -> Result<bool, SqlError> {
        let mode = self.mode();
        let left_open = self.rollback_if_open();
        let durable = matches!(mode, TxMode::Init { durable: true, .. });
        let r = self
            .meta_set(crate::state_store::META_NAME, Some(name))
            .and_then(|()| self.meta_set(META_INITIALIZED, Some("1")))
            .and_then(|()| {
                if self.conn.is_autocommit() {
                    return Ok(());
                }
                let internal = |e: rusqlite::Error| SqlError::Internal(format!("committing on-init: {e}"));
                if durable {
                    self.conn.execute_batch("PRAGMA synchronous=FULL").map_err(internal)?;
                }
                let committed = self.conn.execute_batch("COMMIT").map_err(internal);
                if durable {
                    self.conn.execute_batch("PRAGMA synchronous=NORMAL").map_err(internal)?;
                }
                committed
            });
        if r.is_err() {
            self.abort_init();
        }
        self.tx.set(TxMode::Plain);
        r.map(|()| left_open)
    }

    /// `on-init` failed: nothing it wrote is kept.
    pub fn abort_init(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.tx.set(TxMode::Plain);
    }

    /// Runs one guest query; see `storage.query` in the WIT.
    ///
    /// # Errors
    /// `not-allowed` for forbidden statements, `sqlite` for SQLite's refusals
    /// (code 18, SQLITE_TOOBIG, when the rows exceed [`MAX_RESULT_BYTES`]).
    pub fn query(&self, sql: &str, params: &[SqlValue]) -> Result<QueryResult, SqlError> {
        let r = self.guest(sql, |c| {
            let mut stmt = c.prepare_cached(sql)?;
            let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
            let n = columns.len();
            let mut rows = stmt.query(params_from_iter(params.iter().map(Param)))?;
            let mut out = Vec::new();
            let mut bytes = 0usize;
            while let Some(row) = rows.next()? {
                let mut values = Vec::with_capacity(n);
                for i in 0..n {
                    let v = from_value_ref(row.get_ref(i)?);
                    bytes += value_bytes(&v);
                    values.push(v);
                }
                if bytes > MAX_RESULT_BYTES {
                    return Ok(Err(()));
                }
                out.push(values);
            }
            Ok(Ok(QueryResult { columns, rows: out }))
        })?;
        r.map_err(|()| SqlError::Sqlite {
            code: 18,
            message: format!(
                "the rows add up to more than {} MiB: select fewer rows or columns (LIMIT/OFFSET)",
                MAX_RESULT_BYTES >> 20
            ),
        })
    }

    /// True inside `on-init` (the host's transaction around it is open).
    pub fn in_init(&self) -> bool {
        matches!(self.mode(), TxMode::Init { .. })
    }

    /// True while a transaction of the guest's is open.
    pub fn in_transaction(&self) -> bool {
        match self.mode() {
            TxMode::Plain => !self.conn.is_autocommit(),
            TxMode::Init { guest_open, .. } => guest_open,
        }
    }

    /// Opens a transaction (inside `on-init`, a savepoint in the host's).
    ///
    /// # Errors
    /// `not-allowed` if one is open.
    pub fn begin(&self) -> Result<(), SqlError> {
        if self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::TRANSACTION_ALREADY_OPEN.into()));
        }
        match self.mode() {
            TxMode::Plain => self.conn.execute_batch("BEGIN").map_err(|e| self.map_error(e)),
            TxMode::Init { durable, .. } => {
                self.conn
                    .execute_batch("SAVEPOINT wasmkeep_guest_tx")
                    .map_err(|e| self.map_error(e))?;
                self.tx.set(TxMode::Init {
                    guest_open: true,
                    durable,
                });
                Ok(())
            }
        }
    }

    /// Commits the open transaction.
    ///
    /// # Errors
    /// `not-allowed` if none is open; `sqlite` if the commit failed (deferred constraints).
    pub fn commit(&self) -> Result<(), SqlError> {
        if !self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::NO_TRANSACTION.into()));
        }
        self.end_guest_tx("COMMIT", "RELEASE wasmkeep_guest_tx")
    }

    /// Rolls back the open transaction.
    ///
    /// # Errors
    /// `not-allowed` if none is open.
    pub fn rollback(&self) -> Result<(), SqlError> {
        if !self.in_transaction() {
            return Err(SqlError::NotAllowed(refusals::NO_TRANSACTION.into()));
        }
        self.end_guest_tx("ROLLBACK", "ROLLBACK TO wasmkeep_guest_tx; RELEASE wasmkeep_guest_tx")
    }

    fn end_guest_tx(&self, plain: &str, in_init: &str) -> Result<(), SqlError> {
        match self.mode() {
            TxMode::Plain => self.conn.execute_batch(plain).map_err(|e| self.map_error(e)),
            TxMode::Init { durable, .. } => {
                let r = self.conn.execute_batch(in_init).map_err(|e| self.map_error(e));
                self.tx.set(TxMode::Init {
                    guest_open: false,
                    durable,
                });
                r
            }
        }
    }

    /// Rolls back a transaction of the guest's left open (event end, trap);
    /// true if there was one.
    pub fn rollback_if_open(&self) -> bool {
        if self.in_transaction() {
            let _ = self.rollback();
            true
        } else {
            false
        }
    }

    /// Reads a host meta value.
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn meta_get(&self, key: &str) -> Result<Option<String>, SqlError> {
        self.conn
            .query_row(
                &format!("SELECT value FROM main.{META_TABLE} WHERE key = ?1"),
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| SqlError::Internal(format!("reading host metadata: {e}")))
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
            Some(v) => self.conn.execute(
                &format!("INSERT INTO main.{META_TABLE}(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
                [key, v],
            ),
            None => self.conn.execute(&format!("DELETE FROM main.{META_TABLE} WHERE key = ?1"), [key]),
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

    /// The guest's tables and their rows (the host's table left out), for
    /// the admin API. Reading a table runs SQL the guest defined (generated
    /// columns), so it is bounded as a guest query is: the rows may add up to
    /// [`MAX_DUMP_BYTES`] and the reading to [`DUMP_TIME`].
    ///
    /// # Errors
    /// `sqlite` with code 18 (SQLITE_TOOBIG) past the size, 9 (SQLITE_INTERRUPT)
    /// past the time; `internal` if SQLite failed otherwise.
    pub fn dump_tables(&self) -> Result<Vec<(String, QueryResult)>, SqlError> {
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("reading tables: {e}"));
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_wasmkeep%' ESCAPE '\\' ORDER BY name")
            .map_err(internal)?;
        let names: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(internal)?
            .collect::<Result<_, _>>()
            .map_err(internal)?;
        let too_large = || SqlError::Sqlite {
            code: 18,
            message: format!(
                "the actor's tables hold more than {} MiB: read them through the actor (LIMIT/OFFSET)",
                MAX_DUMP_BYTES >> 20
            ),
        };
        let too_slow = || SqlError::Sqlite {
            code: 9,
            message: format!(
                "reading the actor's tables took more than {} s: read them through the actor",
                DUMP_TIME.as_secs()
            ),
        };
        let deadline = Instant::now() + DUMP_TIME;
        self.set_deadline(Some(deadline));
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut result = Ok(());
        for name in names {
            let quoted = format!("\"{}\"", name.replace('"', "\"\""));
            let sql = format!("SELECT * FROM {quoted}");
            let read = self.guest(&sql, |c| {
                let mut s = c.prepare(&sql)?;
                let columns: Vec<String> = s.column_names().into_iter().map(str::to_owned).collect();
                let n = columns.len();
                let mut rows = s.query([])?;
                let mut out_rows = Vec::new();
                while let Some(row) = rows.next()? {
                    let mut values = Vec::with_capacity(n);
                    for i in 0..n {
                        let v = from_value_ref(row.get_ref(i)?);
                        bytes += value_bytes(&v);
                        values.push(v);
                    }
                    if bytes > MAX_DUMP_BYTES {
                        return Ok(Err(DumpStop::TooLarge));
                    }
                    // SQLite's progress handler counts statements' steps, not
                    // the time one function call of a generated column takes.
                    if Instant::now() >= deadline {
                        return Ok(Err(DumpStop::TooSlow));
                    }
                    out_rows.push(values);
                }
                Ok(Ok(QueryResult {
                    columns,
                    rows: out_rows,
                }))
            });
            match read {
                Ok(Ok(r)) => out.push((name, r)),
                Ok(Err(DumpStop::TooLarge)) => {
                    result = Err(too_large());
                    break;
                }
                Ok(Err(DumpStop::TooSlow)) => {
                    result = Err(too_slow());
                    break;
                }
                Err(_) if self.timed_out() => {
                    result = Err(too_slow());
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.set_deadline(None);
        result.map(|()| out)
    }

    /// The whole database as one image (what a cluster uploads after an event).
    ///
    /// # Errors
    /// `internal` if SQLite could not serialise it.
    pub fn image(&self) -> Result<Vec<u8>, SqlError> {
        self.conn
            .serialize(rusqlite::MAIN_DB)
            .map(|d| d.to_vec())
            .map_err(|e| SqlError::Internal(format!("reading the database image: {e}")))
    }

    /// The image of an empty actor database whose host table holds `marks`
    /// (a reset carries when and how the actor was deleted).
    ///
    /// # Errors
    /// `internal` if SQLite failed.
    pub fn empty_image(marks: &[(&str, &str)]) -> Result<Vec<u8>, SqlError> {
        let internal = |e: rusqlite::Error| SqlError::Internal(format!("building an empty database: {e}"));
        let conn = Connection::open_in_memory().map_err(internal)?;
        conn.execute_batch(&format!("CREATE TABLE main.{META_TABLE}{META_COLUMNS};"))
            .map_err(internal)?;
        for (k, v) in marks {
            conn.execute(
                &format!("INSERT INTO main.{META_TABLE}(key, value) VALUES(?1, ?2)"),
                [k, v],
            )
            .map_err(internal)?;
        }
        conn.serialize(rusqlite::MAIN_DB).map(|d| d.to_vec()).map_err(internal)
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
            .map_err(|(_, e)| SqlError::Internal(format!("closing the database: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, ActorDb) {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = ActorDb::open(&dir.path().join("a.db")).expect("open");
        (dir, db)
    }

    #[test]
    fn a_database_from_before_keeps_its_host_rows_in_a_table_without_rowid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("old.db");
        let old = Connection::open(&path).expect("open");
        old.execute_batch(&format!(
            "CREATE TABLE {META_TABLE}(key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO {META_TABLE} VALUES ('{META_INITIALIZED}', '1');"
        ))
        .expect("old schema");
        drop(old);
        let db = ActorDb::open(&path).expect("open");
        assert_eq!(db.meta_get(META_INITIALIZED).expect("get").as_deref(), Some("1"));
        let sql: String = db
            .conn
            .query_row("SELECT sql FROM sqlite_schema WHERE name = ?1", [META_TABLE], |r| {
                r.get(0)
            })
            .expect("schema");
        assert!(sql.contains("WITHOUT ROWID"), "{sql}");
    }

    #[test]
    fn a_host_write_leaves_the_guests_total_changes_as_it_was() {
        let (_d, db) = db();
        let total = |db: &ActorDb| db.query("SELECT total_changes()", &[]).expect("query").rows;
        db.exec("CREATE TABLE t(x)", &[]).expect("create");
        db.exec("INSERT INTO t VALUES (1), (2), (3)", &[]).expect("insert");
        db.meta_set("alarm", Some("1000")).expect("meta");
        assert_eq!(total(&db), vec![vec![SqlValue::Integer(3)]], "the host's row left out");
        db.exec("UPDATE t SET x = x + 1 WHERE x < 3", &[]).expect("update");
        db.meta_set("alarm", None).expect("meta");
        db.meta_set("alarm", Some("2000")).expect("meta");
        assert_eq!(total(&db), vec![vec![SqlValue::Integer(5)]], "and its put-back rows");
    }

    #[test]
    fn a_host_write_leaves_the_guests_changes_and_rowid_as_they_were() {
        let (_d, db) = db();
        let read = |db: &ActorDb| {
            db.query("SELECT changes(), last_insert_rowid()", &[])
                .expect("query")
                .rows
        };
        db.exec("CREATE TABLE t(x)", &[]).expect("create");
        db.meta_set("k", Some("v")).expect("meta");
        assert_eq!(
            read(&db),
            vec![vec![SqlValue::Integer(0), SqlValue::Integer(0)]],
            "0 changes put back"
        );
        db.exec("INSERT INTO t VALUES (1), (2)", &[]).expect("insert");
        db.meta_set("k", None).expect("meta");
        db.meta_set("k", Some("w")).expect("meta");
        assert_eq!(
            read(&db),
            vec![vec![SqlValue::Integer(2), SqlValue::Integer(2)]],
            "2 changes put back"
        );
    }

    #[test]
    fn every_value_type_round_trips() {
        let (_d, db) = db();
        let vals = vec![
            SqlValue::Null,
            SqlValue::Integer(i64::MIN),
            SqlValue::Real(1.5),
            SqlValue::Text("ü".into()),
            SqlValue::Blob(vec![0, 255]),
        ];
        let r = db.query("SELECT ?1, ?2, ?3, ?4, ?5", &vals).expect("query");
        assert_eq!(r.rows, vec![vals], "parameters come back as the same sql-values");
    }

    #[test]
    fn statements_reaching_outside_are_not_allowed() {
        let (d, db) = db();
        let outside = d.path().join("other.db");
        for sql in [
            format!("ATTACH '{}' AS x", outside.display()),
            format!("VACUUM INTO '{}'", outside.display()),
            "/* c */ vacuum   into 'x.db'".to_owned(),
            "SELECT load_extension('x')".to_owned(),
            "PRAGMA journal_mode=DELETE".to_owned(),
            "PRAGMA writable_schema=ON".to_owned(),
            "BEGIN".to_owned(),
            "SAVEPOINT s".to_owned(),
            format!("SELECT * FROM {META_TABLE}"),
            format!("DROP TABLE {META_TABLE}"),
        ] {
            let e = db.exec(&sql, &[]).expect_err(&sql);
            assert_eq!(
                e.kind(),
                "not-allowed",
                "{sql} must be refused with not-allowed, got {e}"
            );
        }
        assert!(
            !outside.exists(),
            "no refused statement created a file outside the actor's database"
        );
        db.exec("PRAGMA user_version = 3", &[])
            .expect("harmless pragmas are allowed");
    }

    #[test]
    fn sqlite_failures_carry_the_primary_code() {
        let (_d, db) = db();
        db.exec("CREATE TABLE t(x PRIMARY KEY)", &[]).expect("create");
        db.exec("INSERT INTO t VALUES(?1)", &[SqlValue::Integer(1)])
            .expect("insert");
        let e = db
            .exec("INSERT INTO t VALUES(?1)", &[SqlValue::Integer(1)])
            .expect_err("dup");
        assert!(
            matches!(e, SqlError::Sqlite { code: 19, .. }),
            "a constraint failure is sqlite code 19: {e}"
        );
        let e = db.exec("SELEC 1", &[]).expect_err("syntax");
        assert!(
            matches!(e, SqlError::Sqlite { code: 1, .. }),
            "a syntax error is sqlite code 1: {e}"
        );
    }

    #[test]
    fn transactions_are_tracked() {
        let (_d, db) = db();
        db.exec("CREATE TABLE t(x)", &[]).expect("create");
        db.begin().expect("begin");
        assert_eq!(
            db.begin().expect_err("twice").kind(),
            "not-allowed",
            "begin inside a transaction is refused"
        );
        db.exec("INSERT INTO t VALUES(1)", &[]).expect("insert");
        db.rollback().expect("rollback");
        assert_eq!(
            db.query("SELECT count(*) FROM t", &[]).expect("count").rows[0][0],
            SqlValue::Integer(0),
            "rollback discards the write"
        );
        assert_eq!(
            db.commit().expect_err("no txn").kind(),
            "not-allowed",
            "commit without begin is refused"
        );
    }

    #[test]
    fn meta_is_invisible_to_dump() {
        let (_d, db) = db();
        db.meta_set(META_INITIALIZED, Some("1")).expect("meta");
        db.exec("CREATE TABLE t(x); INSERT INTO t VALUES(1)", &[])
            .expect("batch");
        let tables = db.dump_tables().expect("dump");
        assert_eq!(tables.len(), 1, "the host table is not listed: {tables:?}");
        assert_eq!(
            db.meta_get(META_INITIALIZED).expect("get").as_deref(),
            Some("1"),
            "meta reads back"
        );
    }
}
