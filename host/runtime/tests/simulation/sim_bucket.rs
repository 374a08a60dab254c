//! The bucket the simulation steers ([`SimBucket`]: puts fail, land late, or
//! land and report failure; erases fail) and where it keeps its objects
//! ([`Backend`]: memory, or a `file://` directory).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use wasmkeep_host::bucket::{BucketError, ETag, MemoryBucket, ObjectMeta, ObjectStore, PutCondition};
use wasmkeep_host::clock::Clock;

/// What the next put does.
#[derive(Clone, Copy, PartialEq)]
pub enum PutFate {
    Normal,
    /// Fails and does not land.
    Fail,
    /// Is held back (the client gives up: ambiguous) and may land later.
    Delay,
    /// Lands, and the client is told it failed.
    LandAndFail,
}

/// A bucket the simulation steers: puts can fail, land late, or land and fail; erases can fail.
pub struct SimBucket {
    pub inner: Arc<dyn ObjectStore>,
    pub next_put: Mutex<PutFate>,
    pub fail_erase: Mutex<bool>,
    pub delayed: Mutex<Vec<(String, Vec<u8>)>>,
    /// Every history key that ever landed (late ones included), with its body.
    pub landed: Mutex<Vec<(String, Vec<u8>)>>,
    /// While a restore runs: the state it restores. Every history object
    /// put meanwhile is that restore's (landed or not), by key.
    pub restoring: Mutex<Option<Vec<u64>>>,
    pub restores: Mutex<HashMap<String, Vec<u64>>>,
}

impl SimBucket {
    pub fn record(&self, key: &str, body: &[u8]) {
        if key.contains("/history/") {
            self.landed.lock().expect("lock").push((key.to_owned(), body.to_vec()));
        }
    }
}

impl ObjectStore for SimBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }
    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        if key.contains("/history/")
            && let Some(state) = self.restoring.lock().expect("lock").clone()
        {
            self.restores.lock().expect("lock").insert(key.to_owned(), state);
        }
        let fate = std::mem::replace(&mut *self.next_put.lock().expect("lock"), PutFate::Normal);
        match fate {
            PutFate::Normal => {
                let e = self.inner.put(key, body, cond)?;
                self.record(key, body);
                Ok(e)
            }
            PutFate::Fail => Err(BucketError::Unavailable("simulated".into())),
            PutFate::Delay => {
                self.delayed.lock().expect("lock").push((key.to_owned(), body.to_vec()));
                Err(BucketError::Ambiguous(key.to_owned()))
            }
            PutFate::LandAndFail => {
                self.inner.put(key, body, cond)?;
                self.record(key, body);
                Err(BucketError::Ambiguous(key.to_owned()))
            }
        }
    }
    fn delete(&self, key: &str) -> Result<(), BucketError> {
        if std::mem::take(&mut *self.fail_erase.lock().expect("lock")) {
            return Err(BucketError::Unavailable("simulated erase failure".into()));
        }
        self.inner.delete(key)
    }
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}

/// Where the simulated bucket is: in memory, or a `file://` directory.
pub enum Backend {
    Memory,
    /// A directory per seed under this one.
    Dir(tempfile::TempDir, std::sync::atomic::AtomicU64),
}

impl Backend {
    pub fn dir() -> Self {
        // In memory where there is a /dev/shm: the same files, no disk.
        let shm = std::path::Path::new("/dev/shm");
        let t = tempfile::Builder::new()
            .prefix("wasmkeep-sim-")
            .tempdir_in(if shm.is_dir() {
                shm
            } else {
                std::path::Path::new("/tmp")
            })
            .or_else(|_| tempfile::tempdir())
            .expect("a temporary directory");
        Backend::Dir(t, std::sync::atomic::AtomicU64::new(0))
    }

    pub fn open(&self, clock: Arc<dyn Clock>) -> Arc<dyn ObjectStore> {
        match self {
            Backend::Memory => Arc::new(MemoryBucket::new(clock)),
            Backend::Dir(t, n) => {
                let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Arc::new(wasmkeep_host::bucket::LocalDirBucket::new(
                    t.path().join(i.to_string()),
                    clock,
                ))
            }
        }
    }
}
