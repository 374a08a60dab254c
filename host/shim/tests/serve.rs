//! The dev server end to end: routing, WebSockets, metrics, the admin API, bad input.

mod common;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use wasmkeep_shim::{Access, ClassSpec, Runtime, RuntimeConfig};

struct Server {
    base: String,
    _dir: tempfile::TempDir,
}

async fn start(virtual_clock: bool) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.virtual_clock = virtual_clock;
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    rt.add_app(
        "demo/app",
        &[
            ClassSpec {
                name: "counter".into(),
                component: common::component("counter-rust"),
                access: Access::Open,
            },
            ClassSpec {
                name: "testee".into(),
                component: common::component("conformance-testee-rust"),
                access: Access::Open,
            },
            ClassSpec {
                name: "hidden".into(),
                component: common::component("counter-rust"),
                access: Access::Internal,
            },
            ClassSpec {
                name: "known".into(),
                component: common::component("counter-rust"),
                access: Access::Existing,
            },
        ],
    )
    .expect("app loads");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, wasmkeep_shim::server::router(rt, "demo/app".into())).await;
    });
    Server {
        base: format!("http://{addr}"),
        _dir: dir,
    }
}

async fn send(method: reqwest::Method, url: &str, body: Option<Value>) -> (u16, String) {
    let (status, _, body) = send_for_kind(method, url, body).await;
    (status, body)
}

/// As [`send`], with the kind of failure the host answered
/// (`wasmkeep-failure`), if it did.
async fn send_for_kind(method: reqwest::Method, url: &str, body: Option<Value>) -> (u16, Option<String>, String) {
    let client = reqwest::Client::new();
    let admin_write = url.contains("/_shim/") && method != reqwest::Method::GET;
    let mut req = client.request(method, url);
    if admin_write {
        // The admin API takes JSON only on its POSTs and DELETEs.
        req = req.header("content-type", "application/json");
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let r = req.send().await.expect("request");
    let kind = r
        .headers()
        .get(wasmkeep_shim::FAILURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (r.status().as_u16(), kind, r.text().await.expect("body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_reach_actors_by_class_and_name() {
    let s = start(true).await;
    let (st, body) = send(reqwest::Method::POST, &format!("{}/counter/c1", s.base), None).await;
    assert_eq!(
        (st, body.as_str()),
        (200, "1"),
        "POST /counter/c1 increments the counter"
    );
    send(
        reqwest::Method::POST,
        &format!("{}/counter/c1/any/path?x=1", s.base),
        None,
    )
    .await;
    let (_, body) = send(reqwest::Method::GET, &format!("{}/counter/c1", s.base), None).await;
    assert_eq!(body, "2", "both requests reached the same actor");
    let (_, body) = send(reqwest::Method::GET, &format!("{}/counter/c2", s.base), None).await;
    assert_eq!(body, "0", "another name is another actor");
    let (st, body) = send(reqwest::Method::DELETE, &format!("{}/counter/c1", s.base), None).await;
    assert_eq!(
        (st, body.as_str()),
        (200, "deleted"),
        "the counter deletes itself durably"
    );
    let (_, body) = send(reqwest::Method::GET, &format!("{}/counter/c1", s.base), None).await;
    assert_eq!(body, "0", "after a delete the next request meets a new counter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_routes_get_clear_errors() {
    let s = start(true).await;
    let (st, kind, body) = send_for_kind(reqwest::Method::GET, &format!("{}/nope/x", s.base), None).await;
    assert_eq!(
        (st, kind.as_deref()),
        (404, Some("no-such-class")),
        "an unknown class is 404: {body}"
    );
    assert!(
        body.contains("nope") && body.contains("counter"),
        "the error names the class and the known ones: {body}"
    );
    let (st, body) = send(reqwest::Method::GET, &format!("{}/", s.base), None).await;
    assert_eq!(st, 404, "the root is no route");
    assert!(
        body.contains("/<class>/<name>"),
        "the error says what the routes are: {body}"
    );
    let (st, kind, body) = send_for_kind(reqwest::Method::GET, &format!("{}/hidden/x", s.base), None).await;
    assert_eq!(
        (st, kind.as_deref()),
        (404, Some("internal")),
        "an internal class is not reachable from outside: {body}"
    );
    let (st, kind, body) = send_for_kind(reqwest::Method::GET, &format!("{}/known/x", s.base), None).await;
    assert_eq!(
        (st, kind.as_deref()),
        (404, Some("no-such-actor")),
        "an existing-only class does not create actors from outside: {body}"
    );
    let (st, body) = send(reqwest::Method::GET, &format!("{}/_shim/whatever", s.base), None).await;
    assert_eq!(st, 404, "unknown admin calls are 404 and never reach an actor");
    assert!(body.contains("unknown admin call"), "{body}");
    assert!(
        body.contains("/_shim/ui"),
        "the answer names the dashboard, where a user starts: {body}"
    );
    let (st, _) = send(
        reqwest::Method::POST,
        &format!("{}/_shim/clock/advance", s.base),
        Some(json!({"minutes": 1})),
    )
    .await;
    assert_eq!(st, 400, "a malformed admin body is 400");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_api_lists_actors_tables_clock_faults_alarms() {
    let s = start(true).await;
    send(reqwest::Method::POST, &format!("{}/counter/c1", s.base), None).await;
    let (_, body) = send(reqwest::Method::GET, &format!("{}/_shim/actors", s.base), None).await;
    let v: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(v["actors"][0]["name"], "c1", "the actor is listed: {v}");
    assert_eq!(
        v["actors"][0]["status"], "resident",
        "a just-used actor is resident: {v}"
    );
    let (_, body) = send(
        reqwest::Method::GET,
        &format!("{}/_shim/actors/counter/c1/tables", s.base),
        None,
    )
    .await;
    let v: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        v["tables"]["counter"]["rows"],
        json!([[1, 1]]),
        "the admin API reads the actor's table: {v}"
    );
    send(reqwest::Method::POST, &format!("{}/_shim/hibernate", s.base), None).await;
    let (_, body) = send(reqwest::Method::GET, &format!("{}/_shim/actors", s.base), None).await;
    assert!(
        body.contains("\"hibernated\""),
        "after hibernate the actor is hibernated: {body}"
    );

    let ops = json!({"ops": [{"op": "set-alarm", "in": "1000"}]});
    send(reqwest::Method::POST, &format!("{}/testee/t", s.base), Some(ops)).await;
    let (_, body) = send(reqwest::Method::POST, &format!("{}/_shim/alarms/run", s.base), None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("json")["ran"],
        0,
        "nothing is due before the clock moves"
    );
    let (st, _) = send(
        reqwest::Method::POST,
        &format!("{}/_shim/clock/advance", s.base),
        Some(json!({"ms": 1000})),
    )
    .await;
    assert_eq!(st, 200, "the virtual clock advances");
    let (_, body) = send(reqwest::Method::POST, &format!("{}/_shim/alarms/run", s.base), None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("json")["ran"],
        1,
        "the due alarm runs"
    );

    let (st, _) = send(
        reqwest::Method::POST,
        &format!("{}/_shim/faults", s.base),
        Some(json!({"kind": "fail-removal", "count": 1})),
    )
    .await;
    assert_eq!(st, 200, "a fault is armed");
    let ops = json!({"ops": [{"op": "delete-self-durable"}]});
    let (_, body) = send(reqwest::Method::POST, &format!("{}/testee/t", s.base), Some(ops)).await;
    assert!(
        body.contains("internal"),
        "the armed fault makes the durable delete answer internal: {body}"
    );
    // The answer leaves before the event ends, and the event's end finishes the delete.
    let mut body = String::new();
    for _ in 0..100 {
        body = send(reqwest::Method::GET, &format!("{}/metrics", s.base), None).await.1;
        if body.contains("wasmkeep_actor_deletes_total{how=\"self_durable\"} 1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        body.contains("wasmkeep_actor_delete_failures_total{how=\"self_durable\"} 1"),
        "{body}"
    );
    assert!(
        body.contains("wasmkeep_actor_deletes_total{how=\"self_durable\"} 1"),
        "the event's end finished the delete: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_clock_cannot_be_advanced() {
    let s = start(false).await;
    let (st, body) = send(
        reqwest::Method::POST,
        &format!("{}/_shim/clock/advance", s.base),
        Some(json!({"ms": 1})),
    )
    .await;
    assert_eq!(st, 409, "advancing a real clock is refused");
    assert!(
        body.contains("--virtual-clock"),
        "the error says how to get a virtual clock: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websockets_deliver_socket_events_and_deletes_close_them() {
    let s = start(true).await;
    let ws_url = format!("{}/testee/room/chat", s.base.replace("http://", "ws://"));
    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url)
        .await
        .expect("websocket connects");
    ws.send(Message::Text("echo:hello".into())).await.expect("send");
    let got = tokio::time::timeout(std::time::Duration::from_secs(5), ws.next())
        .await
        .expect("an answer in time");
    assert_eq!(
        got.expect("message").expect("ok").into_text().expect("text").as_str(),
        "hello",
        "the actor echoes over the socket"
    );
    let ops = json!({"ops": [{"op": "delete-self-durable"}]});
    send(reqwest::Method::POST, &format!("{}/testee/room", s.base), Some(ops)).await;
    let got = tokio::time::timeout(std::time::Duration::from_secs(5), ws.next())
        .await
        .expect("a close in time");
    match got {
        Some(Ok(Message::Close(Some(frame)))) => {
            assert_eq!(u16::from(frame.code), 1000, "a deleted actor's sockets close with 1000");
            assert_eq!(
                frame.reason.as_str(),
                "actor deleted",
                "and the reason \"actor deleted\""
            );
        }
        other => panic!("expected a close frame, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_message_larger_than_its_read_buffer_arrives_whole() {
    // ADR 046: a connection reads 8 KiB at a time; a 1 MiB message grows
    // its buffer and still arrives as one message.
    let s = start(true).await;
    let ws_url = format!("{}/testee/room/big", s.base.replace("http://", "ws://"));
    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url)
        .await
        .expect("websocket connects");
    let big: String = std::iter::repeat_n('x', 1 << 20).collect();
    ws.send(Message::Text(format!("echo:{big}").into()))
        .await
        .expect("send");
    let got = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
        .await
        .expect("an answer in time");
    let text = got.expect("message").expect("ok").into_text().expect("text");
    assert_eq!(text.len(), big.len(), "the whole message came back");
    assert!(text.as_str() == big, "unchanged");
}

/// Sends `head` and `body` on a raw connection, stops sending, and reads the answer.
async fn raw_exchange(base: &str, head: &str, body: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(head.as_bytes()).await.expect("write head");
    s.write_all(body).await.expect("write body");
    s.shutdown().await.expect("stop sending");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_the_client_did_not_finish_is_400_and_one_over_the_limit_413() {
    let s = start(true).await;
    let answer = raw_exchange(
        &s.base,
        "POST /counter/a/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n",
        b"abc",
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 400"),
        "a body cut short is the client's fault: 400, not 413: {answer}"
    );
    let big = vec![b'x'; (16 << 20) + 1];
    let client = reqwest::Client::new();
    let r = client
        .post(format!("{}/counter/a/", s.base))
        .body(big)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 413, "a body over the limit is 413");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_cannot_answer_101_nor_frame_the_response() {
    let s = start(true).await;
    let (status, body) = send(
        reqwest::Method::POST,
        &format!("{}/testee/a/", s.base),
        Some(json!({"ops": [{"op": "respond", "status": 101}]})),
    )
    .await;
    assert_eq!(status, 500, "a 101 from a guest is refused: {body}");
    assert!(body.contains("101"), "and the body says why: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_api_refuses_cross_origin_posts_and_other_host_names() {
    let s = start(true).await;
    let client = reqwest::Client::new();
    // A page's text/plain post (no preflight) must not arm a fault.
    let r = client
        .post(format!("{}/_shim/faults", s.base))
        .header("content-type", "text/plain")
        .body(r#"{"kind": "fail-removal", "count": 1}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 415, "a text/plain post is refused");
    let (_, faults) = send(reqwest::Method::GET, &format!("{}/_shim/faults", s.base), None).await;
    assert!(faults.contains("\"fail-removal\":0"), "and armed nothing: {faults}");
    // DNS rebinding: a page on its own name that resolves to 127.0.0.1.
    let r = client
        .get(format!("{}/_shim/actors", s.base))
        .header("host", "evil.example")
        .send()
        .await
        .expect("send");
    assert_eq!(
        r.status().as_u16(),
        403,
        "a request addressed to another name is refused"
    );
    let r = client
        .get(format!("{}/_shim/actors", s.base))
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 403, "a request from another origin is refused");
    let (status, _) = send(reqwest::Method::GET, &format!("{}/counter/c1", s.base), None).await;
    assert_eq!(status, 200, "actors themselves answer as before");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_the_admin_api_needs_it() {
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
    let url = format!("http://{addr}/_shim/clock");
    let r = client.get(&url).send().await.expect("send");
    assert_eq!(r.status().as_u16(), 401, "no token: refused");
    let r = client
        .get(&url)
        .header("authorization", "Bearer s3cret")
        .header("host", "node.example")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status().as_u16(), 200, "the token opens it, whatever the name");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_api_deletes_an_actor_and_bounds_its_table_dump() {
    let s = start(true).await;
    send(reqwest::Method::POST, &format!("{}/counter/gone", s.base), None).await;
    let url = format!("{}/_shim/actors/counter/gone", s.base);
    let (st, body) = send(reqwest::Method::DELETE, &url, None).await;
    assert_eq!(st, 200, "{body}");
    assert!(body.contains("deleted"), "{body}");
    let (st, body) = send(reqwest::Method::DELETE, &url, None).await;
    assert_eq!(st, 404, "nothing left to delete: {body}");
    let (_, body) = send(reqwest::Method::GET, &format!("{}/counter/gone", s.base), None).await;
    assert_eq!(body, "0", "the next request meets a new counter");
    let (_, body) = send(reqwest::Method::GET, &format!("{}/metrics", s.base), None).await;
    assert!(
        body.contains("wasmkeep_actor_deletes_total{how=\"operator\"} 1"),
        "{body}"
    );

    let ops = json!({"ops": [
        {"op": "exec", "sql": "CREATE TABLE t(i INTEGER, g BLOB AS (zeroblob(4000000)) VIRTUAL)"},
        {"op": "exec", "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50) INSERT INTO t(i) SELECT x FROM c"},
    ]});
    send(reqwest::Method::POST, &format!("{}/testee/big", s.base), Some(ops)).await;
    let (st, body) = send(
        reqwest::Method::GET,
        &format!("{}/_shim/actors/testee/big/tables", s.base),
        None,
    )
    .await;
    assert_eq!(st, 413, "the dump is refused past 16 MiB: {}", body.len());
    assert!(body.contains("16 MiB"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_failures_carry_their_kind() {
    let s = start(false).await;
    let (st, kind, body) = send_for_kind(
        reqwest::Method::GET,
        &format!("{}/_shim/actors/counter/never-made/tables", s.base),
        None,
    )
    .await;
    assert_eq!(
        (st, kind.as_deref()),
        (404, Some("no-such-actor")),
        "an absent actor's tables: {body}"
    );
    let (st, kind, body) = send_for_kind(
        reqwest::Method::POST,
        &format!("{}/_shim/cluster/cut-off", s.base),
        None,
    )
    .await;
    assert_eq!(
        (st, kind.as_deref()),
        (409, Some("needs-cluster")),
        "cutting off a single node: {body}"
    );
}
