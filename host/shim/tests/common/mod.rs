//! Shared by the host's integration tests: the components `cargo xtask guests` builds.

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
pub fn add_testee_app(rt: &wasmkeep_shim::Runtime) {
    rt.add_app(
        "t/app",
        &[wasmkeep_shim::ClassSpec {
            name: "testee".into(),
            component: component("conformance-testee-rust"),
            access: wasmkeep_shim::Access::Open,
        }],
    )
    .expect("the testee app loads");
}

/// Sends the testee a request of `ops` (PROTOCOL.md), waits for its answer
/// and for the end of its event; the answer's body.
pub fn ops(rt: &wasmkeep_shim::Runtime, key: &wasmkeep_shim::ActorKey, ops: serde_json::Value) -> String {
    let body = serde_json::to_vec(&serde_json::json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, wasmkeep_shim::HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(key);
    r.text()
}

/// One HTTP request with no body: status and body text.
pub fn http(method: &str, url: &str) -> (u16, String) {
    http_body(method, url, "")
}

/// One HTTP request (JSON content type on the admin API's POSTs and DELETEs).
pub fn http_body(method: &str, url: &str, body: &str) -> (u16, String) {
    try_http_body(method, url, body).expect("request")
}

/// One HTTP request; an error when there is no answer (the server died).
pub fn try_http_body(method: &str, url: &str, body: &str) -> Result<(u16, String), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let mut req = reqwest::Client::new().request(method.parse().expect("method"), url);
        if url.contains("/_shim/") && method != "GET" {
            // The admin API takes JSON only on its POSTs and DELETEs.
            req = req.header("content-type", "application/json");
        }
        let r = req.body(body.to_owned()).send().await.map_err(|e| e.to_string())?;
        let status = r.status().as_u16();
        Ok((status, r.text().await.map_err(|e| e.to_string())?))
    })
}
