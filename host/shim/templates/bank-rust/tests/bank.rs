//! The bank's rules, one at a time: idempotent operations, interest by alarm
//! (after a take-over too), and a close by durable delete.

use wasmkeep_actor_testing::ActorTest;

fn bank(nodes: usize) -> ActorTest {
    ActorTest::builder(env!("CARGO_MANIFEST_DIR"))
        .class("bank")
        .nodes(nodes)
        .start()
        .expect("the bank builds and its host starts")
}

fn balance(t: &ActorTest, node: usize) -> (i64, i64) {
    let r = t.request_on(node, "acct", "GET", "/", "");
    assert_eq!(r.status, 200, "{}", r.text());
    let v: serde_json::Value = serde_json::from_str(&r.text()).expect("a statement");
    (
        v["balance"].as_i64().expect("balance"),
        v["interest"].as_i64().expect("interest"),
    )
}

#[test]
fn an_operation_id_moves_money_once_and_a_retry_answers_the_same() {
    let t = bank(1);
    assert_eq!(t.post("acct", "/deposit?op=d1&amount=100", "").text(), "100");
    assert_eq!(t.post("acct", "/deposit?op=d1&amount=100", "").text(), "100", "a retry");
    let refused = t.post("acct", "/withdraw?op=w1&amount=500", "");
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(t.post("acct", "/withdraw?op=w2&amount=30", "").text(), "70");
    let again = t.post("acct", "/withdraw?op=w1&amount=500", "");
    assert_eq!(again.status, 409, "a refusal is kept for its id too");
    assert_eq!(balance(&t, 1), (70, 0));
    assert_eq!(t.post("acct", "/deposit?amount=5", "").status, 400, "no op id");
}

#[test]
fn interest_is_paid_daily_and_after_a_take_over_by_the_new_holder() {
    let t = bank(2);
    assert_eq!(
        t.request_on(1, "acct", "POST", "/deposit?op=d1&amount=1000", "").text(),
        "1000"
    );
    t.cut_off(1);
    assert_eq!(balance(&t, 2), (1000, 0), "node 2 takes the account over");
    t.advance_clock(24 * 3600 * 1000);
    assert_eq!(t.run_due_alarms(), 1, "the alarm fires on node 2, the new holder");
    assert_eq!(balance(&t, 2), (1010, 10));
    t.advance_clock(24 * 3600 * 1000);
    assert!(t.run_alarm("acct"), "and again the next day");
    assert_eq!(balance(&t, 2), (1020, 20));
}

#[test]
fn advancing_the_clock_running_what_falls_due_pays_each_day_s_interest() {
    let t = bank(1);
    t.post("acct", "/deposit?op=d1&amount=1000", "");
    let day = 24 * 3600 * 1000;
    assert_eq!(t.advance_clock_running_due(3 * day + 3_600_000), 3, "one alarm a day");
    assert_eq!(balance(&t, 1), (1030, 30));
    // The plain advance runs nothing; run_due_alarms then runs the one alarm due.
    t.advance_clock(2 * day);
    assert_eq!(t.run_due_alarms(), 1);
    assert_eq!(balance(&t, 1), (1040, 40));
}

#[test]
fn the_balance_and_the_interest_survive_a_restart_of_the_host() {
    let mut t = bank(1);
    t.post("acct", "/deposit?op=d1&amount=500", "");
    t.restart_host();
    t.advance_clock(24 * 3600 * 1000);
    assert_eq!(t.run_due_alarms(), 1, "the alarm is still indexed");
    assert_eq!(balance(&t, 1), (505, 5));
}

#[test]
fn a_closed_account_starts_again_empty() {
    let t = bank(1);
    t.post("acct", "/deposit?op=d1&amount=10", "");
    assert_eq!(t.delete("acct", "/").text(), "closed");
    assert_eq!(balance(&t, 1), (0, 0));
}
