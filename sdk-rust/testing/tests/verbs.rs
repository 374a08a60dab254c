//! The harness's verbs on the counter example: restart, operator delete,
//! reset between tests.

use wasmkeep_actor_testing::{ActorTest, AdminDeleted};

fn counter() -> ActorTest {
    ActorTest::builder(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/counter-rust"))
        .class("counter")
        .start()
        .expect("the counter builds and loads")
}

#[test]
fn a_restarted_actor_recovers_from_its_database() {
    let t = counter();
    t.post("c", "/", "");
    t.restart("c");
    assert_eq!(t.get("c", "/").text(), "1");
}

#[test]
fn an_operator_delete_runs_no_guest_code_and_the_next_request_meets_a_new_actor() {
    let t = counter();
    t.post("c", "/", "");
    assert_eq!(t.operator_delete("c"), AdminDeleted::Deleted);
    assert_eq!(t.operator_delete("c"), AdminDeleted::Absent);
    assert_eq!(t.get("c", "/").text(), "0");
}

#[test]
fn a_reset_leaves_nothing_of_the_test_before() {
    let mut t = counter();
    t.post("c", "/", "");
    t.advance_clock(60_000);
    let before = t.now_ms();
    t.reset();
    assert!(!t.exists("c"), "no actor is left");
    assert!(t.now_ms() < before, "the clock is back at its start");
    assert_eq!(t.get("c", "/").text(), "0", "the class is loaded again");
}
