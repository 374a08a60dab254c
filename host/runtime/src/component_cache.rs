//! Components compiled once and kept on disk by content hash.

use crate::function_cache::FunctionCache;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A directory of precompiled components (`<hash>.cwasm`), and beside
/// them the functions cranelift compiled ([`FunctionCache`]).
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
    functions: Option<Arc<FunctionCache>>,
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The bytes are not a valid component, or cranelift failed.
    #[error("{0}")]
    Compile(String),
}

/// How a component was obtained, for logs and the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a precompiled file.
    Hit,
    /// Compiled now (and stored for next time).
    Compiled,
}

impl ComponentCache {
    /// A cache in `dir` (created on first store).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            functions: None,
        }
    }

    /// The function cache the engine compiles with, written out after each
    /// component compiled.
    pub(crate) fn with_functions(mut self, functions: Arc<FunctionCache>) -> Self {
        self.functions = Some(functions);
        self
    }

    /// The file a component's compiled form is kept in: the hash of its bytes,
    /// the wasmtime version and the engine's compatibility settings.
    pub fn path_for(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        let mut h = Sha256::new();
        h.update(wasm);
        h.update(b"wasmtime-48.0.8");
        h.update(engine_hash(engine).to_le_bytes());
        self.dir.join(format!("{}.cwasm", hex::encode(h.finalize())))
    }

    /// The component at `source` as this process loaded it before, if the
    /// file is unchanged (same length and modification time) and so is the
    /// compiled file it mapped to: no read, no hash, no digest check. A
    /// test host's `reset` starts a new runtime and loads every class again;
    /// hashing a 12 MB JavaScript component and checking its 37 MB compiled
    /// form took about 90 ms of each reset.
    pub fn load_seen(&self, engine: &Engine, source: &Path) -> Option<Component> {
        let (source_id, cwasm, cwasm_id) = lock_seen().get(&self.seen_key(engine, source)).cloned()?;
        if FileId::of(source)? != source_id || FileId::of(&cwasm).as_ref() != Some(&cwasm_id) {
            return None;
        }
        deserialize(engine, &cwasm).ok()
    }

    /// Loads the component at `source` (its bytes `wasm`): its compiled form
    /// from the cache, else compiled and stored; the file is remembered for
    /// [`ComponentCache::load_seen`].
    ///
    /// # Errors
    /// The bytes are not a valid component, or it failed to compile.
    pub fn load_file(
        &self,
        engine: &Engine,
        source: &Path,
        wasm: &[u8],
    ) -> Result<(Component, CacheOutcome), CacheError> {
        let (component, outcome, cwasm) = self
            .load_inner(engine, wasm)
            .map_err(|e| CacheError::Compile(format!("{e:#}")))?;
        if let (Some(src), Some(cw)) = (FileId::of(source), FileId::of(&cwasm)) {
            lock_seen().insert(self.seen_key(engine, source), (src, cwasm, cw));
        }
        Ok((component, outcome))
    }

    /// What [`Seen`] files a source under: one entry per source path (a
    /// rebuild replaces it), per engine settings and per cache directory.
    fn seen_key(&self, engine: &Engine, source: &Path) -> SeenKey {
        (source.to_owned(), engine_hash(engine), self.dir.clone())
    }

    /// The component, how it was obtained, and its compiled file.
    fn load_inner(&self, engine: &Engine, wasm: &[u8]) -> wasmtime::Result<(Component, CacheOutcome, PathBuf)> {
        let path = self.path_for(engine, wasm);
        if path.exists() {
            match verify(&path) {
                // Mapped from the file (not copied from the bytes just read): wasmtime
                // then uses the file for copy-on-write memory images instead of one
                // memfd per module, which would cost a descriptor per loaded component.
                Ok(()) => match deserialize(engine, &path) {
                    Ok(c) => return Ok((c, CacheOutcome::Hit, path)),
                    Err(e) => tracing::warn!("ignoring unreadable cache entry {}: {e}", path.display()),
                },
                // Corrupted, truncated or not ours: never deserialized (native code
                // from a damaged file can crash the host); compiled again below.
                Err(why) => tracing::warn!("ignoring cache entry {}: {why}; compiling again", path.display()),
            }
        }
        let bytes = engine.precompile_component(wasm)?;
        if let Some(f) = &self.functions {
            f.flush();
        }
        let written = std::fs::create_dir_all(&self.dir).is_ok()
            // The digest first, then the file, each written then renamed, so a
            // reader sees either a whole matching pair or a mismatch.
            && write_then_rename(&digest_path(&path), hex::encode(Sha256::digest(&bytes)).as_bytes()).is_ok()
            && write_then_rename(&path, &bytes).is_ok();
        // Mapped from the file just written, as a cache hit is: its code is
        // then file pages the kernel can share and reclaim, not a private copy
        // of the bytes (which held a Python class's compiled code in anonymous
        // memory for the life of the host; issue 25).
        let mapped = if written { deserialize(engine, &path).ok() } else { None };
        let component = match mapped {
            Some(c) => c,
            None => {
                #[allow(
                    unsafe_code,
                    reason = "the bytes were produced by this engine's precompile_component just now"
                )]
                let c = unsafe { Component::deserialize(engine, &bytes)? };
                c
            }
        };
        drop(bytes);
        crate::freed_memory::give_back();
        Ok((component, CacheOutcome::Compiled, path))
    }
}

/// A file as this process saw it: a change of content changes its length or
/// its modification time, and a rebuild that writes a new file and renames
/// it over the old one (as the build tools do) also its inode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FileId {
    path: PathBuf,
    len: u64,
    modified: std::time::SystemTime,
    inode: u64,
}

impl FileId {
    fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Self {
            path: path.to_owned(),
            len: m.len(),
            modified: m.modified().ok()?,
            inode,
        })
    }
}

/// A source path, the engine's settings and the cache directory.
type SeenKey = (PathBuf, u64, PathBuf);

/// [`SeenKey`] → the source file as it was, and the compiled file it mapped
/// to as it was, when last checked. Process-wide: every runtime of the
/// process (each reset of a test host is a new one) shares what was checked.
/// A rebuilt source replaces its entry, so `serve --watch` does not grow it.
type Seen = HashMap<SeenKey, (FileId, PathBuf, FileId)>;

fn lock_seen() -> std::sync::MutexGuard<'static, Seen> {
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    SEEN.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn engine_hash(engine: &Engine) -> u64 {
    let mut settings = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut settings);
    settings.finish()
}

/// `<hash>.cwasm.sha256`: the digest of what the cache wrote.
fn digest_path(cwasm: &Path) -> PathBuf {
    let mut p = cwasm.as_os_str().to_owned();
    p.push(".sha256");
    PathBuf::from(p)
}

/// Whether the cache file's digest is the one written beside it.
fn verify(cwasm: &Path) -> Result<(), String> {
    let expected = std::fs::read_to_string(digest_path(cwasm)).map_err(|e| format!("no digest beside it ({e})"))?;
    let bytes = std::fs::read(cwasm).map_err(|e| format!("cannot read it ({e})"))?;
    if hex::encode(Sha256::digest(&bytes)) == expected.trim() {
        Ok(())
    } else {
        Err("its digest does not match what the cache wrote (corrupted or replaced)".into())
    }
}

#[allow(
    unsafe_code,
    reason = "the file is what this cache wrote from precompile_component (its digest was checked just \
              before), under a name that includes the engine's compatibility hash"
)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    Ok(unsafe { Component::deserialize_file(engine, path)? })
}

fn write_then_rename(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        Engine::new(&config).expect("engine")
    }

    /// A temporary directory holding the test component as `counter.wasm`,
    /// its path, and its bytes.
    fn test_component() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = dir.path().join("counter.wasm");
        let wasm = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/counter-rust-0.2.0.wasm"
        ))
        .expect("the test component");
        std::fs::write(&source, &wasm).expect("write");
        (dir, source, wasm)
    }

    #[test]
    fn a_file_loaded_before_is_loaded_again_unread_until_it_or_its_compiled_form_changes() {
        let (dir, source, wasm) = test_component();
        let engine = engine();
        let cache = ComponentCache::new(dir.path().join("cache"));
        assert!(cache.load_seen(&engine, &source).is_none(), "not seen yet");
        let (_, outcome) = cache.load_file(&engine, &source, &wasm).expect("load");
        assert_eq!(outcome, CacheOutcome::Compiled);
        assert!(
            cache.load_seen(&engine, &source).is_some(),
            "seen: loaded without a read"
        );

        // A damaged compiled file is never taken unchecked.
        let cwasm = cache.path_for(&engine, &wasm);
        let mut damaged = std::fs::read(&cwasm).expect("cwasm");
        damaged.push(0);
        std::fs::write(&cwasm, &damaged).expect("damage");
        assert!(cache.load_seen(&engine, &source).is_none(), "its compiled file changed");
        let (_, outcome) = cache.load_file(&engine, &source, &wasm).expect("load");
        assert_eq!(
            outcome,
            CacheOutcome::Compiled,
            "the digest check refused it: compiled again"
        );

        // A rebuilt source is read again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&source, &wasm).expect("rewrite");
        assert!(cache.load_seen(&engine, &source).is_none(), "the source changed");
    }

    #[test]
    fn what_one_cache_directory_loaded_is_not_taken_from_another() {
        let (dir, source, wasm) = test_component();
        let engine = engine();
        let first = ComponentCache::new(dir.path().join("first"));
        first.load_file(&engine, &source, &wasm).expect("load");
        assert!(first.load_seen(&engine, &source).is_some(), "seen by its own cache");
        let second = ComponentCache::new(dir.path().join("second"));
        assert!(
            second.load_seen(&engine, &source).is_none(),
            "another cache directory has not compiled it (deleting a cache must not leave it served)"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_component_compiled_just_now_runs_from_its_cached_file() {
        let (dir, source, wasm) = test_component();
        let engine = engine();
        let cache = ComponentCache::new(dir.path().join("cache"));
        let (component, outcome) = cache.load_file(&engine, &source, &wasm).expect("load");
        assert_eq!(outcome, CacheOutcome::Compiled);
        // Its code is the file's pages (shared, reclaimable), not a private
        // copy of the compiled bytes kept for the life of the host.
        let cwasm = cache.path_for(&engine, &wasm);
        let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
        assert!(
            maps.lines().any(|l| l.ends_with(&*cwasm.to_string_lossy())),
            "{} is mapped",
            cwasm.display()
        );
        drop(component);
    }
}
