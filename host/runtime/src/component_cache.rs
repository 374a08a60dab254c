//! Components compiled once and kept on disk by content hash.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A directory of precompiled components (`<hash>.cwasm`).
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
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
        Self { dir: dir.into() }
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
            match deserialize(engine, &path) {
                Ok(c) => return Ok((c, CacheOutcome::Hit)),
                Err(e) => tracing::warn!("ignoring unreadable cache entry {}: {e}", path.display()),
            }
        }
        let bytes = engine.precompile_component(wasm)?;
        if std::fs::create_dir_all(&self.dir).is_ok() {
            // Write then rename, so a concurrent reader never sees half a file.
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, &bytes).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
        #[allow(
            unsafe_code,
            reason = "the bytes were produced by this engine's precompile_component just now"
        )]
        let component = unsafe { Component::deserialize(engine, &bytes)? };
        Ok((component, CacheOutcome::Compiled))
    }
}

#[allow(
    unsafe_code,
    reason = "cache files are written only by this cache, from precompile_component, under a name that includes the engine's compatibility hash"
)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    Ok(unsafe { Component::deserialize_file(engine, path)? })
}
