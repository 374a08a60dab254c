//! An event's time limit is for the guest's own work, not for the bucket's:
//! a durable write that waits longer than the limit for a slow bucket is
//! kept and answered, not interrupted after it landed (issue 57: under load,
//! the hour of lost lease answers met a 500 "the event ran longer than its
//! limit" for an increment whose write had landed).

mod common;

use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wasmkeep_host::bucket::{BucketError, ETag, LocalDirBucket, ObjectMeta, ObjectStore, PutCondition};
use wasmkeep_host::clock::{Clock, SystemClock};
use wasmkeep_host::{ActorKey, Cluster, HttpRequest, RuntimeConfig};

/// A bucket whose writes of history take `slow_ms` each while it is set.
struct SlowBucket {
    inner: LocalDirBucket,
    slow_ms: AtomicU64,
}

impl ObjectStore for SlowBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        if key.contains("/history/") {
            std::thread::sleep(Duration::from_millis(self.slow_ms.load(Ordering::Relaxed)));
        }
        self.inner.put(key, body, cond)
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.inner.delete(key)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}

#[test]
fn a_durable_write_that_waits_for_a_slow_bucket_past_the_event_limit_is_kept_and_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let bucket = Arc::new(SlowBucket {
        inner: LocalDirBucket::new(dir.path().join("bucket"), clock.clone()),
        slow_ms: AtomicU64::new(0),
    });
    let cluster = Cluster::new(bucket.clone(), clock);
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_millis(500);
    let rt = cluster
        .start_nodes(1, |_| RuntimeConfig {
            data_dir: dir.path().join("node-1"),
            ..config.clone()
        })
        .expect("node")
        .remove(0);
    common::add_testee_app(&rt);
    let key = ActorKey::new("t/app", "testee", "slow");
    let ops = |ops: serde_json::Value| {
        let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
        rt.request_blocking(&key, HttpRequest::new("POST", "/", body))
            .expect("request")
    };
    let r = ops(json!([{ "op": "exec", "sql": "CREATE TABLE t(x)" }]));
    assert_eq!(r.status, 200, "{}", r.text());
    // Each upload now takes longer than the event's whole limit.
    bucket.slow_ms.store(800, Ordering::Relaxed);
    let r = ops(json!([
        { "op": "exec-durable", "sql": "INSERT INTO t VALUES (1)" },
        { "op": "query", "sql": "SELECT count(*) AS n FROM t" },
    ]));
    assert_eq!(
        r.status,
        200,
        "the event is not interrupted for the bucket's time: {}",
        r.text()
    );
    assert!(!r.text().contains("\"error\""), "{}", r.text());
    // The guest's own time still counts: an endless loop is interrupted.
    bucket.slow_ms.store(0, Ordering::Relaxed);
    let r = ops(json!([{ "op": "loop" }]));
    assert_eq!(r.status, 500, "the guest's own time is limited: {}", r.text());
}
