//! Deletion status: known only from positive evidence (a reset at the head of
//! the history, with its marker); absence is never "deleted"; a bucket that
//! cannot be read gives "unknown".

mod common;

use serde_json::json;

use std::time::Duration;
use wasmkeep_host::Cluster;
use wasmkeep_host::bucket::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition};
use wasmkeep_host::clock::VIRTUAL_EPOCH_MS;
use wasmkeep_host::deletion::DeletionStatus;
use wasmkeep_host::replica::deletion_status;
use wasmkeep_host::{ActorKey, Runtime, RuntimeConfig};

use common::ops;

#[test]
fn status_follows_the_head_of_the_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    let rt = Cluster::local(dir.path(), 1, &config).expect("node").nodes.remove(0);
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "a");
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "an actor never seen is not deleted (absence is no evidence)"
    );
    ops(&rt, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "a live actor is not deleted"
    );
    ops(&rt, &k, json!([{"op": "delete-self-durable"}]));
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::Deleted {
            at_ms: VIRTUAL_EPOCH_MS,
            how: "self_durable".into()
        },
        "a durable delete is known from its reset, with when and how"
    );
    ops(&rt, &k, json!([{"op": "exec", "sql": "CREATE TABLE u(x)"}]));
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "an actor created again is not deleted"
    );
    ops(&rt, &k, json!([{"op": "delete-self"}]));
    assert!(
        matches!(rt.passes().deletion_status(&k), DeletionStatus::Deleted { ref how, .. } if how == "self"),
        "delete-self is known too: {:?}",
        rt.passes().deletion_status(&k)
    );
}

struct Unreadable;

impl ObjectStore for Unreadable {
    fn get(&self, _: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        Err(BucketError::Unavailable("down".into()))
    }
    fn put(&self, _: &str, _: &[u8], _: &PutCondition) -> Result<ETag, BucketError> {
        Err(BucketError::Unavailable("down".into()))
    }
    fn delete(&self, _: &str) -> Result<(), BucketError> {
        Err(BucketError::Unavailable("down".into()))
    }
    fn list(&self, _: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        Err(BucketError::Unavailable("down".into()))
    }
}

#[test]
fn an_unreadable_bucket_gives_unknown() {
    let k = ActorKey::new("t/app", "testee", "a");
    assert!(
        matches!(deletion_status(&Unreadable, &k), DeletionStatus::Unknown { .. }),
        "unknown is never reported as deleted or not deleted"
    );
}

#[test]
fn a_single_node_knows_deletes_from_its_removal_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    let k = ActorKey::new("t/app", "testee", "a");
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "an actor never seen is not deleted"
    );
    ops(&rt, &k, json!([{"op": "exec", "sql": "CREATE TABLE t(x)"}]));
    ops(&rt, &k, json!([{"op": "delete-self"}]));
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::Deleted {
            at_ms: VIRTUAL_EPOCH_MS,
            how: "self".into()
        },
        "a finished removal leaves a record with when and how"
    );
    let again = ops(&rt, &k, json!([{"op": "previous-deletion"}]));
    assert!(
        again.contains(r#""cause":"delete-self""#),
        "the address used again tells its guest how it was deleted: {again}"
    );
    assert_eq!(
        rt.passes().deletion_status(&k),
        DeletionStatus::NotDeleted,
        "an address used again is not deleted"
    );
}
