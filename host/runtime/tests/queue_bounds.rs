//! Bounds on what traffic can make the host hold (ADR 012): a client that
//! does not read is closed with 1008, a client that sends faster than its
//! actor handles waits for room, a full mailbox answers 503, and an event
//! whose client went away before it started does not run.

mod common;

use serde_json::{Value, json};
use std::time::Duration;
use wasmkeep_host::{ActorKey, FailureKind, HttpRequest, Outbound, Runtime, RuntimeConfig, SocketMessage};

fn runtime(dir: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_millis(1500);
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

fn body(ops: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "ops": ops })).expect("json")
}

#[test]
fn a_client_that_reads_nothing_is_closed_with_1008_once_8_mib_wait_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "talker");
    let mut socket = rt.open_socket(&key, "/").expect("socket");
    rt.settle(&key);
    let id = socket.id.to_string();
    let mib = "x".repeat(1 << 20);
    // Ten sends of 1 MiB in one event: the ninth is over the 8 MiB limit.
    let sends: Vec<Value> = (0..10)
        .map(|_| json!({ "op": "send", "socket": id, "text": mib }))
        .collect();
    let r = rt
        .request_blocking(&key, HttpRequest::new("POST", "/", body(Value::Array(sends))))
        .expect("request");
    rt.settle(&key);
    let outcomes: Value = serde_json::from_slice(&r.body).expect("json");
    let failed = outcomes["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .filter(|o| o.get("err").is_some())
        .count();
    assert_eq!(
        failed,
        2,
        "the sends past 8 MiB fail: {}",
        r.text().chars().take(400).collect::<String>()
    );
    let mut messages = 0;
    let close = loop {
        match socket.outbound.try_recv() {
            Ok(Outbound::Message(_)) => messages += 1,
            Ok(Outbound::Close { code, reason }) => break (code, reason),
            Err(e) => panic!("no close after {messages} messages: {e}"),
        }
    };
    assert_eq!(messages, 8, "what fit in the limit is delivered");
    assert_eq!(close.0, 1008, "{close:?}");
    assert!(close.1.contains("did not read"), "{close:?}");
    // The actor heard of the close.
    let log = common::ops(
        &rt,
        &key,
        json!([{ "op": "query", "sql": "SELECT detail FROM socket_log WHERE event = 'close'" }]),
    );
    assert!(log.contains("1008"), "{log}");
}

#[test]
fn a_client_sending_faster_than_its_actor_waits_for_room() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "slow");
    let socket = rt.open_socket(&key, "/").expect("socket");
    rt.settle(&key);
    // The actor is busy for 1.5 s (an event that loops until its time limit).
    let busy = rt
        .request(&key, HttpRequest::new("POST", "/", body(json!([{ "op": "loop" }]))))
        .expect("request");
    std::thread::sleep(Duration::from_millis(100));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let half = "y".repeat(512 << 10);
    runtime.block_on(async {
        for _ in 0..2 {
            tokio::time::timeout(
                Duration::from_millis(200),
                rt.socket_message_paced(socket.id, SocketMessage::Text(half.clone())),
            )
            .await
            .expect("1 MiB may wait for the actor")
            .expect("queued");
        }
        let third = tokio::time::timeout(
            Duration::from_millis(300),
            rt.socket_message_paced(socket.id, SocketMessage::Text(half.clone())),
        )
        .await;
        assert!(third.is_err(), "a third 512 KiB waits while the actor is busy");
        // Once the actor catches up, there is room again.
        tokio::time::timeout(
            Duration::from_secs(10),
            rt.socket_message_paced(socket.id, SocketMessage::Text(half.clone())),
        )
        .await
        .expect("room once the actor caught up")
        .expect("queued");
    });
    assert_eq!(busy.wait().status, 500, "the loop timed out");
}

#[test]
fn a_full_mailbox_answers_503_with_retry_after() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "hot");
    let busy = rt
        .request(&key, HttpRequest::new("POST", "/", body(json!([{ "op": "loop" }]))))
        .expect("request");
    std::thread::sleep(Duration::from_millis(100));
    let pending: Vec<_> = (0..300)
        .map(|_| {
            rt.request(&key, HttpRequest::new("POST", "/", body(json!([]))))
                .expect("request")
        })
        .collect();
    assert_eq!(busy.wait().status, 500, "the loop timed out");
    let answers: Vec<_> = pending.into_iter().map(wasmkeep_host::PendingResponse::wait).collect();
    let ok = answers.iter().filter(|r| r.status == 200).count();
    let refused: Vec<_> = answers.iter().filter(|r| r.status == 503).collect();
    assert_eq!(ok + refused.len(), 300, "every request is answered 200 or 503");
    assert_eq!(ok, 255, "256 may wait, the running one among them");
    assert!(
        refused
            .iter()
            .all(|r| r.headers.iter().any(|(n, _)| n == "retry-after") && r.failure == Some(FailureKind::MailboxFull)),
        "{:?}",
        refused.first()
    );
}

#[test]
fn an_event_whose_waiter_went_away_before_it_started_does_not_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path());
    let key = ActorKey::new("t/app", "testee", "gone");
    common::ops(&rt, &key, json!([{ "op": "exec", "sql": "CREATE TABLE t(v)" }]));
    let busy = rt
        .request(&key, HttpRequest::new("POST", "/", body(json!([{ "op": "loop" }]))))
        .expect("request");
    std::thread::sleep(Duration::from_millis(100));
    let queued = rt
        .request(
            &key,
            HttpRequest::new(
                "POST",
                "/",
                body(json!([{ "op": "exec", "sql": "INSERT INTO t VALUES (1)" }])),
            ),
        )
        .expect("request");
    drop(queued);
    assert_eq!(busy.wait().status, 500, "the loop timed out");
    let rows = common::ops(&rt, &key, json!([{ "op": "query", "sql": "SELECT count(*) FROM t" }]));
    assert!(
        rows.contains(r#""rows":[[{"integer":"0"}]]"#),
        "the abandoned insert did not run: {rows}"
    );
}
