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

/// Node 1 of a one-node cluster (bucket in `dir/bucket`, files in
/// `dir/node-1`, a virtual clock) with the testee app loaded.
pub fn testee_cluster_node(dir: &std::path::Path) -> wasmkeep_shim::Runtime {
    let mut config = wasmkeep_shim::RuntimeConfig::for_tests(dir);
    config.cache_dir = cache_dir();
    config.event_timeout = std::time::Duration::from_secs(10);
    let mut nodes = wasmkeep_shim::Cluster::local(dir, 1, &config).expect("node").nodes;
    let rt = nodes.remove(0);
    add_testee_app(&rt);
    rt
}

/// `wasmkeep-shim serve` of `manifest` in `data_dir` on a free port, with
/// `extra` arguments and its stderr piped: the process (to signal by its id
/// only) and its base URL.
pub fn spawn_serve(
    manifest: &std::path::Path,
    data_dir: &std::path::Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .arg("--manifest")
        .arg(manifest)
        .arg("--data-dir")
        .arg(data_dir)
        .env("WASMKEEP_CACHE_DIR", cache_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("serve printed {line:?}"))
        .to_owned();
    (child, base)
}
