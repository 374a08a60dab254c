//! The harness's cluster mode on the counter example: forwarding, cut-off
//! and take-over, operator delete, idle expiry on the virtual clock, app delete.

use std::time::Duration;
use wasmkeep_actor_testing::ActorTest;
use wasmkeep_actor_testing::in_process_host::{HttpRequest, RuntimeError, TestHostError};

fn cluster() -> ActorTest {
    ActorTest::builder(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/counter-rust"))
        .class("counter")
        .nodes(2)
        .start()
        .expect("the counter builds and a cluster of 2 starts")
}

#[test]
fn a_node_forwards_to_the_holder_and_takes_over_when_it_is_cut_off() {
    let t = cluster();
    assert_eq!(t.request_on(1, "c", "POST", "/", "").text(), "1");
    assert_eq!(t.request_on(2, "c", "POST", "/", "").text(), "2", "forwarded to node 1");
    t.cut_off(1);
    assert_eq!(
        t.request_on(2, "c", "GET", "/", "").text(),
        "2",
        "node 2 restores the bucket's head"
    );
}

#[test]
fn an_operator_delete_and_idle_expiry_and_an_app_delete() {
    let t = cluster();
    t.request_on(1, "doomed", "POST", "/", "");
    t.request_operator_delete("doomed");
    assert_eq!(
        t.request_on(2, "doomed", "GET", "/", "").text(),
        "0",
        "deleted by the operator"
    );

    t.expire_after_idle(Some(Duration::from_secs(3600)));
    t.request_on(1, "idle", "POST", "/", "");
    t.hibernate_all();
    t.advance_clock(2 * 3600 * 1000);
    // The moving clock ran the expiry pass; running it again finds nothing left.
    let _ = t.run_expiry_passes();
    assert!(!t.exists("idle"), "an actor idle past its limit is collected");

    t.delete_app();
    let after = t
        .host()
        .request(&t.key("after").into(), HttpRequest::new("POST", "/", ""), Some(2));
    assert!(
        matches!(after, Err(TestHostError::Runtime(RuntimeError::NoSuchApp(_)))),
        "a deleted app is served no more: {after:?}"
    );
}

#[test]
fn a_cut_off_node_answers_503_even_for_an_actor_it_had_resident() {
    let t = cluster();
    assert_eq!(t.request_on(1, "r", "POST", "/", "").text(), "1");
    t.cut_off(1);
    // Node 1 still has the actor resident, but holds nothing any more: it
    // must not serve it (its writes would be lost while node 2 serves the
    // bucket's head).
    let r = t.request_on(1, "r", "POST", "/", "");
    assert_eq!(r.status, 503, "a cut-off node answers 503: {}", r.text());
    assert_eq!(
        t.request_on(2, "r", "GET", "/", "").text(),
        "1",
        "node 2 has the acknowledged count"
    );
}

#[test]
fn settling_after_a_request_wakes_nothing_on_a_node_that_never_held_the_actor() {
    let t = cluster();
    assert_eq!(t.request_on(1, "held", "POST", "/", "").text(), "1");
    // Every request settles every node; node 2 never held the actor, so the
    // settle must not start a worker (it would take a resident place there).
    let node2 = t.host().node(2).expect("node 2");
    assert_eq!(node2.admin().resident_count(), 0, "node 2 holds nothing resident");
    assert_eq!(
        t.host().node(1).expect("node 1").admin().resident_count(),
        1,
        "node 1 holds the actor"
    );
}
