//! Where actors' databases live, behind a trait so that file operations can be
//! replaced or fail on purpose. The contract test at the bottom is what every
//! implementation must pass.

use crate::address::ActorKey;
use crate::faults::{FaultKind, Faults};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The files of actors' databases.
pub trait StateStore: Send + Sync + 'static {
    /// The path of the actor's SQLite database (the WAL and shm sit beside it).
    fn db_path(&self, key: &ActorKey) -> PathBuf;
    /// Whether the actor has a database (one whose removal has begun does not count).
    fn exists(&self, key: &ActorKey) -> bool;
    /// Whether a removal of the actor's files began and did not finish (a
    /// failure, or a crash): the files must go before the actor is used again.
    fn removal_pending(&self, key: &ActorKey) -> bool;
    /// The record (`<ms> <how>`) that an unfinished removal's marker holds.
    fn pending_removal_record(&self, key: &ActorKey) -> Option<String>;
    /// Creates the directory the database goes in.
    ///
    /// # Errors
    /// The file system's error.
    fn prepare(&self, key: &ActorKey) -> io::Result<()>;
    /// Removes the actor's files durably. First a marker records that the
    /// removal began, holding `record` (when and how, `<ms> <how>`), so that a
    /// failure or a crash part way is finished before the actor is used again,
    /// never read as data; then the WAL and the shm go; then the marker
    /// becomes the deletion record ([`StateStore::last_deletion`]) and the
    /// removal is made durable before this returns. A marker left by an
    /// unfinished removal keeps its record. Missing files are not an error.
    ///
    /// # Errors
    /// The file system's error (or an injected one). When the removal began
    /// ([`StateStore::removal_pending`] says so), the marker remains and some
    /// files may remain; otherwise nothing was removed.
    fn remove(&self, key: &ActorKey, record: &str) -> io::Result<()>;
    /// The record of the actor's last finished removal (`<ms> <how>`), if
    /// there is one: positive evidence that its address was deleted. It stays
    /// when the address is used again.
    fn last_deletion(&self, key: &ActorKey) -> Option<String>;
    /// Every actor with a database, for listings.
    fn list(&self) -> Vec<ActorKey>;
}

/// Disk space the store holds back, in `<data-dir>/state/.space-reserve`: a
/// removal writes its record into its marker, which a full disk could
/// refuse, and then no delete could free the disk (ADR 012). The marker is
/// the database emptied (ADR 053), which frees its blocks first; the reserve
/// is still given up if the write is refused, and put back after the removal.
pub const RESERVE_BYTES: usize = 1 << 20;

/// Databases under `<data-dir>/state/<tenant>/<app>/<class>/<encoded name>.db`.
#[derive(Debug, Clone)]
pub struct LocalStateStore {
    root: PathBuf,
    faults: Arc<Faults>,
}

impl LocalStateStore {
    /// A store rooted at `data_dir`, failing on purpose when `faults` says
    /// so. It keeps a reserve of disk space (see [`RESERVE_BYTES`]).
    pub fn new(data_dir: &Path, faults: Arc<Faults>) -> Self {
        let store = Self {
            root: data_dir.join("state"),
            faults,
        };
        store.keep_reserve();
        store
    }

    /// The file that holds the reserve.
    fn reserve(&self) -> PathBuf {
        self.root.join(".space-reserve")
    }

    /// Puts the reserve back if it is missing (best effort: on a full disk
    /// it comes back once a delete freed space).
    fn keep_reserve(&self) {
        let path = self.reserve();
        if path.metadata().is_ok_and(|m| m.len() == RESERVE_BYTES as u64) {
            return;
        }
        let written =
            std::fs::create_dir_all(&self.root).and_then(|()| std::fs::write(&path, vec![0u8; RESERVE_BYTES]));
        if written.is_err() {
            let _ = std::fs::remove_file(&path);
        }
    }

    /// Writes a removal's record into its marker, opened and emptied; on a
    /// full disk, gives up the reserve first.
    fn write_record(&self, marker: &std::fs::File, deletion: &str) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        match marker.write_all_at(deletion.as_bytes(), 0) {
            Err(e) if e.kind() == io::ErrorKind::StorageFull => {
                let _ = std::fs::remove_file(self.reserve());
                marker.write_all_at(deletion.as_bytes(), 0)
            }
            other => other,
        }
    }

    fn dir(&self, key: &ActorKey) -> PathBuf {
        let mut p = self.root.clone();
        for part in key.app.split('/') {
            p.push(part);
        }
        p.push(&key.class);
        p
    }
}

/// The file at `p` opened for writing, emptied.
fn emptied(p: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).truncate(true).open(p)
}

fn remove_if_present(p: &Path) -> io::Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The host's own table in every actor database (the guest cannot see or
/// touch it: ADR 004).
pub const HOST_TABLE: &str = "_wasmkeep_meta";
/// The key in [`HOST_TABLE`] that keeps the actor's full name (its file name
/// may be shortened with a hash: [`ActorKey::encoded_name`]).
pub const META_NAME: &str = "name";

/// The actor whose database is `db`, named `<encoded>.db` under `app` and
/// `class`: decoded from the file name, or for a shortened name read from
/// inside the database (and checked to encode to the file's name).
pub fn actor_of_file(app: &str, class: &str, encoded: &str, db: &Path) -> Option<ActorKey> {
    if let Some(name) = ActorKey::name_from_encoded(encoded) {
        return Some(ActorKey::new(app, class, name));
    }
    if !ActorKey::is_shortened(encoded) {
        return None;
    }
    let key = ActorKey::new(app, class, name_inside(db)?);
    (key.encoded_name() == encoded).then_some(key)
}

/// The full name kept inside an actor's database, read without writing.
fn name_inside(db: &Path) -> Option<String> {
    use rusqlite::OpenFlags;
    let conn =
        rusqlite::Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .ok()?;
    conn.query_row(
        &format!("SELECT value FROM main.{HOST_TABLE} WHERE key = ?1"),
        [META_NAME],
        |r| r.get(0),
    )
    .ok()
}

/// The deletion record a removal's marker holds, if it holds one. A marker
/// is the database file renamed, and until the record is written over it it
/// still holds the database's pages (ADR 053): those are read no further
/// than a record's length.
fn read_record(mark: &Path) -> Option<String> {
    use std::io::Read;
    /// Longer than any `<ms> <how>`.
    const RECORD_MAX: u64 = 128;
    let mut bytes = Vec::new();
    std::fs::File::open(mark)
        .ok()?
        .take(RECORD_MAX + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > RECORD_MAX {
        return None;
    }
    let text = std::str::from_utf8(&bytes).ok()?.trim();
    crate::deletion::parse_deletion_record(text).map(|_| text.to_owned())
}

/// The marker that says a removal of `db` began.
fn marker(db: &Path) -> PathBuf {
    let mut m = db.as_os_str().to_owned();
    m.push(".deleting");
    PathBuf::from(m)
}

/// The record a finished removal of `db` leaves.
fn record(db: &Path) -> PathBuf {
    let mut m = db.as_os_str().to_owned();
    m.push(".deleted");
    PathBuf::from(m)
}

/// The WAL and shm paths SQLite uses beside `db`.
pub fn sidecars(db: &Path) -> (PathBuf, PathBuf) {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let mut shm = db.as_os_str().to_owned();
    shm.push("-shm");
    (PathBuf::from(wal), PathBuf::from(shm))
}

impl StateStore for LocalStateStore {
    fn db_path(&self, key: &ActorKey) -> PathBuf {
        self.dir(key).join(format!("{}.db", key.encoded_name()))
    }

    fn exists(&self, key: &ActorKey) -> bool {
        self.db_path(key).exists() && !self.removal_pending(key)
    }

    fn removal_pending(&self, key: &ActorKey) -> bool {
        marker(&self.db_path(key)).exists()
    }

    fn pending_removal_record(&self, key: &ActorKey) -> Option<String> {
        read_record(&marker(&self.db_path(key)))
    }

    fn prepare(&self, key: &ActorKey) -> io::Result<()> {
        std::fs::create_dir_all(self.dir(key))
    }

    fn remove(&self, key: &ActorKey, deletion: &str) -> io::Result<()> {
        let db = self.db_path(key);
        let dir = self.dir(key);
        if !dir.exists() {
            return Ok(());
        }
        let mark = marker(&db);
        let (wal, shm) = sidecars(&db);
        // The database file itself becomes the marker: a rename allocates no
        // inode, and a file system that has freed many inodes lately can
        // spend half a millisecond finding a new one (ADR 053). No sync here:
        // the file system journals the rename before the steps that follow,
        // and the final sync covers them all (ADR 003).
        if mark.exists() {
            // A retry, or a marker an earlier version created beside the
            // database: that database goes too. A marker that holds a record
            // keeps the first attempt's.
            remove_if_present(&db)?;
            if read_record(&mark).is_none() {
                self.write_record(&emptied(&mark)?, deletion)?;
            }
        } else {
            match std::fs::rename(&db, &mark) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // Nothing was there to delete: no record of a deletion
                    // either. The sync is for a retry after a removal whose
                    // own sync failed: its steps are all made, not yet durable.
                    remove_if_present(&wal)?;
                    remove_if_present(&shm)?;
                    return std::fs::File::open(&dir)?.sync_all();
                }
                other => other?,
            }
            // From here the removal is pending: a failure leaves the marker,
            // and the next use finishes the removal (with no record if none
            // was written: ADR 053).
            self.write_record(&emptied(&mark)?, deletion)?;
        }
        if self.faults.take(FaultKind::FailRemoval) {
            return Err(io::Error::other("injected fault: fail-removal"));
        }
        remove_if_present(&wal)?;
        remove_if_present(&shm)?;
        // The marker becomes the record. One sync covers the steps: the file
        // system journals them in this order, so a crash keeps a prefix of
        // them, and each prefix is finished by the next use (ADR 038, ADR 053,
        // and the test `every_prefix_of_a_removal_is_finished`). The delete
        // answers only after this sync.
        std::fs::rename(&mark, record(&db))?;
        std::fs::File::open(&dir)?.sync_all()?;
        self.keep_reserve();
        Ok(())
    }

    fn last_deletion(&self, key: &ActorKey) -> Option<String> {
        let text = std::fs::read_to_string(record(&self.db_path(key))).ok()?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    fn list(&self) -> Vec<ActorKey> {
        let mut out = Vec::new();
        let Ok(tenants) = std::fs::read_dir(&self.root) else {
            return out;
        };
        for t in tenants.flatten() {
            for a in std::fs::read_dir(t.path()).into_iter().flatten().flatten() {
                for c in std::fs::read_dir(a.path()).into_iter().flatten().flatten() {
                    for f in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
                        let fname = f.file_name().to_string_lossy().into_owned();
                        let Some(stem) = fname.strip_suffix(".db") else {
                            continue;
                        };
                        if marker(&f.path()).exists() {
                            continue;
                        }
                        let app = format!(
                            "{}/{}",
                            t.file_name().to_string_lossy(),
                            a.file_name().to_string_lossy()
                        );
                        let class = c.file_name().to_string_lossy().into_owned();
                        if let Some(key) = actor_of_file(&app, &class, stem, &f.path()) {
                            out.push(key);
                        }
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// A single node's deletion status of `key`, from positive evidence only: the
/// record a finished removal left, while no database has been created since.
pub fn deletion_status(store: &dyn StateStore, key: &ActorKey) -> crate::deletion::DeletionStatus {
    use crate::deletion::DeletionStatus;
    if store.removal_pending(key) {
        return DeletionStatus::Unknown {
            reason: "the removal of its files began and has not finished; the host finishes it before the actor's next event".into(),
        };
    }
    if store.exists(key) {
        return DeletionStatus::NotDeleted;
    }
    match store.last_deletion(key) {
        Some(record) => match crate::deletion::parse_deletion_record(&record) {
            Some((at_ms, how)) => DeletionStatus::Deleted {
                at_ms,
                how: how.label().to_owned(),
            },
            None => DeletionStatus::Unknown {
                reason: format!("an unreadable deletion record {record:?}"),
            },
        },
        None => DeletionStatus::NotDeleted,
    }
}

/// The contract every [`StateStore`] implementation must pass.
#[cfg(any(test, feature = "contract-tests"))]
pub mod contract {
    use super::*;

    /// Checks `store` against the contract; `faults` must be the faults it fails with.
    ///
    /// # Panics
    /// Where the implementation breaks the contract.
    pub fn check(store: &dyn StateStore, faults: &Faults) {
        let k = ActorKey::new("acme/shop", "cart", "u-1842");
        assert!(!store.exists(&k), "a new store holds no actor");
        store.prepare(&k).expect("prepare creates the directory");
        let db = store.db_path(&k);
        let (wal, shm) = sidecars(&db);
        for p in [&db, &wal, &shm] {
            std::fs::write(p, b"x").expect("write a file");
        }
        assert!(store.exists(&k), "an actor with a database exists");
        assert_eq!(
            store.list(),
            vec![k.clone()],
            "list finds the actor back from its file name"
        );

        faults.arm(FaultKind::FailRemoval, 1);
        assert!(
            store.remove(&k, "1000 self").is_err(),
            "an injected removal fault makes remove fail"
        );
        assert_eq!(store.last_deletion(&k), None, "an unfinished removal is no record yet");
        assert!(wal.exists(), "a failed removal leaves the files it had not reached");
        assert!(store.removal_pending(&k), "a failed removal is remembered on disk");
        assert_eq!(
            store.pending_removal_record(&k).as_deref(),
            Some("1000 self"),
            "the marker holds the record of the removal it stands for"
        );
        assert!(!store.exists(&k), "an actor whose removal began no longer exists");
        assert_eq!(store.list(), vec![], "nor is it listed");

        store
            .remove(&k, "2000 operator")
            .expect("remove succeeds once the fault is spent");
        for p in [&db, &wal, &shm] {
            assert!(!p.exists(), "remove leaves no file behind: {}", p.display());
        }
        assert!(!store.exists(&k), "a removed actor no longer exists");
        assert!(!store.removal_pending(&k), "a finished removal leaves no marker");
        assert_eq!(store.pending_removal_record(&k), None, "nor a pending record");
        assert_eq!(
            store.last_deletion(&k).as_deref(),
            Some("1000 self"),
            "a finished removal leaves the record its first attempt wrote"
        );
        store.prepare(&k).expect("prepare again");
        std::fs::write(&db, b"x").expect("the address is used again");
        assert!(store.exists(&k), "a used-again address exists");
        assert_eq!(store.list(), vec![k.clone()], "and is listed once");
        assert!(
            store.last_deletion(&k).is_some(),
            "the record of the earlier deletion outlives the address's reuse"
        );
        store
            .remove(&k, "3000 self_durable")
            .expect("removing a used-again address");
        assert_eq!(
            store.last_deletion(&k).as_deref(),
            Some("3000 self_durable"),
            "the record is always the last deletion's"
        );
        store
            .remove(&k, "4000 self")
            .expect("removing an actor without files is not an error");
        assert_eq!(
            store.last_deletion(&k).as_deref(),
            Some("3000 self_durable"),
            "removing nothing records no deletion"
        );
    }

    /// A store in a new directory, and the actor the tests remove.
    #[cfg(test)]
    fn fresh_store() -> (tempfile::TempDir, LocalStateStore, ActorKey) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = LocalStateStore::new(dir.path(), Arc::new(Faults::default()));
        (dir, store, ActorKey::new("acme/shop", "cart", "u-1842"))
    }

    /// Lays out an actor's three files, each holding `x`, as a database
    /// would have them.
    #[cfg(test)]
    fn actor_files(store: &LocalStateStore, k: &ActorKey) -> (PathBuf, PathBuf, PathBuf) {
        store.prepare(k).expect("prepare");
        let db = store.db_path(k);
        let (wal, shm) = sidecars(&db);
        for p in [&db, &wal, &shm] {
            std::fs::write(p, b"x").expect("write a file");
        }
        (db, wal, shm)
    }

    /// Removes `k` again, and checks that no file is left and that the record
    /// is `want`.
    #[cfg(test)]
    fn finishes_with(store: &LocalStateStore, k: &ActorKey, case: &str, want: &str) {
        let db = store.db_path(k);
        let (wal, shm) = sidecars(&db);
        store
            .remove(k, "2000 operator")
            .expect("the next use finishes the removal");
        for p in [&db, &wal, &shm, &marker(&db)] {
            assert!(!p.exists(), "after {case} {} is left", p.display());
        }
        assert_eq!(
            store.last_deletion(k).as_deref(),
            Some(want),
            "after {case} the record is {want:?}"
        );
    }

    /// A crash during a removal keeps a prefix of its steps (the database
    /// renamed to the marker, the record written into it, WAL, shm, rename
    /// to the record): ADR 038's single sync rests on this. Each prefix must
    /// read as gone or pending, never as the old data, and the next removal
    /// must finish it, with the first attempt's record once it was written.
    #[test]
    fn every_prefix_of_a_removal_is_finished() {
        for done in 0..=5 {
            let (_dir, store, k) = fresh_store();
            let (db, wal, shm) = actor_files(&store, &k);
            if done >= 1 {
                std::fs::rename(&db, marker(&db)).expect("rename to the marker");
                assert_eq!(
                    store.pending_removal_record(&k),
                    None,
                    "a marker that holds the database's pages holds no record"
                );
            }
            if done >= 2 {
                std::fs::write(marker(&db), "1000 self").expect("the record");
            }
            for (step, p) in [(3, &wal), (4, &shm)] {
                if done >= step {
                    std::fs::remove_file(p).expect("unlink");
                }
            }
            if done >= 5 {
                std::fs::rename(marker(&db), record(&db)).expect("rename");
            }
            if done >= 1 {
                assert!(!store.exists(&k), "after {done} steps the actor no longer exists");
                assert!(store.list().is_empty(), "after {done} steps the actor is not listed");
            }
            // A marker that still holds the database's pages holds no record:
            // the removal that finishes it writes its own.
            let want = if done >= 2 { "1000 self" } else { "2000 operator" };
            finishes_with(&store, &k, &format!("{done} steps"), want);
        }
    }

    /// A crash after the marker was emptied and before its record reached
    /// the disk leaves an empty marker; a database file whose first bytes
    /// read like a record is not taken for one. Both are finished, and the
    /// removal that finishes them writes its own record.
    #[test]
    fn a_marker_without_a_record_is_finished_with_the_next_record() {
        let padded = format!("1000 self{}", " ".repeat(200));
        for content in ["", padded.as_str()] {
            let (_dir, store, k) = fresh_store();
            let (db, _, _) = actor_files(&store, &k);
            std::fs::rename(&db, marker(&db)).expect("rename to the marker");
            std::fs::write(marker(&db), content).expect("the marker's bytes");
            assert!(store.removal_pending(&k), "the removal is pending");
            assert_eq!(store.pending_removal_record(&k), None, "with no record");
            finishes_with(
                &store,
                &k,
                &format!("a marker of {} bytes", content.len()),
                "2000 operator",
            );
        }
    }

    /// A data directory written by an earlier version holds markers created
    /// beside the database, which was unlinked after the WAL: each prefix
    /// of those steps is finished too, with its record.
    #[test]
    fn a_marker_beside_the_database_is_finished() {
        for done in 1..=3 {
            let (_dir, store, k) = fresh_store();
            let (db, wal, _) = actor_files(&store, &k);
            std::fs::write(marker(&db), "1000 self").expect("marker");
            for (step, p) in [(2, &wal), (3, &db)] {
                if done >= step {
                    std::fs::remove_file(p).expect("unlink");
                }
            }
            assert!(!store.exists(&k), "after {done} steps the actor no longer exists");
            finishes_with(&store, &k, &format!("{done} earlier steps"), "1000 self");
        }
    }

    /// A removal allocates no file: the database's own file becomes the
    /// marker and then the record, so a file system slow to find a free
    /// inode (one that freed many lately) does not slow the delete (ADR 053).
    #[test]
    fn a_removal_keeps_the_database_s_file_as_its_record() {
        use std::os::unix::fs::MetadataExt;
        let (_dir, store, k) = fresh_store();
        let (db, _, _) = actor_files(&store, &k);
        let inode = std::fs::metadata(&db).expect("the database").ino();
        store.remove(&k, "1000 self_durable").expect("remove");
        assert_eq!(
            std::fs::metadata(record(&db)).expect("the record").ino(),
            inode,
            "the record is the database's file, renamed and written over"
        );
        assert_eq!(store.last_deletion(&k).as_deref(), Some("1000 self_durable"));
    }

    #[test]
    fn local_state_store_meets_the_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        let faults = Arc::new(Faults::default());
        check(&LocalStateStore::new(dir.path(), faults.clone()), &faults);
    }
}
