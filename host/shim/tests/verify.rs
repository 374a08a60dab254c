//! The orphan sweep through the binary: never deletes, reports leftovers,
//! fails closed, replays a finished checkpoint.

mod common;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::bucket::{ObjectStore, PutCondition};
use wasmkeep_shim::keys;
use wasmkeep_shim::{ActorKey, HttpRequest, Runtime, RuntimeConfig};
use wasmkeep_shim::{Cluster, LocalCluster};

fn verify(data_dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("verify")
        .arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .output()
        .expect("run verify");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One cluster node in `dir` with one actor written and released. The
/// virtual clock starts on 2026-01-01, long before now: what it writes is old.
fn node_with_one_actor(dir: &Path) -> (Runtime, Arc<dyn ObjectStore>, ActorKey) {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    let LocalCluster { cluster, mut nodes } = Cluster::local(dir, 1, &config).expect("node");
    let (rt, bucket) = (nodes.remove(0), cluster.bucket().clone());
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "a");
    let body = serde_json::to_vec(&json!({"ops": [{"op": "exec", "sql": "CREATE TABLE t(x)"}]})).expect("json");
    rt.request_blocking(&k, HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(&k);
    rt.dev().hibernate_all();
    (rt, bucket, k)
}

#[test]
fn the_sweep_reports_leftovers_fails_closed_and_never_deletes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, bucket, k) = node_with_one_actor(dir.path());

    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(code, Some(0), "a tidy cluster is clean: {out}");

    let stale = keys::delete_request(&k, "00000000000000ab");
    bucket
        .put(&stale, b"", &PutCondition::IfAbsent)
        .expect("an old request");
    let replaced = dir.path().join("node-1/state/t/app/testee/00.db.replaced");
    std::fs::write(&replaced, b"x").expect("a set-aside copy");
    // A removal left unfinished: the database renamed to its marker, which
    // still holds its pages until the actor's next use finishes it (ADR 053).
    let pending = dir.path().join("node-1/state/t/app/testee/01.db.deleting");
    std::fs::write(&pending, b"SQLite format 3\0").expect("a removal's marker");
    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(code, Some(1), "orphans found: exit 1: {out}");
    assert!(
        out.contains("delete request past expiry") && out.contains(".db.replaced") && out.contains(".db.deleting"),
        "each orphan is named: {out}"
    );
    assert!(
        bucket.get(&stale).expect("get").is_some() && replaced.exists() && pending.exists(),
        "the sweep never deletes"
    );

    let cp = dir.path().join("sweep.json");
    let cp_arg = cp.to_str().expect("utf-8 path");
    assert_eq!(
        verify(dir.path(), &["--checkpoint", cp_arg]).0,
        Some(1),
        "a sweep with a checkpoint"
    );
    let (code, out) = verify(dir.path(), &["--checkpoint", cp_arg]);
    assert_eq!(code, Some(3), "a finished checkpoint is only replayed: exit 3: {out}");
    assert!(out.contains("replayed from the checkpoint"), "and says so: {out}");

    bucket.delete(&keys::owner(&k)).expect("lose the owner record");
    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(
        code,
        Some(2),
        "an empty owner listing beside history is not trusted: exit 2 (fail closed): {out}"
    );
}

#[test]
fn an_unreadable_bucket_directory_fails_the_sweep_closed_instead_of_reporting_orphans() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (rt, _bucket, k) = node_with_one_actor(dir.path());
    // history/ as something the host cannot read (the tests run as root, for
    // whom permissions do not stop a read: a link that loops stands in).
    let history = dir.path().join("bucket/state/t/app/history");
    let aside = dir.path().join("history-aside");
    std::fs::rename(&history, &aside).expect("move history aside");
    std::os::unix::fs::symlink(&history, &history).expect("a looping link");
    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(
        code,
        Some(2),
        "a listing that failed is exit 2 (fail closed), never a false orphan: {out}"
    );
    assert!(
        !out.contains("orphan:"),
        "no orphan is reported from a failed listing: {out}"
    );
    let query =
        serde_json::to_vec(&json!({"ops": [{"op": "query", "sql": "SELECT count(*) AS n FROM t"}]})).expect("json");
    let r = rt
        .request_blocking(&k, HttpRequest::new("POST", "/", query.clone()))
        .expect("request");
    assert_eq!(
        r.status,
        503,
        "an actor whose history cannot be listed is not taken for a new, empty one: {}",
        r.text()
    );
    std::fs::remove_file(&history).expect("remove the link");
    std::fs::rename(&aside, &history).expect("history back");
    let r = rt
        .request_blocking(&k, HttpRequest::new("POST", "/", query))
        .expect("request");
    assert!(
        r.status == 200 && r.text().contains("\"ok\""),
        "once it can be read, the actor has its data: {}",
        r.text()
    );
}

/// Issue 57: `verify` and `actor status` took a bucket URL for a path, so
/// `verify --bucket <url>` swept nothing and said clean, and `actor status`
/// refused. Both open it as `serve --bucket` does, and a bucket that cannot
/// be listed fails closed (exit 2).
#[test]
fn verify_and_status_open_a_bucket_url_and_fail_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, bucket, k) = node_with_one_actor(dir.path());
    let url = format!("file://{}", dir.path().join("bucket").display());
    let stale = keys::delete_request(&k, "00000000000000ab");
    bucket
        .put(&stale, b"", &PutCondition::IfAbsent)
        .expect("an old request");
    let elsewhere = tempfile::tempdir().expect("another directory");
    let (code, out) = verify(elsewhere.path(), &["--bucket", &url]);
    assert_eq!(code, Some(1), "the bucket at the URL was swept: {out}");
    assert!(out.contains("delete request past expiry"), "{out}");
    let status = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["actor", "status", "--app", "t/app", "testee/a", "--bucket", &url])
        .output()
        .expect("run actor status");
    assert_eq!(
        (status.status.code(), String::from_utf8_lossy(&status.stdout).trim()),
        (Some(0), "not deleted"),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let (code, out) = verify(elsewhere.path(), &["--bucket", "s3x://no-such-scheme/p"]);
    assert_eq!(code, Some(2), "a bucket that does not open fails closed: {out}");
}
