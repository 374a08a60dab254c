//! One node with local files: the database files are the actor's state. A
//! write is durable when SQLite commits it; a delete is the removal of the
//! files, behind a marker that makes a crash part way finish it (ADR 003).
//! With a history (ADR 064), each event's pages follow into it
//! ([`super::local_history`]), and a restore reads from it.

use super::error::StorageError;
use super::holding::Holding;
use super::local_history::{Gathering, LocalHistory};
use super::open_actor::OpenActor;
use super::removal::{finish_unfinished_removal, removal_failed};
use super::retention::RetentionWindows;
use super::seam::{ActorStorage, OpenMode, Opened};
use crate::actor_db::{ActorDb, META_DELETED, PageChange};
use crate::address::ActorKey;
use crate::clock::Clock;
use crate::deletion::DeletionStatus;
use crate::metrics::{DELETES_TOTAL, Metrics};
use crate::state_store::StateStore;
use std::sync::Arc;

/// Actors of one node, in local files.
pub(crate) struct SingleNodeStorage {
    files: Arc<dyn StateStore>,
    metrics: Arc<Metrics>,
    history: Option<History>,
}

/// The history and what writing to it needs.
#[derive(Clone)]
struct History {
    log: Arc<LocalHistory>,
    clock: Arc<dyn Clock>,
    retention: Arc<RetentionWindows>,
}

impl SingleNodeStorage {
    /// Storage over `files`, counting finished removals in `metrics`.
    pub(crate) fn new(files: Arc<dyn StateStore>, metrics: Arc<Metrics>) -> Self {
        Self {
            files,
            metrics,
            history: None,
        }
    }

    /// Keeps the actors' history as `config` says (none: no history).
    pub(crate) fn with_history(mut self, config: Option<&crate::config::HistoryConfig>, clock: Arc<dyn Clock>) -> Self {
        self.history = config.map(|c| {
            let retention = Arc::new(RetentionWindows::default());
            History {
                log: Arc::new(LocalHistory::start(c, clock.clone(), retention.clone())),
                clock,
                retention,
            }
        });
        self
    }
}

impl ActorStorage for SingleNodeStorage {
    fn open(&self, key: &ActorKey, mode: OpenMode) -> Result<Opened, StorageError> {
        if let Some(how) = finish_unfinished_removal(self.files.as_ref(), key)? {
            // Here the removal is the delete: it is recorded now.
            self.metrics.inc(DELETES_TOTAL, how.label());
        }
        // No removal is pending now, so the database's file is the answer:
        // `StateStore::exists` would look for the marker a second time.
        let path = self.files.db_path(key);
        let exists = path.exists();
        match mode {
            OpenMode::Create => {}
            OpenMode::Existing if exists => {}
            // Idle expiry is a cluster's (its candidates are ownership records).
            OpenMode::Existing | OpenMode::Unchanged(_) => return Ok(Opened::Absent),
        }
        // A database that exists has its directory: a wake spares the
        // `mkdir` and the `stat` that creating it takes (issue 25).
        if !exists {
            self.files.prepare(key).map_err(|source| StorageError::Files {
                what: format!("creating the directory of {key}"),
                source,
            })?;
        }
        let db = ActorDb::open(&path).map_err(|e| StorageError::not_opened(key, e))?;
        if !exists && let Some(record) = self.files.last_deletion(key) {
            // The removal record goes into the new database, as a cluster's
            // reset carries it (context.previous-deletion reads it).
            db.meta_set(META_DELETED, Some(&record))?;
        }
        if self.history.is_some() {
            db.track_pages()?;
        }
        let holding = LocalFiles {
            files: self.files.clone(),
            key: key.clone(),
            history: self.history.clone(),
            gathering: Gathering::default(),
        };
        Ok(Opened::Here(Box::new(OpenActor::new(
            key.clone(),
            db,
            Box::new(holding),
        ))))
    }

    fn exists(&self, key: &ActorKey) -> Result<bool, StorageError> {
        Ok(self.files.exists(key))
    }

    fn deletion_status(&self, key: &ActorKey) -> DeletionStatus {
        crate::state_store::deletion_status(self.files.as_ref(), key)
    }

    fn remove_unopenable(&self, key: &ActorKey, record: &str) -> Result<bool, StorageError> {
        self.files
            .remove(key, record)
            .map_err(|source| removal_failed(self.files.as_ref(), key, source))?;
        Ok(true)
    }

    fn set_retention(&self, app: &str, window: std::time::Duration) {
        if let Some(h) = &self.history {
            h.retention.set(app, window);
        }
    }

    fn local_files(&self) -> &dyn StateStore {
        self.files.as_ref()
    }
}

/// A single node's hold on an actor: its files, and its history's handle.
struct LocalFiles {
    files: Arc<dyn StateStore>,
    key: ActorKey,
    history: Option<History>,
    /// The pages this actor's events changed, not yet taken by the history's writer.
    gathering: Gathering,
}

impl LocalFiles {
    /// When the actor was last deleted (its removal record), if ever.
    fn deleted_at(&self) -> Option<u64> {
        self.files
            .last_deletion(&self.key)
            .and_then(|r| r.split_once(' ').and_then(|(ms, _)| ms.parse::<u64>().ok()))
    }

    /// Hands the history what the event's commits changed (never failing
    /// the event: the database is the state, and the history follows it).
    fn follow(&self, db: &ActorDb) {
        let Some(h) = &self.history else { return };
        let at = h.clock.now_ms();
        match db.changed_pages() {
            Ok(PageChange::Unchanged) => {}
            Ok(PageChange::Pages(set)) if h.log.in_step(&self.key) => h.log.pages(&self.key, &self.gathering, at, set),
            Ok(_) => match db.image() {
                Ok(image) => h.log.whole(&self.key, &self.gathering, at, image),
                Err(e) => tracing::warn!(actor = %self.key, "reading the database for its history: {e}"),
            },
            Err(e) => tracing::warn!(actor = %self.key, "reading the pages for its history: {e}"),
        }
        if let Err(e) = db.checkpoint_if_long() {
            tracing::warn!(actor = %self.key, "checkpointing: {e}");
        }
    }
}

impl Holding for LocalFiles {
    fn reopened(&mut self, db: &ActorDb) -> Result<(), crate::sql_types::SqlError> {
        if self.history.is_some() {
            db.track_pages()?;
        }
        Ok(())
    }

    // `ActorDb::exec_durable` committed with synchronous=FULL: it is on disk.
    fn durable_write(&mut self, db: &ActorDb) -> Result<(), StorageError> {
        self.follow(db);
        Ok(())
    }

    fn end_event(&mut self, db: &ActorDb) -> Result<(), StorageError> {
        self.follow(db);
        Ok(())
    }

    fn reset(&mut self, marks: &[(&str, &str)], record: &str) -> Result<(), StorageError> {
        self.files
            .remove(&self.key, record)
            .map_err(|source| removal_failed(self.files.as_ref(), &self.key, source))?;
        if let Some(h) = &self.history {
            match ActorDb::empty_image(marks) {
                Ok(empty) => h.log.deleted(&self.key, &self.gathering, h.clock.now_ms(), empty),
                Err(e) => tracing::warn!(actor = %self.key, "recording a delete in its history: {e}"),
            }
        }
        Ok(())
    }

    fn keeps_history(&self) -> bool {
        self.history.is_some()
    }

    fn current_bookmark(&mut self, db: &ActorDb) -> Result<Option<String>, StorageError> {
        let Some(h) = &self.history else { return Ok(None) };
        // What the event wrote so far goes to the history first: its state now.
        self.follow(db);
        h.log
            .head(&self.key, &self.gathering)
            .map(|p| p.map(|p| p.to_string()))
            .map_err(|source| StorageError::Bucket {
                what: format!("reading the history of {}", self.key),
                source,
            })
    }

    fn bookmark_for_time(&mut self, at_ms: u64) -> Result<Option<String>, StorageError> {
        let Some(h) = &self.history else { return Ok(None) };
        h.log
            .position_at(&self.key, &self.gathering, at_ms, self.deleted_at())
            .map(|p| p.map(|p| p.to_string()))
            .map_err(|source| StorageError::Bucket {
                what: format!("listing the history of {}", self.key),
                source,
            })
    }

    fn restore(
        &mut self,
        to: crate::replica::Target,
    ) -> Result<(crate::job::Restored, Option<u64>), crate::error::RuntimeError> {
        use crate::error::RuntimeError;
        let Some(h) = &self.history else {
            return Err(RuntimeError::BadArgument(format!(
                "{} cannot be restored: this node keeps no history (it was served with --no-history)",
                self.key
            )));
        };
        let deleted_at = self.deleted_at();
        let db = self.files.db_path(&self.key);
        let restored = h
            .log
            .restore(&self.key, &self.gathering, to, h.clock.now_ms(), deleted_at, &db)
            .map_err(|e| super::restore_error(&self.key, e))?;
        super::write_restored(&db, &restored.image).map_err(|e| {
            RuntimeError::host_from(
                format!(
                    "{} was restored in its history, but its database could not be written ({e})",
                    self.key
                ),
                e,
            )
        })?;
        Ok((
            crate::job::Restored {
                from: restored.from.to_string(),
                at: restored.at.to_string(),
                undo: restored.undo.map(|p| p.to_string()).unwrap_or_default(),
            },
            super::restored_alarm(&db),
        ))
    }

    // The reset removed the files; nothing is left.
    fn finish_delete(&mut self, _record: &str) -> Result<(), StorageError> {
        Ok(())
    }

    fn release(&mut self) {}

    fn give_up(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{FaultKind, Faults};
    use crate::state_store::LocalStateStore;
    use std::path::PathBuf;

    /// A store whose removals fail before they begin.
    struct RefusingStore(LocalStateStore);

    impl StateStore for RefusingStore {
        fn db_path(&self, key: &ActorKey) -> PathBuf {
            self.0.db_path(key)
        }
        fn exists(&self, key: &ActorKey) -> bool {
            self.0.exists(key)
        }
        fn removal_pending(&self, key: &ActorKey) -> bool {
            self.0.removal_pending(key)
        }
        fn pending_removal_record(&self, key: &ActorKey) -> Option<String> {
            self.0.pending_removal_record(key)
        }
        fn prepare(&self, key: &ActorKey) -> std::io::Result<()> {
            self.0.prepare(key)
        }
        fn remove(&self, _key: &ActorKey, _record: &str) -> std::io::Result<()> {
            Err(std::io::Error::other("refused before anything was removed"))
        }
        fn last_deletion(&self, key: &ActorKey) -> Option<String> {
            self.0.last_deletion(key)
        }
        fn list(&self) -> Vec<ActorKey> {
            self.0.list()
        }
    }

    fn with_files(store: &dyn StateStore, key: &ActorKey) {
        store.prepare(key).expect("prepare");
        std::fs::write(store.db_path(key), b"x").expect("a database");
    }

    /// A reset whose removal never began leaves the data: the delete must
    /// not be reported as under way (before, every failed removal was).
    #[test]
    fn a_removal_that_did_not_begin_is_a_file_error_and_the_data_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = ActorKey::new("t/app", "c", "a");
        let files: Arc<dyn StateStore> = Arc::new(RefusingStore(LocalStateStore::new(
            dir.path(),
            Arc::new(Faults::default()),
        )));
        with_files(files.as_ref(), &key);
        let mut holding = LocalFiles {
            files: files.clone(),
            key: key.clone(),
            history: None,
            gathering: Gathering::default(),
        };
        let e = holding.reset(&[], "1000 self").expect_err("the removal fails");
        assert!(matches!(e, StorageError::Files { .. }), "{e:?}");
        assert!(!e.delete_still_happens());
        assert!(
            !e.writes_lost(),
            "the event's writes are kept, and its end tries the delete again"
        );
        assert!(files.exists(&key), "the actor keeps its database");
    }

    /// A removal that fails after it began is finished before the next
    /// event: the delete still happens.
    #[test]
    fn a_removal_that_failed_after_it_began_still_deletes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = ActorKey::new("t/app", "c", "a");
        let faults = Arc::new(Faults::default());
        let files: Arc<dyn StateStore> = Arc::new(LocalStateStore::new(dir.path(), faults.clone()));
        with_files(files.as_ref(), &key);
        faults.arm(FaultKind::FailRemoval, 1);
        let mut holding = LocalFiles {
            files: files.clone(),
            key: key.clone(),
            history: None,
            gathering: Gathering::default(),
        };
        let e = holding.reset(&[], "1000 self").expect_err("the removal fails");
        assert!(matches!(e, StorageError::RemovalUnfinished { .. }), "{e:?}");
        assert!(e.delete_still_happens());
        assert!(!e.writes_lost());
        assert!(!files.exists(&key), "the actor no longer exists");
    }
}
