//! The account's invariant under seeded chaos: "the external subscription is
//! cancelled only once the delete is durable, and a durable close cancels",
//! and a late webhook recreates nothing. Each seed runs the account's life
//! under its own schedule (failed removals, restarts, hibernation, late
//! alarms; in a cluster also failed and ambiguous uploads, lost holds and a
//! node cut off; answers lost after the event ran), retrying each request
//! on a 500 or 503 as a client would: the
//! suite promises that retrying on `internal` is safe. A failure prints the
//! seed and the schedule, and `WASMKEEP_CHAOS_SEED=<seed>` replays that run alone.

use wasmkeep_actor_testing::{ActorTest, Builder, HttpResponse, run_chaos};

fn account() -> Builder {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR")).class("account")
}

/// How often the account logged that it cancels the subscription.
fn cancellations(t: &ActorTest) -> usize {
    t.logs_of("acct")
        .iter()
        .filter(|l| l.message.contains("cancelling the external subscription"))
        .count()
}

/// An answer the chaos schedule lost after the event ran (a real client sees
/// a 503 or a dropped connection and cannot tell).
fn is_lost(r: &HttpResponse) -> bool {
    r.headers.iter().any(|(k, v)| {
        k == wasmkeep_actor_testing::LOST_ANSWER_HEADER.0 && v == wasmkeep_actor_testing::LOST_ANSWER_HEADER.1
    })
}

/// Sends until the answer is not 500 (`internal`: not known to be done) or
/// 503 (the actor is moving between nodes), as a client that retries would.
fn until_done(send: impl Fn() -> HttpResponse) -> HttpResponse {
    for _ in 0..20 {
        let r = send();
        if !matches!(r.status, 500 | 503) {
            return r;
        }
    }
    panic!("still failing after 20 tries")
}

/// One account's life, with the invariant checked at each step.
fn life(t: &ActorTest) {
    let opened = until_done(|| t.request("acct", "PUT", "/", "pro"));
    assert_eq!(opened.status, 200, "open: {}", opened.text());
    let paid = until_done(|| t.post("acct", "/webhook", "paid"));
    assert_eq!(paid.status, 200, "an acknowledged account is kept: {}", paid.text());
    // Close, retrying on 500: no attempt that answers 500 may cancel.
    let mut tries = 0;
    let mut answer_lost = false;
    let closed = loop {
        tries += 1;
        assert!(tries <= 20, "the close still fails after 20 tries");
        let before = cancellations(t);
        let r = t.delete("acct", "/");
        answer_lost |= is_lost(&r);
        let cancelled = cancellations(t) > before;
        // A 503 after a cancel is an answer lost on the way (the delete was
        // durable); a 500 is `internal`, not known to be durable.
        assert!(
            !cancelled || matches!(r.status, 200 | 503),
            "the subscription was cancelled although the delete was not known to be durable ({}: {})",
            r.status,
            r.text()
        );
        if !matches!(r.status, 500 | 503) {
            break r;
        }
    };
    // A close retried after the answer of one that closed was lost finds the
    // account closed: 410, as a late webhook does.
    assert!(
        closed.status == 200 || (answer_lost && closed.status == 410),
        "the close ends in 200: {} {}",
        closed.status,
        closed.text()
    );
    assert!(cancellations(t) >= 1, "a durable close cancels");
    let late = until_done(|| t.post("acct", "/webhook", "paid again"));
    assert!(
        matches!(late.status, 404 | 410),
        "a late webhook is refused: {} {}",
        late.status,
        late.text()
    );
    // A host that crashed right after the refusal went out never reached the
    // event's end, which carries out its `delete_self`: the empty database
    // the webhook opened stays, but it holds no account.
    assert!(
        !t.exists("acct") || matches!(until_done(|| t.get("acct", "/")).status, 404 | 410),
        "and recreates nothing"
    );
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

#[test]
fn the_account_holds_its_invariant_in_a_cluster_under_300_seeds() {
    // Two nodes: uploads that fail or land but report failure, lost holds,
    // a node cut off, each event sent to either node.
    let ran = run_chaos(&account().nodes(2), 0..300, life)
        .expect("the cluster starts")
        .unwrap_or_else(|failure| panic!("{failure}"));
    assert!(
        ran == 300 || std::env::var("WASMKEEP_CHAOS_SEED").is_ok(),
        "{ran} seeds ran"
    );
}
