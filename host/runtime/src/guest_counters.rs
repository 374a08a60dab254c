//! What the guest's SQL reads of SQLite's per-connection counters. The host
//! writes its bookkeeping (alarm, on-init mark, meta) on the guest's own
//! connection, so that it commits with the guest's transaction; SQLite
//! counts those rows in `total_changes()`, which has no setter. The built-in
//! is replaced on the actor's connection by one that leaves the host's rows
//! out. (`changes()` and `last_insert_rowid()` are kept right another way,
//! see `ActorDb::meta_set`.)

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Rows the host changed on a connection, to leave out of `total_changes()`.
#[derive(Debug, Default, Clone)]
pub(crate) struct HostChanges(Arc<AtomicI64>);

impl HostChanges {
    /// Counts what the host changed between two readings of the real
    /// `total_changes()`.
    pub(crate) fn add(&self, before: u64, after: u64) {
        let n = i64::try_from(after.saturating_sub(before)).unwrap_or(i64::MAX);
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Replaces `total_changes()` on `conn` with the guest's own count: the real
/// one less `host`'s rows.
///
/// # Errors
/// SQLite refused to register the function.
pub(crate) fn register_total_changes(conn: &Connection, host: HostChanges) -> rusqlite::Result<()> {
    // Not DETERMINISTIC: the value changes with every write.
    conn.create_scalar_function("total_changes", 0, FunctionFlags::SQLITE_UTF8, move |ctx| {
        let real = real_total_changes(ctx)?;
        Ok(i64::try_from(real)
            .unwrap_or(i64::MAX)
            .saturating_sub(host.get())
            .max(0))
    })
}

/// The connection's real `total_changes()`, from inside a function call.
#[allow(unsafe_code)]
fn real_total_changes(ctx: &rusqlite::functions::Context<'_>) -> rusqlite::Result<u64> {
    // SAFETY: the reference is only used here, on the thread running the
    // statement that called the function, to read a counter of the very
    // connection it runs on; it is not kept or sent anywhere (rusqlite marks
    // get_connection unsafe for references sent across threads).
    let conn = unsafe { ctx.get_connection()? };
    Ok(conn.total_changes())
}
