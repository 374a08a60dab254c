//! Bucket writes whose answers are lost (issue 57): every write the cluster
//! depends on settles an outcome it was not told by reading the key back.
//! Each test runs over the test command's moto (`WASMKEEP_TEST_S3` and the
//! AWS_* exports of scripts/s3-server.sh) through a fault proxy
//! (`wasmkeep_host_testing::fault_proxy`) that lets a write land and closes
//! the connection without its answer. Without moto each test says so and
//! passes.
//!
//! The clients of the tests in this process make no retries, so a lost
//! answer reaches the host as it is (with object_store's retries, a retried
//! conditional write is refused by its own first attempt, which the adapter
//! reports ambiguous too; an unconditional one succeeds). The node process
//! at the end runs with the clients' defaults, as `serve` does.

mod common;

use common::node_process::server_prefix;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmkeep_host_testing::fault_proxy::{FaultProxy, Rule};
use wasmkeep_shim::address::ActorKey;
use wasmkeep_shim::bucket::ObjectStore;
use wasmkeep_shim::clock::SystemClock;
use wasmkeep_shim::faults::Faults;
use wasmkeep_shim::liveness::Liveness;
use wasmkeep_shim::node_lease::{BucketLeases, LeaseState};
use wasmkeep_shim::object_store_bucket::{ObjectStoreBucket, Versioning};
use wasmkeep_shim::replica::{Acquired, Kind, Replica};

/// moto's bucket URL under a prefix of this test's own, and a fault proxy
/// in front of moto; `None` (said on stderr) without the test command's moto.
fn moto_behind_a_proxy(what: &str) -> Option<(String, FaultProxy)> {
    let url = server_prefix("WASMKEEP_TEST_S3", "scripts/s3-server.sh", what)?;
    let moto = std::env::var("AWS_ENDPOINT_URL").expect("scripts/s3-server.sh exports AWS_ENDPOINT_URL");
    let proxy = FaultProxy::start(&moto, 57).expect("the fault proxy");
    Some((url, proxy))
}

/// The bucket `url` names, reached through `proxy`, with no retries.
fn through(proxy: &FaultProxy, url: &str) -> Arc<dyn ObjectStore> {
    let (name, prefix) = url
        .strip_prefix("s3://")
        .and_then(|rest| rest.split_once('/'))
        .expect("s3://BUCKET/PREFIX");
    let s3 = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(name)
        .with_endpoint(proxy.url())
        .with_retry(object_store::RetryConfig {
            max_retries: 0,
            ..Default::default()
        })
        .build()
        .expect("s3");
    let store = object_store::prefix::PrefixStore::new(s3, prefix);
    Arc::new(ObjectStoreBucket::new(Arc::new(store), Versioning::ETag).expect("bucket"))
}

fn actor() -> ActorKey {
    ActorKey::new("t/app", "c", "a")
}

fn all_live(_: &str) -> bool {
    true
}

#[test]
fn node_and_control_leases_over_moto_survive_lost_answers() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-lease-answers") else {
        return;
    };
    let bucket = through(&proxy, &url);
    let leases = BucketLeases::new(bucket, Arc::new(SystemClock), 3_000, Some("http://127.0.0.1:1".into()));
    // The join, and the control lease taken right after it.
    proxy.add(Rule::drop_next_puts("/cluster/", 2));
    leases.join("n1").expect("the join landed");
    assert_eq!(leases.epoch("n1"), Some(1), "one epoch");
    assert!(leases.leads("n1", &[]), "the control lease landed: n1 leads");
    // Every renewal of both leases loses its answer.
    for _ in 0..4 {
        proxy.add(Rule::drop_next_puts("/cluster/", 2));
        leases.renew();
        assert_eq!(leases.state("n1"), Some(LeaseState::Held), "not fenced");
        assert!(leases.is_live("n1") && leases.leads("n1", &[]));
    }
    assert_eq!(proxy.counts().dropped, 10, "every one of them lost its answer");
}

#[test]
fn an_acquire_over_moto_whose_answer_was_lost_holds_the_actor() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-acquire-answer") else {
        return;
    };
    let mut replica = Replica::new(through(&proxy, &url), Arc::new(Faults::default()), actor(), "n1");
    proxy.add(Rule::drop_next_puts("/owners/", 1));
    let r = replica.acquire(&all_live);
    assert!(matches!(r, Ok(Acquired::Held { .. })), "held: {r:?}");
    assert_eq!(proxy.counts().dropped, 1);
    replica
        .upload(Kind::Segment, b"one", &all_live)
        .expect("and it uploads");
}

#[test]
fn uploads_and_acknowledgements_over_moto_whose_answers_were_lost_are_acknowledged() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-upload-answers") else {
        return;
    };
    let bucket = through(&proxy, &url);
    let mut replica = Replica::new(bucket.clone(), Arc::new(Faults::default()), actor(), "n1");
    assert!(matches!(replica.acquire(&all_live), Ok(Acquired::Held { .. })));
    // The history object's answer.
    proxy.add(Rule::drop_next_puts("/history/", 1));
    replica
        .upload(Kind::Segment, b"one", &all_live)
        .expect("the segment landed: acknowledged");
    // The acknowledgement's (the ownership record rewritten on its ETag).
    proxy.add(Rule::drop_next_puts("/owners/", 1));
    replica
        .upload(Kind::Segment, b"two", &all_live)
        .expect("the record landed: acknowledged");
    replica
        .upload(Kind::Segment, b"three", &all_live)
        .expect("the next one goes on the ETag read back");
    assert_eq!(proxy.counts().dropped, 2);
    replica.release().expect("release");
    let mut other = Replica::new(bucket, Arc::new(Faults::default()), actor(), "n2");
    match other.acquire(&|n| n != "n1").expect("acquire") {
        Acquired::Held { image, .. } => assert_eq!(image.as_deref(), Some(&b"three"[..])),
        Acquired::HeldBy(n) => panic!("held by {n}"),
    }
}

#[test]
fn a_delete_over_moto_whose_purge_mark_answer_was_lost_is_acknowledged() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-purge-mark-answer") else {
        return;
    };
    let mut replica = Replica::new(through(&proxy, &url), Arc::new(Faults::default()), actor(), "n1");
    assert!(matches!(replica.acquire(&all_live), Ok(Acquired::Held { .. })));
    replica.upload(Kind::Segment, b"one", &all_live).expect("one");
    proxy.add(Rule::drop_next_puts("/purges/", 1));
    let reset = replica
        .delete(b"empty", &all_live)
        .expect("the mark landed: the delete goes on");
    assert_eq!(proxy.counts().dropped, 1);
    assert_eq!(replica.collect_after_delete(reset, b"empty", &all_live), Ok(0));
}

#[test]
fn an_operator_delete_request_over_moto_whose_answer_was_lost_is_written_once() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-request-answer") else {
        return;
    };
    let bucket = through(&proxy, &url);
    let mut replica = Replica::new(bucket.clone(), Arc::new(Faults::default()), actor(), "n1");
    assert!(matches!(replica.acquire(&all_live), Ok(Acquired::Held { .. })));
    replica.upload(Kind::Segment, b"one", &all_live).expect("one");
    proxy.add(Rule::drop_next_puts("/deletes/", 1));
    let request = wasmkeep_shim::operator::request_delete(bucket.as_ref(), &actor())
        .expect("the request landed: the command goes on to wait for it");
    assert_eq!(proxy.counts().dropped, 1);
    let listed = wasmkeep_shim::operator::list(bucket.as_ref(), "t/app").expect("list");
    assert_eq!(listed, vec![wasmkeep_shim::operator::Listed::Request(request)]);
}

/// `serve --mode cluster --node-id n1` of the counter over `url`, reaching
/// the bucket through `endpoint`, with a 3 s lease: the process and its
/// base URL.
fn node_through(url: &str, endpoint: &str, dir: &std::path::Path) -> (std::process::Child, String) {
    let (mut child, base) = common::spawn_serve_with_env(
        &common::node_process::manifest(),
        dir,
        &[
            "--mode",
            "cluster",
            "--node-id",
            "n1",
            "--bucket",
            url,
            "--lease-ms",
            "3000",
        ],
        &[("AWS_ENDPOINT_URL", endpoint)],
    );
    common::drain_stderr(&mut child);
    (child, base)
}

/// Kills the node by its id when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a run of increments saw.
#[derive(Debug, Default)]
struct Served {
    /// Increments answered 200.
    answered: u64,
    /// Answers of 503 (retried).
    retried: u64,
    /// The slowest increment, retries and all.
    slowest: Duration,
}

/// Increments counter `c` through `base` for `secs`, one after another,
/// retrying a 503: every count must be one more than the last, nothing else
/// may answer, and the node must not exit. `each` runs after every count.
fn keep_incrementing(base: &str, node: &mut Killed, secs: u64, mut each: impl FnMut()) -> Served {
    let began = Instant::now();
    let mut served = Served::default();
    let mut last = None;
    while began.elapsed() < Duration::from_secs(secs) {
        let asked = Instant::now();
        let count = loop {
            let (status, body) = common::http("POST", &format!("{base}/counter/c/"));
            if status == 200 {
                break body.trim().parse::<u64>().expect("a count");
            }
            assert_eq!(status, 503, "only a retryable failure: {body}");
            assert!(asked.elapsed() < Duration::from_secs(10), "no answer for 10 s: {body}");
            served.retried += 1;
            std::thread::sleep(Duration::from_millis(50));
        };
        served.slowest = served.slowest.max(asked.elapsed());
        if let Some(last) = last {
            assert_eq!(count, last + 1, "every count one more than the last");
        }
        last = Some(count);
        served.answered += 1;
        if let Some(status) = node.0.try_wait().expect("wait") {
            panic!("the node exited ({status}) after {:?}", began.elapsed());
        }
        each();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(node.0.try_wait().expect("wait").is_none(), "the node still runs");
    served
}

/// The setup: one node process with a 3 s lease, 30% of the answers
/// on `cluster/` dropped (its lease and the control lease) for 20 s
/// (`WASMKEEP_LOST_ANSWERS_SECS` for longer). It must not exit, its counter
/// must answer throughout, and it keeps its epoch and the control lease.
#[test]
fn a_node_process_over_moto_with_30_percent_of_its_lease_answers_lost_keeps_serving() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-answers-node") else {
        return;
    };
    let secs: u64 = std::env::var("WASMKEEP_LOST_ANSWERS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, base) = node_through(&url, &proxy.url(), dir.path());
    let mut node = Killed(child);
    // The bucket as moto has it, not through the proxy.
    let direct = wasmkeep_shim::bucket_url::open_bucket(&url, Arc::new(SystemClock)).expect("moto");
    let deadline = Instant::now() + Duration::from_secs(10);
    while common::node_process::control_holder(direct.as_ref()).as_deref() != Some("n1") {
        assert!(Instant::now() < deadline, "n1 never took the control lease");
        std::thread::sleep(Duration::from_millis(100));
    }
    proxy.add(Rule::drop_puts("/cluster/", 30.0));
    // The control lease's renewal count: it starts again at 0 when the lease
    // is taken again, as it was when a lost answer made n1 give it up.
    let (mut renewals, mut retaken) = (0u64, 0u32);
    let served = keep_incrementing(&base, &mut node, secs, || {
        if let Ok(Some((control, _))) = wasmkeep_shim::node_lease::read_control(direct.as_ref()) {
            assert_eq!(control.node, "n1", "the only node holds the control lease");
            retaken += u32::from(control.renewals < renewals);
            renewals = control.renewals;
        }
    });
    let counts = proxy.counts();
    let (lease, _) = wasmkeep_shim::node_lease::read_lease(direct.as_ref(), "n1")
        .expect("read")
        .expect("n1's lease");
    eprintln!(
        "lost lease answers: {secs} s, {} answers dropped of {} requests to the bucket; {served:?}; \
         n1 at epoch {}, {} renewals; the control lease taken again {retaken} times",
        counts.dropped,
        counts.forwarded + counts.dropped,
        lease.epoch,
        lease.renewals
    );
    assert!(counts.dropped >= 3, "answers were dropped: {counts:?}");
    assert_eq!(lease.epoch, 1, "n1 never joined again");
    assert_eq!(retaken, 0, "n1 never gave the control lease up for a lost answer");
}

/// One node process, 30% of the answers on `state/` dropped (its actor's
/// ownership record, page sets and acknowledgements) for 10 s: every
/// increment is acknowledged, none answers a failure.
#[test]
fn a_node_process_over_moto_with_30_percent_of_its_actor_write_answers_lost_acknowledges_every_write() {
    let Some((url, proxy)) = moto_behind_a_proxy("lost-answers-writes") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (child, base) = node_through(&url, &proxy.url(), dir.path());
    let mut node = Killed(child);
    proxy.add(Rule::drop_puts("/state/", 30.0));
    let served = keep_incrementing(&base, &mut node, 10, || {});
    let counts = proxy.counts();
    eprintln!(
        "lost write answers: 10 s, {} answers dropped of {} requests to the bucket; {served:?}",
        counts.dropped,
        counts.forwarded + counts.dropped,
    );
    assert!(counts.dropped >= 3, "answers were dropped: {counts:?}");
}
