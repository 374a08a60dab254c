//! The purge (issue 24, ADR 031): after a durable delete the bucket keeps no
//! object of the deleted generations, only the reset, its snapshot and the
//! ownership record; a purge cut short (the node stopped between the reset
//! and its erase) is finished by the control pass or the next acquire, and
//! nothing written after the delete is lost.

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_host::bucket::ObjectStore;
use wasmkeep_host::replica::{Kind, Pos, parse_history_key};
use wasmkeep_host::{ActorKey, Cluster, FaultKind, Runtime, RuntimeConfig};

use common::ops;

fn two_nodes(dir: &std::path::Path) -> (Arc<dyn ObjectStore>, Vec<Runtime>) {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(10);
    let local = Cluster::local(dir, 2, &config).expect("nodes");
    for rt in &local.nodes {
        common::add_testee_app(rt);
    }
    (local.cluster.bucket().clone(), local.nodes)
}

/// The history's objects as `(kind, key, position)`, in position order (a
/// snapshot before the reset at its position).
fn history(bucket: &dyn ObjectStore, key: &ActorKey) -> Vec<(Kind, String, Pos)> {
    let prefix = wasmkeep_host::keys::history_prefix(key);
    let mut objects: Vec<_> = bucket
        .list(&prefix)
        .expect("listing")
        .into_iter()
        .filter_map(|m| parse_history_key(&prefix, &m.key))
        .collect();
    objects.sort_by_key(|o| (o.pos, o.kind != Kind::Snapshot));
    objects.into_iter().map(|o| (o.kind, o.key, o.pos)).collect()
}

/// Objects before the newest reset: what the purge must leave none of.
fn before_the_reset(objects: &[(Kind, String, Pos)]) -> Vec<String> {
    let newest_reset = objects
        .iter()
        .filter(|o| o.0 == Kind::Reset)
        .map(|o| o.2)
        .max()
        .expect("a reset");
    objects
        .iter()
        .filter(|o| o.2 < newest_reset)
        .map(|o| o.1.clone())
        .collect()
}

/// Writes on node 1, then on node 2 (a second generation with its fence),
/// then a durable delete on node 2 whose erase fails: a purge cut short.
fn deleted_with_its_erase_cut_short(nodes: &[Runtime], k: &ActorKey) {
    ops(
        &nodes[0],
        k,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "exec", "sql": "INSERT INTO t VALUES ('secret-1')"}]),
    );
    nodes[0].dev().hibernate_all();
    ops(
        &nodes[1],
        k,
        json!([{"op": "exec", "sql": "INSERT INTO t VALUES ('secret-2')"}]),
    );
    nodes[1].dev().faults().arm(FaultKind::FailErase, 100);
    let answer = ops(&nodes[1], k, json!([{"op": "delete-self-durable"}]));
    assert!(
        answer.contains(r#"{"ok":null}"#),
        "the durable delete is acknowledged: {answer}"
    );
    nodes[1].dev().faults().clear();
}

#[test]
fn a_purge_cut_short_is_finished_by_the_control_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes) = two_nodes(dir.path());
    let k = ActorKey::new("t/app", "testee", "a");
    deleted_with_its_erase_cut_short(&nodes, &k);
    let left = before_the_reset(&history(bucket.as_ref(), &k));
    assert!(
        !left.is_empty(),
        "the erase was cut short: the old generations are still there"
    );
    eprintln!("left after the delete, before the control pass: {left:?}");
    nodes[0].passes().run_control_pass();
    let objects = history(bucket.as_ref(), &k);
    assert_eq!(
        before_the_reset(&objects),
        Vec::<String>::new(),
        "the control pass purged the deleted generations: {objects:?}"
    );
    assert!(
        objects.iter().any(|o| o.0 == Kind::Reset),
        "the reset stays: {objects:?}"
    );
}

#[test]
fn a_purge_cut_short_is_finished_by_the_next_acquire_and_keeps_what_came_after() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes) = two_nodes(dir.path());
    let k = ActorKey::new("t/app", "testee", "a");
    deleted_with_its_erase_cut_short(&nodes, &k);
    // The actor is created again on the other node, before any control pass.
    let answer = ops(
        &nodes[0],
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE u(x)"}, {"op": "exec", "sql": "INSERT INTO u VALUES ('after')"}, {"op": "flush"}]),
    );
    assert!(!answer.contains("error"), "{answer}");
    let objects = history(bucket.as_ref(), &k);
    assert_eq!(
        before_the_reset(&objects),
        Vec::<String>::new(),
        "the acquire purged the deleted generations: {objects:?}"
    );
    nodes[0].dev().hibernate_all();
    let answer = ops(&nodes[1], &k, json!([{"op": "query", "sql": "SELECT x FROM u"}]));
    assert!(
        answer.contains("after"),
        "what was written after the delete is kept: {answer}"
    );
}

#[test]
fn a_durable_delete_leaves_only_the_reset_and_its_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bucket, nodes) = two_nodes(dir.path());
    let k = ActorKey::new("t/app", "testee", "a");
    ops(&nodes[0], &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    nodes[0].dev().hibernate_all();
    ops(
        &nodes[1],
        &k,
        json!([{"op": "exec", "sql": "INSERT INTO t VALUES (1)"}]),
    );
    ops(&nodes[1], &k, json!([{"op": "delete-self-durable"}]));
    let kinds: Vec<Kind> = history(bucket.as_ref(), &k).into_iter().map(|o| o.0).collect();
    assert_eq!(
        kinds,
        [Kind::Snapshot, Kind::Reset],
        "the reset and the snapshot at it, nothing else"
    );
}
