use super::*;
use crate::bucket::MemoryBucket;
use crate::clock::VirtualClock;

fn setup() -> (Arc<dyn ObjectStore>, Arc<VirtualClock>) {
    let clock = Arc::new(VirtualClock::default());
    (Arc::new(MemoryBucket::new(clock.clone())), clock)
}

fn process(bucket: &Arc<dyn ObjectStore>, clock: &Arc<VirtualClock>, addr: &str) -> BucketLeases {
    BucketLeases::new(bucket.clone(), clock.clone(), 1_000, Some(addr.into()))
}

/// ADR 077: an idle node's renewals are a node lease every half life and
/// the control lease every half of its three lives, looking every tenth of
/// a life; one that did not land is tried again at the next look.
#[test]
fn renewals_come_at_half_a_life_and_a_failed_one_is_tried_again_at_the_next_look() {
    use crate::bucket::FaultyBucket;
    use crate::counting_bucket::{CountingBucket, Purpose, RequestCounts, Verb};
    use crate::faults::{FaultKind, Faults};
    let (inner, clock) = setup();
    let faults = Arc::new(Faults::default());
    let faulty = Arc::new(FaultyBucket::new(inner, faults.clone()));
    let counts = Arc::new(RequestCounts::default());
    let bucket: Arc<dyn ObjectStore> = Arc::new(CountingBucket::new(faulty, counts.clone()));
    let p = process(&bucket, &clock, "http://127.0.0.1:1");
    p.join("n1").expect("join");
    let puts = |purpose| counts.get(Verb::Put, purpose);
    let (lease0, control0) = (puts(Purpose::Lease), puts(Purpose::Control));
    // One simulated hour of looks, a tenth of the 1 s life apart.
    for _ in 0..36_000 {
        clock.advance(100);
        p.renew_due();
    }
    let lease = puts(Purpose::Lease) - lease0;
    let control = puts(Purpose::Control) - control0;
    assert_eq!(lease, 7_200, "a node lease renewed every half life (500 ms of 1 s)");
    assert_eq!(control, 2_400, "the control lease every half of its 3 s");
    assert!(p.leads("n1", &[]) && p.is_live("n1"));
    // A renewal the bucket refuses stays due and is tried at the next look.
    let before = puts(Purpose::Lease);
    faults.arm(FaultKind::FailUpload, 1);
    while puts(Purpose::Lease) == before {
        clock.advance(100);
        p.renew_due();
    }
    assert_eq!(faults.remaining(FaultKind::FailUpload), 0, "the renewal failed");
    clock.advance(100);
    p.renew_due();
    assert_eq!(
        puts(Purpose::Lease) - before,
        2,
        "the failed renewal, then its retry a look later"
    );
    assert!(p.is_live("n1"), "and the lease held");
}

#[test]
fn bucket_leases_meet_the_liveness_contract() {
    let (bucket, clock) = setup();
    crate::liveness::contract::check(&process(&bucket, &clock, "http://127.0.0.1:1"));
}

#[test]
fn a_lease_lapses_unless_renewed_and_others_see_it_by_the_clock() {
    let (bucket, clock) = setup();
    let p1 = process(&bucket, &clock, "http://127.0.0.1:1");
    let p2 = process(&bucket, &clock, "http://127.0.0.1:2");
    p1.join("n1").expect("join");
    assert!(p2.is_live("n1"), "another process sees the lease");
    assert_eq!(p2.address("n1").as_deref(), Some("http://127.0.0.1:1"));
    clock.advance(800);
    p1.renew();
    clock.advance(700);
    assert!(p1.is_live("n1") && p2.is_live("n1"), "a renewed lease stays live");
    clock.advance(100);
    assert!(!p1.is_live("n1"), "its own view ends early (a quarter of the lease)");
    assert!(p2.is_live("n1"), "while others still see it live");
    clock.advance(300);
    assert!(!p2.is_live("n1"), "a lease not renewed lapses");
    assert_eq!(p2.address("n1"), None, "a lapsed node is not forwarded to");
    assert!(p2.live_nodes().is_empty());
}

#[test]
fn epochs_rise_across_restarts_and_the_old_process_is_fenced() {
    let (bucket, clock) = setup();
    let old = process(&bucket, &clock, "http://127.0.0.1:1");
    old.join("n1").expect("join");
    assert_eq!(old.epoch("n1"), Some(1));
    // A restart (or a second process with the same id) while the old one still runs.
    let new = process(&bucket, &clock, "http://127.0.0.1:2");
    new.join("n1").expect("join again");
    assert_eq!(new.epoch("n1"), Some(2), "the epoch strictly increases");
    old.renew();
    assert_eq!(
        old.state("n1"),
        Some(LeaseState::Fenced),
        "the old renewal fails its condition"
    );
    assert!(!old.is_live("n1"), "and the old process is not live any more");
    new.renew();
    assert!(new.is_live("n1"));
    new.leave("n1");
    let third = process(&bucket, &clock, "http://127.0.0.1:3");
    assert!(!third.is_live("n1"), "a node that left is not live for others");
    third.join("n1").expect("join a third time");
    assert_eq!(third.epoch("n1"), Some(3));
}

#[test]
fn renewals_at_one_instant_write_different_bytes() {
    let (bucket, clock) = setup();
    let p = process(&bucket, &clock, "http://127.0.0.1:1");
    p.join("n1").expect("join");
    let before = bucket.get(&keys::node_lease("n1")).expect("get").expect("lease").0;
    p.renew();
    let after = bucket.get(&keys::node_lease("n1")).expect("get").expect("lease").0;
    assert_ne!(
        before, after,
        "a renewal at the same time still changes the body (moto's MD5 ETags)"
    );
}

#[test]
fn one_process_holds_the_control_lease_and_another_takes_it_when_it_lapses_or_is_given_up() {
    let (bucket, clock) = setup();
    let p1 = process(&bucket, &clock, "http://127.0.0.1:1");
    let p2 = process(&bucket, &clock, "http://127.0.0.1:2");
    p1.join("n1").expect("join");
    p2.join("n2").expect("join");
    assert!(p1.leads("n1", &[]) && !p2.leads("n2", &[]), "the first to join leads");
    p2.renew();
    assert!(!p2.leads("n2", &[]), "while it renews, nobody else does");
    p1.renew();
    assert!(p1.leads("n1", &[]));
    // n1 stops renewing (killed): once its control lease lapses (three
    // node leases' life), n2 takes it.
    clock.advance(2_100);
    p2.renew();
    assert!(
        !p2.leads("n2", &[]),
        "the control lease outlives a node lease (ADR 077)"
    );
    clock.advance(1_000);
    p2.renew();
    assert!(!p1.leads("n1", &[]), "a lapsed control lease leads nothing");
    assert!(p2.leads("n2", &[]), "another node takes it over");
    p1.renew();
    assert!(
        !p1.leads("n1", &[]),
        "and the old holder does not take it back while it is held"
    );
    // An ordered stop gives it up at once.
    p2.leave("n2");
    p1.renew();
    assert!(
        p1.leads("n1", &[]),
        "a control lease given up is taken at the next renewal"
    );
}

#[test]
fn a_join_survives_a_bucket_that_fails_for_a_moment() {
    use crate::faults::{FaultKind, Faults};
    let (bucket, clock) = setup();
    let faults = Arc::new(Faults::default());
    let faulty: Arc<dyn ObjectStore> = Arc::new(crate::bucket::FaultyBucket::new(bucket.clone(), faults.clone()));
    let p = process(&faulty, &clock, "http://127.0.0.1:1");
    faults.arm(FaultKind::FailUpload, 2);
    p.join("n1").expect("joins after two failed writes");
    assert_eq!(p.epoch("n1"), Some(1));
    // A write that landed but was reported failed: the lease is this process's.
    let again = process(&faulty, &clock, "http://127.0.0.1:2");
    faults.arm(FaultKind::UploadLandsButFails, 1);
    again.join("n1").expect("joins although its write was reported failed");
    assert_eq!(again.epoch("n1"), Some(2), "one epoch, not two");
    again.renew();
    assert!(again.is_live("n1"), "and renews it");
}

#[test]
fn a_renewal_whose_answer_was_lost_keeps_the_lease() {
    use crate::faults::{FaultKind, Faults};
    let (bucket, clock) = setup();
    let faults = Arc::new(Faults::default());
    let faulty: Arc<dyn ObjectStore> = Arc::new(crate::bucket::FaultyBucket::new(bucket.clone(), faults.clone()));
    let p = process(&faulty, &clock, "http://127.0.0.1:1");
    p.join("n1").expect("join");
    // The renewal lands and its answer is lost; the next one must not be
    // sent on the ETag from before it (issue 57: a 412, then fenced).
    faults.arm(FaultKind::UploadLandsButFails, 1);
    clock.advance(300);
    p.renew();
    clock.advance(300);
    p.renew();
    clock.advance(300);
    p.renew();
    assert!(p.is_live("n1"), "a healthy node keeps its lease through a lost answer");
    // Another process that joins as n1 is proven: then it is fenced.
    let other = process(&bucket, &clock, "http://127.0.0.1:2");
    other.join("n1").expect("the other joins");
    p.renew();
    assert!(!p.is_live("n1"), "fenced once another writer is proven");
}

#[test]
fn a_control_lease_whose_answers_were_lost_is_held_and_renewed() {
    let (bucket, clock) = setup();
    let lossy = Arc::new(crate::bucket::LostAnswers::new(bucket.clone()));
    let as_store: Arc<dyn ObjectStore> = lossy.clone();
    let p1 = process(&as_store, &clock, "http://127.0.0.1:1");
    let p2 = process(&bucket, &clock, "http://127.0.0.1:2");
    // The take lands and its answer is lost.
    lossy.lose(keys::CONTROL_LEASE, 1);
    p1.join("n1").expect("join");
    p2.join("n2").expect("join");
    assert_eq!(lossy.lost(), 1);
    assert!(p1.leads("n1", &[]), "the control lease landed: n1 leads");
    // Renewals that land and lose their answers, one after another.
    for _ in 0..3 {
        lossy.lose(keys::CONTROL_LEASE, 1);
        clock.advance(300);
        p1.renew();
        p2.renew();
        assert!(p1.leads("n1", &[]) && !p2.leads("n2", &[]), "n1 still leads");
    }
    assert_eq!(lossy.lost(), 4);
}

#[test]
fn a_control_lease_this_process_wrote_is_taken_back_after_an_unreadable_answer() {
    use crate::faults::{FaultKind, Faults};
    let (bucket, clock) = setup();
    let faults = Arc::new(Faults::default());
    let faulty: Arc<dyn ObjectStore> = Arc::new(crate::bucket::FaultyBucket::new(bucket.clone(), faults.clone()));
    let p1 = process(&faulty, &clock, "http://127.0.0.1:1");
    p1.join("n1").expect("join");
    assert!(p1.leads("n1", &[]));
    // A renewal of the control lease lands, its answer is lost, and
    // reading it back fails.
    faults.arm(FaultKind::UploadLandsButFails, 1);
    clock.advance(300);
    p1.hold_control();
    assert_eq!(faults.remaining(FaultKind::UploadLandsButFails), 0);
    clock.advance(300);
    p1.renew();
    clock.advance(300);
    p1.renew();
    assert!(
        p1.leads("n1", &[]),
        "the lease it finds is its own: renewed, not waited out"
    );
}

#[test]
fn a_join_and_a_renewal_whose_answers_were_lost_keep_the_lease() {
    let (bucket, clock) = setup();
    let lossy = Arc::new(crate::bucket::LostAnswers::new(bucket.clone()));
    let as_store: Arc<dyn ObjectStore> = lossy.clone();
    let p = process(&as_store, &clock, "http://127.0.0.1:1");
    lossy.lose(keys::NODE_LEASES, 1);
    p.join("n1").expect("join");
    assert_eq!(p.epoch("n1"), Some(1), "one epoch");
    for _ in 0..3 {
        lossy.lose(keys::NODE_LEASES, 1);
        clock.advance(300);
        p.renew();
        assert!(p.is_live("n1"));
    }
    assert_eq!(lossy.lost(), 4);
    assert_eq!(p.state("n1"), Some(LeaseState::Held));
}

#[test]
fn cutting_off_another_process_node_fences_it() {
    let (bucket, clock) = setup();
    let p1 = process(&bucket, &clock, "http://127.0.0.1:1");
    let p2 = process(&bucket, &clock, "http://127.0.0.1:2");
    p1.join("n1").expect("join");
    p2.cut_off("n1");
    assert!(!p2.is_live("n1"), "cut off from elsewhere: not live");
    p1.renew();
    assert_eq!(p1.state("n1"), Some(LeaseState::Fenced));
    assert!(!p1.is_live("n1"));
}
