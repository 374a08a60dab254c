//! The ordered shutdown (tellus's lesson): events still queued are answered at
//! once, running ones finish, sockets close with 1001, actors are released,
//! and "stopped" (the call returning) comes last.

mod common;

use serde_json::json;
use std::time::{Duration, Instant};
use wasmkeep_host::{ActorKey, CallFailure, FailureKind, HttpRequest, Outbound, Runtime, RuntimeConfig};

fn body(ops: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "ops": ops })).expect("json")
}

#[test]
fn a_shutdown_answers_what_waits_lets_what_runs_finish_and_reports_stopped_last() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_millis(1500);
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    let busy = ActorKey::new("t/app", "testee", "busy");
    let other = ActorKey::new("t/app", "testee", "other");
    rt.request_blocking(&other, HttpRequest::new("POST", "/", body(json!([{"op": "now"}]))))
        .expect("warm");
    let mut socket = rt.open_socket(&other, "/ws").expect("socket");
    rt.settle(&other);

    // A running event (it loops until its time limit) and one queued behind it.
    let running = rt
        .request(&busy, HttpRequest::new("POST", "/", body(json!([{"op": "loop"}]))))
        .expect("request");
    std::thread::sleep(Duration::from_millis(200));
    let queued = rt
        .request(&busy, HttpRequest::new("POST", "/", body(json!([{"op": "now"}]))))
        .expect("request");

    let stopper = {
        let rt = rt.clone();
        std::thread::spawn(move || {
            let s = rt.shutdown();
            (Instant::now(), s)
        })
    };
    let t0 = Instant::now();
    let q = queued.wait();
    assert_eq!(q.status, 503, "an event still queued is answered at once, not run");
    assert!(
        t0.elapsed() < Duration::from_millis(700),
        "without waiting for the running event ({:?})",
        t0.elapsed()
    );
    let r = running.wait();
    let answered_running = Instant::now();
    assert_ne!(r.status, 503, "the running event finishes with its own outcome");
    let (stopped_at, report) = stopper.join().expect("shutdown");
    assert!(
        stopped_at >= answered_running,
        "stopped is reported last: after the running event ended"
    );
    assert_eq!(report.sockets_closed, 1, "the open socket was closed");
    assert!(
        matches!(socket.outbound.try_recv(), Ok(Outbound::Close { code: 1001, .. })),
        "with 1001 going away"
    );
    assert_eq!(rt.admin().resident_count(), 0, "every actor was released");

    let after = rt
        .request_blocking(&other, HttpRequest::new("POST", "/", body(json!([{"op": "now"}]))))
        .expect("request");
    assert_eq!(after.status, 503, "after the shutdown no event runs");
    assert_eq!(after.failure, Some(FailureKind::ShuttingDown), "{}", after.text());
    let call = rt.call(&other, body(json!([]))).expect("class");
    assert!(
        matches!(
            call,
            Err(CallFailure::Failed {
                kind: FailureKind::ShuttingDown,
                ..
            })
        ),
        "and calls fail, saying why: {call:?}"
    );
}
