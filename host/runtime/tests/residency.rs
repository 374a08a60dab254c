//! The resident-actor cap (ADR 012): a node keeps at most its cap of actors
//! resident, hibernating the least recently used; when as many wait for a
//! slot again, events are refused with 503 and `Retry-After`. Without a cap,
//! enough distinct names exhausted the process's memory maps or descriptors.

mod common;

use serde_json::json;
use std::time::Duration;
use wasmkeep_host::{ActorKey, FailureKind, HttpRequest, Runtime, RuntimeConfig};

fn runtime(dir: &std::path::Path, max_resident: usize) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_millis(1500);
    config.max_resident = max_resident;
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

#[test]
fn a_node_keeps_at_most_its_cap_of_actors_resident_and_loses_no_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), 4);
    let keys: Vec<ActorKey> = (0..20)
        .map(|i| ActorKey::new("t/app", "testee", format!("a{i}")))
        .collect();
    for key in &keys {
        let (status, body) = common::count_request(&rt, key);
        assert_eq!(status, 200, "{key}: {body}");
        rt.settle(key);
        assert!(
            rt.admin().resident_count() <= 4,
            "{} actors resident under a cap of 4",
            rt.admin().resident_count()
        );
    }
    // Every actor kept what it wrote through being hibernated to make room.
    for key in &keys {
        let (status, body) = common::count_request(&rt, key);
        assert_eq!(status, 200, "{key}: {body}");
        assert!(
            body.contains(r#""rows":[[{"integer":"2"}]]"#),
            "{key} counted twice: {body}"
        );
    }
}

#[test]
fn beyond_the_cap_and_its_queue_an_event_is_refused_with_retry_after() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), 1);
    let busy = ActorKey::new("t/app", "testee", "busy");
    let waiting = ActorKey::new("t/app", "testee", "waiting");
    let refused = ActorKey::new("t/app", "testee", "refused");
    // The one slot is taken by an event that runs until it times out.
    let rt1 = rt.clone();
    let b = busy.clone();
    let looping = std::thread::spawn(move || {
        let body = json!({ "ops": [{ "op": "loop" }] }).to_string();
        rt1.request_blocking(&b, HttpRequest::new("POST", "/", body))
            .expect("request")
    });
    std::thread::sleep(Duration::from_millis(300));
    // The next actor waits for the slot (the queue holds as many as the cap)...
    let rt2 = rt.clone();
    let w = waiting.clone();
    let queued = std::thread::spawn(move || common::count_request(&rt2, &w));
    std::thread::sleep(Duration::from_millis(200));
    // ...and one more is refused at once, saying when to come back.
    let started = std::time::Instant::now();
    let r = rt
        .request_blocking(
            &refused,
            HttpRequest::new("POST", "/", json!({ "ops": [] }).to_string()),
        )
        .expect("request");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "the refusal is immediate"
    );
    assert!(
        r.headers.iter().any(|(n, v)| n == "retry-after" && v == "1"),
        "a refusal says Retry-After: {:?}",
        r.headers
    );
    assert_eq!(r.failure, Some(FailureKind::Overloaded), "{}", r.text());
    let looped = looping.join().expect("thread");
    assert_eq!(looped.status, 500, "the looping event timed out: {}", looped.text());
    let (status, body) = queued.join().expect("thread");
    assert_eq!(status, 200, "the waiting actor ran once the slot was free: {body}");
    assert!(
        rt.admin()
            .metrics()
            .render()
            .contains("wasmkeep_resident_refusals_total 1"),
        "{}",
        rt.admin().metrics().render()
    );
}
