//! The contract every [`ActorStorage`] must pass: what the event path relies
//! on, whichever storage the runtime was built with.

use super::cluster_node::ClusterStorage;
use super::error::StorageError;
use super::open_actor::OpenActor;
use super::seam::{ActorStorage, OpenMode, Opened};
use super::single_node::SingleNodeStorage;
use crate::address::ActorKey;
use crate::deletion::{DeleteHow, DeletionStatus};
use crate::faults::{FaultKind, Faults};
use crate::sql_types::{SqlError, SqlValue};
use crate::state_store::LocalStateStore;
use std::sync::Arc;

fn open(storage: &dyn ActorStorage, key: &ActorKey, mode: OpenMode) -> Box<OpenActor> {
    match storage.open(key, mode) {
        Ok(Opened::Here(a)) => a,
        Ok(Opened::Absent) => panic!("{key} is absent"),
        Ok(Opened::Elsewhere(n)) => panic!("{key} is held by {n}"),
        Err(e) => panic!("opening {key}: {e}"),
    }
}

fn count(actor: &OpenActor) -> i64 {
    let rows = actor
        .db()
        .expect("open")
        .query("SELECT count(*) FROM t", &[])
        .expect("query")
        .rows;
    match rows.first().and_then(|r| r.first()) {
        Some(SqlValue::Integer(n)) => *n,
        other => panic!("count: {other:?}"),
    }
}

/// `fail_next_reset` arms a fault that makes the next reset fail.
fn check(storage: &dyn ActorStorage, fail_next_reset: &dyn Fn()) {
    let k = ActorKey::new("acme/shop", "cart", "u-1842");
    assert!(!storage.exists(&k).expect("exists"), "a new storage holds no actor");
    assert!(
        matches!(storage.open(&k, OpenMode::Existing), Ok(Opened::Absent)),
        "opening only an existing actor creates nothing"
    );
    assert_eq!(storage.deletion_status(&k), DeletionStatus::NotDeleted);

    // Writes kept at the end of an event survive hibernation.
    let mut a = open(storage, &k, OpenMode::Create);
    let db = a.db().expect("open");
    db.exec("CREATE TABLE t(x)", &[]).expect("create");
    db.exec("INSERT INTO t VALUES (1)", &[]).expect("insert");
    a.end_event().expect("end of event");
    a.release();
    assert!(storage.exists(&k).expect("exists"), "an actor with kept writes exists");
    assert_eq!(storage.local_actors(), vec![k.clone()], "and is listed");

    // A durable write survives giving the actor up.
    let mut a = open(storage, &k, OpenMode::Existing);
    assert_eq!(count(&a), 1, "the kept write is there after a wake");
    a.db()
        .expect("open")
        .exec_durable("INSERT INTO t VALUES (2)", &[])
        .expect("durable insert");
    a.durable_write().expect("durable write acknowledged");
    a.give_up();
    let a = open(storage, &k, OpenMode::Existing);
    assert_eq!(count(&a), 2, "an acknowledged durable write is never lost");

    // A resting actor (ADR 045) keeps its hold: its database closed between
    // events and opened again for the next, whose writes are kept.
    let mut a = a;
    a.rest();
    assert!(a.open_db().is_none(), "a resting actor's database is closed");
    a.wake(1 << 30).expect("opened again");
    a.db()
        .expect("open")
        .exec("INSERT INTO t VALUES (3)", &[])
        .expect("insert");
    a.end_event().expect("end of event");
    a.rest();
    a.release();
    let a = open(storage, &k, OpenMode::Existing);
    assert_eq!(count(&a), 3, "a write after a rest is kept");

    // A failed reset: storage closed for the event, a retry succeeds.
    let mut a = a;
    fail_next_reset();
    assert!(
        a.reset(DeleteHow::SelfDurable, 1_000).is_err(),
        "the armed fault fails the reset"
    );
    assert!(
        matches!(a.db(), Err(SqlError::NotAllowed(_))),
        "storage stays closed after a failed reset"
    );
    a.reset(DeleteHow::SelfDurable, 2_000)
        .expect("a retry records the delete");
    assert!(a.deleted_in_event(), "the reset is recorded");
    assert!(
        matches!(a.db(), Err(SqlError::NotAllowed(_))),
        "a deleted database is refused"
    );
    a.finish_delete(DeleteHow::SelfDurable, 2_000)
        .expect("finish the delete");
    assert!(!storage.exists(&k).expect("exists"), "a deleted actor does not exist");
    assert!(
        matches!(storage.open(&k, OpenMode::Existing), Ok(Opened::Absent)),
        "nor opens without being created"
    );
    assert!(
        matches!(storage.deletion_status(&k), DeletionStatus::Deleted { ref how, .. } if how == "self_durable"),
        "positive evidence of the delete: {:?}",
        storage.deletion_status(&k)
    );

    // The address used again: a new, empty actor that knows of the deletion.
    let a = open(storage, &k, OpenMode::Create);
    assert!(
        a.db().expect("open").query("SELECT * FROM t", &[]).is_err(),
        "the new actor has none of the deleted data"
    );
    let previous = a.previous_deletion().expect("the previous deletion is known");
    assert!(previous.ends_with(" self_durable"), "{previous}");
    a.release();
}

#[test]
fn single_node_storage_meets_the_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, faults) = single_node(dir.path());
    check(&storage, &|| faults.arm(FaultKind::FailRemoval, 1));
}

#[test]
fn cluster_storage_meets_the_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, faults, _node) = cluster_node(dir.path());
    check(&storage, &|| faults.arm(FaultKind::FailUpload, 1));
}

#[test]
fn cluster_storage_of_a_node_process_meets_the_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, faults, _node) = cluster_node_with(dir.path(), Liveness::Leases);
    check(&storage, &|| faults.arm(FaultKind::FailUpload, 1));
}

#[test]
fn a_node_process_whose_lease_lapsed_holds_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, _faults, _node) = cluster_node_with(dir.path(), Liveness::Leases);
    let k = ActorKey::new("acme/shop", "cart", "u-9");
    let mut a = open(&storage, &k, OpenMode::Create);
    a.db().expect("open").exec("CREATE TABLE t(x)", &[]).expect("create");
    a.end_event().expect("kept while the lease is live");
    let clock = storage.clock_for_tests();
    clock.advance(crate::node_lease::DEFAULT_TTL_MS);
    a.db()
        .expect("open")
        .exec("INSERT INTO t VALUES (1)", &[])
        .expect("insert");
    let lapsed = a.end_event();
    assert!(
        matches!(lapsed, Err(StorageError::NotAcknowledged { .. })),
        "a lapsed lease acknowledges nothing: {lapsed:?}"
    );
    a.give_up();
    assert!(
        matches!(storage.open(&k, OpenMode::Existing), Err(StorageError::CutOff { .. })),
        "and opens nothing"
    );
}

#[test]
fn a_failed_upload_loses_only_the_events_own_writes_in_a_cluster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, faults, _node) = cluster_node(dir.path());
    let k = ActorKey::new("acme/shop", "cart", "u-7");
    let mut a = open(&storage, &k, OpenMode::Create);
    a.db().expect("open").exec("CREATE TABLE t(x)", &[]).expect("create");
    a.end_event().expect("kept");
    a.db()
        .expect("open")
        .exec("INSERT INTO t VALUES (1)", &[])
        .expect("insert");
    faults.arm(FaultKind::FailUpload, 1);
    assert!(a.end_event().is_err(), "the upload fails");
    a.give_up();
    let a = open(&storage, &k, OpenMode::Existing);
    assert_eq!(count(&a), 0, "the next event restores what the bucket holds");
    a.release();
}

/// A node's mailboxes that deliver nothing: the storage only asks whether the node is live.
struct NoMailboxes;

impl crate::cluster::NodeMailboxes for NoMailboxes {
    fn deliver(&self, _key: &ActorKey, _job: crate::job::Job) {}
}

fn single_node(dir: &std::path::Path) -> (SingleNodeStorage, Arc<Faults>) {
    let faults = Arc::new(Faults::default());
    let files = Arc::new(LocalStateStore::new(dir, faults.clone()));
    (SingleNodeStorage::new(files, Arc::default()), faults)
}

/// How the contract's cluster knows its nodes are live.
enum Liveness {
    InProcess,
    /// Leases in the bucket, as node processes (never renewed here: the test moves the clock).
    Leases,
}

/// A cluster of one live node; keep the returned mailboxes while the node is to stay live.
fn cluster_node(dir: &std::path::Path) -> (ClusterStorage, Arc<Faults>, Arc<NoMailboxes>) {
    cluster_node_with(dir, Liveness::InProcess)
}

fn cluster_node_with(dir: &std::path::Path, liveness: Liveness) -> (ClusterStorage, Arc<Faults>, Arc<NoMailboxes>) {
    let faults = Arc::new(Faults::default());
    let clock: Arc<dyn crate::clock::Clock> = Arc::new(crate::clock::VirtualClock::default());
    let bucket: Arc<dyn crate::bucket::ObjectStore> = Arc::new(crate::bucket::MemoryBucket::new(clock.clone()));
    let cluster = match liveness {
        Liveness::InProcess => crate::cluster::Cluster::new(bucket.clone(), clock),
        Liveness::Leases => {
            let leases = crate::node_lease::BucketLeases::new(
                bucket.clone(),
                clock.clone(),
                crate::node_lease::DEFAULT_TTL_MS,
                Some("http://127.0.0.1:9".into()),
            );
            crate::cluster::Cluster::with_liveness(bucket.clone(), clock, Arc::new(leases))
        }
    };
    let mailboxes = Arc::new(NoMailboxes);
    let weak: std::sync::Weak<dyn crate::cluster::NodeMailboxes> = Arc::downgrade(&mailboxes) as _;
    cluster.join("n1", weak).expect("n1 joins");
    let node_bucket = Arc::new(crate::bucket::FaultyBucket::new(bucket, faults.clone()));
    let files = Arc::new(LocalStateStore::new(dir, faults.clone()));
    let storage = ClusterStorage::new("n1".into(), cluster, node_bucket, faults.clone(), files, Arc::default());
    (storage, faults, mailboxes)
}
