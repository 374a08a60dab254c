//! Components compiled once and kept on disk by content hash.

use crate::function_cache::FunctionCache;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
        let mut settings = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut settings);
        h.update(settings.finish().to_le_bytes());
        self.dir.join(format!("{}.cwasm", hex::encode(h.finalize())))
    }

    /// Loads `wasm`'s compiled form, compiling and storing it if it is not cached.
    ///
    /// # Errors
    /// The bytes are not a valid component, or it failed to compile.
    pub fn load(&self, engine: &Engine, wasm: &[u8]) -> Result<(Component, CacheOutcome), CacheError> {
        self.load_inner(engine, wasm)
            .map_err(|e| CacheError::Compile(format!("{e:#}")))
    }

    fn load_inner(&self, engine: &Engine, wasm: &[u8]) -> wasmtime::Result<(Component, CacheOutcome)> {
        let path = self.path_for(engine, wasm);
        if path.exists() {
            match verify(&path) {
                // Mapped from the file (not copied from the bytes just read): wasmtime
                // then uses the file for copy-on-write memory images instead of one
                // memfd per module, which would cost a descriptor per loaded component.
                Ok(()) => match deserialize(engine, &path) {
                    Ok(c) => return Ok((c, CacheOutcome::Hit)),
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
        if std::fs::create_dir_all(&self.dir).is_ok() {
            // The digest first, then the file, each written then renamed, so a
            // reader sees either a whole matching pair or a mismatch.
            let _ = write_then_rename(&digest_path(&path), hex::encode(Sha256::digest(&bytes)).as_bytes());
            let _ = write_then_rename(&path, &bytes);
        }
        #[allow(
            unsafe_code,
            reason = "the bytes were produced by this engine's precompile_component just now"
        )]
        let component = unsafe { Component::deserialize(engine, &bytes)? };
        Ok((component, CacheOutcome::Compiled))
    }
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
