//! One node with local files: the database files are the actor's state. A
//! write is durable when SQLite commits it; a delete is the removal of the
//! files, behind a marker that makes a crash part way finish it (ADR 003).

use super::error::StorageError;
use super::holding::Holding;
use super::open_actor::OpenActor;
use super::removal::{finish_unfinished_removal, removal_failed};
use super::seam::{ActorStorage, OpenMode, Opened};
use crate::actor_db::{ActorDb, META_DELETED};
use crate::address::ActorKey;
use crate::deletion::DeletionStatus;
use crate::metrics::{DELETES_TOTAL, Metrics};
use crate::state_store::StateStore;
use std::sync::Arc;

/// Actors of one node, in local files.
pub(crate) struct SingleNodeStorage {
    files: Arc<dyn StateStore>,
    metrics: Arc<Metrics>,
}

impl SingleNodeStorage {
    /// Storage over `files`, counting finished removals in `metrics`.
    pub(crate) fn new(files: Arc<dyn StateStore>, metrics: Arc<Metrics>) -> Self {
        Self { files, metrics }
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
        let holding = LocalFiles {
            files: self.files.clone(),
            key: key.clone(),
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

    fn local_files(&self) -> &dyn StateStore {
        self.files.as_ref()
    }
}

/// A single node's hold on an actor: its files.
struct LocalFiles {
    files: Arc<dyn StateStore>,
    key: ActorKey,
}

impl Holding for LocalFiles {
    // `ActorDb::exec_durable` committed with synchronous=FULL: it is on disk.
    fn durable_write(&mut self, _db: &ActorDb) -> Result<(), StorageError> {
        Ok(())
    }

    fn end_event(&mut self, _db: &ActorDb) -> Result<(), StorageError> {
        Ok(())
    }

    fn reset(&mut self, _marks: &[(&str, &str)], record: &str) -> Result<(), StorageError> {
        self.files
            .remove(&self.key, record)
            .map_err(|source| removal_failed(self.files.as_ref(), &self.key, source))
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
        };
        let e = holding.reset(&[], "1000 self").expect_err("the removal fails");
        assert!(matches!(e, StorageError::RemovalUnfinished { .. }), "{e:?}");
        assert!(e.delete_still_happens());
        assert!(!e.writes_lost());
        assert!(!files.exists(&key), "the actor no longer exists");
    }
}
