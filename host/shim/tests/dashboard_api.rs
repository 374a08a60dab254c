//! The API the dashboard added under `/_shim/` (issue 26): the actors
//! overview and its live feed, one actor's info, schema, rows, whole values,
//! the read-only query, its alarm and hibernation, the counters for its
//! charts, and the page's own access rules. Failures are matched on their
//! status and kind (`wasmkeep-failure`), never on words. Over a cluster and
//! over history: dashboard_history.rs.

mod common;

use common::dashboard::{Server, call, ops, start};
use serde_json::{Value, json};
use wasmkeep_shim::{Runtime, RuntimeConfig};
fn long_text() -> String {
    "x".repeat(1000)
}

async fn fill(s: &Server, name: &str) {
    ops(
        s,
        name,
        json!([
            {"op": "exec", "sql": "CREATE TABLE t(n INTEGER, b BLOB, s TEXT)"},
            {"op": "exec", "sql": "INSERT INTO t VALUES (1, x'00ff', 'short')"},
            {"op": "exec", "sql": "INSERT INTO t VALUES (2, zeroblob(600), ?1)", "params": [{"text": long_text()}]},
            {"op": "exec", "sql": "WITH RECURSIVE c(i) AS (SELECT 3 UNION ALL SELECT i + 1 FROM c WHERE i < 120) INSERT INTO t(n) SELECT i FROM c"},
            {"op": "set-alarm", "in": "60000"},
        ]),
    )
    .await;
}

/// Waits until `name`'s last event is of `kind`: the answer to an event
/// comes before its end, which records it, in the actor's worker.
async fn await_last_event(s: &Server, name: &str, kind: &str) {
    let url = format!("{}/_shim/actors/testee/{name}/info", s.base);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, _, info) = call("GET", &url, None).await;
        if info["last"]["kind"] == kind || std::time::Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overview_lists_every_actor_with_status_alarm_sockets_and_last_event() {
    let s = start().await;
    fill(&s, "a1").await;
    await_last_event(&s, "a1", "request").await;
    let (status, kind, body) = call("GET", &format!("{}/_shim/overview", s.base), None).await;
    assert_eq!((status, kind), (200, None));
    let actors = body["actors"].as_array().expect("actors");
    assert_eq!(actors.len(), 1, "{body}");
    let a = &actors[0];
    assert_eq!(a["id"], "demo/app:testee/a1");
    assert_eq!(a["class"], "testee");
    assert_eq!(a["status"], "resident");
    assert_eq!(a["sockets"], 0);
    assert_eq!(a["alarm"].as_u64(), Some(body["now"].as_u64().expect("now") + 60_000));
    assert_eq!(a["last"]["kind"], "request");
    assert_eq!(a["last"]["outcome"], "ok");
    assert_eq!(body["virtual"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_send_the_whole_list_then_only_changes() {
    let s = start().await;
    fill(&s, "a1").await;
    await_last_event(&s, "a1", "request").await;
    let r = reqwest::Client::new()
        .get(format!("{}/_shim/events", s.base))
        .send()
        .await
        .expect("events");
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
    let mut r = r;
    let mut buf = String::new();
    let mut updates: Vec<Value> = Vec::new();
    let mut created = false;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while updates.len() < 6 && tokio::time::Instant::now() < deadline {
        let chunk = tokio::time::timeout_at(deadline, r.chunk())
            .await
            .expect("an update in time")
            .expect("bytes")
            .expect("the stream goes on");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                updates.push(serde_json::from_str(data).expect("json"));
            }
        }
        if !updates.is_empty() && !created {
            created = true;
            fill(&s, "a2").await;
        }
    }
    let first = &updates[0];
    assert_eq!(first["reset"], true);
    assert_eq!(first["upsert"].as_array().map(Vec::len), Some(1), "{first}");
    assert!(first["faults"]["fail-removal"].is_number());
    assert!(first["counters"].is_object());
    let later: Vec<&Value> = updates[1..].iter().collect();
    assert!(later.iter().all(|u| u["reset"] == false));
    let new: Vec<&Value> = later
        .iter()
        .flat_map(|u| u["upsert"].as_array().into_iter().flatten())
        .collect();
    assert!(
        new.iter().any(|a| a["name"] == "a2"),
        "the new actor came as a change: {later:?}"
    );
    assert!(
        !new.iter().any(|a| a["name"] == "a1"
            && a["last"]["kind"] == "request"
            && a["alarm"] == first["upsert"][0]["alarm"]
            && a["status"] == "resident"),
        "an unchanged actor is not sent again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_rows_values_and_info_of_one_actor() {
    let s = start().await;
    fill(&s, "a1").await;
    ops(&s, "a1", json!([{"op": "log", "message": "hello"}])).await;
    let a = format!("{}/_shim/actors/testee/a1", s.base);

    let (status, _, schema) = call("GET", &format!("{a}/schema"), None).await;
    assert_eq!(status, 200);
    let tables = schema["tables"].as_array().expect("tables");
    assert!(
        tables.contains(&json!({"name": "t", "columns": ["n", "b", "s"], "rows": 120})),
        "{schema}"
    );
    assert!(
        !tables.iter().any(|t| t["name"] == "_wasmkeep_meta"),
        "the host's own table is not listed"
    );

    let (status, _, page) = call("GET", &format!("{a}/rows/t?offset=0&limit=2"), None).await;
    assert_eq!(status, 200);
    assert_eq!(page["rows"][0], json!([1, {"blob": "00ff"}, "short"]));
    assert_eq!(
        page["rows"][1][1]["length"], 600,
        "a long blob is cut: {}",
        page["rows"][1]
    );
    assert_eq!(page["rows"][1][2]["length"], 1000, "a long text is cut");
    assert_eq!(page["rows"][1][2]["text"].as_str().map(str::len), Some(256));
    let (_, _, second) = call("GET", &format!("{a}/rows/t?offset=100&limit=50"), None).await;
    assert_eq!(second["rows"].as_array().map(Vec::len), Some(20), "the last page");
    assert_eq!(second["rows"][0][0], 101);
    let (_, _, capped) = call("GET", &format!("{a}/rows/t?limit=100000"), None).await;
    assert_eq!(capped["rows"].as_array().map(Vec::len), Some(120));

    let (status, _, whole) = call("GET", &format!("{a}/value/t?offset=1&column=s"), None).await;
    assert_eq!(status, 200);
    assert_eq!(whole["value"], json!(long_text()));
    let (_, _, blob) = call("GET", &format!("{a}/value/t?offset=1&column=b"), None).await;
    assert_eq!(blob["value"]["blob"].as_str().map(str::len), Some(1200));

    let (status, kind, _) = call("GET", &format!("{a}/rows/nope"), None).await;
    assert_eq!((status, kind.as_deref()), (404, Some("sql")));
    let (status, kind, _) = call("GET", &format!("{a}/rows/_wasmkeep_meta"), None).await;
    assert_eq!(
        (status, kind.as_deref()),
        (404, Some("sql")),
        "the host's table is not the actor's"
    );

    let (status, _, info) = call("GET", &format!("{a}/info"), None).await;
    assert_eq!(status, 200);
    assert_eq!(info["status"], "resident");
    assert_eq!(info["exists"], true);
    assert_eq!(info["sockets"], json!([]));
    assert_eq!(info["deletion"]["status"], "not-deleted");
    assert_eq!(info["logs"][0]["message"], "hello");
    await_last_event(&s, "a1", "request").await;
    let (_, _, info) = call("GET", &format!("{a}/info"), None).await;
    assert_eq!(info["last"]["outcome"], "ok");

    let none = format!("{}/_shim/actors/testee/nobody", s.base);
    for path in ["schema", "rows/t", "value/t?offset=0&column=n"] {
        let (status, kind, _) = call("GET", &format!("{none}/{path}"), None).await;
        assert_eq!((status, kind.as_deref()), (404, Some("no-such-actor")), "{path}");
    }
    let (status, _, h) = call("GET", &format!("{a}/history"), None).await;
    assert_eq!(
        (status, &h["cluster"]),
        (200, &json!(false)),
        "a single node has no bucket"
    );
    let (status, _, info) = call("GET", &format!("{none}/info"), None).await;
    assert_eq!((status, &info["exists"]), (200, &json!(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_query_box_reads_and_never_writes() {
    let s = start().await;
    fill(&s, "a1").await;
    let q = format!("{}/_shim/actors/testee/a1/query", s.base);
    let (status, _, r) = call("POST", &q, Some(json!({"sql": "SELECT count(*) AS n FROM t"}))).await;
    assert_eq!(status, 200);
    assert_eq!(
        (r["columns"].clone(), r["rows"].clone()),
        (json!(["n"]), json!([[120]]))
    );
    for sql in [
        "DELETE FROM t",
        "UPDATE t SET n = 0",
        "INSERT INTO t(n) VALUES (0)",
        "DROP TABLE t",
        "CREATE TABLE u(x)",
        "PRAGMA query_only = 0",
        "ATTACH 'elsewhere.db' AS e",
        "BEGIN IMMEDIATE",
        "VACUUM",
    ] {
        let (status, kind, _) = call("POST", &q, Some(json!({ "sql": sql }))).await;
        assert_eq!((status, kind.as_deref()), (403, Some("sql")), "{sql} is refused");
    }
    let (status, kind, _) = call("POST", &q, Some(json!({"sql": "SELEC nonsense"}))).await;
    assert_eq!((status, kind.as_deref()), (400, Some("sql")));
    let (status, kind, _) = call(
        "POST",
        &q,
        Some(json!({"sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c"})),
    )
    .await;
    assert_eq!(
        (status, kind.as_deref()),
        (503, Some("tables-too-slow")),
        "an endless query is stopped"
    );
    let (status, _, _) = call("POST", &q, Some(json!({"nosql": 1}))).await;
    assert_eq!(status, 400);
    let (_, _, r) = call("POST", &q, Some(json!({"sql": "SELECT count(*) FROM t"}))).await;
    assert_eq!(r["rows"], json!([[120]]), "nothing was written");
}

/// A resident actor holds its file exclusively (ADR 040): the page reads
/// through its mailbox, on its connection lent read-only, and the actor
/// writes after; a hibernated actor is read without being woken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_go_through_the_mailbox_and_leave_the_actor_as_it_was() {
    let s = start().await;
    fill(&s, "a1").await;
    let a = format!("{}/_shim/actors/testee/a1", s.base);
    let count = || async {
        let (status, _, r) = call(
            "POST",
            &format!("{a}/query"),
            Some(json!({"sql": "SELECT count(*) FROM t"})),
        )
        .await;
        assert_eq!(status, 200, "{r}");
        r["rows"][0][0].clone()
    };
    assert_eq!(count().await, json!(120), "read beside a resident actor");
    let (status, kind, _) = call("POST", &format!("{a}/query"), Some(json!({"sql": "DELETE FROM t"}))).await;
    assert_eq!((status, kind.as_deref()), (403, Some("sql")));
    ops(
        &s,
        "a1",
        json!([{"op": "exec", "sql": "INSERT INTO t(n) VALUES (121)"}]),
    )
    .await;
    assert_eq!(count().await, json!(121), "the actor wrote after the lent reads");

    let (status, _, _) = call("POST", &format!("{a}/hibernate"), Some(json!({}))).await;
    assert_eq!(status, 200);
    let (status, _, schema) = call("GET", &format!("{a}/schema"), None).await;
    assert_eq!(status, 200, "{schema}");
    assert_eq!(count().await, json!(121));
    let (_, _, info) = call("GET", &format!("{a}/info"), None).await;
    assert_eq!(info["status"], "hibernated", "reading did not wake it");
    ops(
        &s,
        "a1",
        json!([{"op": "exec", "sql": "INSERT INTO t(n) VALUES (122)"}]),
    )
    .await;
    assert_eq!(count().await, json!(122), "and it woke and wrote after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_its_alarm_and_hibernate_it() {
    let s = start().await;
    fill(&s, "a1").await;
    let a = format!("{}/_shim/actors/testee/a1", s.base);
    let (status, _, r) = call("POST", &format!("{a}/alarm/run"), Some(json!({}))).await;
    assert_eq!((status, &r["ran"]), (200, &json!(false)), "not due yet");
    let (status, _, _) = call(
        "POST",
        &format!("{}/_shim/clock/advance", s.base),
        Some(json!({"ms": 60_000})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, r) = call("POST", &format!("{a}/alarm/run"), Some(json!({}))).await;
    assert_eq!((status, &r["ran"]), (200, &json!(true)));
    let (_, _, info) = call("GET", &format!("{a}/info"), None).await;
    assert_eq!(
        info["last"],
        json!({"at": info["now"], "kind": "alarm", "outcome": "ok"})
    );
    assert_eq!(info["alarm"], Value::Null, "the alarm ran and was not set again");

    let (status, _, _) = call("POST", &format!("{a}/hibernate"), Some(json!({}))).await;
    assert_eq!(status, 200);
    let (_, _, info) = call("GET", &format!("{a}/info"), None).await;
    assert_eq!(info["status"], "hibernated");
    let (status, kind, _) = call(
        "POST",
        &format!("{}/_shim/actors/testee/nobody/hibernate", s.base),
        Some(json!({})),
    )
    .await;
    assert_eq!((status, kind.as_deref()), (404, Some("no-such-actor")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alarm_run_by_the_clock_is_the_last_event_with_its_outcome() {
    let s = start().await;
    fill(&s, "ok1").await;
    // on-alarm inserts into alarm_log: a CHECK that refuses every row makes it trap.
    ops(
        &s,
        "bad1",
        json!([
            {"op": "exec", "sql": "CREATE TABLE alarm_log(at TEXT CHECK (0))"},
            {"op": "set-alarm", "in": "60000"},
        ]),
    )
    .await;
    let (status, _, _) = call(
        "POST",
        &format!("{}/_shim/clock/advance", s.base),
        Some(json!({"ms": 60_000})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, ran) = call("POST", &format!("{}/_shim/alarms/run", s.base), Some(json!({}))).await;
    assert_eq!(status, 200, "{ran}");
    // `alarms/run` answers once each on-alarm returned; the event's end (and
    // its record) follows in the actor's worker a moment later.
    let last_of = |body: &Value, name: &str| {
        body["actors"]
            .as_array()
            .and_then(|v| v.iter().find(|a| a["name"] == name))
            .map(|a| a["last"].clone())
            .unwrap_or_default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let body = loop {
        let (_, _, body) = call("GET", &format!("{}/_shim/overview", s.base), None).await;
        let done = ["ok1", "bad1"].iter().all(|n| last_of(&body, n)["kind"] == "alarm");
        if done || std::time::Instant::now() > deadline {
            break body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        last_of(&body, "ok1"),
        json!({"at": body["now"], "kind": "alarm", "outcome": "ok"}),
        "{body}"
    );
    assert_eq!(
        last_of(&body, "bad1"),
        json!({"at": body["now"], "kind": "alarm", "outcome": "guest"}),
        "the failing alarm's kind: {body}"
    );
    let (_, _, info) = call("GET", &format!("{}/_shim/actors/testee/bad1/info", s.base), None).await;
    assert_eq!(info["last"]["outcome"], "guest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_from_another_actor_is_the_callees_last_event() {
    let s = start().await;
    let payload = json!({"ops": [{"op": "exec", "sql": "CREATE TABLE c(x)"}]}).to_string();
    ops(
        &s,
        "caller",
        json!([{"op": "call", "class": "testee", "name": "callee", "payload": payload}]),
    )
    .await;
    await_last_event(&s, "callee", "call").await;
    let (_, _, info) = call("GET", &format!("{}/_shim/actors/testee/callee/info", s.base), None).await;
    assert_eq!(
        (&info["last"]["kind"], &info["last"]["outcome"]),
        (&json!("call"), &json!("ok")),
        "{info}"
    );
    // A call whose on-call traps: the callee's last event says how it failed.
    let bad = json!({"ops": [{"op": "trap"}]}).to_string();
    ops(
        &s,
        "caller",
        json!([{"op": "call", "class": "testee", "name": "callee", "payload": bad}]),
    )
    .await;
    let url = format!("{}/_shim/actors/testee/callee/info", s.base);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let info = loop {
        let (_, _, info) = call("GET", &url, None).await;
        if info["last"]["outcome"] != "ok" || std::time::Instant::now() > deadline {
            break info;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(
        (&info["last"]["kind"], &info["last"]["outcome"]),
        (&json!("call"), &json!("guest")),
        "{info}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_api_refuse_other_origins() {
    let s = start().await;
    let client = reqwest::Client::new();
    let r = client.get(format!("{}/_shim/ui", s.base)).send().await.expect("page");
    assert_eq!(r.status().as_u16(), 200);
    let csp = r
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(csp.contains("frame-ancestors 'none'"), "no other site frames it: {csp}");
    for asset in ["app.js", "actors.js", "actor.js", "api.js", "charts.js", "style.css"] {
        let r = client
            .get(format!("{}/_shim/ui/{asset}", s.base))
            .send()
            .await
            .expect("asset");
        assert_eq!(r.status().as_u16(), 200, "{asset}");
    }
    let r = client
        .get(format!("{}/_shim/ui", s.base))
        .header("host", "evil.example")
        .send()
        .await
        .expect("page");
    assert_eq!(
        r.status().as_u16(),
        403,
        "a page addressed to another name (DNS rebinding)"
    );
    let r = client
        .get(format!("{}/_shim/ui", s.base))
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "navigate")
        .header("sec-fetch-dest", "document")
        .send()
        .await
        .expect("page");
    assert_eq!(r.status().as_u16(), 200, "a link from another site opens the page");
    let r = client
        .get(format!("{}/_shim/ui/app.js", s.base))
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "no-cors")
        .header("sec-fetch-dest", "script")
        .send()
        .await
        .expect("script");
    assert_eq!(r.status().as_u16(), 403, "another site cannot load its scripts");
    let r = client
        .get(format!("{}/_shim/overview", s.base))
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "navigate")
        .header("sec-fetch-dest", "document")
        .send()
        .await
        .expect("data");
    assert_eq!(r.status().as_u16(), 403, "nor open its data");

    // A page of another origin, or another port of this machine, drives nothing.
    let faults = format!("{}/_shim/faults", s.base);
    let arm = json!({"kind": "fail-removal", "count": 3}).to_string();
    for (name, value) in [
        ("origin", "http://evil.example"),
        ("origin", "null"),
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
    ] {
        let r = client
            .post(&faults)
            .header("content-type", "application/json")
            .header(name, value)
            .body(arm.clone())
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), 403, "{name}: {value}");
        let r = client
            .post(format!("{}/_shim/actors/testee/a1/hibernate", s.base))
            .header("content-type", "application/json")
            .header(name, value)
            .body("{}")
            .send()
            .await
            .expect("post");
        assert_eq!(r.status().as_u16(), 403, "{name}: {value}");
    }
    let (_, _, f) = call("GET", &faults, None).await;
    assert_eq!(f["faults"]["fail-removal"], 0, "nothing was armed");
    // The page's own requests pass.
    let r = client
        .post(&faults)
        .header("content-type", "application/json")
        .header("origin", s.base.clone())
        .header("sec-fetch-site", "same-origin")
        .body(arm)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_the_page_is_served_and_its_calls_need_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let access = wasmkeep_shim::server::AdminAccess {
        token: Some("s3cret".into()),
    };
    let app = wasmkeep_shim::server::router_with(rt, "demo/app".into(), access)
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = reqwest::Client::new();
    let r = client
        .get(format!("http://{addr}/_shim/ui"))
        .header("host", "node.example")
        .send()
        .await
        .expect("page");
    assert_eq!(
        r.status().as_u16(),
        200,
        "the page holds no data: served without the token"
    );
    for path in ["/_shim/overview", "/_shim/events", "/_shim/actors/testee/a1/info"] {
        let r = client.get(format!("http://{addr}{path}")).send().await.expect("call");
        assert_eq!(r.status().as_u16(), 401, "{path} needs the token");
    }
    let r = client
        .get(format!("http://{addr}/_shim/overview"))
        .header("authorization", "Bearer s3cret")
        .send()
        .await
        .expect("call");
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .post(format!("http://{addr}/_shim/faults"))
        .header("authorization", "Bearer s3cret")
        .header("content-type", "application/json")
        .header("origin", "http://evil.example")
        .body(json!({"kind": "fail-removal", "count": 1}).to_string())
        .send()
        .await
        .expect("call");
    assert_eq!(
        r.status().as_u16(),
        403,
        "the token does not let another origin's page in"
    );
}
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_keeps_the_counters_of_the_last_minutes_for_the_charts() {
    let s = start().await;
    fill(&s, "m1").await;
    let (status, kind, h) = call("GET", &format!("{}/_shim/metrics/history", s.base), None).await;
    assert_eq!((status, kind), (200, None), "{h}");
    assert_eq!(
        (h["every_ms"].as_u64(), h["keep_ms"].as_u64()),
        (Some(5_000), Some(600_000))
    );
    let samples = h["samples"].as_array().expect("samples");
    assert!(
        samples.len() >= 2,
        "the sample taken when the server started, and now: {h}"
    );
    let events = |s: &Value| s["counters"]["wasmkeep_events_total{kind=\"request\"}"].as_u64();
    assert_eq!(events(&samples[0]).unwrap_or(0), 0, "sampled before any event: {h}");
    assert_eq!(events(&samples[samples.len() - 1]), Some(1), "{h}");
    let at: Vec<u64> = samples.iter().filter_map(|s| s["at"].as_u64()).collect();
    assert!(
        at.len() == samples.len() && at.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {at:?}"
    );
}
