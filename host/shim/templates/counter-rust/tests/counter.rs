//! The counter in its own `cargo test`: the crate is built into a component
//! and runs in the whole local host (`cargo test -p counter-rust`).

use wasmkeep_actor_testing::ActorTest;

fn counter() -> ActorTest {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR"))
        .class("counter")
        .start()
        .expect("the counter builds and loads")
}

#[test]
fn a_new_counter_reads_zero_and_counts_posts() {
    let t = counter();
    assert_eq!(t.get("c", "/").text(), "0");
    assert_eq!(t.post("c", "/", "").text(), "1");
    assert_eq!(t.post("c", "/", "").text(), "2");
    assert_eq!(t.get("other", "/").text(), "0", "each name is its own actor");
}

#[test]
fn the_count_survives_hibernation_and_a_delete_starts_over() {
    let t = counter();
    t.post("c", "/", "");
    t.hibernate_all();
    assert_eq!(t.get("c", "/").text(), "1", "woken from its database");
    assert_eq!(
        t.tables("c")["counter"]["rows"],
        serde_json::json!([[{ "integer": "1" }, { "integer": "1" }]])
    );
    let r = t.delete("c", "/");
    assert_eq!((r.status, r.text()), (200, "deleted".into()));
    assert_eq!(t.get("c", "/").text(), "0", "the next request meets a new counter");
}

/// `internal`: not known to be durable, so the client is told to retry (503,
/// `retry-after`, the kind `not-acknowledged`); here the delete happened.
#[test]
fn a_failed_removal_is_internal_and_the_event_end_finishes_the_delete() {
    let t = counter();
    t.post("c", "/", "");
    t.arm_fault("fail-removal", 1);
    let r = t.delete("c", "/");
    assert_eq!(r.status, 503, "{}", r.text());
    let header = |name: &str| r.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    assert_eq!(
        (header("wasmkeep-failure"), header("retry-after")),
        (Some("not-acknowledged"), Some("1")),
        "{}",
        r.text()
    );
    assert_eq!(t.get("c", "/").text(), "0", "the delete still happened");
}
