//! The purge over node processes (issue 24, ADR 031), checked by listing the
//! bucket's keys: a durable delete leaves nothing of the deleted generations,
//! and when the holder's erases fail and it is then killed, the node that
//! takes the control lease over finishes the purge. Over `file://` always;
//! over moto and Azurite when the test command names them.

mod common;

use common::node_process::{LEASE_MS, NodeProcess, ops, server_prefix, start_app, testee_manifest};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmkeep_shim::ActorKey;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::SystemClock;
use wasmkeep_shim::replica::{Kind, parse_history_key};

/// The keys of `key`'s history before its newest reset (empty without one).
fn deleted_generations(bucket: &dyn ObjectStore, key: &ActorKey) -> Vec<String> {
    let prefix = wasmkeep_shim::keys::history_prefix(key);
    let history: Vec<_> = bucket
        .list(&prefix)
        .expect("listing")
        .into_iter()
        .filter_map(|m| parse_history_key(&prefix, &m.key))
        .collect();
    let Some(reset) = history.iter().filter(|o| o.kind == Kind::Reset).map(|o| o.pos).max() else {
        return Vec::new();
    };
    history.into_iter().filter(|o| o.pos < reset).map(|o| o.key).collect()
}

fn ok(node: &NodeProcess, actor: &str, list: &serde_json::Value) {
    let (status, body) = ops(node, actor, list);
    assert_eq!(status, 200, "through {}: {body}", node.id);
    assert!(!body.contains(r#""err""#), "through {}: {body}", node.id);
}

fn purge_over(url: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = testee_manifest(dir.path());
    let bucket = wasmkeep_shim::bucket_url::open_bucket(url, Arc::new(SystemClock)).expect("the bucket opens");
    // n1 alone first: it holds the control lease, so only its (failing) erases run.
    let n1 = start_app(&manifest, "n1", url, dir.path());
    let write = json!([{"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS t(x)"}, {"op": "exec", "sql": "INSERT INTO t VALUES ('secret')"}, {"op": "flush"}]);
    let delete = json!([{"op": "delete-self-durable"}]);

    // A plain durable delete: nothing of the deleted generations is left.
    let plain = ActorKey::new("t/app", "testee", "plain");
    ok(&n1, "plain", &write);
    ok(&n1, "plain", &write);
    ok(&n1, "plain", &delete);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(deleted_generations(bucket.as_ref(), &plain), Vec::<String>::new());

    // A purge cut short: n1's erases fail, then n1 is killed.
    let cut = ActorKey::new("t/app", "testee", "cut");
    ok(&n1, "cut", &write);
    let (status, body) = common::http_body(
        "POST",
        &format!("{}/_shim/faults", n1.base),
        r#"{"kind": "fail-erase", "count": 1000000}"#,
    );
    assert_eq!(status, 200, "{body}");
    let n2 = start_app(&manifest, "n2", url, dir.path());
    ok(&n2, "cut", &write);
    ok(&n2, "cut", &delete);
    std::thread::sleep(Duration::from_millis(1_500));
    let left = deleted_generations(bucket.as_ref(), &cut);
    assert!(!left.is_empty(), "n1 held the actor and could not erase: {left:?}");
    drop(n1);
    let killed_at = Instant::now();
    let deadline = Instant::now() + Duration::from_millis(LEASE_MS * 10);
    while !deleted_generations(bucket.as_ref(), &cut).is_empty() {
        assert!(
            Instant::now() < deadline,
            "n2 never finished the purge; its log:\n{}",
            n2.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "{url}: {} key(s) of the deleted generations left by the purge cut short, purged by n2 within {:?} of n1's kill",
        left.len(),
        killed_at.elapsed()
    );
    // The actor created again keeps what it is written now.
    ok(
        &n2,
        "cut",
        &json!([{"op": "exec", "sql": "CREATE TABLE u(x)"}, {"op": "exec", "sql": "INSERT INTO u VALUES ('after')"}, {"op": "flush"}]),
    );
    let (_, body) = ops(
        &n2,
        "cut",
        &json!([{"op": "query", "sql": "SELECT x FROM u"}, {"op": "query", "sql": "SELECT name FROM sqlite_master WHERE name = 't'"}]),
    );
    assert!(body.contains("after"), "written after the delete: {body}");
    assert!(!body.contains(r#""t""#), "nothing from before it: {body}");
}

#[test]
fn a_purge_over_a_file_url_leaves_nothing_of_the_deleted_generations() {
    let dir = tempfile::tempdir().expect("tempdir");
    purge_over(&format!("file://{}", dir.path().join("bucket").display()));
}

#[test]
fn a_purge_over_moto_leaves_nothing_of_the_deleted_generations() {
    if let Some(url) = server_prefix("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "purge") {
        purge_over(&url);
    }
}

#[test]
fn a_purge_over_azurite_leaves_nothing_of_the_deleted_generations() {
    if let Some(url) = server_prefix("WASMKEEP_TEST_AZURE", "scripts/azurite-server.sh", "purge") {
        purge_over(&url);
    }
}
