//! The host's index of pending alarms: which actor to wake, and when.
//!
//! The actor's own database holds its alarm (the truth); the index only says
//! whom to wake. As in ADR 0028, an entry is removed only once the actor's
//! delete is recorded, and an entry for an actor that has no alarm (or a later
//! one) wakes nothing: the host checks the actor's own alarm before running
//! `on-alarm`. The contract test at the bottom is run by every backend.

use crate::address::ActorKey;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// Errors of an alarm index backend.
#[derive(Debug, thiserror::Error)]
pub enum AlarmIndexError {
    /// The backing database failed.
    #[error("alarm index database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The bucket holding the index failed.
    #[error("alarm index in the bucket: {0}")]
    Bucket(#[from] crate::bucket::BucketError),
}

/// Pending alarms by actor.
pub trait AlarmIndex: Send + Sync + 'static {
    /// Records that `key` has an alarm at `at` (replacing an earlier entry).
    ///
    /// # Errors
    /// The backend failed; the entry may not be recorded.
    fn set(&self, key: &ActorKey, at: u64) -> Result<(), AlarmIndexError>;
    /// Forgets `key`'s entry, if any.
    ///
    /// # Errors
    /// The backend failed; the entry may remain.
    fn remove(&self, key: &ActorKey) -> Result<(), AlarmIndexError>;
    /// The entry for `key`.
    ///
    /// # Errors
    /// The backend failed.
    fn get(&self, key: &ActorKey) -> Result<Option<u64>, AlarmIndexError>;
    /// Entries due at `now` (time ≤ now), earliest first.
    ///
    /// # Errors
    /// The backend failed.
    fn due(&self, now: u64) -> Result<Vec<(ActorKey, u64)>, AlarmIndexError>;
    /// The earliest entry's time, for a timer to sleep until.
    ///
    /// # Errors
    /// The backend failed.
    fn next_at(&self) -> Result<Option<u64>, AlarmIndexError>;
}

/// An index held in memory: for tests and harnesses that start afresh each run.
#[derive(Debug, Default)]
pub struct MemoryAlarmIndex {
    entries: Mutex<HashMap<ActorKey, u64>>,
}

impl MemoryAlarmIndex {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ActorKey, u64>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl AlarmIndex for MemoryAlarmIndex {
    fn set(&self, key: &ActorKey, at: u64) -> Result<(), AlarmIndexError> {
        self.lock().insert(key.clone(), at);
        Ok(())
    }
    fn remove(&self, key: &ActorKey) -> Result<(), AlarmIndexError> {
        self.lock().remove(key);
        Ok(())
    }
    fn get(&self, key: &ActorKey) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self.lock().get(key).copied())
    }
    fn due(&self, now: u64) -> Result<Vec<(ActorKey, u64)>, AlarmIndexError> {
        let mut v: Vec<_> = self
            .lock()
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(k, at)| (k.clone(), *at))
            .collect();
        v.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        Ok(v)
    }
    fn next_at(&self) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self.lock().values().min().copied())
    }
}

/// An index in a SQLite file, `<data-dir>/host/alarms.db`: survives restarts of `serve`.
#[derive(Debug)]
pub struct SqliteAlarmIndex {
    conn: Mutex<Connection>,
}

impl SqliteAlarmIndex {
    /// Opens (or creates) the index at `path`.
    ///
    /// # Errors
    /// The database could not be opened or its table created.
    pub fn open(path: &Path) -> Result<Self, AlarmIndexError> {
        let conn = Connection::open(path)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS alarms(app TEXT NOT NULL, class TEXT NOT NULL, name TEXT NOT NULL,
               at INTEGER NOT NULL, PRIMARY KEY(app, class, name));
             CREATE INDEX IF NOT EXISTS alarms_at ON alarms(at);",
        )?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn at_to_sql(at: u64) -> i64 {
    i64::try_from(at).unwrap_or(i64::MAX)
}

fn at_from_sql(at: i64) -> u64 {
    u64::try_from(at).unwrap_or(0)
}

impl AlarmIndex for SqliteAlarmIndex {
    fn set(&self, key: &ActorKey, at: u64) -> Result<(), AlarmIndexError> {
        self.lock().execute(
            "INSERT INTO alarms(app, class, name, at) VALUES(?1, ?2, ?3, ?4)
             ON CONFLICT(app, class, name) DO UPDATE SET at = excluded.at",
            params![key.app, key.class, key.name, at_to_sql(at)],
        )?;
        Ok(())
    }
    fn remove(&self, key: &ActorKey) -> Result<(), AlarmIndexError> {
        self.lock().execute(
            "DELETE FROM alarms WHERE app = ?1 AND class = ?2 AND name = ?3",
            params![key.app, key.class, key.name],
        )?;
        Ok(())
    }
    fn get(&self, key: &ActorKey) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self
            .lock()
            .query_row(
                "SELECT at FROM alarms WHERE app = ?1 AND class = ?2 AND name = ?3",
                params![key.app, key.class, key.name],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .map(at_from_sql))
    }
    fn due(&self, now: u64) -> Result<Vec<(ActorKey, u64)>, AlarmIndexError> {
        let conn = self.lock();
        let mut stmt =
            conn.prepare("SELECT app, class, name, at FROM alarms WHERE at <= ?1 ORDER BY at, app, class, name")?;
        let rows = stmt.query_map(params![at_to_sql(now)], |r| {
            Ok((
                ActorKey::new(r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                at_from_sql(r.get(3)?),
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
    fn next_at(&self) -> Result<Option<u64>, AlarmIndexError> {
        Ok(self
            .lock()
            .query_row("SELECT MIN(at) FROM alarms", [], |r| r.get::<_, Option<i64>>(0))?
            .map(at_from_sql))
    }
}

/// The contract every [`AlarmIndex`] backend must pass.
#[cfg(any(test, feature = "contract-tests"))]
pub mod contract {
    use super::*;

    /// Checks `index` against the contract.
    ///
    /// # Panics
    /// Where the implementation breaks the contract.
    pub fn check(index: &dyn AlarmIndex) {
        let a = ActorKey::new("acme/shop", "cart", "a");
        let b = ActorKey::new("acme/shop", "cart", "b");
        assert_eq!(index.next_at().expect("next_at"), None, "a new index has no alarm");
        index.set(&a, 2_000).expect("set a");
        index.set(&b, 1_000).expect("set b");
        assert_eq!(
            index.get(&a).expect("get"),
            Some(2_000),
            "get returns what set recorded"
        );
        assert_eq!(
            index.next_at().expect("next_at"),
            Some(1_000),
            "next_at is the earliest entry"
        );
        assert_eq!(index.due(999).expect("due"), vec![], "nothing is due before its time");
        assert_eq!(
            index.due(2_000).expect("due"),
            vec![(b.clone(), 1_000), (a.clone(), 2_000)],
            "due lists entries at or before now, earliest first"
        );
        index.set(&a, 5_000).expect("move a");
        assert_eq!(
            index.due(2_000).expect("due"),
            vec![(b.clone(), 1_000)],
            "set replaces an actor's entry"
        );
        index.remove(&b).expect("remove");
        index.remove(&b).expect("removing a missing entry is not an error");
        assert_eq!(index.get(&b).expect("get"), None, "a removed entry is gone");
    }

    #[test]
    fn memory_index_meets_the_contract() {
        check(&MemoryAlarmIndex::default());
    }

    #[test]
    fn sqlite_index_meets_the_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        check(&SqliteAlarmIndex::open(&dir.path().join("alarms.db")).expect("open"));
    }

    #[test]
    fn sqlite_index_survives_a_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("alarms.db");
        let k = ActorKey::new("acme/shop", "cart", "a");
        SqliteAlarmIndex::open(&p).expect("open").set(&k, 7).expect("set");
        assert_eq!(
            SqliteAlarmIndex::open(&p).expect("reopen").get(&k).expect("get"),
            Some(7),
            "entries are kept across restarts"
        );
    }
}
