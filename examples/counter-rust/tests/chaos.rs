//! The counter `new` writes under seeded chaos, on one node and on two: a
//! client that retries every 5xx (a failed removal, an answer lost after the
//! POST counted, a failed upload, a node cut off) never sees an acknowledged
//! count undone. A retried POST may count twice (the counter has no operation
//! ids; examples/bank-rust has), but nothing acknowledged is lost: the SDK
//! answers only once the count is kept (ADR 019).
//! `WASMKEEP_CHAOS_SEED=<seed> cargo test -p counter-rust --test chaos` replays a seed.

use wasmkeep_actor_testing::{ActorTest, HttpResponse, run_chaos};

fn answered(send: impl Fn() -> HttpResponse) -> HttpResponse {
    for _ in 0..30 {
        let r = send();
        if r.status < 500 {
            return r;
        }
    }
    panic!("still failing after 30 tries")
}

fn life(t: &ActorTest) {
    let mut acknowledged = 0_u64; // the highest count a 200 showed since the last 200 DELETE
    for step in "PPGDPG".chars() {
        match step {
            'P' => {
                let r = answered(|| t.post("c", "/", ""));
                assert_eq!(r.status, 200, "POST: {}", r.text());
                let n: u64 = r.text().parse().expect("a count");
                assert!(
                    n > acknowledged,
                    "a POST answered {n} after {acknowledged} was acknowledged: an acknowledged POST was lost"
                );
                acknowledged = n;
            }
            'G' => {
                let n: u64 = answered(|| t.get("c", "/")).text().parse().expect("a count");
                assert!(
                    n >= acknowledged,
                    "GET answered {n} after {acknowledged} was acknowledged: an acknowledged POST was lost"
                );
            }
            _ => {
                let deleted = (0..30).any(|_| {
                    let r = t.delete("c", "/");
                    assert!(r.status == 200 || r.status >= 500, "DELETE: {} {}", r.status, r.text());
                    r.status == 200
                });
                assert!(deleted, "a retried DELETE never answered 200");
                acknowledged = 0;
            }
        }
    }
}

#[test]
fn nothing_acknowledged_is_lost_on_one_node_and_on_two() {
    for nodes in [1, 2] {
        let builder = ActorTest::builder(env!("CARGO_MANIFEST_DIR"))
            .class("counter")
            .nodes(nodes);
        let ran = run_chaos(&builder, 0..100, life)
            .expect("the host starts")
            .unwrap_or_else(|failure| panic!("{nodes} node(s): {failure}"));
        assert!(
            ran == 100 || std::env::var("WASMKEEP_CHAOS_SEED").is_ok(),
            "{ran} seeds ran"
        );
    }
}
