//! Shared by the shim's integration tests: the host's fixtures (the
//! components, the testee app; host/runtime/tests/common), HTTP helpers,
//! `wasmkeep-shim serve` as a process, node processes (`node_process`) and
//! the dashboard API's server (`dashboard`).

#![allow(dead_code, reason = "each test file uses a different part of this module")]

#[path = "../../../runtime/tests/common/mod.rs"]
mod host_fixtures;
pub use host_fixtures::*;

pub mod dashboard;
pub mod node_process;

/// Writes `dir/<file>`: a manifest of the Rust conformance testee as app
/// `t/app`, class `testee` (open), for a `serve` process.
pub fn testee_manifest(dir: &std::path::Path, file: &str) -> std::path::PathBuf {
    let manifest = dir.join(file);
    std::fs::write(
        &manifest,
        format!(
            "app = \"t/app\"\n[classes.testee]\ncomponent = {:?}\naccess = \"open\"\n",
            component("conformance-testee-rust").display().to_string()
        ),
    )
    .expect("manifest");
    manifest
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

/// `wasmkeep-shim serve` of `manifest` in `data_dir` on a free port, with
/// `extra` arguments and its stderr piped: the process (to signal by its id
/// only) and its base URL.
pub fn spawn_serve(
    manifest: &std::path::Path,
    data_dir: &std::path::Path,
    extra: &[&str],
) -> (std::process::Child, String) {
    spawn_serve_with_env(manifest, data_dir, extra, &[])
}

/// [`spawn_serve`] with `envs` set in its environment (an object store's
/// endpoint, say). Started by the testing crate's spawner
/// (`wasmkeep_host_testing::served`, ADR 084), as the node processes are.
pub fn spawn_serve_with_env(
    manifest: &std::path::Path,
    data_dir: &std::path::Path,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> (std::process::Child, String) {
    serve(manifest, data_dir)
        .args(extra)
        .envs(envs.iter().copied())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `wasmkeep-shim serve` of `manifest` in `data_dir` as the testing crate
/// starts it, on this build's binary and the shared component cache.
pub fn serve(manifest: &std::path::Path, data_dir: &std::path::Path) -> wasmkeep_host_testing::served::Serve {
    wasmkeep_host_testing::served::Serve::new(env!("CARGO_BIN_EXE_wasmkeep-shim"), manifest, data_dir)
        .env("WASMKEEP_CACHE_DIR", cache_dir())
}

/// Runs `serve` where it must refuse to start (a bad manifest, a deleted
/// app, a certificate another CA signed): how it ended and what it wrote to
/// stderr. Panics when it says it listens (it is killed first, by its id).
pub fn refused(serve: wasmkeep_host_testing::served::Serve) -> (std::process::ExitStatus, String) {
    match serve.spawn() {
        Err(wasmkeep_host_testing::served::ServeError::NotStarted { status, stderr, .. }) => (status, stderr),
        Err(e) => panic!("{e}"),
        Ok((mut child, base)) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve started on {base} where it should have refused");
        }
    }
}

/// Reads a served node's log as it comes, into the test's own output. A
/// long run must: a pipe nobody reads fills at 64 KiB, and then the node's
/// next warning blocks the thread that writes it, whatever lock it holds.
/// The hour of dropped lease answers hung that way (a POST never came back,
/// `/metrics` answered, the bucket thread was blocked in a pipe write).
/// Tests that read the log at the end do not call this.
pub fn drain_stderr(child: &mut std::process::Child) {
    use std::io::BufRead as _;
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("serve: {line}");
            }
        });
    }
}
