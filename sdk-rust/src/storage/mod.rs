//! The actor's own SQLite database.
//!
//! Each actor has one database; nobody else reads it. Writes are kept when
//! the event ends; [`flush`] returns once the event's writes so far are kept
//! (the SDK calls it before it sends an answer), and [`exec_durable`] and
//! [`delete_self_durable`] return only once what they did is durable. Transactions are opened with [`begin`] (or
//! the [`transaction`] helper), never with SQL text; one still open when the
//! event ends, or when the event panics, is rolled back.
//!
//! Parameters are bound by position (`?1`, `?2`, ... or `?`) from anything
//! implementing [`Params`]: `[]`, the [`params!`](crate::params) macro, a
//! `Vec<Value>` or a `&[Value]`.
//!
//! ```no_run
//! use wasmkeep_actor::{params, storage};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! storage::exec("CREATE TABLE IF NOT EXISTS people(name TEXT, age INTEGER)", [])?;
//! storage::exec("INSERT INTO people VALUES (?1, ?2)", params!["Ada", 36])?;
//! let rows = storage::query("SELECT name, age FROM people WHERE age > ?1", params![18])?;
//! for row in &rows {
//!     let name: String = row.get("name")?;
//!     let age: i64 = row.get(1)?;
//!     wasmkeep_actor::context::info(format_args!("{name} is {age}"));
//! }
//! # Ok(())
//! # }
//! ```

mod from_value;
mod params;
mod rows;
mod sql_error;
mod value;

use crate::__private::bindings::wasmkeep::actor::storage as wit;

#[cfg(feature = "serde")]
pub use crate::serde_support::query_as;
pub use from_value::{FromValue, ValueError};
pub use params::Params;
use params::to_wit_params;
pub use rows::{ColumnIndex, Row, RowIter, Rows};
pub use sql_error::SqlError;
pub use value::Value;

/// Runs SQL and returns the number of rows it changed.
///
/// With parameters the text must be one statement; without parameters it
/// may be several statements separated by `;`, run in order.
///
/// To learn the id of a row you insert, use [`query`] with `INSERT … RETURNING
/// id`, or `SELECT last_insert_rowid()` after the insert (both are plain SQLite
/// and work here).
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::exec("CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB); CREATE INDEX i ON kv(v)", [])?;
/// let changed = storage::exec("INSERT INTO kv VALUES (?1, ?2)", params!["a", vec![1u8, 2]])?;
/// assert_eq!(changed, 1);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// - [`SqlError::Sqlite`] if SQLite refuses the statement (syntax,
///   constraint, ...).
/// - [`SqlError::NotAllowed`] for statements that reach outside the actor's
///   database (ATTACH, VACUUM INTO, load_extension, file PRAGMAs) or control
///   transactions in SQL, and after [`delete_self_durable`] succeeded in this
///   event ("deleted in this event").
/// - [`SqlError::Internal`] if the host failed.
pub fn exec(sql: &str, params: impl Params) -> Result<u64, SqlError> {
    wit::exec(sql, &to_wit_params(params)).map_err(SqlError::from_wit)
}

/// Runs one statement and returns its rows.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let rows = storage::query("SELECT count(*) AS n FROM sqlite_schema", [])?;
/// let n: i64 = rows.first().expect("one row").get("n")?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// The same as [`exec`].
pub fn query(sql: &str, params: impl Params) -> Result<Rows, SqlError> {
    let result = wit::query(sql, &to_wit_params(params)).map_err(SqlError::from_wit)?;
    Ok(Rows::new(
        result.columns,
        result
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(Value::from_wit).collect())
            .collect(),
    ))
}

/// Like [`exec`] (one statement), and returns only once the write is
/// durable: on one node, synced to disk; in a cluster, acknowledged by the
/// bucket.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::exec_durable("INSERT INTO payments(id) VALUES (?1)", params![42])?;
/// // Only now tell the client the payment is recorded.
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`exec`], and [`SqlError::NotAllowed`] ("open transaction") inside an
/// open transaction (nothing changes). [`SqlError::Internal`] means the
/// write is not known to be durable.
pub fn exec_durable(sql: &str, params: impl Params) -> Result<u64, SqlError> {
    wit::exec_durable(sql, &to_wit_params(params)).map_err(SqlError::from_wit)
}

/// Returns once every write this event has made so far is kept: what the
/// end of the event would keep, but before the answer goes out.
///
/// [`Responder::send`](crate::Responder::send) (and so the default
/// [`Actor::on_request_with`](crate::Actor::on_request_with)) and the answer
/// of [`Actor::on_call`](crate::Actor::on_call) call it for you, so a `200`
/// acknowledges the writes before it. Call it yourself before an answer that
/// leaves some other way (a socket message), or use it to know early.
///
/// In a cluster the database is uploaded if it changed since it was last
/// acknowledged; on one node committed writes are already kept (they survive
/// a crash of the host; [`exec_durable`] also syncs the disk), so it returns
/// at once. Since WIT 0.2.2.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::transaction(|| {
///     storage::exec("UPDATE accounts SET balance = balance - ?1 WHERE id = 1", params![5])?;
///     storage::exec("UPDATE accounts SET balance = balance + ?1 WHERE id = 2", params![5])?;
///     Ok::<_, wasmkeep_actor::SqlError>(())
/// })?;
/// storage::flush()?; // both updates are kept now, even in a cluster
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("open transaction") inside an open transaction:
/// commit first. [`SqlError::Internal`]: the writes are not known to be
/// kept (the upload may still land); the event's writes are then not kept,
/// and the next event restores what the bucket holds. Answer so that the
/// client retries.
pub fn flush() -> Result<(), SqlError> {
    wit::flush().map_err(SqlError::from_wit)
}

/// Opens a transaction. Prefer [`transaction`], which always closes it.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::begin()?;
/// storage::exec("UPDATE accounts SET balance = balance - 10 WHERE id = 1", [])?;
/// storage::exec("UPDATE accounts SET balance = balance + 10 WHERE id = 2", [])?;
/// storage::commit()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] if a transaction is already open or storage is
/// refused in this state; [`SqlError::Internal`] if the host failed.
pub fn begin() -> Result<(), SqlError> {
    wit::begin().map_err(SqlError::from_wit)
}

/// Commits the open transaction.
///
/// ```no_run
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// wasmkeep_actor::storage::commit()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("no open transaction") if none is open;
/// [`SqlError::Sqlite`] if SQLite refuses the commit (a deferred
/// constraint); [`SqlError::Internal`] if the host failed.
pub fn commit() -> Result<(), SqlError> {
    wit::commit().map_err(SqlError::from_wit)
}

/// Rolls the open transaction back.
///
/// ```no_run
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// wasmkeep_actor::storage::rollback()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("no open transaction") if none is open;
/// [`SqlError::Internal`] if the host failed.
pub fn rollback() -> Result<(), SqlError> {
    wit::rollback().map_err(SqlError::from_wit)
}

/// Runs `f` in a transaction: commits if it returns `Ok`, rolls back if it
/// returns `Err`. The error type only needs `From<SqlError>`, so `?` works on
/// storage calls inside.
///
/// If the rollback after an `Err` fails, `f`'s error is still returned (a
/// transaction left open is rolled back when the event ends). If the commit
/// fails, a rollback is attempted and the commit's error is returned. A panic
/// inside `f` traps the event, which rolls the transaction back.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage, SqlError};
///
/// fn transfer(from: i64, to: i64, amount: i64) -> Result<(), SqlError> {
///     storage::transaction(|| {
///         storage::exec("UPDATE acct SET bal = bal - ?1 WHERE id = ?2", params![amount, from])?;
///         storage::exec("UPDATE acct SET bal = bal + ?1 WHERE id = ?2", params![amount, to])?;
///         Ok(())
///     })
/// }
/// ```
///
/// # Errors
///
/// The error of [`begin`] or [`commit`] (converted into `E`), or the error
/// `f` returned.
pub fn transaction<T, E, F>(f: F) -> Result<T, E>
where
    F: FnOnce() -> Result<T, E>,
    E: From<SqlError>,
{
    begin()?;
    match f() {
        Ok(value) => match commit() {
            Ok(()) => Ok(value),
            Err(e) => {
                let _ = rollback();
                Err(e.into())
            }
        },
        Err(e) => {
            let _ = rollback();
            Err(e)
        }
    }
}

/// Deletes the actor when this event ends. Storage keeps working until then.
///
/// At the end of the event the alarm is forgotten, sockets are closed with
/// 1000 "actor deleted", the files are removed and the actor is given up; the
/// next event at this address meets a new, empty actor (`on_init` runs
/// again). In a cluster the delete is replicated when the event ends and is
/// lost if that upload fails; use [`delete_self_durable`] to know.
///
/// ```no_run
/// wasmkeep_actor::storage::delete_self();
/// ```
pub fn delete_self() {
    wit::delete_self();
}

/// Deletes the actor now, inside the call, so that the answer can follow it.
///
/// On `Ok` the actor is deleted and durable so; every later storage call in
/// this event is [`SqlError::NotAllowed`] ("deleted in this event"),
/// [`alarms::get`](crate::alarms::get) returns `None` and
/// [`alarms::set`](crate::alarms::set)/[`clear`](crate::alarms::clear) do
/// nothing. The rest happens when the event ends, as after [`delete_self`].
///
/// ```no_run
/// use wasmkeep_actor::{storage, Response, SqlError};
///
/// fn delete() -> Response {
///     match storage::delete_self_durable() {
///         Ok(()) => Response::text(200, "deleted"),
///         Err(SqlError::Internal(m)) => Response::text(503, format!("try again: {m}")),
///         Err(e) => Response::text(409, e.to_string()),
///     }
/// }
/// ```
///
/// # Errors
///
/// - [`SqlError::NotAllowed`] inside an open transaction: nothing changes
///   and the transaction stays open; commit or roll back first.
/// - [`SqlError::Internal`]: not known to be durable. On one node the files
///   could not be removed and storage stays refused; in a cluster the upload
///   may still land and this event's writes are not kept. Calling again is
///   safe.
pub fn delete_self_durable() -> Result<(), SqlError> {
    wit::delete_self_durable().map_err(SqlError::from_wit)
}

/// The bookmark of the actor's state as it is now: an opaque string naming a
/// position in the actor's history, which [`restore_on_next_session`] can go
/// back to. Bookmarks of one actor sort as their positions do: a later
/// state's sorts after an earlier one's. What the event wrote so far is made
/// durable first, as [`flush`] does. `None` where the host keeps no history
/// (a node served with `--no-history`; otherwise it is kept for the app's
/// retention window).
/// Durable Objects' `getCurrentBookmark`. Since WIT 0.2.4.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// if let Some(before) = storage::current_bookmark()? {
///     storage::exec("DELETE FROM items", [])?;
///     // Changed our mind: the next event sees the items again.
///     let undo = storage::restore_on_next_session(&before)?;
///     # let _ = undo;
/// }
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`flush`]: [`SqlError::NotAllowed`] inside an open transaction or after
/// [`delete_self_durable`]; [`SqlError::Internal`]: the writes are not known
/// to be kept.
pub fn current_bookmark() -> Result<Option<String>, SqlError> {
    wit::current_bookmark().map_err(SqlError::from_wit)
}

/// The bookmark of the last state written at or before `at_ms`
/// (milliseconds since the Unix epoch on the host's clock, as
/// [`context::now`](crate::context::now) gives it), or `None`: no state was
/// written by then, it lies before the actor's newest delete, or the host
/// keeps no history (a node served with `--no-history`). Durable Objects'
/// `getBookmarkForTime`. Since WIT 0.2.4.
///
/// # Errors
///
/// [`SqlError::Internal`]: the history could not be read.
pub fn bookmark_for_time(at_ms: u64) -> Result<Option<String>, SqlError> {
    wit::bookmark_for_time(at_ms).map_err(SqlError::from_wit)
}

/// Asks the host to restore the actor to `bookmark` once this event has
/// ended, and returns the bookmark that undoes it (the state as it is now,
/// made durable first as [`current_bookmark`] does). Durable Objects'
/// `onNextSessionRestoreBookmark`. Since WIT 0.2.4.
///
/// When the event ends with its writes kept, the state at `bookmark` becomes
/// the actor's newest state, before its next event: open sockets are closed
/// with 1012 "actor restored", the alarm becomes the restored state's, and
/// the next event starts a fresh instance on the restored state (`on_init`
/// does not run again). The last call of an event counts; an event that
/// deletes the actor, or whose writes are not kept, restores nothing. A
/// restore the host refuses then (a bookmark before the actor's newest
/// delete, or older than the retention window) changes nothing and is
/// logged by the host.
///
/// # Errors
///
/// [`SqlError::NotAllowed`] at once, nothing asked: `bookmark` is not a
/// bookmark, or sorts after the current state; the host keeps no history (a
/// node served with `--no-history`); inside an open transaction; after a
/// delete in this event. [`SqlError::Internal`]: the current state is not
/// known to be kept.
pub fn restore_on_next_session(bookmark: &str) -> Result<String, SqlError> {
    wit::restore_on_next_session(bookmark).map_err(SqlError::from_wit)
}
