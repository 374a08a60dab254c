//! A failed event answers by its cause (issue: typed errors on the event
//! path): 409 when the app was deleted, 503 when the node cannot serve now,
//! 500 when the guest failed, 404 when there is no such actor, each with a
//! body that says what happened.

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_host::bucket::ObjectStore;
use wasmkeep_host::{ActorKey, FAILURE_HEADER, FailureKind, HttpRequest, HttpResponse, Runtime, RuntimeConfig};
use wasmkeep_host::{Cluster, LocalCluster};

fn request(rt: &Runtime, key: &ActorKey) -> HttpResponse {
    let body = serde_json::to_vec(&json!({ "ops": [] })).expect("json");
    rt.request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request")
}

struct Node {
    bucket: Arc<dyn ObjectStore>,
    rt: Runtime,
    /// Last: dropping the node releases its actors into the bucket (ADR 060).
    _dir: tempfile::TempDir,
}

fn single_node(dir: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    Runtime::new(config).expect("runtime")
}

fn cluster_node() -> Node {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    let LocalCluster { cluster, mut nodes } = Cluster::local(dir.path(), 1, &config).expect("node");
    let rt = nodes.remove(0);
    common::add_testee_app(&rt);
    Node {
        _dir: dir,
        bucket: cluster.bucket().clone(),
        rt,
    }
}

#[test]
fn a_request_to_a_deleted_app_answers_409() {
    let n = cluster_node();
    wasmkeep_host::app_delete::write_tombstone(n.bucket.as_ref(), "t/app", "test", 1).expect("tombstone");
    let r = request(&n.rt, &ActorKey::new("t/app", "testee", "late"));
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(
        r.failure,
        Some(FailureKind::AppDeleted),
        "the answer says why: {}",
        r.text()
    );
}

#[test]
fn a_cut_off_node_answers_503() {
    let n = cluster_node();
    n.rt.dev().cut_off().expect("cut off");
    let r = request(&n.rt, &ActorKey::new("t/app", "testee", "a"));
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(
        r.failure,
        Some(FailureKind::CutOff),
        "the answer says why: {}",
        r.text()
    );
    let named = r
        .headers
        .iter()
        .find(|(n, _)| n == FAILURE_HEADER)
        .map(|(_, v)| v.as_str());
    assert_eq!(named, Some("cut-off"), "and names it for HTTP clients");
}

#[test]
fn a_guest_whose_on_init_fails_answers_500_with_its_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path());
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "broken");
    // A database made before the actor's first event, where the testee's
    // on-init cannot insert into `init_log` (a view): on-init traps.
    let db = rt.admin().db_path(&k);
    std::fs::create_dir_all(db.parent().expect("dir")).expect("mkdir");
    rusqlite::Connection::open(&db)
        .and_then(|c| c.execute_batch("CREATE VIEW init_log AS SELECT 1 AS n"))
        .expect("seed the database");
    let r = request(&rt, &k);
    assert_eq!(r.status, 500, "a guest failure is the guest's: {}", r.text());
    assert_eq!(
        r.failure,
        Some(FailureKind::Guest),
        "the answer says what failed: {}",
        r.text()
    );
}

#[test]
fn a_request_to_an_absent_existing_actor_answers_404() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path());
    rt.add_app(
        "t/app",
        &[wasmkeep_host::ClassSpec {
            name: "testee".into(),
            component: common::component("conformance-testee-rust"),
            access: wasmkeep_host::Access::Existing,
        }],
    )
    .expect("app");
    let k = ActorKey::new("t/app", "testee", "nobody");
    match rt.request(&k, HttpRequest::new("GET", "/", "")) {
        Err(e) => assert_eq!(e.kind(), FailureKind::NoSuchActor, "{e}"),
        Ok(p) => {
            let r = p.wait();
            assert_eq!(r.status, 404, "{}", r.text());
            assert_eq!(r.failure, Some(FailureKind::NoSuchActor), "{}", r.text());
        }
    }
}

#[test]
fn a_failure_answers_without_the_hosts_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path());
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "unopenable");
    // A directory where the database file goes: SQLite cannot open it.
    std::fs::create_dir_all(rt.admin().db_path(&k)).expect("a directory in the way");
    let r = request(&rt, &k);
    assert_eq!(r.status, 500, "{}", r.text());
    let data_dir = dir.path().to_string_lossy().into_owned();
    assert!(
        !r.text().contains(&data_dir),
        "the body names no path of the host: {}",
        r.text()
    );
    assert!(
        matches!(r.failure, Some(FailureKind::Files | FailureKind::Sql)),
        "but says what failed: {:?} {}",
        r.failure,
        r.text()
    );
}

#[test]
fn a_call_whose_event_fails_says_how_by_its_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = single_node(dir.path());
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "called");
    let payload = serde_json::to_vec(&json!({ "ops": [{"op": "trap"}] })).expect("json");
    let answer = rt.call(&k, payload).expect("the class exists");
    let Err(failure) = answer else {
        panic!("a trapping callee fails the call: {answer:?}")
    };
    assert_eq!(failure.variant(), "failed", "{failure:?}");
    assert_eq!(failure.failure(), Some(FailureKind::Guest), "{failure:?}");
    let fine = rt.call(&k, serde_json::to_vec(&json!({ "ops": [] })).expect("json"));
    assert!(matches!(fine, Ok(Ok(_))), "the actor stays usable: {fine:?}");
}
