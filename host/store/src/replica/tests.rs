use super::*;
use crate::bucket::{MemoryBucket, ObjectMeta};
use crate::clock::VirtualClock;
use crate::faults::FaultKind;
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

/// A replica of one actor on `node` over `bucket`, and a `live` that says
/// every node is.
fn replica_on(bucket: Arc<dyn ObjectStore>, node: &str) -> Replica {
    Replica::new(
        bucket,
        Arc::new(Faults::default()),
        ActorKey::new("t/a", "c", "x"),
        node,
    )
}

fn all_live(_: &str) -> bool {
    true
}

fn lossy() -> (Arc<dyn ObjectStore>, Arc<crate::bucket::LostAnswers>) {
    let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
    (inner.clone(), Arc::new(crate::bucket::LostAnswers::new(inner)))
}

/// What a node restores once `n1` let the actor go.
fn restored_by_another(inner: &Arc<dyn ObjectStore>) -> Option<Vec<u8>> {
    let mut b = replica_on(inner.clone(), "n2");
    match b.acquire(&|n| n != "n1").expect("acquire") {
        Acquired::Held { image, .. } => image,
        Acquired::HeldBy(n) => panic!("held by {n}"),
    }
}

#[test]
fn an_acquire_whose_answer_was_lost_holds_the_actor() {
    let (_, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    lossy.lose("/owners/", 1);
    let r = a.acquire(&all_live);
    assert!(
        matches!(r, Ok(Acquired::Held { .. })),
        "the record landed: held ({r:?})"
    );
    assert_eq!(lossy.lost(), 1);
    a.upload(Kind::Segment, b"one", &all_live)
        .expect("and its uploads are acknowledged");
}

#[test]
fn an_acquire_whose_record_another_node_wrote_over_is_held_by_it() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    let other = inner.clone();
    lossy.lose_then("/owners/", move || {
        let theirs = serde_json::to_vec(&OwnerRecord {
            node: "n2".into(),
            generation: 9,
            released: false,
            committed: 0,
        })
        .expect("json");
        other
            .put(
                &keys::owner(&ActorKey::new("t/a", "c", "x")),
                &theirs,
                &PutCondition::None,
            )
            .expect("n2's acquire");
    });
    let r = a.acquire(&all_live);
    assert!(
        matches!(&r, Ok(Acquired::HeldBy(n)) if n == "n2"),
        "another writer is proven: n2 holds it ({r:?})"
    );
    assert!(!a.is_held());
    assert!(inner.get(&keys::owner(a.key())).expect("get").is_some());
}

#[test]
fn an_upload_whose_answer_was_lost_is_acknowledged() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    a.upload(Kind::Segment, b"one", &all_live).expect("one");
    lossy.lose("/history/", 1);
    let pos = a
        .upload(Kind::Segment, b"two", &all_live)
        .expect("the segment landed: acknowledged");
    assert_eq!(a.head(), Some(pos));
    assert_eq!(lossy.lost(), 1);
    a.upload(Kind::Segment, b"three", &all_live).expect("and the next one");
    a.release().expect("release");
    assert_eq!(restored_by_another(&inner).as_deref(), Some(&b"three"[..]));
}

#[test]
fn an_acknowledgement_whose_answer_was_lost_is_acknowledged_and_the_next_one_too() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    lossy.lose("/owners/", 1);
    a.upload(Kind::Segment, b"one", &all_live)
        .expect("the record landed: acknowledged");
    assert_eq!(lossy.lost(), 1);
    a.upload(Kind::Segment, b"two", &all_live)
        .expect("the next upload is acknowledged on the ETag read back");
    a.release().expect("release");
    assert_eq!(restored_by_another(&inner).as_deref(), Some(&b"two"[..]));
}

#[test]
fn an_acknowledgement_another_node_wrote_over_is_not_acknowledged() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    lossy.lose_then("/owners/", move || {
        let mut b = replica_on(inner.clone(), "n2");
        assert!(matches!(b.acquire(&|n| n != "n1"), Ok(Acquired::Held { .. })));
    });
    let r = a.upload(Kind::Segment, b"one", &all_live);
    assert!(
        matches!(r, Err(ReplicaError::HoldLost)),
        "another holder is proven ({r:?})"
    );
}

#[test]
fn a_delete_whose_purge_mark_answer_was_lost_is_acknowledged() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    a.upload(Kind::Segment, b"one", &all_live).expect("one");
    lossy.lose("/purges/", 1);
    let reset = a
        .delete(b"empty", &all_live)
        .expect("the mark landed: the delete goes on");
    assert_eq!(lossy.lost(), 1);
    assert!(inner.get(&keys::purge_mark(a.key())).expect("get").is_some());
    assert_eq!(a.collect_after_delete(reset, b"empty", &all_live), Ok(0));
}

#[test]
fn a_snapshot_and_a_release_whose_answers_were_lost_are_done() {
    let (inner, lossy) = lossy();
    let mut a = replica_on(lossy.clone(), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    a.upload(Kind::Segment, b"one", &all_live).expect("one");
    lossy.lose(".snap", 1);
    a.snapshot(b"one", &all_live).expect("the snapshot landed");
    lossy.lose("/owners/", 1);
    a.release().expect("the release landed");
    assert_eq!(lossy.lost(), 2);
    let record = recorded_holder(inner.as_ref(), a.key()).expect("read").expect("record");
    assert!(record.released, "released: {record:?}");
}

#[test]
fn a_write_that_landed_but_cannot_be_read_back_is_not_acknowledged() {
    let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
    let faults = Arc::new(Faults::default());
    let faulty: Arc<dyn ObjectStore> = Arc::new(crate::bucket::FaultyBucket::new(inner, faults.clone()));
    let mut a = Replica::new(faulty, faults.clone(), ActorKey::new("t/a", "c", "x"), "n1");
    assert!(matches!(a.acquire(&all_live), Ok(Acquired::Held { .. })));
    a.upload(Kind::Segment, b"one", &all_live).expect("one");
    faults.arm(FaultKind::UploadLandsButFails, 1);
    let r = a.upload(Kind::Segment, b"two", &all_live);
    assert!(
        matches!(r, Err(ReplicaError::Bucket(BucketError::Ambiguous(_)))),
        "still ambiguous: not acknowledged ({r:?})"
    );
}
