//! An `existing` class's actor asked for from outside while the bucket
//! cannot be listed: whether it exists is not known, so the answer is the
//! bucket's failure (503, kind `bucket`), never "no such actor" (404).
//! Before, the check took a failed listing for an empty one (issue 56).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wasmkeep_host::bucket::{BucketError, ETag, LocalDirBucket, ObjectMeta, ObjectStore, PutCondition};
use wasmkeep_host::clock::{Clock, VirtualClock};
use wasmkeep_host::{Access, ActorKey, ClassSpec, Cluster, FailureKind, HttpRequest, RuntimeConfig};

/// A bucket whose listings fail while `failing` is set.
struct ListingsFail {
    inner: LocalDirBucket,
    failing: Arc<AtomicBool>,
}

impl ObjectStore for ListingsFail {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }
    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        self.inner.put(key, body, cond)
    }
    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.inner.delete(key)
    }
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(BucketError::Unavailable("listing refused (test)".into()));
        }
        self.inner.list(prefix)
    }
}

#[test]
fn a_bucket_that_cannot_be_listed_is_a_503_not_a_404() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::default());
    let failing = Arc::new(AtomicBool::new(false));
    let bucket = Arc::new(ListingsFail {
        inner: LocalDirBucket::new(dir.path().join("bucket"), clock.clone()),
        failing: failing.clone(),
    });
    let cluster = Cluster::new(bucket, clock);
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = cluster
        .start_nodes(1, |i| RuntimeConfig {
            data_dir: dir.path().join(format!("node-{i}")),
            ..config.clone()
        })
        .expect("node")
        .remove(0);
    rt.add_app(
        "t/app",
        &[ClassSpec {
            name: "testee".into(),
            component: common::component("conformance-testee-rust"),
            access: Access::Existing,
        }],
    )
    .expect("app");
    let key = ActorKey::new("t/app", "testee", "unknown");
    // The question is asked once, by the request's worker (issue 56): the
    // answer names the kind.
    let answer = |rt: &wasmkeep_host::Runtime| {
        rt.request(&key, HttpRequest::new("GET", "/", Vec::new()))
            .expect("a request is taken; its worker asks whether the actor exists")
            .wait()
    };
    let absent = answer(&rt);
    assert_eq!(
        (absent.status, absent.failure),
        (404, Some(FailureKind::NoSuchActor)),
        "with the bucket readable, an actor never written is absent"
    );
    failing.store(true, Ordering::SeqCst);
    let unknown = answer(&rt);
    assert_eq!(
        (unknown.status, unknown.failure),
        (503, Some(FailureKind::Bucket)),
        "not known, not absent: {}",
        unknown.text()
    );
    // A socket's opening asks the same question, once.
    let socket = rt.open_socket(&key, "/");
    assert_eq!(socket.err().map(|e| e.kind()), Some(FailureKind::Bucket));
    assert_eq!(FailureKind::Bucket.status(), 503);
}
