//! The guard around guest SQL: the authorizer's rules, the deadline that
//! interrupts a statement, and the checks the authorizer cannot make (VACUUM,
//! renames onto the host's names).

use super::kept_statements::KeptConnection;
use super::{ActorDb, META_TABLE, lock, sqlite_code};
use crate::sql_types::SqlError;
use rusqlite::OptionalExtension;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

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

#[derive(Debug, Default)]
pub(super) struct Guard {
    /// True while guest SQL runs; the host's own statements pass unchecked.
    /// Set and read only on the thread that runs the statement (SQLite
    /// calls the authorizer and the progress handler from inside it), so
    /// `Relaxed` (a sequentially consistent store is a full barrier, twice
    /// per statement).
    pub(super) guest: AtomicBool,
    /// Why the authorizer refused the last statement.
    pub(super) denied: Mutex<Option<String>>,
    /// When the current event's time is up: guest SQL still running then is interrupted.
    pub(super) deadline: Mutex<Option<Instant>>,
    /// Set when a statement was interrupted at the deadline.
    pub(super) timed_out: AtomicBool,
    /// Set once guest SQL sets `case_sensitive_like`, which SQLite cannot
    /// read back: the connection then stays open while the actor rests
    /// (ADR 045), so the setting is not lost.
    pub(super) set_unreadable_pragma: AtomicBool,
}

impl Guard {
    fn deny(&self, why: String) -> Authorization {
        *lock(&self.denied) = Some(why);
        Authorization::Deny
    }

    /// Called every few thousand SQLite VM steps: true interrupts the statement.
    pub(super) fn past_deadline(&self) -> bool {
        if !self.guest.load(Ordering::Relaxed) {
            return false;
        }
        let late = lock(&self.deadline).is_some_and(|d| Instant::now() >= d);
        if late {
            self.timed_out.store(true, Ordering::SeqCst);
        }
        late
    }

    pub(super) fn check(&self, ctx: AuthContext<'_>) -> Authorization {
        if !self.guest.load(Ordering::Relaxed) {
            return Authorization::Allow;
        }
        let is_meta = |t: &str| t.to_ascii_lowercase().starts_with("_wasmkeep");
        match ctx.action {
            AuthAction::Attach { .. } | AuthAction::Detach { .. } => {
                self.deny("ATTACH and DETACH reach outside the actor's database".into())
            }
            AuthAction::Pragma {
                pragma_name,
                pragma_value,
            } => {
                if ALLOWED_PRAGMAS.iter().any(|p| p.eq_ignore_ascii_case(pragma_name)) {
                    if pragma_value.is_some() && pragma_name.eq_ignore_ascii_case("case_sensitive_like") {
                        self.set_unreadable_pragma.store(true, Ordering::Relaxed);
                    }
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

    pub(super) fn take_denial(&self) -> Option<String> {
        lock(&self.denied).take()
    }
}

/// Why TEMP objects are refused (ADR 012).
const TEMP_REFUSAL: &str = "TEMP tables, indexes, views and triggers are not available to actors: they would live \
                            outside the actor's database and its quota, and vanish when it hibernates; use a table \
                            in the database";

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

impl ActorDb {
    pub(super) fn guest<T>(
        &self,
        sql: &str,
        f: impl FnOnce(&KeptConnection) -> rusqlite::Result<T>,
    ) -> Result<T, SqlError> {
        // A text the connection keeps compiled passed these checks when it
        // was compiled, and holds no rename (ADR 056).
        let renames = !self.conn.is_kept(sql) && self.check_text(sql)?;
        if renames {
            self.conn
                .execute_batch("SAVEPOINT wasmkeep_rename")
                .map_err(|e| self.map_error(e))?;
        }
        // A denial is always followed by an error, which map_error consumes.
        self.guard.guest.store(true, Ordering::Relaxed);
        let r = f(&self.conn);
        self.guard.guest.store(false, Ordering::Relaxed);
        let r = r.map_err(|e| self.map_error(e));
        if renames {
            return self.check_renames(r);
        }
        r
    }

    /// The checks of a guest's text the authorizer cannot make. Returns
    /// whether the text renames: the authorizer sees only a renamed
    /// table's old name, so a rename is checked afterwards, and undone if it
    /// took a name of the host's.
    fn check_text(&self, sql: &str) -> Result<bool, SqlError> {
        if mentions_vacuum(sql) {
            return Err(SqlError::NotAllowed(
                "VACUUM is not available to actors: the host manages the database file".into(),
            ));
        }
        if sql.trim().trim_matches(';').trim().is_empty() {
            return Err(SqlError::Sqlite {
                code: sqlite_code::ERROR,
                message: "the SQL text is empty".into(),
            });
        }
        Ok(sql.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"RENAME")))
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
}
