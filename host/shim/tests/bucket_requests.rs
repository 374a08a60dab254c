//! A node process counts its bucket requests by purpose in `/metrics`
//! (`wasmkeep_bucket_requests_total`, issue 57): what an idle node and an
//! acknowledged write cost. `scripts/node-processes-bench.sh` prints them per
//! idle node-hour and per write.

mod common;

use common::node_process::{start_app, testee_manifest};
use std::collections::HashMap;

/// `(verb, purpose) -> count` from the node's `/metrics`.
fn bucket_requests(base: &str) -> HashMap<(String, String), u64> {
    let (status, text) = common::http("GET", &format!("{base}/metrics"));
    assert_eq!(status, 200, "{text}");
    text.lines()
        .filter_map(|l| l.strip_prefix("wasmkeep_bucket_requests_total{"))
        .filter_map(|l| {
            let (labels, n) = l.rsplit_once("} ")?;
            let field = |name: &str| {
                labels
                    .split(&format!("{name}=\""))
                    .nth(1)?
                    .split('"')
                    .next()
                    .map(str::to_owned)
            };
            Some(((field("verb")?, field("purpose")?), n.parse().ok()?))
        })
        .collect()
}

fn count(c: &HashMap<(String, String), u64>, verb: &str, purpose: &str) -> u64 {
    c.get(&(verb.to_owned(), purpose.to_owned())).copied().unwrap_or(0)
}

#[test]
fn a_node_process_counts_its_bucket_requests_by_purpose() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let n1 = start_app(&manifest, "n1", &url, dir.path());
    let started = bucket_requests(&n1.base);
    assert!(
        count(&started, "put", "lease") >= 1,
        "joining wrote the node's lease: {started:?}"
    );
    let write = serde_json::json!({"ops": [
        {"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS c(n INTEGER)"},
        {"op": "exec", "sql": "INSERT INTO c VALUES (1)"},
        // Answered once the writes are kept: the upload is counted by then
        // (without it the answer goes out before the event's end uploads).
        {"op": "flush"}
    ]})
    .to_string();
    let post = || {
        let (status, body) = common::http_body("POST", &format!("{}/testee/w", n1.base), &write);
        assert_eq!(status, 200, "{body}");
    };
    post(); // the actor is taken (its first image, its record)
    let before = bucket_requests(&n1.base);
    const WRITES: u64 = 10;
    for _ in 0..WRITES {
        post();
    }
    let after = bucket_requests(&n1.base);
    for (verb, purpose) in [("put", "history"), ("put", "record")] {
        assert_eq!(
            count(&after, verb, purpose) - count(&before, verb, purpose),
            WRITES,
            "one {verb} for {purpose} per acknowledged write: {after:?}"
        );
    }
    assert_eq!(
        count(&after, "list", "history"),
        count(&before, "list", "history"),
        "a write lists nothing"
    );
}
