//! The operator delete (ADR 0028 §3) on a two-node cluster: a request in the
//! bucket, carried out by the node that holds the actor, acknowledged only by
//! the outcome written beside it; replays recognised by the marker the reset
//! carries; no request written for an actor without a history.

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_host::bucket::{ObjectStore, PutCondition};
use wasmkeep_host::deletion::DeletionStatus;
use wasmkeep_host::keys;
use wasmkeep_host::operator::{RequestError, Waited, request_delete, wait_for_outcome};
use wasmkeep_host::{ActorKey, HttpRequest, Runtime, RuntimeConfig};
use wasmkeep_host::{Cluster, LocalCluster};

struct Nodes {
    bucket: Arc<dyn ObjectStore>,
    n1: Runtime,
    n2: Runtime,
    /// Last: dropping a node releases its actors into the bucket (ADR 060).
    _dir: tempfile::TempDir,
}

fn nodes() -> Nodes {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    let LocalCluster { cluster, nodes } = Cluster::local(dir.path(), 2, &config).expect("nodes");
    let [n1, n2]: [Runtime; 2] = nodes.try_into().unwrap_or_else(|_| panic!("two nodes"));
    for rt in [&n1, &n2] {
        common::add_testee_app(rt);
    }
    Nodes {
        _dir: dir,
        bucket: cluster.bucket().clone(),
        n1,
        n2,
    }
}

use common::ops;

fn deletes_under(bucket: &dyn ObjectStore, app: &str) -> Vec<String> {
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
        n.n2.passes().run_operator_pass(),
        0,
        "only the lowest live node lists and queues requests"
    );
    assert_eq!(n.n1.passes().run_operator_pass(), 1, "node 1 queues the request");
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "the holder (node 2) carried it out and wrote .done"
    );
    assert_eq!(
        deletes_under(n.bucket.as_ref(), "t/app"),
        Vec::<String>::new(),
        "the request is deleted after its outcome, and the command removed the outcome"
    );
    assert!(
        n.n2.admin()
            .metrics()
            .render()
            .contains("wasmkeep_actor_deletes_total{how=\"operator\"} 1"),
        "the holder counts the delete with how=operator"
    );
    assert!(
        matches!(n.n1.passes().deletion_status(&k), DeletionStatus::Deleted { ref how, .. } if how == "operator"),
        "deletion status names the operator: {:?}",
        n.n1.passes().deletion_status(&k)
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
    n.n1.passes().run_operator_pass();
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
    n.n1.passes().run_operator_pass();
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

/// A second node lists the request after the holder deleted the actor and
/// released it, before its key was deleted (issue 57: every node process
/// lists). The actor no longer exists, but its newest reset names this
/// request: done, never "no such actor" (seed 000 §3, step 3). Before, the
/// job wrote `.absent`, and the command answered "no such actor".
#[test]
fn a_request_listed_again_after_it_deleted_the_actor_is_done() {
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "twice");
    ops(&n.n2, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    let req = request_delete(n.bucket.as_ref(), &k).expect("request");
    n.n1.passes().run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted
    );
    // Listed by another node before the holder deleted its key: same id, same time.
    n.bucket
        .put(&req.object, b"", &PutCondition::IfAbsent)
        .expect("the request is back");
    n.n1.passes().run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "the actor's reset names this request: done"
    );
    // Another request of the same actor, written after it was deleted, is
    // not the one that deleted it: no such actor.
    let later = wasmkeep_host::operator::DeleteRequest {
        id: "00000000000000ff".into(),
        object: keys::delete_request(&k, "00000000000000ff"),
        ..req.clone()
    };
    n.bucket
        .put(&later.object, b"", &PutCondition::IfAbsent)
        .expect("a later request");
    let later = wasmkeep_host::operator::list(n.bucket.as_ref(), "t/app")
        .expect("list")
        .into_iter()
        .find_map(|l| match l {
            wasmkeep_host::operator::Listed::Request(r) if r.id == later.id => Some(r),
            _ => None,
        })
        .expect("listed");
    n.n1.passes().run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &later, Duration::from_secs(10)).expect("wait"),
        Waited::NoSuchActor,
        "another request of a deleted actor: no such actor"
    );
}

/// Another node answered the request first (here `.absent`, as a node that
/// found no such actor): that outcome is the request's. The holder writes
/// none of its own and deletes nothing for it. Before, the holder deleted
/// the actor and wrote `.done` beside the `.absent`: two outcomes of one
/// request, and a command that read `.absent` for an actor it deleted.
#[test]
fn a_request_that_has_an_outcome_keeps_it() {
    use wasmkeep_host::operator::Outcome;
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "raced");
    ops(&n.n2, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    let req = request_delete(n.bucket.as_ref(), &k).expect("request");
    // A slow event of the actor's first, so that the job the pass queues
    // behind it runs after the other node's outcome landed (had the pass
    // listed the outcome, it would only have deleted the request).
    let slow = {
        let (rt, k) = (n.n2.clone(), k.clone());
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) \
                   SELECT count(*) FROM c";
        std::thread::spawn(move || ops(&rt, &k, json!([{"op": "query", "sql": sql}])))
    };
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(n.n1.passes().run_operator_pass(), 1, "queued");
    n.bucket
        .put(&req.outcome_key(Outcome::Absent), b"", &PutCondition::IfAbsent)
        .expect("another node's outcome");
    let answer = slow.join().expect("the slow event");
    assert!(answer.contains("3000000"), "the slow event ran first: {answer}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while deletes_under(n.bucket.as_ref(), "t/app").contains(&req.object) {
        assert!(std::time::Instant::now() < deadline, "the request was never finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        deletes_under(n.bucket.as_ref(), "t/app"),
        vec![req.outcome_key(Outcome::Absent)],
        "one outcome: the one written first"
    );
    assert_eq!(
        n.n1.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "nothing deleted for a request already answered"
    );
}

#[test]
fn an_operator_delete_closes_open_sockets_with_1000_first() {
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "chat");
    ops(&n.n1, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    let mut socket = n.n1.open_socket(&k, "/ws").expect("socket");
    n.n1.settle(&k);
    let req = request_delete(n.bucket.as_ref(), &k).expect("request");
    n.n1.passes().run_operator_pass();
    assert_eq!(
        wait_for_outcome(n.bucket.as_ref(), &req, Duration::from_secs(10)).expect("wait"),
        Waited::Deleted,
        "deleted once its sockets were closed"
    );
    match socket.outbound.try_recv() {
        Ok(wasmkeep_host::Outbound::Close { code, reason }) => {
            assert_eq!(
                (code, reason.as_str()),
                (1000, "actor deleted"),
                "closed with 1000, not 1012"
            );
        }
        other => panic!("the open socket is closed by the operator delete, got {other:?}"),
    }
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
        deletes_under(n.bucket.as_ref(), "t/app"),
        Vec::<String>::new(),
        "nothing is written for a mistyped name"
    );
    assert_eq!(n.n1.passes().run_operator_pass(), 0, "and nothing is queued");
}

const HOUR_MS: u64 = 3_600_000;

#[test]
fn idle_actors_expire_but_never_one_with_an_alarm_or_one_in_use() {
    let n = nodes();
    for rt in [&n.n1, &n.n2] {
        rt.passes()
            .set_expire_after_idle("t/app", "testee", Some(Duration::from_secs(3600)))
            .expect("one hour is allowed");
    }
    assert!(
        n.n1.passes()
            .set_expire_after_idle("t/app", "testee", Some(Duration::from_secs(60)))
            .is_err(),
        "a limit below one hour is refused"
    );
    let idle = ActorKey::new("t/app", "testee", "idle");
    let alarmed = ActorKey::new("t/app", "testee", "alarmed");
    let busy = ActorKey::new("t/app", "testee", "busy");
    ops(&n.n2, &idle, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    ops(
        &n.n2,
        &alarmed,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "set-alarm", "in": "36000000"}]),
    );
    n.n2.dev().hibernate_all();
    n.n1.dev().advance_clock(2 * HOUR_MS).expect("virtual clock");
    ops(&n.n1, &busy, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    n.n1.dev().advance_clock(2 * HOUR_MS).expect("virtual clock");
    assert_eq!(
        n.n2.passes().run_expiry_pass(),
        wasmkeep_host::ExpiryPass::default(),
        "only the collecting node (the lowest live id) runs the pass"
    );
    let pass = n.n1.passes().run_expiry_pass();
    assert_eq!(
        pass.candidates, 2,
        "candidates: released records idle past the limit (the resident actor is not one)"
    );
    assert_eq!(pass.expired, 1, "the actor with a pending alarm is never expired");
    assert!(
        matches!(n.n1.passes().deletion_status(&idle), DeletionStatus::Deleted { ref how, .. } if how == "expired"),
        "the idle actor is deleted, how = expired: {:?}",
        n.n1.passes().deletion_status(&idle)
    );
    assert!(
        n.n1.admin()
            .metrics()
            .render()
            .contains("wasmkeep_actor_deletes_total{how=\"expired\"} 1"),
        "counted with how=expired"
    );
    let rows = ops(
        &n.n2,
        &alarmed,
        json!([{"op": "query", "sql": "SELECT count(*) AS n FROM t"}]),
    );
    assert!(
        rows.contains(r#""rows":[[{"integer":"0"}]]"#),
        "the alarmed actor keeps its data: {rows}"
    );
    let rows = ops(
        &n.n1,
        &busy,
        json!([{"op": "query", "sql": "SELECT count(*) AS n FROM t"}]),
    );
    assert!(
        rows.contains(r#""rows":[[{"integer":"0"}]]"#),
        "the actor in use keeps its data: {rows}"
    );
}

#[test]
fn a_wake_between_the_listing_and_the_expiry_wins() {
    use wasmkeep_host::faults::Faults;
    use wasmkeep_host::replica::Replica;
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "woken");
    ops(&n.n1, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    n.n1.dev().hibernate_all();
    let listed = n
        .bucket
        .list(&keys::owner(&k))
        .expect("list")
        .into_iter()
        .next()
        .expect("the actor has an ownership record");
    // A wake: the record is written again (acquired, then released).
    ops(&n.n2, &k, json!([{"op": "exec", "sql": "INSERT INTO t VALUES(1)"}]));
    n.n2.dev().hibernate_all();
    let mut replica = Replica::new(n.bucket.clone(), Arc::new(Faults::default()), k.clone(), "node-1");
    assert!(
        replica
            .acquire_unchanged(&listed.etag, &|_| true)
            .expect("the bucket answers")
            .is_none(),
        "the record changed since the listing: the expiry's acquire loses and writes nothing"
    );
    let rows = ops(
        &n.n1,
        &k,
        json!([{"op": "query", "sql": "SELECT count(*) AS n FROM t"}]),
    );
    assert!(
        rows.contains(r#""rows":[[{"integer":"1"}]]"#),
        "the woken actor's data stays: {rows}"
    );
}

#[test]
fn an_app_delete_stops_the_nodes_then_removes_everything_but_the_tombstone() {
    use wasmkeep_host::app_delete::{
        AppDeleteError, read_tombstone, recreate, remaining_keys, remove_data, serving_nodes, write_tombstone,
    };
    let n = nodes();
    let k = ActorKey::new("t/app", "testee", "room");
    ops(
        &n.n1,
        &k,
        json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "set-alarm", "in": "60000"}]),
    );
    let mut socket = n.n1.open_socket(&k, "/ws").expect("socket");
    n.n1.settle(&k);
    n.n1.passes().run_control_pass();
    n.n2.passes().run_control_pass();
    let now = wasmkeep_host::clock::VIRTUAL_EPOCH_MS;
    assert_eq!(
        serving_nodes(n.bucket.as_ref(), "t/app", now).expect("list").len(),
        2,
        "both nodes heartbeat for the app"
    );

    let t = write_tombstone(n.bucket.as_ref(), "t/app", "ops", now).expect("tombstone");
    assert_eq!(
        write_tombstone(n.bucket.as_ref(), "t/app", "someone else", now + 1).expect("again"),
        t,
        "an existing tombstone is not an error: the command resumes with it"
    );
    assert!(
        matches!(request_delete(n.bucket.as_ref(), &k), Err(RequestError::AppDeleted(_))),
        "actor delete refuses an app with a tombstone"
    );
    n.n1.passes().run_control_pass();
    n.n2.passes().run_control_pass();
    assert!(
        n.n1.passes().app_stopped("t/app") && n.n2.passes().app_stopped("t/app"),
        "both nodes stopped serving the app"
    );
    assert!(
        matches!(
            socket.outbound.try_recv(),
            Ok(wasmkeep_host::Outbound::Close { code: 1001, .. })
        ),
        "its sockets were closed with 1001"
    );
    assert!(
        n.n1.request_blocking(&k, HttpRequest::new("POST", "/", "{}")).is_err(),
        "the app is no longer served"
    );
    assert!(
        !n.n1.admin().exists(&k) || n.n1.admin().actors().is_empty(),
        "its actors were released"
    );
    assert_eq!(
        serving_nodes(n.bucket.as_ref(), "t/app", now).expect("list"),
        Vec::<String>::new(),
        "the nodes took their heartbeats back"
    );
    assert!(
        !n._dir.path().join("node-1/state/t/app").exists(),
        "the nodes removed their local files of the app"
    );

    // A late write of the app, then the delete of its data.
    n.bucket
        .put("state/t/app/late", b"x", &PutCondition::None)
        .expect("late write");
    assert!(
        matches!(
            recreate(n.bucket.as_ref(), "t/app"),
            Err(AppDeleteError::NotFinished { .. })
        ),
        "--recreate is refused while anything but the tombstone remains"
    );
    assert!(
        remove_data(n.bucket.as_ref(), "t/app").expect("remove") > 0,
        "the data goes"
    );
    assert_eq!(
        remaining_keys(n.bucket.as_ref(), "t/app").expect("list"),
        Vec::<String>::new(),
        "nothing but the tombstone is left"
    );
    assert!(
        read_tombstone(n.bucket.as_ref(), "t/app").expect("read").is_some(),
        "the tombstone stays"
    );
    recreate(n.bucket.as_ref(), "t/app").expect("--recreate once only the tombstone is left");
    assert!(
        read_tombstone(n.bucket.as_ref(), "t/app").expect("read").is_none(),
        "--recreate removed the tombstone"
    );
}
