//! Cranelift's incremental cache, kept on disk: each compiled function by
//! the hash of its code. A rebuilt TypeScript or Python component has new
//! bytes, so its `.cwasm` misses the component cache, but its engine
//! (StarlingMonkey, CPython) is the same code: almost every function comes
//! from here, and only the guest's own changes are compiled again.
//!
//! One SQLite file in the compiled-component cache's directory, shared by
//! `serve` and every harness (SQLite's locking makes that safe). A broken or
//! missing file only costs compile time: every failure is a cache miss.

use crate::unpoisoned::lock;
use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Past this size the file is emptied when a host opens it (the cache fills
/// up again from the components compiled next).
const MOST_BYTES: u64 = 1 << 30;

/// Inserts are kept in memory and written in one transaction when this many
/// bytes are pending, or at [`FunctionCache::flush`]: one transaction per
/// function would be tens of thousands for a StarlingMonkey component.
const FLUSH_BYTES: usize = 16 << 20;

/// A function cache in one SQLite file, opened when first used: most hosts
/// load every component from the component cache and never compile.
pub(crate) struct FunctionCache {
    dir: PathBuf,
    /// None once opening failed: then every lookup is a miss.
    conn: OnceLock<Option<Mutex<Connection>>>,
    pending: Mutex<Pending>,
    /// Lookups and hits since the last flush, for the log.
    asked: AtomicUsize,
    found: AtomicUsize,
}

impl std::fmt::Debug for FunctionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Opens (or creates) the cache's file in `dir`.
fn open(dir: &Path) -> rusqlite::Result<Connection> {
    std::fs::create_dir_all(dir).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    let conn = Connection::open(dir.join(FILE))?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // A cache: losing the last writes in a crash is fine, waiting for the disk is not.
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;
         CREATE TABLE IF NOT EXISTS function(key BLOB PRIMARY KEY, digest BLOB NOT NULL, code BLOB NOT NULL) WITHOUT ROWID;",
    )?;
    let bytes: u64 = conn.query_row(
        "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
        [],
        |r| r.get(0),
    )?;
    if bytes > MOST_BYTES {
        tracing::info!("emptying the function cache in {} ({bytes} bytes)", dir.display());
        conn.execute_batch("DELETE FROM function; VACUUM;")?;
    }
    Ok(conn)
}

/// Inserts not written yet: (key, compiled code) pairs and their size in bytes.
type Pending = (Vec<(Vec<u8>, Vec<u8>)>, usize);

/// The file's name in the cache directory.
const FILE: &str = "functions.db";

impl FunctionCache {
    /// A cache in `dir/functions.db`, opened when first used.
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            conn: OnceLock::new(),
            pending: Mutex::new((Vec::new(), 0)),
            asked: AtomicUsize::new(0),
            found: AtomicUsize::new(0),
        }
    }

    /// The connection; a file that is not a cache is replaced once.
    fn conn(&self) -> Option<&Mutex<Connection>> {
        self.conn
            .get_or_init(|| {
                let opened = open(&self.dir).or_else(|e| {
                    tracing::warn!(
                        "the function cache in {} is unreadable ({e}): starting it again",
                        self.dir.display()
                    );
                    for suffix in ["", "-wal", "-shm"] {
                        let _ = std::fs::remove_file(self.dir.join(format!("{FILE}{suffix}")));
                    }
                    open(&self.dir)
                });
                match opened {
                    Ok(c) => Some(Mutex::new(c)),
                    Err(e) => {
                        tracing::warn!("no function cache in {}: {e}", self.dir.display());
                        None
                    }
                }
            })
            .as_ref()
    }

    fn read(&self, key: &[u8]) -> rusqlite::Result<Option<Vec<u8>>> {
        let Some(conn) = self.conn() else { return Ok(None) };
        let row: Option<(Vec<u8>, Vec<u8>)> = lock(conn)
            .prepare_cached("SELECT digest, code FROM function WHERE key = ?1")?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        // A damaged entry is a miss: its bytes would become native code.
        Ok(row.and_then(|(digest, code)| (Sha256::digest(&code).as_slice() == digest).then_some(code)))
    }

    /// Writes the pending inserts in one transaction.
    pub(crate) fn flush(&self) {
        let asked = self.asked.swap(0, Ordering::Relaxed);
        if asked > 0 {
            let found = self.found.swap(0, Ordering::Relaxed);
            tracing::debug!("function cache: {found} of {asked} functions found, the others compiled");
        }
        let batch = std::mem::take(&mut *lock(&self.pending)).0;
        if batch.is_empty() {
            return;
        }
        let Some(conn) = self.conn() else { return };
        let mut conn = lock(conn);
        let written = conn.transaction().and_then(|tx| {
            {
                let mut insert =
                    tx.prepare_cached("INSERT OR IGNORE INTO function(key, digest, code) VALUES (?1, ?2, ?3)")?;
                for (key, code) in &batch {
                    insert.execute((key, Sha256::digest(code).as_slice(), code))?;
                }
            }
            tx.commit()
        });
        if let Err(e) = written {
            tracing::warn!("writing the function cache in {}: {e}", self.dir.display());
        }
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        match self.read(key) {
            Ok(found) => {
                if found.is_some() {
                    self.found.fetch_add(1, Ordering::Relaxed);
                }
                found.map(Cow::Owned)
            }
            Err(e) => {
                tracing::debug!("reading the function cache in {}: {e}", self.dir.display());
                None
            }
        }
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let full = {
            let mut pending = lock(&self.pending);
            pending.1 += key.len() + value.len();
            pending.0.push((key.to_vec(), value));
            pending.1 >= FLUSH_BYTES
        };
        if full {
            self.flush();
        }
        true
    }
}

impl Drop for FunctionCache {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore as _;

    #[test]
    fn an_entry_comes_back_after_a_flush_and_from_another_opening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = FunctionCache::new(dir.path());
        assert!(cache.get(b"k").is_none());
        assert!(cache.insert(b"k", b"code".to_vec()));
        cache.flush();
        assert_eq!(cache.get(b"k").as_deref(), Some(&b"code"[..]));
        drop(cache);
        let again = FunctionCache::new(dir.path());
        assert_eq!(again.get(b"k").as_deref(), Some(&b"code"[..]));
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = FunctionCache::new(dir.path());
        cache.insert(b"k", b"code".to_vec());
        cache.flush();
        lock(cache.conn().expect("open"))
            .execute("UPDATE function SET code = x'00'", [])
            .expect("damage");
        assert!(cache.get(b"k").is_none());
    }

    #[test]
    fn a_file_that_is_not_a_cache_is_started_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(FILE), b"not sqlite at all, not at all").expect("write");
        let cache = FunctionCache::new(dir.path());
        cache.insert(b"k", b"code".to_vec());
        cache.flush();
        assert_eq!(cache.get(b"k").as_deref(), Some(&b"code"[..]));
    }
}
