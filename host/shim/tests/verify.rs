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

/// Files under `dir` whose name contains `part`.
fn files_named(dir: &Path, part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_string_lossy().contains(part) {
                out.push(p.display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn two_nodes(dir: &Path) -> (Runtime, Runtime, Arc<dyn ObjectStore>) {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    let LocalCluster { cluster, mut nodes } = Cluster::local(dir, 2, &config).expect("nodes");
    let (n1, n2) = (nodes.remove(0), nodes.remove(0));
    for rt in [&n1, &n2] {
        common::add_testee_app(rt);
    }
    (n1, n2, cluster.bucket().clone())
}

fn write(rt: &Runtime, k: &ActorKey, sql: &str) {
    let body = serde_json::to_vec(&json!({"ops": [{"op": "exec", "sql": sql}]})).expect("json");
    let r = rt
        .request_blocking(k, HttpRequest::new("POST", "/", body))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    rt.settle(k);
}

/// A node that takes an actor back after another node wrote it sets its
/// stale copy aside, and once the head is restored removes it (issue 57:
/// before, every `.db.replaced` stayed for good). A node that starts
/// removes what is left: set-aside copies, and copies that are not the
/// bucket's head (here one of an actor deleted since, which held its rows).
/// Then the sweep is clean.
#[test]
fn a_node_removes_what_it_set_aside_and_a_restarted_node_its_stale_copies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (
        ActorKey::new("t/app", "testee", "a"),
        ActorKey::new("t/app", "testee", "b"),
    );
    {
        let (n1, n2, _) = two_nodes(dir.path());
        write(&n1, &a, "CREATE TABLE t(x); INSERT INTO t VALUES('before')");
        write(&n1, &b, "CREATE TABLE t(x); INSERT INTO t VALUES('deleted since')");
        n1.dev().hibernate_all();
        // Node 2 takes both over: it writes a, and deletes b.
        write(&n2, &a, "INSERT INTO t VALUES('on node 2')");
        write(&n2, &b, "INSERT INTO t VALUES('on node 2')");
        let body = serde_json::to_vec(&json!({"ops": [{"op": "delete-self-durable"}]})).expect("json");
        n2.request_blocking(&b, HttpRequest::new("POST", "/", body))
            .expect("delete");
        n2.settle(&b);
        n2.dev().hibernate_all();
        // Node 1 takes a back: its copy is not the head, set aside, restored over.
        write(&n1, &a, "INSERT INTO t VALUES('back on node 1')");
        assert_eq!(
            files_named(&dir.path().join("node-1"), ".db.replaced"),
            Vec::<String>::new(),
            "the copy set aside goes once the head is restored"
        );
        n1.dev().hibernate_all();
        write(&n2, &a, "INSERT INTO t VALUES('node 2 again')");
        // Both stop in order; node 1's copies of a and b are not the head.
    }
    // A copy set aside by a take cut short (a kill between its rename and its removal).
    let aside = dir.path().join("node-1/state/t/app/testee/63.db.replaced");
    std::fs::write(&aside, b"SQLite format 3\0").expect("a set-aside copy");
    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(code, Some(1), "before the start: {out}");
    assert!(
        out.contains(".db.replaced") && out.contains("not the bucket's head"),
        "{out}"
    );
    let (_n1, _n2, _) = two_nodes(dir.path());
    assert_eq!(
        files_named(&dir.path().join("node-1"), ".db.replaced"),
        Vec::<String>::new()
    );
    let b_file = format!("testee/{}.db", b.encoded_name());
    assert!(
        !files_named(&dir.path().join("node-1"), &b_file)
            .iter()
            .any(|f| f.ends_with(".db")),
        "node 1's copy of b, which held rows b's delete removed, is gone"
    );
    let (code, out) = verify(dir.path(), &[]);
    assert_eq!(code, Some(0), "clean after the start: {out}");
}

/// `verify` run as `nobody` through `setpriv` (the test command runs as
/// root, where permissions do not bite): `None`, said on stderr, when this
/// process is not root or there is no `setpriv`.
fn verify_as_nobody(data_dir: &Path, extra: &[&str]) -> Option<(Option<i32>, String)> {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(str::to_owned))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"));
    if !root {
        eprintln!("not root: skipped (it runs verify as another user)");
        return None;
    }
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("verify")
        .arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .output();
    match out {
        Ok(out) => Some((
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )),
        Err(e) => {
            eprintln!("setpriv: {e}: skipped");
            None
        }
    }
}

/// Every directory and file under `dir` readable by all, and none writable
/// but by its owner (root).
fn read_only_for_others(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
        if p.is_dir() {
            todo.extend(std::fs::read_dir(&p).expect("read_dir").flatten().map(|e| e.path()));
        }
    }
}

/// A user who may read a `file://` bucket but not write it sweeps it (issue
/// 57): the sweep shares the folder's lock, which it opens for reading only.
/// Before, `verify` exited 2 with `locking …: Permission denied`. Also a
/// bucket no writer has locked yet (no lock file): read without one.
#[test]
fn a_reader_who_may_not_write_the_bucket_sweeps_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (rt, bucket, k) = node_with_one_actor(dir.path());
    drop(rt);
    let stale = keys::delete_request(&k, "00000000000000ab");
    bucket
        .put(&stale, b"", &PutCondition::IfAbsent)
        .expect("an old request");
    read_only_for_others(dir.path());
    let url = format!("file://{}", dir.path().join("bucket").display());
    let Some((code, out)) = verify_as_nobody(dir.path(), &["--bucket", &url]) else {
        return;
    };
    assert_eq!(code, Some(1), "swept, one orphan: {out}");
    assert!(out.contains("delete request past expiry"), "{out}");
    let (code, out) = verify_as_nobody(dir.path(), &[]).expect("as before");
    assert_eq!(code, Some(1), "the bucket in the data directory too: {out}");
    std::fs::remove_file(dir.path().join("bucket/.lock")).expect("no lock file");
    let (code, out) = verify_as_nobody(dir.path(), &["--bucket", &url]).expect("as before");
    assert_eq!(code, Some(1), "a bucket without a lock file: {out}");
    assert!(
        !dir.path().join("bucket/.lock").exists(),
        "the reader made nothing in the bucket"
    );
}

/// Over moto, through a fault proxy that answers every write 503 without
/// forwarding it (a user whose credentials may only read): the sweep reads
/// the bucket and finds its orphan, and asked nothing but reads.
/// Actor `t/app:testee/a` in the bucket at `url` with a history object below
/// a reset: an orphan the sweep reports.
fn plant_history_below_a_reset(url: &str) {
    use wasmkeep_shim::replica::{Kind, Replica};
    let bucket = wasmkeep_shim::bucket_url::open_bucket(url, Arc::new(wasmkeep_shim::clock::SystemClock))
        .expect("the bucket opens");
    let k = ActorKey::new("t/app", "testee", "a");
    let mut replica = Replica::new(bucket, Arc::default(), k, "n1");
    replica.acquire(&|_| true).expect("acquire");
    replica.upload(Kind::Segment, b"the data", &|_| true).expect("a state");
    replica.delete(b"", &|_| true).expect("a reset above it");
}

/// The sweep over a real bucket through a fault proxy that refuses every
/// write: it reads, finds the orphan, and asks no write (ADR 073).
fn verify_needs_only_read_access(env: &str, script: &str, endpoint_var: &str) {
    use wasmkeep_host_testing::fault_proxy::{Fault, FaultProxy, Rule, Times};
    let Some(url) = common::node_process::server_prefix(env, script, "verify-reads") else {
        return;
    };
    plant_history_below_a_reset(&url);
    let endpoint = std::env::var(endpoint_var).unwrap_or_else(|_| panic!("{script} exports {endpoint_var}"));
    let proxy = FaultProxy::start(&endpoint, 57).expect("the fault proxy");
    for method in ["PUT", "POST", "DELETE"] {
        proxy.add(Rule {
            path_contains: String::new(),
            method: Some(method.into()),
            fault: Fault::Unavailable,
            times: Times::Percent(100.0),
        });
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("verify")
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--bucket", &url])
        .env(endpoint_var, proxy.url())
        .output()
        .expect("run verify");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("history before"), "the orphan is found: {stdout}");
    let counts = proxy.counts();
    assert_eq!(counts.unavailable, 0, "no write was asked: {counts:?}");
    assert!(counts.forwarded > 0, "it read through the proxy: {counts:?}");
    eprintln!(
        "verify over {url}, writes refused: {}; {counts:?}",
        stdout.trim().replace('\n', " / ")
    );
}

#[test]
fn verify_over_moto_needs_only_read_access() {
    verify_needs_only_read_access("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "AWS_ENDPOINT_URL");
}

#[test]
fn verify_over_azurite_needs_only_read_access() {
    verify_needs_only_read_access(
        "WASMKEEP_TEST_AZURE",
        "scripts/azurite-server.sh",
        "AZURITE_BLOB_STORAGE_URL",
    );
}

/// `verify` and `actor status` over a real bucket's URL (issue 57: both once
/// took an `s3://` URL for a path, and `verify` said "clean" without reading
/// the bucket): the sweep finds history below a reset, `actor status` reads
/// the deletion, and a bucket that cannot be listed fails closed (exit 2).
fn verify_and_status_over(env: &str, script: &str, what: &str) {
    let Some(url) = common::node_process::server_prefix(env, script, what) else {
        return;
    };
    plant_history_below_a_reset(&url);
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out) = verify(dir.path(), &["--bucket", &url]);
    assert_eq!(code, Some(1), "the orphan is reported: {out}");
    assert!(out.contains("history before"), "{out}");
    let status = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["actor", "status", "--app", "t/app", "testee/a", "--bucket", &url])
        .output()
        .expect("run actor status");
    let said = String::from_utf8_lossy(&status.stdout);
    assert_eq!(
        status.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(said.starts_with("deleted"), "the reset is read: {said}");
    let scheme = url.split("://").next().unwrap_or_default();
    let missing = format!("{scheme}://no-such-bucket-{what}/p");
    let (code, out) = verify(dir.path(), &["--bucket", &missing]);
    assert_eq!(code, Some(2), "a bucket that cannot be listed fails closed: {out}");
}

#[test]
fn verify_and_status_over_moto_read_the_bucket_and_fail_closed() {
    verify_and_status_over("WASMKEEP_TEST_S3", "scripts/s3-server.sh", "verify-status");
}

#[test]
fn verify_and_status_over_azurite_read_the_bucket_and_fail_closed() {
    verify_and_status_over("WASMKEEP_TEST_AZURE", "scripts/azurite-server.sh", "verify-status");
}
