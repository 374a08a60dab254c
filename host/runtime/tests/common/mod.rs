//! Shared by the host's integration tests (here, and included by path by
//! the shim's and the testing crate's): the components `cargo xtask guests`
//! builds, the conformance testee's app, and a one-node cluster of it.

#![allow(dead_code, reason = "each test file uses a different part of this module")]

use std::path::PathBuf;

/// A built guest component, or a panic saying how to build it.
pub fn component(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("target").join("components").join(format!("{name}.wasm"));
    assert!(
        p.is_file(),
        "{} is missing: run `cargo xtask guests` first (the test command does)",
        p.display()
    );
    p
}

/// The compiled-component cache the tests share.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("target")
        .join("wasmkeep-cache")
}

/// Loads the app `t/app` with one open class, `testee`: the Rust conformance testee.
pub fn add_testee_app(rt: &wasmkeep_host::Runtime) {
    rt.add_app(
        "t/app",
        &[wasmkeep_host::ClassSpec {
            name: "testee".into(),
            component: component("conformance-testee-rust"),
            access: wasmkeep_host::Access::Open,
        }],
    )
    .expect("the testee app loads");
}

/// Sends the testee a request of `ops` (PROTOCOL.md), waits for its answer
/// and for the end of its event; the answer's body.
pub fn ops(rt: &wasmkeep_host::Runtime, key: &wasmkeep_host::ActorKey, ops: serde_json::Value) -> String {
    let body = serde_json::to_vec(&serde_json::json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, wasmkeep_host::HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(key);
    r.text()
}

/// Node 1 of a one-node cluster (bucket in `dir/bucket`, files in
/// `dir/node-1`, a virtual clock) with the testee app loaded.
pub fn testee_cluster_node(dir: &std::path::Path) -> wasmkeep_host::Runtime {
    let mut config = wasmkeep_host::RuntimeConfig::for_tests(dir);
    config.cache_dir = cache_dir();
    config.event_timeout = std::time::Duration::from_secs(10);
    let mut nodes = wasmkeep_host::Cluster::local(dir, 1, &config).expect("node").nodes;
    let rt = nodes.remove(0);
    add_testee_app(&rt);
    rt
}

/// Sends the testee a request that adds a row to its table `n` (made on
/// first use) and reads how many it has: its status and body. Each call
/// counts one more, so a count that goes on shows the actor kept its state.
pub fn count_request(rt: &wasmkeep_host::Runtime, key: &wasmkeep_host::ActorKey) -> (u16, String) {
    let body = serde_json::json!({ "ops": [
        { "op": "exec", "sql": "CREATE TABLE IF NOT EXISTS n(v INTEGER)" },
        { "op": "exec", "sql": "INSERT INTO n VALUES (1)" },
        { "op": "query", "sql": "SELECT count(*) FROM n" },
    ]});
    let r = rt
        .request_blocking(key, wasmkeep_host::HttpRequest::new("POST", "/", body.to_string()))
        .expect("request");
    (r.status, r.text())
}
