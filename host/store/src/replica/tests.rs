use super::*;
use crate::bucket::{MemoryBucket, ObjectMeta};
use crate::clock::VirtualClock;
use std::sync::Mutex;

type Hook = Box<dyn FnOnce() + Send>;

/// A bucket that runs a hook right after the first segment lands, and
/// counts the writes refused by their condition.
struct AfterSegmentLands {
    inner: Arc<dyn ObjectStore>,
    hook: Mutex<Option<Hook>>,
    refused: Mutex<usize>,
}

impl ObjectStore for AfterSegmentLands {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.inner.get(key)
    }
    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let r = self.inner.put(key, body, cond);
        if matches!(r, Err(BucketError::PreconditionFailed(_))) {
            *self.refused.lock().expect("count") += 1;
        }
        if key.ends_with(".seg") {
            let hook = self.hook.lock().expect("hook").take();
            if let Some(h) = hook {
                h();
            }
        }
        r
    }
    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.inner.delete(key)
    }
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix)
    }
}

#[test]
fn an_upload_after_another_node_acquired_is_refused_by_the_records_condition() {
    let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
    let hooked = Arc::new(AfterSegmentLands {
        inner: inner.clone(),
        hook: Mutex::new(None),
        refused: Mutex::new(0),
    });
    let key = ActorKey::new("t/a", "c", "x");
    let faults = Arc::new(Faults::default());
    let mut a = Replica::new(hooked.clone(), faults.clone(), key.clone(), "n1");
    // n1 believes itself live throughout (a paused process whose lease lapsed).
    let n1_thinks_live = |_: &str| true;
    assert!(matches!(a.acquire(&n1_thinks_live), Ok(Acquired::Held { .. })));
    a.upload(Kind::Segment, b"one", &n1_thinks_live)
        .expect("the first upload is acknowledged");
    let head_before = a.head();
    // Between n1's segment landing and its acknowledgement, n2 decides n1
    // is dead (its lease lapsed) and acquires.
    let (b_bucket, b_faults, b_key) = (inner.clone(), faults.clone(), key.clone());
    *hooked.hook.lock().expect("hook") = Some(Box::new(move || {
        let mut b = Replica::new(b_bucket, b_faults, b_key, "n2");
        let n1_dead = |n: &str| n != "n1";
        assert!(matches!(b.acquire(&n1_dead), Ok(Acquired::Held { .. })));
    }));
    let refused_before = *hooked.refused.lock().expect("count");
    let r = a.upload(Kind::Segment, b"two", &n1_thinks_live);
    assert!(matches!(r, Err(ReplicaError::HoldLost)), "not acknowledged: {r:?}");
    assert_eq!(
        *hooked.refused.lock().expect("count"),
        refused_before + 1,
        "the bucket refused the acknowledgement by its condition"
    );
    assert_eq!(a.head(), head_before, "the head n1 knows did not move");
    let record: OwnerRecord =
        serde_json::from_slice(&inner.get(&keys::owner(&key)).expect("get").expect("record").0).expect("json");
    assert_eq!(record.node, "n2", "n2 holds the actor");
    let mut b = Replica::new(inner, faults, key, "n2");
    let history = b.history().expect("history");
    let head = history.iter().rev().find(|o| o.kind != Kind::Snapshot).expect("a head");
    assert!(
        head.pos.generation > 1,
        "the head is n2's fence, above n1's late segment: {head:?}"
    );
    b.forget();
}
