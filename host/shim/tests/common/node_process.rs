//! Node processes for the shim's process tests: `wasmkeep-shim serve --mode
//! cluster --node-id` started on a bucket URL, killed by their id when
//! dropped, and the requests the tests send them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmkeep_shim::bucket::ObjectStore;

/// Short enough for a quick takeover, long enough for renewals on a busy machine.
pub const LEASE_MS: u64 = 2_000;

/// The counter example's app.
pub const APP: &str = "examples/counter";

/// One `wasmkeep-shim serve --node-id` process, as the testing crate starts
/// it; killed (by its id) when dropped.
pub use wasmkeep_host_testing::served::NodeProcess;

pub fn manifest() -> PathBuf {
    // The component must be built; this panics with how to build it.
    super::component("counter-rust");
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/counter-rust/wasmkeep.toml")
}

pub fn start(id: &str, bucket: &str, dir: &Path) -> NodeProcess {
    start_app(&manifest(), id, bucket, dir)
}

/// The Rust conformance testee as app `t/app`, class `testee`.
pub fn testee_manifest(dir: &Path) -> PathBuf {
    super::testee_manifest(dir, "testee.toml")
}

pub fn start_app(manifest: &Path, id: &str, bucket: &str, dir: &Path) -> NodeProcess {
    start_app_with(manifest, id, bucket, dir, &[])
}

/// [`start_app`] with `extra` arguments to `serve`; its log read as it comes.
pub fn start_app_with(manifest: &Path, id: &str, bucket: &str, dir: &Path, extra: &[&str]) -> NodeProcess {
    super::serve(manifest, &dir.join(id))
        .cluster_node(id, bucket, LEASE_MS)
        .args(extra)
        .start_node(id)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `POST /counter/<name>/` through `node`, retried on 503 (a holder not yet
/// taken over) until `patience` runs out: the count it answered.
pub fn increment(node: &NodeProcess, name: &str, patience: Duration) -> u64 {
    let url = format!("{}/counter/{name}/", node.base);
    let deadline = Instant::now() + patience;
    loop {
        let (status, body) = super::http("POST", &url);
        if status == 200 {
            return body.trim().parse().unwrap_or_else(|_| panic!("a count: {body:?}"));
        }
        assert_eq!(status, 503, "through {}: only a retryable failure: {body}", node.id);
        assert!(
            Instant::now() < deadline,
            "through {}: still {status} after {patience:?}: {body}",
            node.id
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The node holding an unexpired control lease.
pub fn control_holder(bucket: &dyn ObjectStore) -> Option<String> {
    let (record, _) = wasmkeep_shim::node_lease::read_control(bucket).expect("read the control lease")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or_default();
    record.is_live_at(now).then_some(record.node)
}

/// The testee's ops through `node`: status and body.
pub fn ops(node: &NodeProcess, actor: &str, ops: &serde_json::Value) -> (u16, String) {
    let body = serde_json::json!({ "ops": ops }).to_string();
    super::http_body("POST", &format!("{}/testee/{actor}", node.base), &body)
}

/// A prefix of its own in the bucket the test command's server `env` names
/// (the server's bucket is shared by the step's tests and keeps what they
/// leave); `None`, said on stderr, when it names none.
pub fn server_prefix(env: &str, script: &str, what: &str) -> Option<String> {
    let Ok(url) = std::env::var(env) else {
        eprintln!("{env} is not set: skipped ({script} starts a server)");
        return None;
    };
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    Some(format!("{}/{what}-{run}", url.trim_end_matches('/')))
}
