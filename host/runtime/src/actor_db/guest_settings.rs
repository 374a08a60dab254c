//! The settings of a connection a guest may change and keep across its
//! events (`PRAGMA foreign_keys`, `recursive_triggers`): read before an idle
//! actor's database is closed and set again when it opens, so that a guest
//! whose instance lives on finds them as it left them (ADR 045).

use super::ActorDb;
use crate::sql_types::SqlError;
use std::sync::atomic::Ordering;

/// What a resting actor's next connection sets again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestSettings {
    foreign_keys: bool,
    recursive_triggers: bool,
}

impl ActorDb {
    /// The connection's guest settings, or `None` when the guest set one
    /// that cannot be read back (`case_sensitive_like`): that connection is
    /// not to be closed while the actor lives on.
    pub fn guest_settings(&self) -> Option<GuestSettings> {
        if self.guard.set_unreadable_pragma.load(Ordering::Relaxed) {
            return None;
        }
        let read = |pragma: &str| {
            self.conn
                .query_row(&format!("PRAGMA {pragma}"), [], |r| r.get::<_, bool>(0))
                .ok()
        };
        Some(GuestSettings {
            foreign_keys: read("foreign_keys")?,
            recursive_triggers: read("recursive_triggers")?,
        })
    }

    /// Sets `settings` on this connection.
    ///
    /// # Errors
    /// `internal` if SQLite refused a setting.
    pub fn restore_guest_settings(&self, settings: GuestSettings) -> Result<(), SqlError> {
        let on = |b: bool| if b { "ON" } else { "OFF" };
        self.conn
            .execute_batch(&format!(
                "PRAGMA foreign_keys={}; PRAGMA recursive_triggers={};",
                on(settings.foreign_keys),
                on(settings.recursive_triggers)
            ))
            .map_err(|e| SqlError::Internal(format!("restoring the connection's settings: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use crate::actor_db::ActorDb;

    fn guest(db: &ActorDb, sql: &str) {
        db.exec(sql, &[]).expect(sql);
    }

    #[test]
    fn a_guest_s_settings_come_back_on_a_new_connection() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.db");
        let db = ActorDb::open(&path).expect("open");
        guest(&db, "PRAGMA foreign_keys=OFF");
        guest(&db, "PRAGMA recursive_triggers=ON");
        let settings = db.guest_settings().expect("readable");
        db.close().expect("close");
        let db = ActorDb::open_existing(&path).expect("open again");
        db.restore_guest_settings(settings).expect("restore");
        assert_eq!(db.guest_settings(), Some(settings));
        let rows = db.query("PRAGMA recursive_triggers", &[]).expect("query").rows;
        assert_eq!(rows, vec![vec![crate::SqlValue::Integer(1)]]);
    }

    #[test]
    fn a_setting_that_cannot_be_read_back_keeps_the_connection() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = ActorDb::open(&dir.path().join("a.db")).expect("open");
        assert!(db.guest_settings().is_some());
        guest(&db, "PRAGMA case_sensitive_like=ON");
        assert_eq!(db.guest_settings(), None);
    }

    #[test]
    fn a_missing_file_is_not_created_when_it_opens_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("gone.db");
        assert!(ActorDb::open_existing(&path).is_err());
        assert!(!path.exists(), "nothing created");
    }
}
