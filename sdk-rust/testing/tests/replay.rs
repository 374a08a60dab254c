//! A chaos seed replays exactly on two nodes (issue 58, ADR 080): 100 seeds
//! of the bank's life (examples/bank-rust: deposits and withdrawals with
//! operation ids, a statement after each, every 5xx retried) run twice on one
//! two-node host, each seed after a reset under its schedule
//! ([`ActorTest::start_chaos`], the piece `run_chaos` runs each seed with),
//! and each seed's record must be the same both times: every answer the
//! client got (retries included), how the body ended, and the schedule
//! [`ActorTest::end_chaos`] returns. On the driver the crate's tests run
//! (the host compiled in; `WASMKEEP_HARNESS=prebuilt` runs it on the
//! harness library a project's tests load, which wraps the same test host).

use wasmkeep_actor_testing::ActorTest;

const SEEDS: u64 = 100;

/// Sends until the answer is not a 5xx, noting each answer; the last status.
fn answered(t: &ActorTest, record: &mut Vec<String>, method: &str, path: &str) -> u16 {
    let mut status = 0;
    for _ in 0..30 {
        let r = t.request("acct", method, path, "");
        record.push(format!("{method} {path}: {} {}", r.status, r.text()));
        status = r.status;
        if status < 500 {
            break;
        }
    }
    status
}

/// The bank's life, as its chaos test lives it; each answer is noted.
fn life(t: &ActorTest, record: &mut Vec<String>) {
    for i in 1..=10_i64 {
        let path = if i % 4 == 0 {
            format!("/withdraw?op=w{i}&amount={}", i * 5)
        } else {
            format!("/deposit?op=d{i}&amount={}", i * 10)
        };
        if answered(t, record, "POST", &path) != 200 {
            record.push("ended: an operation was not acknowledged".into());
            return;
        }
        if answered(t, record, "GET", "/") != 200 {
            record.push("ended: no statement".into());
            return;
        }
    }
    record.push("ended: every operation acknowledged".into());
}

fn run_seeds(t: &mut ActorTest) -> Vec<Vec<String>> {
    (0..SEEDS)
        .map(|seed| {
            t.reset();
            t.start_chaos(seed);
            let mut record = Vec::new();
            life(t, &mut record);
            record.push("the schedule:".into());
            record.extend(t.end_chaos());
            record
        })
        .collect()
}

#[test]
fn two_node_seeds_replay_their_schedule_and_every_answer() {
    let mut t = ActorTest::builder(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/bank-rust"))
        .class("bank")
        .nodes(2)
        .start()
        .expect("the bank builds and a cluster of 2 starts");
    let (first, second) = (run_seeds(&mut t), run_seeds(&mut t));
    let differ: Vec<usize> = (0..first.len()).filter(|&s| first[s] != second[s]).collect();
    let shown: Vec<String> = differ
        .iter()
        .take(3)
        .map(|&s| {
            format!(
                "seed {s}, first run:\n  {}\nsecond run:\n  {}",
                first[s].join("\n  "),
                second[s].join("\n  ")
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {SEEDS} two-node seeds did not replay: {differ:?}\n{}",
        differ.len(),
        shown.join("\n")
    );
}
