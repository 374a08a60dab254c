//! The bucket nodes of a cluster share, behind an object-store trait with the
//! conditional writes ADR 0028 relies on: create-if-absent and
//! replace-if-ETag-matches, and listings with ETags and last-modified times.
//!
//! Two implementations here: a local directory (the default and `file://`,
//! keyed as in ADR 0028: `state/<tenant>/<app>/…`, `apps/<tenant>/<app>/…`)
//! and memory (for the simulation); S3, Azure, GCS and object_store's memory
//! are `object_store_bucket` (ADR 027). [`FaultyBucket`] wraps any of them and
//! fails on purpose. The contract test at the bottom is run by every
//! implementation.

use crate::clock::Clock;
use crate::dir_lock::{DirLock, LOCK_FILE, LockKind};
use crate::faults::{FaultKind, Faults};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// An object's version: changes with every write of it.
pub type ETag = String;

/// What a listing says of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The key.
    pub key: String,
    /// Its version.
    pub etag: ETag,
    /// When it was last written, on the bucket's clock (ms since the epoch).
    pub last_modified: u64,
}

/// When a write may happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutCondition {
    /// Always.
    None,
    /// Only if no object has the key (If-None-Match: *).
    IfAbsent,
    /// Only if the object's ETag is this one (If-Match).
    IfMatch(ETag),
}

/// Why a bucket call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BucketError {
    /// The condition did not hold; nothing was written.
    #[error("precondition failed for {0}")]
    PreconditionFailed(String),
    /// The bucket did not answer or refused; the write did not land.
    #[error("the bucket failed: {0}")]
    Unavailable(String),
    /// The write landed but the caller was told it failed (the ambiguous case).
    #[error("the bucket reported a failure for {0} (the write may have landed)")]
    Ambiguous(String),
}

/// An object store with conditional writes.
pub trait ObjectStore: Send + Sync + 'static {
    /// Reads an object and its ETag.
    ///
    /// # Errors
    /// The bucket failed.
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError>;
    /// Writes an object if `cond` holds; returns its new ETag.
    ///
    /// # Errors
    /// `PreconditionFailed` when `cond` does not hold; `Unavailable` or
    /// `Ambiguous` when the bucket failed.
    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError>;
    /// Deletes an object (no error if it is absent).
    ///
    /// # Errors
    /// The bucket failed; the object may remain.
    fn delete(&self, key: &str) -> Result<(), BucketError>;
    /// Every object whose key starts with `prefix`, in key order.
    ///
    /// # Errors
    /// The bucket failed.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError>;
}

/// Writes `body` at `key` on `cond`, and settles by reading the key back an
/// outcome the bucket left unknown (`Ambiguous`: an answer lost, a timeout
/// after the request went out, a 5xx after the write landed, a retry refused
/// by its own first attempt). Every write the cluster depends on goes
/// through here (issue 57, ADR 066):
///
/// - the object holds `body`: the write landed, and its ETag is returned
///   (every body the host writes where this matters carries a nonce, a
///   generation or a count, so nobody else writes the same bytes);
/// - it holds other bytes that prove another writer (`IfAbsent`: someone
///   created it; `IfMatch`: its version is not the one named any more, or it
///   is gone): `PreconditionFailed`, as if the condition had failed at once;
/// - anything else (absent after a create, still the version named, other
///   bytes after an unconditional write, or the read failed): still
///   `Ambiguous`, saying what the read found. The write may land yet; the
///   caller treats it as not acknowledged.
///
/// # Errors
/// As [`ObjectStore::put`]: `PreconditionFailed` when the condition failed
/// or another writer is proven, `Unavailable` when the write did not land,
/// `Ambiguous` when reading back did not settle it.
pub fn put_read_back(
    bucket: &dyn ObjectStore,
    key: &str,
    body: &[u8],
    cond: &PutCondition,
) -> Result<ETag, BucketError> {
    let why = match bucket.put(key, body, cond) {
        Err(BucketError::Ambiguous(why)) => why,
        other => return other,
    };
    let found = match bucket.get(key) {
        Ok(Some((current, etag))) if current == body => return Ok(etag),
        Ok(found) => found,
        Err(e) => return Err(BucketError::Ambiguous(format!("{why}; reading it back failed: {e}"))),
    };
    let proven = match (cond, &found) {
        (PutCondition::IfAbsent, Some(_)) => Some("another writer created it"),
        (PutCondition::IfMatch(named), Some((_, etag))) if etag != named => {
            Some("another writer replaced the version named")
        }
        (PutCondition::IfMatch(_), None) => Some("it is gone: another writer removed it"),
        _ => None,
    };
    match proven {
        Some(how) => Err(BucketError::PreconditionFailed(format!(
            "{key} (read back after {why}: {how})"
        ))),
        None => Err(BucketError::Ambiguous(format!(
            "{why}; read back: {}",
            if found.is_some() {
                "the object holds other bytes, or the version named: this write may land yet"
            } else {
                "nothing there yet: this write may land yet"
            }
        ))),
    }
}

fn etag_of(body: &[u8], counter: u64) -> ETag {
    let mut h = Sha256::new();
    h.update(body);
    h.update(counter.to_le_bytes());
    hex::encode(&h.finalize()[..12])
}

/// Objects by key (body, ETag, last modified) and a write counter.
type MemoryObjects = (BTreeMap<String, (Vec<u8>, ETag, u64)>, u64);

/// Objects held in memory.
pub struct MemoryBucket {
    objects: Mutex<MemoryObjects>,
    clock: Arc<dyn Clock>,
}

impl MemoryBucket {
    /// An empty bucket whose last-modified times come from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            objects: Mutex::new((BTreeMap::new(), 0)),
            clock,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ObjectStore for MemoryBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        Ok(lock(&self.objects).0.get(key).map(|(b, e, _)| (b.clone(), e.clone())))
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let mut g = lock(&self.objects);
        let current = g.0.get(key).map(|(_, e, _)| e.clone());
        let ok = match cond {
            PutCondition::None => true,
            PutCondition::IfAbsent => current.is_none(),
            PutCondition::IfMatch(e) => current.as_ref() == Some(e),
        };
        if !ok {
            return Err(BucketError::PreconditionFailed(key.to_owned()));
        }
        g.1 += 1;
        let etag = etag_of(body, g.1);
        let now = self.clock.now_ms();
        g.0.insert(key.to_owned(), (body.to_vec(), etag.clone(), now));
        Ok(etag)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        lock(&self.objects).0.remove(key);
        Ok(())
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        Ok(lock(&self.objects)
            .0
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, (_, e, t))| ObjectMeta {
                key: k.clone(),
                etag: e.clone(),
                last_modified: *t,
            })
            .collect())
    }
}

/// Objects as files under a directory: `<root>/<key>`, with `<key>.etag`
/// beside each holding its ETag and last-modified time. Conditional writes are
/// atomic across threads and processes: a writer holds `<root>/.lock`
/// exclusively ([`crate::dir_lock`]), readers share it.
pub struct LocalDirBucket {
    root: PathBuf,
    clock: Arc<dyn Clock>,
    /// Serialises this process's writers; holds a counter that, with the
    /// nonce, makes ETags unique.
    write_lock: Mutex<u64>,
    /// Random per instance: two processes writing the same bytes at the same
    /// count still get different ETags.
    nonce: u64,
}

impl LocalDirBucket {
    /// A bucket in `root` (created as needed).
    pub fn new(root: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Self {
        use std::hash::{BuildHasher, Hasher};
        Self {
            root: root.into(),
            clock,
            write_lock: Mutex::new(0),
            nonce: std::collections::hash_map::RandomState::new().build_hasher().finish(),
        }
    }

    /// The lock on the directory that other processes see too.
    fn dir_lock(&self, kind: LockKind) -> Result<DirLock, BucketError> {
        DirLock::acquire(&self.root, kind)
            .map_err(|e| BucketError::Unavailable(format!("locking {}: {e}", self.root.display())))
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &str) -> Result<PathBuf, BucketError> {
        if key.split('/').any(|p| p.is_empty() || p == "." || p == "..") || key.ends_with(".etag") || key == LOCK_FILE {
            return Err(BucketError::Unavailable(format!("invalid key {key:?}")));
        }
        Ok(self.root.join(key))
    }

    fn meta_path(p: &Path) -> PathBuf {
        let mut m = p.as_os_str().to_owned();
        m.push(".etag");
        PathBuf::from(m)
    }

    fn read_meta(p: &Path) -> Option<(ETag, u64)> {
        let text = std::fs::read_to_string(Self::meta_path(p)).ok()?;
        let (etag, t) = text.trim().split_once(' ')?;
        Some((etag.to_owned(), t.parse().ok()?))
    }
}

fn io_err(e: &std::io::Error) -> BucketError {
    BucketError::Unavailable(e.to_string())
}

/// Writes a file so that readers see either the old or the new bytes.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

impl ObjectStore for LocalDirBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        let p = self.path(key)?;
        let _g = lock(&self.write_lock);
        let _shared = self.dir_lock(LockKind::Shared)?;
        match std::fs::read(&p) {
            Ok(b) => Ok(Some((b, Self::read_meta(&p).map(|m| m.0).unwrap_or_default()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&e)),
        }
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let p = self.path(key)?;
        let mut g = lock(&self.write_lock);
        let _exclusive = self.dir_lock(LockKind::Exclusive)?;
        let current = if p.exists() {
            Self::read_meta(&p).map(|m| m.0)
        } else {
            None
        };
        let ok = match cond {
            PutCondition::None => true,
            PutCondition::IfAbsent => !p.exists(),
            PutCondition::IfMatch(e) => current.as_ref() == Some(e),
        };
        if !ok {
            return Err(BucketError::PreconditionFailed(key.to_owned()));
        }
        *g += 1;
        let etag = etag_of(body, *g ^ self.nonce.rotate_left(32));
        write_atomic(&p, body).map_err(|e| io_err(&e))?;
        write_atomic(
            &Self::meta_path(&p),
            format!("{etag} {}", self.clock.now_ms()).as_bytes(),
        )
        .map_err(|e| io_err(&e))?;
        Ok(etag)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        let p = self.path(key)?;
        let _g = lock(&self.write_lock);
        let _exclusive = self.dir_lock(LockKind::Exclusive)?;
        for f in [Self::meta_path(&p), p] {
            match std::fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&e)),
                _ => {}
            }
        }
        Ok(())
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let _g = lock(&self.write_lock);
        let _shared = self.dir_lock(LockKind::Shared)?;
        let mut out = Vec::new();
        // Walk from the deepest directory the prefix names.
        let dir_part = prefix.rsplit_once('/').map_or("", |(d, _)| d);
        let start = if dir_part.is_empty() {
            self.root.clone()
        } else {
            self.root.join(dir_part)
        };
        // A listing that could not read a directory fails: it is never taken
        // for an empty one (an actor would look absent, verify would report
        // false orphans). Only a directory that is not there is empty.
        let unreadable = |p: &Path, e: &std::io::Error| {
            BucketError::Unavailable(format!("listing {prefix:?}: cannot read {}: {e}", p.display()))
        };
        let mut stack = vec![start];
        while let Some(d) = stack.pop() {
            let entries = match std::fs::read_dir(&d) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                // The prefix's directory part names an object: nothing is under it.
                Err(_) if d.is_file() => continue,
                Err(e) => return Err(unreadable(&d, &e)),
            };
            for e in entries {
                let e = e.map_err(|err| unreadable(&d, &err))?;
                let p = e.path();
                let kind = e.file_type().map_err(|err| unreadable(&p, &err))?;
                if kind.is_dir() {
                    stack.push(p);
                    continue;
                }
                if !kind.is_file() {
                    return Err(BucketError::Unavailable(format!(
                        "listing {prefix:?}: {} is neither an object nor a directory (a link?); the bucket \
                         directory holds only what the host wrote",
                        p.display()
                    )));
                }
                let Ok(rel) = p.strip_prefix(&self.root) else { continue };
                let key = rel.to_string_lossy().replace('\\', "/");
                if key.ends_with(".etag") || key.ends_with(".tmp") || key == LOCK_FILE || !key.starts_with(prefix) {
                    continue;
                }
                let (etag, last_modified) = Self::read_meta(&p).unwrap_or_default();
                out.push(ObjectMeta {
                    key,
                    etag,
                    last_modified,
                });
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}

/// Wraps a bucket and fails on purpose when the faults say so:
/// `fail-upload` (a write fails and does not land), `upload-lands-but-fails`
/// (it lands, the caller is told it failed, and the read of that key that
/// follows fails too: the ambiguous case that reading back cannot settle,
/// which the conformance cases of ADR 0028's `internal` rely on; ADR 066),
/// `fail-erase` (a delete fails).
pub struct FaultyBucket {
    inner: Arc<dyn ObjectStore>,
    faults: Arc<Faults>,
    /// The key an `upload-lands-but-fails` wrote last, until it is read once.
    unreadable: Mutex<Option<String>>,
}

impl FaultyBucket {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ObjectStore>, faults: Arc<Faults>) -> Self {
        Self {
            inner,
            faults,
            unreadable: Mutex::new(None),
        }
    }
}

impl ObjectStore for FaultyBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        if lock(&self.unreadable).take_if(|k| k == key).is_some() {
            return Err(BucketError::Unavailable(format!(
                "injected fault: upload-lands-but-fails ({key} cannot be read back)"
            )));
        }
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        // A fault armed for "the next upload" is for the delete's reset, not
        // the purge mark written just before it (ADR 031).
        if crate::keys::is_purge_mark(key) {
            return self.inner.put(key, body, cond);
        }
        if self.faults.take(FaultKind::FailUpload) {
            return Err(BucketError::Unavailable(format!("injected fault: fail-upload ({key})")));
        }
        let etag = self.inner.put(key, body, cond)?;
        if self.faults.take(FaultKind::UploadLandsButFails) {
            *lock(&self.unreadable) = Some(key.to_owned());
            return Err(BucketError::Ambiguous(key.to_owned()));
        }
        Ok(etag)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        if self.faults.take(FaultKind::FailErase) {
            return Err(BucketError::Unavailable(format!("injected fault: fail-erase ({key})")));
        }
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}

/// What [`LostAnswers`] does after a write whose answer it loses landed.
#[cfg(any(test, feature = "contract-tests"))]
pub type AfterLanding = Box<dyn Fn() + Send + Sync>;

/// Wraps a bucket and loses the answers to writes whose keys contain a
/// given part: the write lands, and the caller is told `Ambiguous`, as over
/// a connection that broke after the request went out. Reads work (unlike
/// [`FaultyBucket`]'s `upload-lands-but-fails`), so reading back settles it.
#[cfg(any(test, feature = "contract-tests"))]
pub struct LostAnswers {
    inner: Arc<dyn ObjectStore>,
    /// The part of the key, how many answers are still to lose, and what
    /// happens after each such write landed (another writer's write, say).
    rule: Mutex<Option<(String, u32, Option<AfterLanding>)>>,
    lost: Mutex<u32>,
}

#[cfg(any(test, feature = "contract-tests"))]
impl LostAnswers {
    /// Wraps `inner`, losing nothing yet.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            rule: Mutex::new(None),
            lost: Mutex::new(0),
        }
    }

    /// Loses the answers to the next `count` writes of keys containing `part`.
    pub fn lose(&self, part: &str, count: u32) {
        *lock(&self.rule) = Some((part.to_owned(), count, None));
    }

    /// Loses the answer to the next write of a key containing `part`, and
    /// runs `then` right after it landed (another writer's write, say).
    pub fn lose_then(&self, part: &str, then: impl Fn() + Send + Sync + 'static) {
        *lock(&self.rule) = Some((part.to_owned(), 1, Some(Box::new(then))));
    }

    /// How many answers were lost so far.
    pub fn lost(&self) -> u32 {
        *lock(&self.lost)
    }
}

#[cfg(any(test, feature = "contract-tests"))]
impl ObjectStore for LostAnswers {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let etag = self.inner.put(key, body, cond)?;
        let mut rule = lock(&self.rule);
        let Some((part, left, _)) = rule.as_mut() else {
            return Ok(etag);
        };
        if !key.contains(part.as_str()) {
            return Ok(etag);
        }
        *left -= 1;
        let then = if *left == 0 {
            rule.take().and_then(|r| r.2)
        } else {
            None
        };
        drop(rule);
        *lock(&self.lost) += 1;
        if let Some(then) = then {
            then();
        }
        Err(BucketError::Ambiguous(format!(
            "{key} (the answer was lost on purpose)"
        )))
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}

/// The contract every [`ObjectStore`] must pass.
#[cfg(any(test, feature = "contract-tests"))]
pub mod contract {
    use super::*;
    #[cfg(test)]
    use crate::clock::VirtualClock;

    /// What a backend's clock and ETags promise beyond the contract's core.
    #[derive(Debug, Clone)]
    pub struct Expect {
        /// Where listings' last-modified times come from.
        pub times: Times,
        /// Whether rewriting the same bytes changes the ETag. Ours do (the
        /// ETag hashes a write counter); S3's and moto's ETag is the body's
        /// MD5, so there it does not (ADR 027), and callers must not rely on it.
        pub identical_rewrite_changes_etag: bool,
    }

    /// Where a backend's last-modified times come from.
    #[derive(Debug, Clone, Copy)]
    pub enum Times {
        /// The bucket clock it was given: exactly this time.
        Exactly(u64),
        /// The server's own clock: the wall clock, give or take this many ms.
        WallClock {
            /// How far the server's clock may be from ours.
            slack_ms: u64,
        },
    }

    impl Expect {
        /// Our own backends on the virtual clock: times are the bucket
        /// clock's, and every write changes the ETag.
        pub fn ours() -> Self {
            Self {
                times: Times::Exactly(crate::clock::VIRTUAL_EPOCH_MS),
                identical_rewrite_changes_etag: true,
            }
        }

        /// A store with its own clock and content-derived ETags
        /// (object_store's backends, a real server).
        pub fn server_clock() -> Self {
            Self {
                times: Times::WallClock { slack_ms: 300_000 },
                identical_rewrite_changes_etag: false,
            }
        }
    }

    /// Checks `b` against the contract: conditional writes, listings with
    /// ETags and times, deletes; with [`Expect::ours`].
    ///
    /// # Panics
    /// Where the implementation breaks the contract.
    pub fn check(b: &dyn ObjectStore) {
        check_with(b, &Expect::ours());
    }

    fn wall_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// Checks `b` against the contract, with `expect` saying what its clock
    /// and ETags promise; everything else is demanded of every backend.
    ///
    /// # Panics
    /// Where the implementation breaks the contract.
    pub fn check_with(b: &dyn ObjectStore, expect: &Expect) {
        let started = wall_ms();
        assert_eq!(b.get("state/t/a/x").expect("get"), None, "a new bucket holds nothing");
        let e1 = b.put("state/t/a/x", b"one", &PutCondition::IfAbsent).expect("create");
        assert_eq!(
            b.put("state/t/a/x", b"two", &PutCondition::IfAbsent),
            Err(BucketError::PreconditionFailed("state/t/a/x".into())),
            "create-if-absent fails when the key exists"
        );
        assert_eq!(
            b.get("state/t/a/x").expect("get"),
            Some((b"one".to_vec(), e1.clone())),
            "get returns the body and ETag"
        );
        let e2 = b
            .put("state/t/a/x", b"two", &PutCondition::IfMatch(e1.clone()))
            .expect("replace");
        assert_ne!(e1, e2, "every write changes the ETag");
        assert!(
            matches!(
                b.put("state/t/a/x", b"three", &PutCondition::IfMatch(e1)),
                Err(BucketError::PreconditionFailed(_))
            ),
            "replace-if-match fails on an old ETag"
        );
        assert!(
            matches!(
                b.put("state/t/a/missing", b"four", &PutCondition::IfMatch(e2.clone())),
                Err(BucketError::PreconditionFailed(_))
            ),
            "replace-if-match fails on a missing key"
        );
        assert_eq!(b.get("state/t/a/missing").expect("get"), None, "and writes nothing");
        let rewrite: &[u8] = if expect.identical_rewrite_changes_etag {
            b"two"
        } else {
            b"two, again"
        };
        let e3 = b
            .put("state/t/a/x", rewrite, &PutCondition::None)
            .expect("unconditional");
        assert_ne!(e2, e3, "an unconditional write changes the ETag");
        b.put("state/t/a/y/z", b"z", &PutCondition::None).expect("nested");
        b.put("state/t/b/q", b"q", &PutCondition::None).expect("other app");
        let keys: Vec<String> = b.list("state/t/a/").expect("list").into_iter().map(|m| m.key).collect();
        assert_eq!(
            keys,
            vec!["state/t/a/x", "state/t/a/y/z"],
            "list gives every key under the prefix, in order"
        );
        let m = &b.list("state/t/a/x").expect("list")[0];
        assert_eq!(m.etag, e3, "listings carry the current ETag");
        match expect.times {
            Times::Exactly(ms) => assert_eq!(m.last_modified, ms, "listings carry the bucket clock's time"),
            Times::WallClock { slack_ms } => assert!(
                m.last_modified + slack_ms >= started && m.last_modified <= wall_ms() + slack_ms,
                "listings carry the server's time ({} against {started})",
                m.last_modified
            ),
        }
        b.delete("state/t/a/x").expect("delete");
        b.delete("state/t/a/x").expect("deleting an absent key is not an error");
        assert_eq!(b.get("state/t/a/x").expect("get"), None, "a deleted object is gone");
    }

    /// Sixteen writers race to create one key: exactly one wins, every other
    /// is told the precondition failed, and the object is the winner's.
    /// Each writes its own bytes (a store may answer a failed condition over
    /// identical bytes as ambiguous: the retry of a write that landed).
    ///
    /// # Panics
    /// Where the implementation lets two writers create the key, or fails one
    /// for another reason.
    pub fn check_racing_creates(b: Arc<dyn ObjectStore>) {
        const WRITERS: usize = 16;
        let key = "state/t/race/owner";
        let start = Arc::new(std::sync::Barrier::new(WRITERS));
        let writers: Vec<_> = (0..WRITERS)
            .map(|i| {
                let (b, start) = (b.clone(), start.clone());
                std::thread::spawn(move || {
                    let body = format!("writer {i}").into_bytes();
                    start.wait();
                    (body.clone(), b.put(key, &body, &PutCondition::IfAbsent))
                })
            })
            .collect();
        let results: Vec<_> = writers.into_iter().map(|w| w.join().expect("writer")).collect();
        let winners: Vec<_> = results
            .iter()
            .filter_map(|(body, r)| r.as_ref().ok().map(|e| (body.clone(), e.clone())))
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "exactly one of {WRITERS} racing creates wins: {results:?}"
        );
        assert!(
            results
                .iter()
                .filter_map(|(_, r)| r.as_ref().err())
                .all(|e| matches!(e, BucketError::PreconditionFailed(_))),
            "every other create fails its precondition: {results:?}"
        );
        assert_eq!(
            b.get(key).expect("get"),
            Some(winners[0].clone()),
            "the object is the winner's, with the ETag it was told"
        );
    }

    /// The environment of a child writer of [`check_racing_processes`]: its number.
    pub const RACE_WRITER_ENV: &str = "WASMKEEP_RACE_WRITER";
    /// ... and the file whose appearance starts the race.
    pub const RACE_START_ENV: &str = "WASMKEEP_RACE_START";
    const RACE_ROUNDS: u64 = 25;
    const RACE_COUNTER: &str = "state/t/race/counter";
    const RACE_OWNER: &str = "state/t/race/processes-owner";

    /// A child writer's part (in its own process): once the start file is
    /// there, one create of a shared key (prints `won` if it won), then
    /// [`RACE_ROUNDS`] increments of a shared counter, each a read and an
    /// update on the ETag read, retried when its condition fails.
    ///
    /// # Panics
    /// The bucket failed, or the start file never came.
    pub fn race_as_child(b: &dyn ObjectStore, writer: &str, start: &Path) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !start.exists() {
            assert!(std::time::Instant::now() < deadline, "the race never started");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        match b.put(
            RACE_OWNER,
            format!("writer {writer}").as_bytes(),
            &PutCondition::IfAbsent,
        ) {
            Ok(_) => println!("won"),
            Err(BucketError::PreconditionFailed(_)) => println!("lost"),
            Err(e) => panic!("a create failed otherwise: {e}"),
        }
        for _ in 0..RACE_ROUNDS {
            loop {
                let (n, cond) = match b.get(RACE_COUNTER).expect("read the counter") {
                    None => (0, PutCondition::IfAbsent),
                    Some((body, etag)) => (
                        String::from_utf8_lossy(&body).parse::<u64>().expect("a count"),
                        PutCondition::IfMatch(etag),
                    ),
                };
                match b.put(RACE_COUNTER, (n + 1).to_string().as_bytes(), &cond) {
                    Ok(_) => break,
                    Err(BucketError::PreconditionFailed(_)) => {}
                    Err(e) => panic!("an update failed otherwise: {e}"),
                }
            }
        }
    }

    /// Writers in `writers` processes (`spawn(i, start)` starts writer `i`,
    /// which calls [`race_as_child`]) race on `b`'s bucket: exactly one wins
    /// the create, and no increment is lost.
    ///
    /// # Panics
    /// Where the bucket let two creates win or lost an update across processes.
    pub fn check_racing_processes(
        b: &dyn ObjectStore,
        writers: usize,
        start: &Path,
        spawn: impl Fn(usize) -> std::process::Child,
    ) {
        let children: Vec<_> = (0..writers).map(&spawn).collect();
        std::fs::write(start, b"go").expect("the start file");
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().expect("a writer ends"))
            .collect();
        for o in &outputs {
            assert!(
                o.status.success(),
                "a writer failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let won = outputs
            .iter()
            .filter(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l == "won"))
            .count();
        assert_eq!(won, 1, "exactly one process wins the create");
        let (body, _) = b.get(RACE_COUNTER).expect("read").expect("the counter");
        assert_eq!(
            String::from_utf8_lossy(&body),
            (RACE_ROUNDS * writers as u64).to_string(),
            "no process's increment was lost"
        );
    }

    #[test]
    fn memory_bucket_meets_the_contract() {
        check(&MemoryBucket::new(Arc::new(VirtualClock::default())));
    }

    #[test]
    fn a_local_dir_listing_that_cannot_read_a_directory_fails_instead_of_looking_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = LocalDirBucket::new(dir.path(), Arc::new(VirtualClock::default()));
        b.put("state/t/a/history/c/x/0-0.seg", b"one", &PutCondition::IfAbsent)
            .expect("put");
        assert_eq!(
            b.list("state/t/a/nothing/").expect("list").len(),
            0,
            "a missing directory is empty"
        );
        assert_eq!(
            b.list("state/t/a/history/c/x/0-0.seg/").expect("list").len(),
            0,
            "under an object: empty"
        );
        // A directory the host cannot read (as root, a link that loops stands in for EACCES).
        let history = dir.path().join("state/t/a/history");
        std::fs::remove_dir_all(&history).expect("rm");
        std::os::unix::fs::symlink(&history, &history).expect("a looping link");
        assert!(
            matches!(b.list("state/t/a/history/"), Err(BucketError::Unavailable(_))),
            "listing under an unreadable directory fails"
        );
        assert!(
            matches!(b.list("state/"), Err(BucketError::Unavailable(_))),
            "a walk that meets something it cannot read fails"
        );
    }

    #[test]
    fn local_dir_bucket_meets_the_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        check(&LocalDirBucket::new(dir.path(), Arc::new(VirtualClock::default())));
    }

    #[test]
    fn our_buckets_have_one_winner_among_racing_creates() {
        check_racing_creates(Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default()))));
        let dir = tempfile::tempdir().expect("tempdir");
        check_racing_creates(Arc::new(LocalDirBucket::new(
            dir.path(),
            Arc::new(VirtualClock::default()),
        )));
    }

    #[test]
    fn a_write_read_back_is_settled_by_what_the_bucket_holds() {
        let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let b = LostAnswers::new(inner.clone());
        // Landed, answer lost: ours.
        b.lose("k", 1);
        let e1 = put_read_back(&b, "k", b"one", &PutCondition::IfAbsent).expect("ours landed");
        assert_eq!(inner.get("k").expect("get"), Some((b"one".to_vec(), e1.clone())));
        b.lose("k", 1);
        let e2 = put_read_back(&b, "k", b"two", &PutCondition::IfMatch(e1.clone())).expect("ours landed");
        // Landed, then another writer replaced it: proven.
        let other = inner.clone();
        b.lose_then("k", move || {
            other.put("k", b"theirs", &PutCondition::None).expect("theirs");
        });
        assert!(matches!(
            put_read_back(&b, "k", b"three", &PutCondition::IfMatch(e2)),
            Err(BucketError::PreconditionFailed(_))
        ));
        // A create that another writer's object answers: proven.
        let other = inner.clone();
        b.lose_then("n", move || {
            other.put("n", b"theirs", &PutCondition::None).expect("theirs");
        });
        assert!(matches!(
            put_read_back(&b, "n", b"mine", &PutCondition::IfAbsent),
            Err(BucketError::PreconditionFailed(_))
        ));
        // Not landed (yet) and nothing proven: still ambiguous.
        let absent = PendingWrite(inner.clone());
        assert!(matches!(
            put_read_back(&absent, "p", b"x", &PutCondition::IfAbsent),
            Err(BucketError::Ambiguous(_))
        ));
        let (_, current) = inner.get("k").expect("get").expect("k");
        assert!(matches!(
            put_read_back(&absent, "k", b"x", &PutCondition::IfMatch(current)),
            Err(BucketError::Ambiguous(_))
        ));
        assert!(matches!(
            put_read_back(&absent, "k", b"x", &PutCondition::None),
            Err(BucketError::Ambiguous(_))
        ));
        // A failed condition is not read back.
        assert!(matches!(
            put_read_back(&b, "k", b"theirs", &PutCondition::IfAbsent),
            Err(BucketError::PreconditionFailed(_))
        ));
    }

    /// A bucket whose writes are still on their way: nothing lands, every
    /// write is ambiguous.
    #[cfg(test)]
    struct PendingWrite(Arc<dyn ObjectStore>);

    #[cfg(test)]
    impl ObjectStore for PendingWrite {
        fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
            self.0.get(key)
        }
        fn put(&self, key: &str, _: &[u8], _: &PutCondition) -> Result<ETag, BucketError> {
            Err(BucketError::Ambiguous(key.to_owned()))
        }
        fn delete(&self, key: &str) -> Result<(), BucketError> {
            self.0.delete(key)
        }
        fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
            self.0.list(prefix)
        }
    }

    #[test]
    fn faulty_bucket_fails_as_armed() {
        let faults = Arc::new(Faults::default());
        let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
        let b = FaultyBucket::new(inner.clone(), faults.clone());
        faults.arm(FaultKind::FailUpload, 1);
        assert!(
            matches!(b.put("k", b"x", &PutCondition::None), Err(BucketError::Unavailable(_))),
            "fail-upload fails"
        );
        assert_eq!(inner.get("k").expect("get"), None, "and the write did not land");
        faults.arm(FaultKind::UploadLandsButFails, 1);
        assert!(
            matches!(b.put("k", b"x", &PutCondition::None), Err(BucketError::Ambiguous(_))),
            "the ambiguous case fails"
        );
        assert!(inner.get("k").expect("get").is_some(), "but the write landed");
        faults.arm(FaultKind::UploadLandsButFails, 1);
        assert!(
            matches!(
                put_read_back(&b, "k", b"y", &PutCondition::None),
                Err(BucketError::Ambiguous(_))
            ),
            "reading back does not settle upload-lands-but-fails"
        );
        assert_eq!(inner.get("k").expect("get").map(|(body, _)| body), Some(b"y".to_vec()));
        assert!(b.get("k").is_ok(), "the read after the read-back works");
        faults.arm(FaultKind::FailErase, 1);
        assert!(b.delete("k").is_err(), "fail-erase fails a delete");
        assert!(inner.get("k").expect("get").is_some(), "and the object remains");
    }
}
