//! The actor crate as a component, built once per test process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A crate and the features it is built with.
type Variant = (PathBuf, Vec<String>);

/// Builds the actor crate at `manifest_dir` (its `Cargo.toml`'s directory:
/// pass `env!("CARGO_MANIFEST_DIR")`) into a component and returns its path.
/// Every test of the process shares one build; each `cargo test` run builds
/// again, which cargo's cache makes quick when nothing changed, so a test
/// never runs a component older than its sources.
///
/// # Errors
/// No wasm toolchain (the message says what to install), the crate is not a
/// `cdylib`, it does not compile (the compiler's errors are printed above),
/// or what it built is not a wasmkeep actor component.
pub fn component_of(manifest_dir: impl AsRef<Path>) -> anyhow::Result<PathBuf> {
    component_with_features(manifest_dir, &[])
}

/// [`component_of`] with the crate's cargo `features` on (built beside the
/// default component, as `<package>+<feature>....wasm`).
///
/// # Errors
/// As [`component_of`].
pub fn component_with_features(manifest_dir: impl AsRef<Path>, features: &[&str]) -> anyhow::Result<PathBuf> {
    static BUILT: OnceLock<Mutex<HashMap<Variant, PathBuf>>> = OnceLock::new();
    let dir = (
        manifest_dir.as_ref().to_path_buf(),
        features.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>(),
    );
    let built = BUILT.get_or_init(Mutex::default);
    // One build at a time: tests run on several threads, and two cargo runs
    // of the same crate would only wait for each other.
    let mut built = built.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(path) = built.get(&dir) {
        return Ok(path.clone());
    }
    let path = wasmkeep_guest_build::build_rust_guest_with_features(&dir.0, None, features)?;
    built.insert(dir, path.clone());
    Ok(path)
}
