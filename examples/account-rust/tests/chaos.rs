//! The account's invariant under seeded chaos: "the external subscription is
//! cancelled only once the delete is durable", and a late webhook recreates
//! nothing. Each seed runs the account's life under its own schedule of
//! failed removals, restarts and late alarms; a failure prints the seed and
//! the schedule, and `WASMKEEP_CHAOS_SEED=<seed>` replays that run alone.

use wasmkeep_actor_testing::{ActorTest, Builder, run_chaos};

fn account() -> Builder {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR")).class("account")
}

/// One account's life, with the invariant checked at each step.
fn life(t: &ActorTest) {
    assert_eq!(t.request("acct", "PUT", "/", "pro").status, 200);
    assert_eq!(t.post("acct", "/webhook", "paid").status, 200);
    let closed = t.delete("acct", "/");
    let cancelled = t
        .logs_of("acct")
        .iter()
        .any(|l| l.message.contains("cancelling the external subscription"));
    assert!(
        !cancelled || closed.status == 200,
        "the subscription was cancelled although the delete was not known to be durable ({}: {})",
        closed.status,
        closed.text()
    );
    assert!(closed.status != 200 || cancelled, "a durable close cancels");
    let late = t.post("acct", "/webhook", "paid again");
    assert!(
        matches!(late.status, 404 | 410),
        "a late webhook is refused: {}",
        late.status
    );
    assert!(!t.exists("acct"), "and recreates nothing");
}

#[test]
fn the_account_holds_its_invariant_under_1000_seeds() {
    let ran = run_chaos(&account(), 0..1000, life)
        .expect("the host starts")
        .unwrap_or_else(|failure| panic!("{failure}"));
    assert!(
        ran == 1000 || std::env::var("WASMKEEP_CHAOS_SEED").is_ok(),
        "{ran} seeds ran"
    );
}

#[test]
fn a_variant_that_cancels_before_the_delete_is_caught() {
    let broken = account().features(&["broken-cancel-first"]);
    let failure = run_chaos(&broken, 0..1000, life)
        .expect("the host starts")
        .expect_err("the broken variant is caught");
    let report = failure.to_string();
    assert!(report.contains("seed") && report.contains("fail-removal"), "{report}");
    // The same seed replays the same run: it fails again, with the same schedule.
    let again = run_chaos(&broken, [failure.seed], life)
        .expect("the host starts")
        .expect_err("the seed fails again");
    assert_eq!(again.schedule, failure.schedule);
}
