//! The account in its own `cargo test` (`cargo test -p account-rust`): a
//! webhook after the account was closed is refused and recreates nothing,
//! and the subscription is cancelled only once the delete is durable.

use wasmkeep_actor_testing::ActorTest;

fn account() -> ActorTest {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR"))
        .class("account")
        .start()
        .expect("the account builds and loads")
}

#[test]
fn a_webhook_after_the_close_is_refused_and_recreates_nothing() {
    let t = account();
    assert_eq!(t.request("a1", "PUT", "/", "pro").text(), "open, plan pro");
    assert_eq!(t.post("a1", "/webhook", "paid").text(), "recorded");
    assert_eq!(t.get("a1", "/").text(), "plan pro, 1 event(s)");
    assert_eq!(t.delete("a1", "/").text(), "closed");
    let late = t.post("a1", "/webhook", "paid again");
    assert_eq!(late.status, 410, "{}", late.text());
    assert!(!t.exists("a1"), "the late webhook left no account behind");
    assert_eq!(
        t.get("never", "/").status,
        404,
        "an address never used is simply absent"
    );
}

#[test]
fn the_subscription_is_cancelled_only_once_the_delete_is_durable() {
    let t = account();
    t.request("a2", "PUT", "/", "basic");
    t.arm_fault("fail-removal", 1);
    let r = t.delete("a2", "/");
    assert_eq!(r.status, 500, "the durable delete failed: {}", r.text());
    let cancelled = |t: &ActorTest| t.logs_of("a2").iter().any(|l| l.message.contains("cancelling"));
    assert!(!cancelled(&t), "nothing is cancelled while the delete is not durable");
}
