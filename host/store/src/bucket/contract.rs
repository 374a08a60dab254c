use super::*;
#[cfg(test)]
use crate::clock::VirtualClock;
#[cfg(test)]
use crate::faults::{FaultKind, Faults};
use std::path::Path;
use std::sync::Arc;

/// What a backend's clock and ETags promise beyond the contract's core.
#[derive(Debug, Clone)]
pub struct Expect {
    /// Where listings' last-modified times come from.
    pub times: Times,
    /// Whether rewriting the same bytes changes the ETag. Ours do (the
    /// ETag hashes a write counter); S3's and moto's ETag is the body's
    /// MD5, so there it does not (ADR 027), and callers must not rely on it.
    pub identical_rewrite_changes_etag: bool,
}

/// Where a backend's last-modified times come from.
#[derive(Debug, Clone, Copy)]
pub enum Times {
    /// The bucket clock it was given: exactly this time.
    Exactly(u64),
    /// The server's own clock: the wall clock, give or take this many ms.
    WallClock {
        /// How far the server's clock may be from ours.
        slack_ms: u64,
    },
}

impl Expect {
    /// Our own backends on the virtual clock: times are the bucket
    /// clock's, and every write changes the ETag.
    pub fn ours() -> Self {
        Self {
            times: Times::Exactly(crate::clock::VIRTUAL_EPOCH_MS),
            identical_rewrite_changes_etag: true,
        }
    }

    /// A store with its own clock and content-derived ETags
    /// (object_store's backends, a real server).
    pub fn server_clock() -> Self {
        Self {
            times: Times::WallClock { slack_ms: 300_000 },
            identical_rewrite_changes_etag: false,
        }
    }
}

/// Checks `b` against the contract: conditional writes, listings with
/// ETags and times, deletes; with [`Expect::ours`].
///
/// # Panics
/// Where the implementation breaks the contract.
pub fn check(b: &dyn ObjectStore) {
    check_with(b, &Expect::ours());
}

fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Checks `b` against the contract, with `expect` saying what its clock
/// and ETags promise; everything else is demanded of every backend.
///
/// # Panics
/// Where the implementation breaks the contract.
pub fn check_with(b: &dyn ObjectStore, expect: &Expect) {
    let started = wall_ms();
    assert_eq!(b.get("state/t/a/x").expect("get"), None, "a new bucket holds nothing");
    let e1 = b.put("state/t/a/x", b"one", &PutCondition::IfAbsent).expect("create");
    assert_eq!(
        b.put("state/t/a/x", b"two", &PutCondition::IfAbsent),
        Err(BucketError::PreconditionFailed("state/t/a/x".into())),
        "create-if-absent fails when the key exists"
    );
    assert_eq!(
        b.get("state/t/a/x").expect("get"),
        Some((b"one".to_vec(), e1.clone())),
        "get returns the body and ETag"
    );
    let e2 = b
        .put("state/t/a/x", b"two", &PutCondition::IfMatch(e1.clone()))
        .expect("replace");
    assert_ne!(e1, e2, "every write changes the ETag");
    assert!(
        matches!(
            b.put("state/t/a/x", b"three", &PutCondition::IfMatch(e1)),
            Err(BucketError::PreconditionFailed(_))
        ),
        "replace-if-match fails on an old ETag"
    );
    assert!(
        matches!(
            b.put("state/t/a/missing", b"four", &PutCondition::IfMatch(e2.clone())),
            Err(BucketError::PreconditionFailed(_))
        ),
        "replace-if-match fails on a missing key"
    );
    assert_eq!(b.get("state/t/a/missing").expect("get"), None, "and writes nothing");
    let rewrite: &[u8] = if expect.identical_rewrite_changes_etag {
        b"two"
    } else {
        b"two, again"
    };
    let e3 = b
        .put("state/t/a/x", rewrite, &PutCondition::None)
        .expect("unconditional");
    assert_ne!(e2, e3, "an unconditional write changes the ETag");
    b.put("state/t/a/y/z", b"z", &PutCondition::None).expect("nested");
    b.put("state/t/b/q", b"q", &PutCondition::None).expect("other app");
    let keys: Vec<String> = b.list("state/t/a/").expect("list").into_iter().map(|m| m.key).collect();
    assert_eq!(
        keys,
        vec!["state/t/a/x", "state/t/a/y/z"],
        "list gives every key under the prefix, in order"
    );
    let m = &b.list("state/t/a/x").expect("list")[0];
    assert_eq!(m.etag, e3, "listings carry the current ETag");
    match expect.times {
        Times::Exactly(ms) => assert_eq!(m.last_modified, ms, "listings carry the bucket clock's time"),
        Times::WallClock { slack_ms } => assert!(
            m.last_modified + slack_ms >= started && m.last_modified <= wall_ms() + slack_ms,
            "listings carry the server's time ({} against {started})",
            m.last_modified
        ),
    }
    b.delete("state/t/a/x").expect("delete");
    b.delete("state/t/a/x").expect("deleting an absent key is not an error");
    assert_eq!(b.get("state/t/a/x").expect("get"), None, "a deleted object is gone");
}

/// Sixteen writers race to create one key: exactly one wins, every other
/// is told the precondition failed, and the object is the winner's.
/// Each writes its own bytes (a store may answer a failed condition over
/// identical bytes as ambiguous: the retry of a write that landed).
///
/// # Panics
/// Where the implementation lets two writers create the key, or fails one
/// for another reason.
pub fn check_racing_creates(b: Arc<dyn ObjectStore>) {
    const WRITERS: usize = 16;
    let key = "state/t/race/owner";
    let start = Arc::new(std::sync::Barrier::new(WRITERS));
    let writers: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (b, start) = (b.clone(), start.clone());
            std::thread::spawn(move || {
                let body = format!("writer {i}").into_bytes();
                start.wait();
                (body.clone(), b.put(key, &body, &PutCondition::IfAbsent))
            })
        })
        .collect();
    let results: Vec<_> = writers.into_iter().map(|w| w.join().expect("writer")).collect();
    let winners: Vec<_> = results
        .iter()
        .filter_map(|(body, r)| r.as_ref().ok().map(|e| (body.clone(), e.clone())))
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one of {WRITERS} racing creates wins: {results:?}"
    );
    assert!(
        results
            .iter()
            .filter_map(|(_, r)| r.as_ref().err())
            .all(|e| matches!(e, BucketError::PreconditionFailed(_))),
        "every other create fails its precondition: {results:?}"
    );
    assert_eq!(
        b.get(key).expect("get"),
        Some(winners[0].clone()),
        "the object is the winner's, with the ETag it was told"
    );
}

/// The environment of a child writer of [`check_racing_processes`]: its number.
pub const RACE_WRITER_ENV: &str = "WASMKEEP_RACE_WRITER";
/// ... and the file whose appearance starts the race.
pub const RACE_START_ENV: &str = "WASMKEEP_RACE_START";
const RACE_ROUNDS: u64 = 25;
const RACE_COUNTER: &str = "state/t/race/counter";
const RACE_OWNER: &str = "state/t/race/processes-owner";

/// A child writer's part (in its own process): once the start file is
/// there, one create of a shared key (prints `won` if it won), then
/// [`RACE_ROUNDS`] increments of a shared counter, each a read and an
/// update on the ETag read, retried when its condition fails.
///
/// # Panics
/// The bucket failed, or the start file never came.
pub fn race_as_child(b: &dyn ObjectStore, writer: &str, start: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !start.exists() {
        assert!(std::time::Instant::now() < deadline, "the race never started");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    match b.put(
        RACE_OWNER,
        format!("writer {writer}").as_bytes(),
        &PutCondition::IfAbsent,
    ) {
        Ok(_) => println!("won"),
        Err(BucketError::PreconditionFailed(_)) => println!("lost"),
        Err(e) => panic!("a create failed otherwise: {e}"),
    }
    for _ in 0..RACE_ROUNDS {
        loop {
            let (n, cond) = match b.get(RACE_COUNTER).expect("read the counter") {
                None => (0, PutCondition::IfAbsent),
                Some((body, etag)) => (
                    String::from_utf8_lossy(&body).parse::<u64>().expect("a count"),
                    PutCondition::IfMatch(etag),
                ),
            };
            match b.put(RACE_COUNTER, (n + 1).to_string().as_bytes(), &cond) {
                Ok(_) => break,
                Err(BucketError::PreconditionFailed(_)) => {}
                Err(e) => panic!("an update failed otherwise: {e}"),
            }
        }
    }
}

/// Writers in `writers` processes (`spawn(i, start)` starts writer `i`,
/// which calls [`race_as_child`]) race on `b`'s bucket: exactly one wins
/// the create, and no increment is lost.
///
/// # Panics
/// Where the bucket let two creates win or lost an update across processes.
pub fn check_racing_processes(
    b: &dyn ObjectStore,
    writers: usize,
    start: &Path,
    spawn: impl Fn(usize) -> std::process::Child,
) {
    let children: Vec<_> = (0..writers).map(&spawn).collect();
    std::fs::write(start, b"go").expect("the start file");
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("a writer ends"))
        .collect();
    for o in &outputs {
        assert!(
            o.status.success(),
            "a writer failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let won = outputs
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l == "won"))
        .count();
    assert_eq!(won, 1, "exactly one process wins the create");
    let (body, _) = b.get(RACE_COUNTER).expect("read").expect("the counter");
    assert_eq!(
        String::from_utf8_lossy(&body),
        (RACE_ROUNDS * writers as u64).to_string(),
        "no process's increment was lost"
    );
}

#[test]
fn memory_bucket_meets_the_contract() {
    check(&MemoryBucket::new(Arc::new(VirtualClock::default())));
}

#[test]
fn a_local_dir_listing_that_cannot_read_a_directory_fails_instead_of_looking_empty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = LocalDirBucket::new(dir.path(), Arc::new(VirtualClock::default()));
    b.put("state/t/a/history/c/x/0-0.seg", b"one", &PutCondition::IfAbsent)
        .expect("put");
    assert_eq!(
        b.list("state/t/a/nothing/").expect("list").len(),
        0,
        "a missing directory is empty"
    );
    assert_eq!(
        b.list("state/t/a/history/c/x/0-0.seg/").expect("list").len(),
        0,
        "under an object: empty"
    );
    // A directory the host cannot read (as root, a link that loops stands in for EACCES).
    let history = dir.path().join("state/t/a/history");
    std::fs::remove_dir_all(&history).expect("rm");
    std::os::unix::fs::symlink(&history, &history).expect("a looping link");
    assert!(
        matches!(b.list("state/t/a/history/"), Err(BucketError::Unavailable(_))),
        "listing under an unreadable directory fails"
    );
    assert!(
        matches!(b.list("state/"), Err(BucketError::Unavailable(_))),
        "a walk that meets something it cannot read fails"
    );
}

#[test]
fn local_dir_bucket_meets_the_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    check(&LocalDirBucket::new(dir.path(), Arc::new(VirtualClock::default())));
}

#[test]
fn our_buckets_have_one_winner_among_racing_creates() {
    check_racing_creates(Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default()))));
    let dir = tempfile::tempdir().expect("tempdir");
    check_racing_creates(Arc::new(LocalDirBucket::new(
        dir.path(),
        Arc::new(VirtualClock::default()),
    )));
}

#[test]
fn a_write_read_back_is_settled_by_what_the_bucket_holds() {
    let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
    let b = LostAnswers::new(inner.clone());
    // Landed, answer lost: ours.
    b.lose("k", 1);
    let e1 = put_read_back(&b, "k", b"one", &PutCondition::IfAbsent).expect("ours landed");
    assert_eq!(inner.get("k").expect("get"), Some((b"one".to_vec(), e1.clone())));
    b.lose("k", 1);
    let e2 = put_read_back(&b, "k", b"two", &PutCondition::IfMatch(e1.clone())).expect("ours landed");
    // Landed, then another writer replaced it: proven.
    let other = inner.clone();
    b.lose_then("k", move || {
        other.put("k", b"theirs", &PutCondition::None).expect("theirs");
    });
    assert!(matches!(
        put_read_back(&b, "k", b"three", &PutCondition::IfMatch(e2)),
        Err(BucketError::PreconditionFailed(_))
    ));
    // A create that another writer's object answers: proven.
    let other = inner.clone();
    b.lose_then("n", move || {
        other.put("n", b"theirs", &PutCondition::None).expect("theirs");
    });
    assert!(matches!(
        put_read_back(&b, "n", b"mine", &PutCondition::IfAbsent),
        Err(BucketError::PreconditionFailed(_))
    ));
    // Not landed (yet) and nothing proven: still ambiguous.
    let absent = PendingWrite(inner.clone());
    assert!(matches!(
        put_read_back(&absent, "p", b"x", &PutCondition::IfAbsent),
        Err(BucketError::Ambiguous(_))
    ));
    let (_, current) = inner.get("k").expect("get").expect("k");
    assert!(matches!(
        put_read_back(&absent, "k", b"x", &PutCondition::IfMatch(current)),
        Err(BucketError::Ambiguous(_))
    ));
    assert!(matches!(
        put_read_back(&absent, "k", b"x", &PutCondition::None),
        Err(BucketError::Ambiguous(_))
    ));
    // A failed condition is not read back.
    assert!(matches!(
        put_read_back(&b, "k", b"theirs", &PutCondition::IfAbsent),
        Err(BucketError::PreconditionFailed(_))
    ));
}

/// A bucket whose writes are still on their way: nothing lands, every
/// write is ambiguous.
#[cfg(test)]
struct PendingWrite(Arc<dyn ObjectStore>);

#[cfg(test)]
impl ObjectStore for PendingWrite {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        self.0.get(key)
    }
    fn put(&self, key: &str, _: &[u8], _: &PutCondition) -> Result<ETag, BucketError> {
        Err(BucketError::Ambiguous(key.to_owned()))
    }
    fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.0.delete(key)
    }
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.0.list(prefix)
    }
}

#[test]
fn faulty_bucket_fails_as_armed() {
    let faults = Arc::new(Faults::default());
    let inner: Arc<dyn ObjectStore> = Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default())));
    let b = FaultyBucket::new(inner.clone(), faults.clone());
    faults.arm(FaultKind::FailUpload, 1);
    assert!(
        matches!(b.put("k", b"x", &PutCondition::None), Err(BucketError::Unavailable(_))),
        "fail-upload fails"
    );
    assert_eq!(inner.get("k").expect("get"), None, "and the write did not land");
    faults.arm(FaultKind::UploadLandsButFails, 1);
    assert!(
        matches!(b.put("k", b"x", &PutCondition::None), Err(BucketError::Ambiguous(_))),
        "the ambiguous case fails"
    );
    assert!(inner.get("k").expect("get").is_some(), "but the write landed");
    faults.arm(FaultKind::UploadLandsButFails, 1);
    assert!(
        matches!(
            put_read_back(&b, "k", b"y", &PutCondition::None),
            Err(BucketError::Ambiguous(_))
        ),
        "reading back does not settle upload-lands-but-fails"
    );
    assert_eq!(inner.get("k").expect("get").map(|(body, _)| body), Some(b"y".to_vec()));
    assert!(b.get("k").is_ok(), "the read after the read-back works");
    faults.arm(FaultKind::FailErase, 1);
    assert!(b.delete("k").is_err(), "fail-erase fails a delete");
    assert!(inner.get("k").expect("get").is_some(), "and the object remains");
}
