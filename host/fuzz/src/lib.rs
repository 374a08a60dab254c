//! Fuzz targets for the host's boundaries, run for a bounded time on stable
//! Rust: the manifest parser, request routing, the SQL guard, WIT value
//! conversion and the admin API's JSON. See README.md.

pub mod engine;
pub mod targets;

use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The repository this crate is in.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where `cargo xtask guests` puts the components: `$WASMKEEP_COMPONENTS`,
/// else `<repo>/target/components`.
pub fn components_dir() -> PathBuf {
    std::env::var_os("WASMKEEP_COMPONENTS").map_or_else(|| repo_root().join("target").join("components"), PathBuf::from)
}

/// A built component, or an error saying how to build it.
///
/// # Errors
/// The file is missing.
pub fn component(name: &str) -> anyhow::Result<PathBuf> {
    let p = components_dir().join(format!("{name}.wasm"));
    if !p.is_file() {
        bail!(
            "{} is missing: build the guests first (`cargo xtask guests`; the test command does)",
            p.display()
        );
    }
    Ok(p)
}

/// The compiled-component cache the host's tests share (`<repo>/target/wasmkeep-cache`).
pub fn cache_dir() -> PathBuf {
    repo_root().join("target").join("wasmkeep-cache")
}

/// The app every target that runs guests loads: `t/app`, one open class
/// `testee`, the Rust conformance testee.
pub const APP: &str = "t/app";

/// A single-node runtime over `data_dir` with the testee app loaded, from
/// the configuration a test host's node starts from (the testing crate's
/// `TestHostOptions::node_config`, ADR 084). The targets hold the runtime
/// itself: they shut it down, and clone it into the dev server's router.
///
/// # Errors
/// The testee is missing or does not load.
pub fn testee_runtime(data_dir: &Path, event_timeout: Duration) -> anyhow::Result<wasmkeep_host::Runtime> {
    let testee = component("conformance-testee-rust")?;
    let config = wasmkeep_host_testing::TestHostOptions {
        cache_dir: Some(cache_dir()),
        event_timeout: Some(event_timeout),
        idle_timeout: Some(Duration::from_secs(600)),
        ..wasmkeep_host_testing::TestHostOptions::default()
    }
    .node_config(data_dir);
    let rt = wasmkeep_host::Runtime::new(config).context("starting the runtime")?;
    rt.add_app(
        APP,
        &[wasmkeep_host::ClassSpec {
            name: "testee".into(),
            component: testee,
            access: wasmkeep_host::Access::Open,
        }],
    )
    .context("loading the testee app")?;
    Ok(rt)
}

/// Sends the testee a request of `ops` (conformance/PROTOCOL.md) and waits
/// for its answer and the end of its event: the status and the body.
///
/// # Errors
/// The runtime refused the request (unknown class, shutting down).
pub fn send_ops(
    rt: &wasmkeep_host::Runtime,
    key: &wasmkeep_host::ActorKey,
    ops: &serde_json::Value,
) -> anyhow::Result<(u16, String)> {
    let r = send_ops_answer(rt, key, ops)?;
    Ok((r.status, r.text()))
}

/// As [`send_ops`], the whole answer (with the kind of a failure the host
/// answered).
///
/// # Errors
/// The runtime refused the request (unknown class, shutting down).
pub fn send_ops_answer(
    rt: &wasmkeep_host::Runtime,
    key: &wasmkeep_host::ActorKey,
    ops: &serde_json::Value,
) -> anyhow::Result<wasmkeep_host::HttpResponse> {
    let body = serde_json::to_vec(&serde_json::json!({ "ops": ops }))?;
    let r = rt.request_blocking(key, wasmkeep_host::HttpRequest::new("POST", "/", body))?;
    rt.settle(key);
    Ok(r)
}

/// Whether a 5xx from an event is an ordinary guest failure (it trapped, ran
/// out of time or memory) rather than the host's: by the answer's failure
/// kind, never its words.
pub fn ordinary_guest_failure(r: &wasmkeep_host::HttpResponse) -> bool {
    r.status == 500 && r.failure == Some(wasmkeep_host::FailureKind::Guest)
}
