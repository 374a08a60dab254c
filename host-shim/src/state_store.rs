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
    /// Whether the actor has a database.
    fn exists(&self, key: &ActorKey) -> bool;
    /// Creates the directory the database goes in.
    ///
    /// # Errors
    /// The file system's error.
    fn prepare(&self, key: &ActorKey) -> io::Result<()>;
    /// Removes the actor's files durably: the WAL first, then the shm, then the
    /// database, then fsyncs the directory. Missing files are not an error.
    ///
    /// # Errors
    /// The file system's error (or an injected one); some files may remain.
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
        self.db_path(key).exists()
    }

    fn prepare(&self, key: &ActorKey) -> io::Result<()> {
        std::fs::create_dir_all(self.dir(key))
    }

    fn remove(&self, key: &ActorKey) -> io::Result<()> {
        if self.faults.take(FaultKind::FailRemoval) {
            return Err(io::Error::other("injected fault: fail-removal"));
        }
        let db = self.db_path(key);
        let (wal, shm) = sidecars(&db);
        remove_if_present(&wal)?;
        remove_if_present(&db)?;
        remove_if_present(&shm)?;
        let dir = self.dir(key);
        if dir.exists() {
            std::fs::File::open(&dir)?.sync_all()?;
        }
        Ok(())
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
        assert!(store.exists(&k), "a failed removal leaves the database in place");

        store.remove(&k).expect("remove succeeds once the fault is spent");
        for p in [&db, &wal, &shm] {
            assert!(!p.exists(), "remove leaves no file behind: {}", p.display());
        }
        assert!(!store.exists(&k), "a removed actor no longer exists");
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
