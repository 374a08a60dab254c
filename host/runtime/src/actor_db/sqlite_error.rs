//! SQLite's failures as the WIT's `sql-error`: a refusal of the guard is
//! `not-allowed`, anything else keeps SQLite's primary code.

use super::{ActorDb, sqlite_code};
use crate::sql_types::SqlError;
use std::path::Path;

impl ActorDb {
    pub(super) fn map_error(&self, e: rusqlite::Error) -> SqlError {
        if let Some(why) = self.guard.take_denial() {
            return SqlError::NotAllowed(why);
        }
        match e {
            rusqlite::Error::SqliteFailure(err, _) if sqlite_code::primary(err.extended_code) == sqlite_code::FULL => {
                SqlError::Sqlite {
                    code: sqlite_code::FULL,
                    message: self.full_message(),
                }
            }
            rusqlite::Error::SqliteFailure(err, msg) => SqlError::Sqlite {
                code: sqlite_code::primary(err.extended_code),
                message: msg.unwrap_or_else(|| err.to_string()),
            },
            rusqlite::Error::InvalidParameterCount(given, expected) => SqlError::Sqlite {
                code: sqlite_code::RANGE,
                message: format!("the statement takes {expected} parameters, {given} were given"),
            },
            rusqlite::Error::MultipleStatement => SqlError::Sqlite {
                code: sqlite_code::ERROR,
                message: "the text must be one statement here (with parameters, in query and in exec-durable)".into(),
            },
            other => SqlError::Sqlite {
                code: sqlite_code::ERROR,
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
}
