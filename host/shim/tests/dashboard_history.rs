//! The dashboard's API over a cluster and over history (issue 26, ADR 064):
//! the overview across the nodes of a cluster and who holds each actor, an
//! actor's records in the bucket (uploads, a reset, the fence), restore to
//! here and its undo, and a single node's own history. Failures are matched
//! on their status and kind (`wasmkeep-failure`), never on words.

mod common;

use common::dashboard::{call, ops, start_with};
use serde_json::{Value, json};
use wasmkeep_shim::{Access, ClassSpec, Runtime, RuntimeConfig};

/// Two nodes of a local cluster in `dir` on a virtual clock, each serving the
/// Rust testee as `demo/app`'s class `testee`.
fn testee_cluster(dir: &std::path::Path) -> Vec<wasmkeep_shim::Runtime> {
    let mut config = RuntimeConfig::for_tests(dir);
    config.virtual_clock = true;
    config.cache_dir = common::cache_dir();
    let nodes = wasmkeep_shim::Cluster::local(dir, 2, &config).expect("cluster").nodes;
    for rt in &nodes {
        rt.add_app(
            "demo/app",
            &[ClassSpec {
                name: "testee".into(),
                component: common::component("conformance-testee-rust"),
                access: Access::Open,
            }],
        )
        .expect("app loads");
    }
    nodes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_cluster_the_overview_lists_every_node_and_who_holds_each_actor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = testee_cluster(dir.path());
    // An actor created through node 2: node 2 holds it.
    let key = wasmkeep_shim::ActorKey::new("demo/app", "testee", "c1");
    let body = json!({"ops": [{"op": "exec", "sql": "CREATE TABLE t(x)"}]}).to_string();
    let (rt2, k) = (nodes[1].clone(), key.clone());
    let answer = tokio::task::spawn_blocking(move || {
        let r = rt2.request_blocking(&k, wasmkeep_shim::HttpRequest::new("POST", "/", body.into_bytes()));
        rt2.settle(&k);
        r
    })
    .await
    .expect("task")
    .expect("request");
    assert_eq!(answer.status, 200);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = wasmkeep_shim::server::router_for_node(
        nodes[0].clone(),
        "demo/app".into(),
        wasmkeep_shim::server::AdminAccess::default(),
        nodes.clone(),
    )
    .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let (status, _, body) = call("GET", &format!("http://{addr}/_shim/overview"), None).await;
    assert_eq!(status, 200);
    assert_eq!(body["node"], "node-1");
    let actors = body["actors"].as_array().expect("actors");
    assert_eq!(actors.len(), 1, "node 1's page lists node 2's actor: {body}");
    assert_eq!(actors[0]["holder"], "node-2");
    assert_eq!(actors[0]["status"], "resident");
    let c1 = format!("http://{addr}/_shim/actors/testee/c1");
    let (status, _, schema) = call("GET", &format!("{c1}/schema?node=node-2"), None).await;
    assert_eq!(status, 200, "asked of the node that holds it: {schema}");
    assert!(
        schema["tables"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "t"))
    );
    let (_, _, info) = call("GET", &format!("{c1}/info?node=node-2"), None).await;
    assert_eq!(info["status"], "resident");
    let (status, _, history) = call("GET", &format!("http://{addr}/_shim/actors/testee/c1/history"), None).await;
    assert_eq!(status, 200);
    assert_eq!(history["cluster"], true);
    let records = history["records"].as_array().expect("records");
    assert_eq!(history["owner"]["node"], "node-2", "its ownership record: {history}");
    assert!(
        records
            .iter()
            .any(|r| r["key"].as_str().is_some_and(|k| k.contains("/history/"))),
        "its history: {history}"
    );
}

/// Runs the testee's `ops` on `key` through `rt` (blocking) and waits for the event's end.
async fn ops_on(rt: &Runtime, key: &wasmkeep_shim::ActorKey, ops: Value) -> u16 {
    let (rt, k) = (rt.clone(), key.clone());
    let body = json!({ "ops": ops }).to_string();
    tokio::task::spawn_blocking(move || {
        let r = rt.request_blocking(&k, wasmkeep_shim::HttpRequest::new("POST", "/", body.into_bytes()));
        rt.settle(&k);
        r
    })
    .await
    .expect("task")
    .expect("request")
    .status
}

/// `(kind, generation, seq, head)` of each record of a history answer.
fn timeline(h: &Value) -> Vec<(String, u64, u64, bool)> {
    h["records"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or_default().to_owned(),
                r["generation"].as_u64().unwrap_or_default(),
                r["seq"].as_u64().unwrap_or_default(),
                r["head"] == true,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_cluster_an_actors_history_reads_as_uploads_a_reset_and_the_fence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = testee_cluster(dir.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = wasmkeep_shim::server::router_for_node(
        nodes[0].clone(),
        "demo/app".into(),
        wasmkeep_shim::server::AdminAccess::default(),
        nodes.clone(),
    )
    .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let history = format!("http://{addr}/_shim/actors/testee/h1/history");
    let key = wasmkeep_shim::ActorKey::new("demo/app", "testee", "h1");

    // Written through node 2: one upload at its generation, the head.
    let write = json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]);
    assert_eq!(ops_on(&nodes[1], &key, write).await, 200);
    let (status, _, h) = call("GET", &history, None).await;
    assert_eq!(status, 200, "{h}");
    assert_eq!(h["cluster"], true);
    assert_eq!(timeline(&h), vec![("upload".into(), 1, 0, true)], "{h}");
    assert_eq!(
        (&h["owner"]["node"], &h["owner"]["generation"], &h["owner"]["held"]),
        (&json!("node-2"), &json!(1), &json!(true)),
        "{h}"
    );

    // A durable delete: the reset with its marker and the snapshot at it; what was before is erased.
    assert_eq!(
        ops_on(&nodes[1], &key, json!([{"op": "delete-self-durable"}])).await,
        200
    );
    let (_, _, h) = call("GET", &history, None).await;
    assert_eq!(
        timeline(&h),
        vec![("reset".into(), 1, 1, true), ("snapshot".into(), 1, 1, false)],
        "{h}"
    );
    assert_eq!(h["records"][0]["how"], "self_durable");
    assert!(h["records"][0]["deleted_at"].is_u64(), "{h}");
    // Held by nobody now: the page asks its own node, which finds it on node 2.
    let (_, _, i) = call("GET", &format!("http://{addr}/_shim/actors/testee/h1/info"), None).await;
    assert_eq!(
        (&i["status"], &i["deletion"]["status"], &i["last"]["kind"]),
        (&json!("deleted"), &json!("deleted"), &json!("request")),
        "{i}"
    );

    // Node 2 cut off, node 1 takes the actor over: a new generation, the
    // fence of what it restored (the reset's image, as a page set that
    // names no page), then the pages its own write changed (ADR 064).
    let rt2 = nodes[1].clone();
    tokio::task::spawn_blocking(move || rt2.dev().cut_off())
        .await
        .expect("task")
        .expect("cut off");
    let write = json!([{"op": "exec", "sql": "CREATE TABLE u(x)"}]);
    assert_eq!(ops_on(&nodes[0], &key, write).await, 200);
    let (_, _, h) = call("GET", &history, None).await;
    assert_eq!(
        timeline(&h),
        vec![
            ("reset".into(), 1, 1, false),
            ("snapshot".into(), 1, 1, false),
            ("fence".into(), 2, 0, false),
            ("pages".into(), 2, 1, true),
        ],
        "{h}"
    );
    assert_eq!(
        (
            &h["owner"]["node"],
            &h["owner"]["generation"],
            &h["owner"]["released"],
            &h["owner"]["held"]
        ),
        (&json!("node-1"), &json!(2), &json!(false), &json!(true)),
        "{h}"
    );

    // An upload that does not land: the request was answered, but its writes
    // are not kept, and its last event says so by kind.
    nodes[0].dev().faults().arm(wasmkeep_shim::FaultKind::FailUpload, 1);
    let write = json!([{"op": "exec", "sql": "CREATE TABLE v(x)"}]);
    assert_eq!(ops_on(&nodes[0], &key, write).await, 200);
    let (_, _, i) = call("GET", &format!("http://{addr}/_shim/actors/testee/h1/info"), None).await;
    assert_eq!(
        (&i["last"]["kind"], &i["last"]["outcome"]),
        (&json!("request"), &json!("not-acknowledged")),
        "{i}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_to_here_puts_an_earlier_state_on_the_head_and_can_be_undone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nodes = testee_cluster(dir.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = wasmkeep_shim::server::router_for_node(
        nodes[0].clone(),
        "demo/app".into(),
        wasmkeep_shim::server::AdminAccess::default(),
        nodes.clone(),
    )
    .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let key = wasmkeep_shim::ActorKey::new("demo/app", "testee", "r1");
    let actor = format!("http://{addr}/_shim/actors/testee/r1");
    let first = json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "exec", "sql": "INSERT INTO t VALUES (1)"}]);
    assert_eq!(ops_on(&nodes[0], &key, first).await, 200);
    let second = json!([{"op": "exec", "sql": "INSERT INTO t VALUES (2)"}]);
    assert_eq!(ops_on(&nodes[0], &key, second).await, 200);
    let (_, _, h) = call("GET", &format!("{actor}/history"), None).await;
    let first_bookmark = h["records"][0]["bookmark"].as_str().expect("a bookmark").to_owned();
    let (status, _, r) = call(
        "POST",
        &format!("{actor}/restore"),
        Some(json!({ "to": first_bookmark })),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let count = json!([{"op": "query", "sql": "SELECT count(*) FROM t"}]);
    let rows = |nodes: &[Runtime]| {
        let (rt, k) = (nodes[0].clone(), key.clone());
        let body = json!({ "ops": count.clone() }).to_string();
        tokio::task::spawn_blocking(move || {
            let r = rt.request_blocking(&k, wasmkeep_shim::HttpRequest::new("POST", "/", body.into_bytes()));
            rt.settle(&k);
            r.expect("request").text()
        })
    };
    assert!(
        rows(&nodes).await.expect("task").contains(r#"{"integer":"1"}"#),
        "one row, as at the first bookmark"
    );
    let (status, _, undone) = call("POST", &format!("{actor}/restore"), Some(json!({ "to": r["undo"] }))).await;
    assert_eq!(status, 200, "{undone}");
    assert!(
        rows(&nodes).await.expect("task").contains(r#"{"integer":"2"}"#),
        "undone: two rows"
    );
    let (status, kind, _) = call("POST", &format!("{actor}/restore"), Some(json!({ "to": 5 }))).await;
    assert_eq!(
        (status, kind.as_deref()),
        (400, Some("bad-argument")),
        "nothing was written at 5 ms"
    );
    let (status, _, _) = call("POST", &format!("{actor}/restore"), Some(json!({ "to": [] }))).await;
    assert_eq!(status, 400, "a body that names no target");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_node_with_history_shows_it_and_restores_from_it() {
    let s = start_with(true).await;
    let actor = format!("{}/_shim/actors/testee/s1", s.base);
    ops(
        &s,
        "s1",
        json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}, {"op": "exec", "sql": "INSERT INTO t VALUES (1)"}]),
    )
    .await;
    ops(&s, "s1", json!([{"op": "exec", "sql": "INSERT INTO t VALUES (2)"}])).await;
    let (status, _, h) = call("GET", &format!("{actor}/history"), None).await;
    assert_eq!(
        (status, &h["cluster"], &h["history"]),
        (200, &json!(false), &json!(true)),
        "{h}"
    );
    let first = h["records"][0]["bookmark"].as_str().expect("a bookmark").to_owned();
    let (status, _, r) = call("POST", &format!("{actor}/restore"), Some(json!({ "to": first }))).await;
    assert_eq!(status, 200, "{r}");
    let (_, _, rows) = call(
        "POST",
        &format!("{actor}/query"),
        Some(json!({"sql": "SELECT count(*) FROM t"})),
    )
    .await;
    assert_eq!(rows["rows"][0][0], json!(1), "the state at the first bookmark: {rows}");
}
