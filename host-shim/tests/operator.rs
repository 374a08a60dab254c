//! The operator delete (ADR 0028 §3) on a two-node cluster: a request in the
//! bucket, carried out by the node that holds the actor, acknowledged only by
//! the outcome written beside it; replays recognised by the marker the reset
//! carries; no request written for an actor without a history.

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::bucket::{LocalDirBucket, ObjectStore, PutCondition};
use wasmkeep_shim::clock::VirtualClock;
use wasmkeep_shim::cluster::{Cluster, keys};
use wasmkeep_shim::operator::{RequestError, Waited, request_delete, wait_for_outcome};
use wasmkeep_shim::replica::DeletionStatus;
use wasmkeep_shim::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

struct Nodes {
    _dir: tempfile::TempDir,
    bucket: Arc<LocalDirBucket>,
    n1: Runtime,
    n2: Runtime,
}

fn nodes() -> Nodes {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(VirtualClock::default());
    let bucket = Arc::new(LocalDirBucket::new(dir.path().join("bucket"), clock.clone()));
    let cluster = Cluster::new(bucket.clone(), clock);
    let node = |id: &str| {
        let mut config = RuntimeConfig::for_tests(dir.path().join(id));
        config.cache_dir = common::cache_dir();
        config.event_timeout = Duration::from_secs(5);
        let rt = Runtime::new_node(config, cluster.clone(), id).expect("node");
        common::add_testee_app(&rt);
        rt
    };
    let (n1, n2) = (node("node-1"), node("node-2"));
    Nodes {
        _dir: dir,
        bucket,
        n1,
        n2,
    }
}

fn ops(rt: &Runtime, key: &ActorKey, ops: serde_json::Value) -> String {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(key);
    r.text()
}

fn deletes_under(bucket: &LocalDirBucket, app: &str) -> Vec<String> {
    bucket
        .list(&keys::deletes_prefix(app))
        .expect("list")
        .into_iter()
        .map(|m| m.key)
        .collect()
}

#[test]
fn an_operator_delete_is_carried_out_by_the_holder_and_acknowledged_by_its_outcome() {
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "cart");
    ops(
        &n.n2,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x); INSERT INTO t VALUES(1)"}]),
    );
    let req = request_delete(n.bucket.as_ref(), &k).expect("the request is written");
    assert_eq!(
        n.n2.run_operator_pass(),
        0,
        "only the lowest live node lists and queues requests"
    );
    assert_eq!(n.n1.run_operator_pass(), 1, "node 1 queues the request");
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "the holder (node 2) carried it out and wrote .done"
    );
    assert_eq!(
        deletes_under(&n.bucket, "t/app"),
        Vec::<String>::new(),
        "the request is deleted after its outcome, and the command removed the outcome"
    );
    assert!(
        n.n2.metrics()
            .render()
            .contains("wasmkeep_actor_deletes_total{how=\"operator\"} 1"),
        "the holder counts the delete with how=operator"
    );
    assert!(
        matches!(n.n1.deletion_status(&k), DeletionStatus::Deleted { ref how, .. } if how == "operator"),
        "deletion status names the operator: {:?}",
        n.n1.deletion_status(&k)
    );
    let again = ops(
        &n.n1,
        &k,
        json!([{"op": "previous-deletion"}, {"op": "query", "sql": "SELECT name FROM sqlite_master WHERE name = 't'"}]),
    );
    assert!(
        again.contains(r#""cause":"operator""#) && again.contains(r#""rows":[]"#),
        "the address used again is a new, empty actor that knows how the last one ended: {again}"
    );
}

#[test]
fn a_request_carried_out_before_never_deletes_the_actor_created_since() {
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "room");
    ops(&n.n1, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    let req = request_delete(n.bucket.as_ref(), &k).expect("request");
    n.n1.run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "deleted"
    );
    ops(
        &n.n2,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE kept(x); INSERT INTO kept VALUES(7)"}]),
    );
    ops(&n.n2, &k, json!([{"op": "delete-self"}]));
    ops(
        &n.n2,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE kept(x); INSERT INTO kept VALUES(8)"}]),
    );
    // The same request again (its key could not be deleted, or a second node
    // listed it): same id, same time. A delete-self since carried its marker over.
    n.bucket
        .put(&req.object, b"", &PutCondition::IfAbsent)
        .expect("the request is back");
    n.n1.run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "a replay is reported done"
    );
    let rows = ops(&n.n1, &k, json!([{"op": "query", "sql": "SELECT x FROM kept"}]));
    assert!(
        rows.contains(r#"{"integer":"8"}"#),
        "the data written after the request was carried out stays: {rows}"
    );
}

#[test]
fn no_request_is_written_for_an_actor_without_a_history() {
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "never");
    assert!(
        matches!(request_delete(n.bucket.as_ref(), &k), Err(RequestError::NoSuchActor(_))),
        "no such actor"
    );
    assert_eq!(
        deletes_under(&n.bucket, "t/app"),
        Vec::<String>::new(),
        "nothing is written for a mistyped name"
    );
    assert_eq!(n.n1.run_operator_pass(), 0, "and nothing is queued");
}
