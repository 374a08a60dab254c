//! Writes the WASI preview-1 *reactor* adapter that the C SDK's build wraps a
//! core module with (`wasm-tools component new --adapt`). Its bytes come from
//! the crate registry (`wasi-preview1-component-adapter-provider`, pinned by
//! Cargo.lock to the host's wasmtime major), so setup needs no other download.
//!
//! Usage: `cargo run -p wasmkeep-c-harness --bin wasmkeep-c-adapter -- <out.wasm>`

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(out) = std::env::args_os().nth(1) else {
        eprintln!("usage: wasmkeep-c-adapter <out.wasm>  (writes wasi_snapshot_preview1.reactor.wasm there)");
        return ExitCode::from(2);
    };
    let bytes = wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;
    if std::fs::read(&out).is_ok_and(|old| old == bytes) {
        return ExitCode::SUCCESS;
    }
    if let Some(dir) = std::path::Path::new(&out).parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("wasmkeep-c-adapter: creating {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    match std::fs::write(&out, bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "wasmkeep-c-adapter: writing {}: {e}",
                std::path::Path::new(&out).display()
            );
            ExitCode::FAILURE
        }
    }
}
