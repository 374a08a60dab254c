//! Writes the WASI preview-1 *reactor* adapter that the C SDK's build wraps a
//! core module with (`wasm-tools component new --adapt`). Its bytes come from
//! the crate registry (`wasi-preview1-component-adapter-provider`, pinned by
//! Cargo.lock to the host's wasmtime major), so setup needs no other download,
//! and no build of the host: xtask is the lightest crate that can carry it.

use anyhow::{Context, Result};
use std::path::Path;

/// Writes the adapter to `out` unless it already holds exactly these bytes.
///
/// # Errors
/// Its directory or the file could not be written.
pub fn write(out: &Path) -> Result<()> {
    let bytes = wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;
    if std::fs::read(out).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))
}
