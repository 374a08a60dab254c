//! The bank under seeded chaos, on one node and on two: a client deposits and
//! withdraws with operation ids, retrying every 5xx (a lost answer, a failed
//! upload, a node cut off) until it is answered, and after every answer the
//! balance is exactly what the acknowledged operations and the interest paid
//! make it. A variant whose deposits record their id only after the answer
//! went out is caught on both (on one node by the step that crashes the host
//! right after an answer), and a failing seed replays the identical record.

use wasmkeep_actor_testing::{ActorTest, Builder, HttpResponse, run_chaos};

fn bank() -> Builder {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR")).class("bank")
}

/// Sends until the answer is not a 5xx, as a client that retries would.
fn until_answered(send: impl Fn() -> HttpResponse) -> HttpResponse {
    for _ in 0..30 {
        let r = send();
        if r.status < 500 {
            return r;
        }
    }
    panic!("still failing after 30 tries")
}

fn statement(t: &ActorTest) -> (i64, i64) {
    let r = until_answered(|| t.get("acct", "/"));
    let v: serde_json::Value = serde_json::from_str(&r.text()).expect("a statement");
    (
        v["balance"].as_i64().unwrap_or(-1),
        v["interest"].as_i64().unwrap_or(-1),
    )
}

/// The account's life: each operation acknowledged once, the balance checked
/// after each.
fn life(t: &ActorTest) {
    let mut moved = 0;
    for i in 1..=10_i64 {
        let (path, delta) = if i % 4 == 0 {
            (format!("/withdraw?op=w{i}&amount={}", i * 5), -(i * 5))
        } else {
            (format!("/deposit?op=d{i}&amount={}", i * 10), i * 10)
        };
        let r = until_answered(|| t.post("acct", &path, ""));
        assert_eq!(r.status, 200, "{path}: {} {}", r.status, r.text());
        moved += delta;
        let (balance, interest) = statement(t);
        assert_eq!(
            balance,
            moved + interest,
            "after {path}: balance {balance}, expected {} ({moved} moved + {interest} interest)",
            moved + interest
        );
    }
}

#[test]
fn every_acknowledged_operation_is_kept_on_one_node_and_on_two() {
    for nodes in [1, 2] {
        let ran = run_chaos(&bank().nodes(nodes), 0..100, life)
            .expect("the host starts")
            .unwrap_or_else(|failure| panic!("{nodes} node(s): {failure}"));
        assert!(
            ran == 100 || std::env::var("WASMKEEP_CHAOS_SEED").is_ok(),
            "{ran} seeds ran"
        );
    }
}

#[test]
fn deposits_that_record_their_id_after_the_answer_are_caught_and_the_seed_replays_exactly() {
    if std::env::var("WASMKEEP_CHAOS_SEED").is_ok() {
        return; // replaying one seed of the other test
    }
    for nodes in [1, 2] {
        let broken = bank().nodes(nodes).features(&["broken-idempotency"]);
        let failure = match run_chaos(&broken, 0..100, life).expect("the host starts") {
            Err(failure) => failure,
            Ok(ran) => panic!("{nodes} node(s): the broken variant passed all {ran} seeds"),
        };
        eprintln!(
            "bank-rust: the broken variant was caught on {nodes} node(s) under seed {} ({})",
            failure.seed, failure.message
        );
        // The same seed, 20 times: the same schedule and the same numbers.
        for _ in 0..20 {
            let again = run_chaos(&broken, [failure.seed], life)
                .expect("the host starts")
                .expect_err("the seed fails again");
            assert_eq!(
                again.schedule, failure.schedule,
                "{nodes} node(s): the schedule replays"
            );
            assert_eq!(again.message, failure.message, "{nodes} node(s): the outcome replays");
        }
    }
}
