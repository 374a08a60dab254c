//! [`LocalDirBucket`]: objects as files under a directory, the default
//! bucket and `file://`.

use super::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition, etag_of, lock};
use crate::clock::Clock;
use crate::dir_lock::{DirLock, LOCK_FILE, LockKind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
