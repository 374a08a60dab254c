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
    /// Creates the directory the database goes in.
    ///
    /// # Errors
    /// The file system's error.
    fn prepare(&self, key: &ActorKey) -> io::Result<()>;
    /// Removes the actor's files durably. First a marker records that the
    /// removal began (so that a failure or a crash part way is finished before
    /// the actor is used again, never read as data); then the WAL, the
    /// database, the shm; then the directory is synced and the marker removed.
    /// Missing files are not an error.
    ///
    /// # Errors
    /// The file system's error (or an injected one); the marker then remains
    /// and some files may remain.
    fn remove(&self, key: &ActorKey) -> io::Result<()>;
    /// Every actor with a database, for listings.
    fn list(&self) -> Vec<ActorKey>;
}

/// Databases under `<data-dir>/state/<tenant>/<app>/<class>/<name hex>.db`.
#[derive(Debug, Clone)]
pub struct LocalStateStore {
    root: PathBuf,
    faults: Arc<Faults>,
}

impl LocalStateStore {
    /// A store rooted at `data_dir`, failing on purpose when `faults` says so.
    pub fn new(data_dir: &Path, faults: Arc<Faults>) -> Self {
        Self {
            root: data_dir.join("state"),
            faults,
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

fn remove_if_present(p: &Path) -> io::Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The marker that says a removal of `db` began.
fn marker(db: &Path) -> PathBuf {
    let mut m = db.as_os_str().to_owned();
    m.push(".deleting");
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
        self.dir(key).join(format!("{}.db", key.name_hex()))
    }

    fn exists(&self, key: &ActorKey) -> bool {
        self.db_path(key).exists() && !self.removal_pending(key)
    }

    fn removal_pending(&self, key: &ActorKey) -> bool {
        marker(&self.db_path(key)).exists()
    }

    fn prepare(&self, key: &ActorKey) -> io::Result<()> {
        std::fs::create_dir_all(self.dir(key))
    }

    fn remove(&self, key: &ActorKey) -> io::Result<()> {
        let db = self.db_path(key);
        let dir = self.dir(key);
        if !dir.exists() {
            return Ok(());
        }
        let mark = marker(&db);
        // No sync here: the file system journals the marker's creation before the
        // unlinks that follow, and the final sync covers them all (ADR 003).
        std::fs::File::create(&mark)?;
        if self.faults.take(FaultKind::FailRemoval) {
            return Err(io::Error::other("injected fault: fail-removal"));
        }
        let (wal, shm) = sidecars(&db);
        remove_if_present(&wal)?;
        remove_if_present(&db)?;
        remove_if_present(&shm)?;
        std::fs::File::open(&dir)?.sync_all()?;
        remove_if_present(&mark)
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
                        let Some(name) = ActorKey::name_from_hex(stem) else {
                            continue;
                        };
                        out.push(ActorKey::new(
                            format!(
                                "{}/{}",
                                t.file_name().to_string_lossy(),
                                a.file_name().to_string_lossy()
                            ),
                            c.file_name().to_string_lossy().into_owned(),
                            name,
                        ));
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// The contract every [`StateStore`] implementation must pass.
#[cfg(test)]
pub(crate) mod contract {
    use super::*;

    pub(crate) fn check(store: &dyn StateStore, faults: &Faults) {
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
        assert!(store.remove(&k).is_err(), "an injected removal fault makes remove fail");
        assert!(db.exists(), "a failed removal leaves the database file in place");
        assert!(store.removal_pending(&k), "a failed removal is remembered on disk");
        assert!(!store.exists(&k), "an actor whose removal began no longer exists");
        assert_eq!(store.list(), vec![], "nor is it listed");

        store.remove(&k).expect("remove succeeds once the fault is spent");
        for p in [&db, &wal, &shm] {
            assert!(!p.exists(), "remove leaves no file behind: {}", p.display());
        }
        assert!(!store.exists(&k), "a removed actor no longer exists");
        assert!(!store.removal_pending(&k), "a finished removal leaves no marker");
        store
            .remove(&k)
            .expect("removing an actor without files is not an error");
    }

    #[test]
    fn local_state_store_meets_the_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        let faults = Arc::new(Faults::default());
        check(&LocalStateStore::new(dir.path(), faults.clone()), &faults);
    }
}
