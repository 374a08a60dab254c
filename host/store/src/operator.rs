//! The operator delete (ADR 0028 §3): a request object in the bucket, carried
//! out by a node of the app, acknowledged only by the outcome the node writes
//! beside it. This module is both sides' view of the bucket: the command
//! writes a request and waits for its outcome; nodes list requests.

use crate::address::ActorKey;
use crate::bucket::{BucketError, ObjectStore, PutCondition, put_read_back};
use crate::keys;
use crate::replica::{Kind, ReplicaError, parse_history_key, read_meta};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A request (and its outcomes) expires one hour after it was written, by
/// the bucket's clock.
pub const REQUEST_TTL_MS: u64 = 3_600_000;
/// A node queues at most this many requests per pass.
pub const MAX_PER_PASS: usize = 16;
/// The host meta key of the last request carried out on this address, `<T> <id>`.
pub const META_OPERATOR_DELETE: &str = "operator_delete";

/// One operator delete request as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteRequest {
    /// The actor it names.
    pub key: ActorKey,
    /// Its 16 hex digits.
    pub id: String,
    /// When it was written (the bucket's clock, ms): orders requests of one actor.
    pub t: u64,
    /// Its key in the bucket.
    pub object: String,
}

impl DeleteRequest {
    /// The replay marker it leaves in the reset: `<T> <id>`.
    pub fn marker(&self) -> String {
        format!("{} {}", self.t, self.id)
    }

    /// Whether a marker `<T> <id>` found in the actor's database shows this
    /// request (or a later one) was already carried out.
    pub fn carried_out_by(&self, marker: &str) -> bool {
        let Some((t, id)) = marker.split_once(' ') else {
            return false;
        };
        let Ok(t) = t.parse::<u64>() else { return false };
        t > self.t || (t == self.t && id == self.id)
    }

    /// The key of an outcome beside the request.
    pub fn outcome_key(&self, outcome: Outcome) -> String {
        format!("{}.{}", self.object, outcome.suffix())
    }
}

/// What a node found when it carried a request out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Deleted (the reset is acknowledged), or already deleted by this request.
    Done,
    /// There was no such actor.
    Absent,
}

impl Outcome {
    fn suffix(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Absent => "absent",
        }
    }
}

/// An object under `deletes/`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// A request.
    Request(DeleteRequest),
    /// An outcome written beside a request (its key, and when it was written).
    Outcome {
        /// The outcome's key.
        object: String,
        /// When it was written.
        t: u64,
    },
}

/// Every request and outcome of `app` in the bucket.
///
/// # Errors
/// The bucket's error (the listing failed).
pub fn list(bucket: &dyn ObjectStore, app: &str) -> Result<Vec<Listed>, BucketError> {
    let prefix = keys::deletes_prefix(app);
    let mut out = Vec::new();
    for m in bucket.list(&prefix)? {
        let Some(rest) = m.key.strip_prefix(&prefix) else {
            continue;
        };
        let mut parts = rest.split('/');
        let (Some(class), Some(encoded), Some(last), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if last.contains('.') {
            out.push(Listed::Outcome {
                object: m.key.clone(),
                t: m.last_modified,
            });
            continue;
        }
        if last.len() != 16 || !last.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        // A shortened name's request carries the full name in its body.
        let name = match ActorKey::name_from_encoded(encoded) {
            Some(name) => name,
            None if ActorKey::is_shortened(encoded) => {
                let Some((body, _)) = bucket.get(&m.key)? else { continue };
                let Ok(name) = String::from_utf8(body) else { continue };
                if ActorKey::new(app, class, name.as_str()).encoded_name() != encoded {
                    continue;
                }
                name
            }
            None => continue,
        };
        out.push(Listed::Request(DeleteRequest {
            key: ActorKey::new(app, class, name),
            id: last.to_owned(),
            t: m.last_modified,
            object: m.key,
        }));
    }
    Ok(out)
}

/// What the bucket says of a request whose actor a node found not to exist
/// (its history's head is a reset, or it has none): seed 000 §3, step 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InBucket {
    /// The newest reset carries this request (or a later one) out: done.
    CarriedOut,
    /// No history at all, or a newest reset that carried out no such
    /// request: no such actor.
    NoSuchActor,
    /// Not settled now: the actor has a state again (its head is not a
    /// reset). The request stays for a later pass, which finds it.
    Unsettled,
}

/// Reads what the bucket says of `req`'s actor, once a node found it not to
/// exist: the newest reset's `operator_delete` mark (the removal record of
/// the request that deleted it). A node that took the actor after the reset
/// restored that reset, so its state is the reset's until it writes again.
///
/// # Errors
/// The bucket failed, or the ownership record is not one (the request stays).
pub fn in_bucket(bucket: &dyn ObjectStore, req: &DeleteRequest) -> Result<InBucket, ReplicaError> {
    let prefix = keys::history_prefix(&req.key);
    let listing = bucket.list(&prefix)?;
    let head = listing
        .iter()
        .filter_map(|m| parse_history_key(&prefix, &m.key))
        .filter(|o| o.kind != Kind::Snapshot)
        .max_by_key(|o| o.pos);
    let Some(head) = head else {
        return Ok(InBucket::NoSuchActor);
    };
    if head.kind != Kind::Reset {
        return Ok(InBucket::Unsettled);
    }
    // Listed a moment ago and gone now: erased or replaced meanwhile.
    let Some((image, _)) = bucket.get(&head.key)? else {
        return Ok(InBucket::Unsettled);
    };
    // A node that took the actor since the reset (its record at a higher
    // generation) restored this reset, so the actor's state is still the
    // reset, whether or not its fence landed: the reset's mark decides.
    // (Waiting for that node instead left the request pending for good
    // when it never wrote again: the process simulation's operator delete
    // pended past two minutes.)
    let carried_out = read_meta(&image, META_OPERATOR_DELETE).is_some_and(|m| req.carried_out_by(&m));
    Ok(if carried_out {
        InBucket::CarriedOut
    } else {
        InBucket::NoSuchActor
    })
}

/// The outcome written beside the request, if any (`done` first).
///
/// # Errors
/// The bucket failed.
pub fn outcome_of(bucket: &dyn ObjectStore, req: &DeleteRequest) -> Result<Option<Outcome>, BucketError> {
    for o in [Outcome::Done, Outcome::Absent] {
        if bucket.get(&req.outcome_key(o))?.is_some() {
            return Ok(Some(o));
        }
    }
    Ok(None)
}

/// What writing a request's outcome found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// This node wrote the outcome.
    Written(Outcome),
    /// The request had an outcome already (another node carried it out, or
    /// won the race to its outcome): that one is the request's.
    Found(Outcome),
    /// The request is gone: another node finished it (its outcome written,
    /// maybe read and removed by the command since), or it expired.
    Finished,
}

/// Writes the request's outcome beside it, once per request: a request that
/// has an outcome of either kind keeps it, and one that is gone is finished;
/// else the outcome is created (`IfAbsent`, a lost answer read back), and a
/// node that loses the race takes the winner's. An `absent` written while
/// another node wrote `done` is removed again: the request deleted the actor.
///
/// # Errors
/// The bucket failed: the outcome is not known to be written, and the
/// request stays for the next pass.
pub fn write_outcome(bucket: &dyn ObjectStore, req: &DeleteRequest, outcome: Outcome) -> Result<Settled, BucketError> {
    if let Some(o) = outcome_of(bucket, req)? {
        return Ok(Settled::Found(o));
    }
    if bucket.get(&req.object)?.is_none() {
        return Ok(Settled::Finished);
    }
    match put_read_back(bucket, &req.outcome_key(outcome), b"", &PutCondition::IfAbsent) {
        Ok(_) => {}
        Err(BucketError::PreconditionFailed(_)) => return Ok(Settled::Found(outcome)),
        Err(e) => return Err(e),
    }
    if outcome == Outcome::Absent && bucket.get(&req.outcome_key(Outcome::Done))?.is_some() {
        bucket.delete(&req.outcome_key(Outcome::Absent))?;
        return Ok(Settled::Found(Outcome::Done));
    }
    Ok(Settled::Written(outcome))
}

/// A new request id: 16 hex digits, different for every request.
pub fn new_request_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.write_u128(now.as_nanos());
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Why the command could not write a request.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The actor has no history in the bucket; nothing was written.
    #[error("no such actor: {0} has no history in the bucket")]
    NoSuchActor(ActorKey),
    /// The app was deleted (it has a tombstone); nothing was written.
    #[error("app {0} was deleted (app delete): its actors are gone with it")]
    AppDeleted(String),
    /// The bucket failed.
    #[error("the bucket failed: {0}")]
    Bucket(#[from] BucketError),
}

/// Checks that the actor exists (it has a history in the bucket) and writes
/// a new request for it, with an empty body (the full name when the key's is
/// shortened with a hash: ADR 012).
///
/// # Errors
/// [`RequestError::NoSuchActor`] (nothing written), or the bucket's error.
pub fn request_delete(bucket: &dyn ObjectStore, key: &ActorKey) -> Result<DeleteRequest, RequestError> {
    if bucket.get(&keys::tombstone(&key.app))?.is_some() {
        return Err(RequestError::AppDeleted(key.app.clone()));
    }
    if bucket.list(&keys::history_prefix(key))?.is_empty() {
        return Err(RequestError::NoSuchActor(key.clone()));
    }
    let id = new_request_id();
    let object = keys::delete_request(key, &id);
    let encoded = key.encoded_name();
    let body: &[u8] = if ActorKey::is_shortened(&encoded) {
        key.name.as_bytes()
    } else {
        b""
    };
    // The id is new, so the request's bytes there are ours: a lost answer
    // is settled by reading it back (issue 57), not reported as a failure
    // while the cluster carries the request out.
    put_read_back(bucket, &object, body, &PutCondition::IfAbsent)?;
    let t = bucket
        .list(&object)?
        .into_iter()
        .find(|m| m.key == object)
        .map_or(0, |m| m.last_modified);
    Ok(DeleteRequest {
        key: key.clone(),
        id,
        t,
        object,
    })
}

/// What waiting for a request's outcome found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    /// `.done`: deleted (the outcome is removed).
    Deleted,
    /// `.absent`: there was no such actor (the outcome is removed).
    NoSuchActor,
    /// The request is gone without an outcome: expired, or not an actor address.
    Dropped,
    /// Still there when the wait ended; the cluster keeps trying until `until` (ms).
    Pending {
        /// The request's expiry.
        until: u64,
    },
}

/// Waits up to `wait` for the request's outcome, looking every 100 ms.
///
/// # Errors
/// The bucket's error.
pub fn wait_for_outcome(bucket: &dyn ObjectStore, req: &DeleteRequest, wait: Duration) -> Result<Waited, BucketError> {
    // An outcome found is removed: the command has read it.
    let outcome = || -> Result<Option<Waited>, BucketError> {
        for (outcome, waited) in [(Outcome::Done, Waited::Deleted), (Outcome::Absent, Waited::NoSuchActor)] {
            let k = req.outcome_key(outcome);
            if bucket.get(&k)?.is_some() {
                bucket.delete(&k)?;
                return Ok(Some(waited));
            }
        }
        Ok(None)
    };
    let until = std::time::Instant::now() + wait;
    loop {
        // The outcome first: a node writes it before it deletes the request.
        if let Some(w) = outcome()? {
            return Ok(w);
        }
        if bucket.get(&req.object)?.is_none() {
            // Gone: look for an outcome once more (it may have landed in between).
            return Ok(outcome()?.unwrap_or(Waited::Dropped));
        }
        if std::time::Instant::now() >= until {
            return Ok(Waited::Pending {
                until: req.t + REQUEST_TTL_MS,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(t: u64, id: &str) -> DeleteRequest {
        DeleteRequest {
            key: ActorKey::new("a/b", "c", "n"),
            id: id.into(),
            t,
            object: String::new(),
        }
    }

    #[test]
    fn a_request_for_a_shortened_name_carries_the_full_name() {
        use crate::bucket::MemoryBucket;
        use crate::clock::VirtualClock;
        let bucket = MemoryBucket::new(std::sync::Arc::new(VirtualClock::default()));
        let long = ActorKey::new("a/b", "c", "é".repeat(500));
        let short = ActorKey::new("a/b", "c", "n");
        for key in [&long, &short] {
            bucket
                .put(
                    &format!("{}1.snapshot", keys::history_prefix(key)),
                    b"x",
                    &PutCondition::None,
                )
                .expect("history");
            request_delete(&bucket, key).expect("request");
        }
        let mut listed: Vec<ActorKey> = list(&bucket, "a/b")
            .expect("list")
            .into_iter()
            .filter_map(|l| match l {
                Listed::Request(r) => Some(r.key),
                Listed::Outcome { .. } => None,
            })
            .collect();
        listed.sort();
        let mut expected = vec![long.clone(), short.clone()];
        expected.sort();
        assert_eq!(listed, expected, "both requests name their actor in full");
    }

    #[test]
    fn a_request_whose_answer_was_lost_is_written_once() {
        use crate::bucket::{LostAnswers, MemoryBucket};
        use crate::clock::VirtualClock;
        let inner: std::sync::Arc<dyn ObjectStore> =
            std::sync::Arc::new(MemoryBucket::new(std::sync::Arc::new(VirtualClock::default())));
        let key = ActorKey::new("a/b", "c", "n");
        inner
            .put(
                &format!("{}1.snapshot", keys::history_prefix(&key)),
                b"x",
                &PutCondition::None,
            )
            .expect("history");
        let lossy = LostAnswers::new(inner.clone());
        lossy.lose("/deletes/", 1);
        let req = request_delete(&lossy, &key).expect("the request landed: the command waits for it");
        assert_eq!(lossy.lost(), 1);
        let listed = list(inner.as_ref(), "a/b").expect("list");
        assert_eq!(listed, vec![Listed::Request(req)], "one request");
    }

    /// An empty database whose host meta holds `marks`, as a reset carries.
    fn empty_with(marks: &[(&str, &str)]) -> Vec<u8> {
        let conn = rusqlite::Connection::open_in_memory().expect("db");
        conn.execute_batch("CREATE TABLE _wasmkeep_meta(key TEXT PRIMARY KEY, value TEXT)")
            .expect("meta");
        for (k, v) in marks {
            conn.execute("INSERT INTO _wasmkeep_meta VALUES (?1, ?2)", [k, v])
                .expect("mark");
        }
        conn.serialize(rusqlite::MAIN_DB).expect("image").to_vec()
    }

    /// A bucket with `key`'s history and a request for it.
    fn requested() -> (std::sync::Arc<dyn ObjectStore>, DeleteRequest, crate::replica::Replica) {
        use crate::bucket::MemoryBucket;
        use crate::clock::VirtualClock;
        use crate::replica::{Kind, Replica};
        let bucket: std::sync::Arc<dyn ObjectStore> =
            std::sync::Arc::new(MemoryBucket::new(std::sync::Arc::new(VirtualClock::default())));
        let key = ActorKey::new("a/b", "c", "n");
        let mut replica = Replica::new(bucket.clone(), std::sync::Arc::default(), key.clone(), "n1");
        replica.acquire(&|_| true).expect("acquire");
        replica
            .upload(Kind::Segment, &empty_with(&[]), &|_| true)
            .expect("a state");
        let req = request_delete(bucket.as_ref(), &key).expect("request");
        (bucket, req, replica)
    }

    #[test]
    fn an_actor_deleted_by_this_request_is_carried_out_and_by_another_delete_absent() {
        let (bucket, req, mut replica) = requested();
        assert_eq!(
            in_bucket(bucket.as_ref(), &req),
            Ok(InBucket::Unsettled),
            "it exists: its holder decides"
        );
        let marker = req.marker();
        replica
            .delete(
                &empty_with(&[("deleted", "5 operator"), (META_OPERATOR_DELETE, &marker)]),
                &|_| true,
            )
            .expect("deleted by this request");
        replica.release().expect("released");
        assert_eq!(in_bucket(bucket.as_ref(), &req), Ok(InBucket::CarriedOut));
        let other = DeleteRequest {
            id: "00000000000000ff".into(),
            t: req.t + 1,
            ..req.clone()
        };
        assert_eq!(
            in_bucket(bucket.as_ref(), &other),
            Ok(InBucket::NoSuchActor),
            "a later request found the actor deleted by another"
        );
        let none = DeleteRequest {
            key: ActorKey::new("a/b", "c", "never"),
            ..req.clone()
        };
        assert_eq!(
            in_bucket(bucket.as_ref(), &none),
            Ok(InBucket::NoSuchActor),
            "no history"
        );
    }

    /// A node that took the actor after the reset restored that reset:
    /// until it writes again, the reset's mark decides. (When the request
    /// waited for that node instead, it pended for good if the node never
    /// wrote again.)
    #[test]
    fn a_reset_a_node_took_since_is_still_the_request_s() {
        let (bucket, req, mut replica) = requested();
        let marker = req.marker();
        replica
            .delete(&empty_with(&[(META_OPERATOR_DELETE, &marker)]), &|_| true)
            .expect("deleted by this request");
        // Another node takes the ownership record above the reset; its fence
        // (what it restored, as the state) has not landed yet.
        let record = crate::replica::OwnerRecord {
            node: "n2".into(),
            generation: replica.generation().expect("held") + 1,
            released: false,
            committed: 0,
        };
        bucket
            .put(
                &keys::owner(&req.key),
                &serde_json::to_vec(&record).expect("json"),
                &PutCondition::None,
            )
            .expect("taken");
        assert_eq!(in_bucket(bucket.as_ref(), &req), Ok(InBucket::CarriedOut));
    }

    #[test]
    fn a_request_has_one_outcome() {
        let (bucket, req, _) = requested();
        assert_eq!(
            write_outcome(bucket.as_ref(), &req, Outcome::Done),
            Ok(Settled::Written(Outcome::Done))
        );
        assert_eq!(
            write_outcome(bucket.as_ref(), &req, Outcome::Absent),
            Ok(Settled::Found(Outcome::Done)),
            "the second node takes the first one's"
        );
        assert_eq!(
            write_outcome(bucket.as_ref(), &req, Outcome::Done),
            Ok(Settled::Found(Outcome::Done))
        );
        let outcomes: Vec<_> = list(bucket.as_ref(), "a/b")
            .expect("list")
            .into_iter()
            .filter(|l| matches!(l, Listed::Outcome { .. }))
            .collect();
        assert_eq!(outcomes.len(), 1, "{outcomes:?}");
        // The command read it and removed it; the request is gone: nothing more.
        bucket.delete(&req.outcome_key(Outcome::Done)).expect("read");
        bucket.delete(&req.object).expect("finished");
        assert_eq!(
            write_outcome(bucket.as_ref(), &req, Outcome::Done),
            Ok(Settled::Finished)
        );
        assert_eq!(
            list(bucket.as_ref(), "a/b").expect("list"),
            Vec::new(),
            "nothing written"
        );
    }

    #[test]
    fn a_marker_shows_this_or_a_later_request_carried_out() {
        let r = req(1000, "00000000000000aa");
        assert!(r.carried_out_by("1000 00000000000000aa"), "this very request");
        assert!(r.carried_out_by("2000 00000000000000bb"), "a later request");
        assert!(
            !r.carried_out_by("1000 00000000000000bb"),
            "another request of the same second is not this one"
        );
        assert!(!r.carried_out_by("999 00000000000000aa"), "an earlier request");
        assert!(!r.carried_out_by("garbage"), "an unreadable marker shows nothing");
    }

    #[test]
    fn request_ids_are_16_hex_digits_and_differ() {
        let a = new_request_id();
        let b = new_request_id();
        assert_eq!(a.len(), 16, "{a}");
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b, "two requests never share an id");
    }
}
