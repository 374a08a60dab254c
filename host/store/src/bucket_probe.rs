//! `wasmkeep-shim bucket check URL`: does a store refuse what the cluster's
//! protocols rely on it refusing? Three probes (ADR 027): a second
//! create-if-absent, an update with a stale ETag, an update of a key that is
//! not there. Some S3 look-alikes (s3rver, localbucket) accept all three.

use crate::bucket::{BucketError, ObjectStore, PutCondition};

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The store refused the write, as it must.
    Refused,
    /// The store accepted a write it must refuse.
    Accepted,
    /// The probe could not run to that point: the store failed.
    Failed(BucketError),
}

/// The three probes' outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReport {
    /// A create-if-absent of a key that exists.
    pub second_create: ProbeOutcome,
    /// An update-if-ETag with the ETag before the last write.
    pub stale_update: ProbeOutcome,
    /// An update-if-ETag of a key that does not exist.
    pub update_of_missing_key: ProbeOutcome,
    /// Whether the probe's objects were removed afterwards.
    pub cleaned_up: bool,
}

impl ProbeReport {
    /// Whether the store refused all three.
    pub fn passed(&self) -> bool {
        self.checks().iter().all(|(_, o)| **o == ProbeOutcome::Refused)
    }

    /// Each probe with its name, in the order they run.
    pub fn checks(&self) -> [(&'static str, &ProbeOutcome); 3] {
        [
            ("refuses a second create", &self.second_create),
            ("refuses a stale update", &self.stale_update),
            ("refuses an update of a missing key", &self.update_of_missing_key),
        ]
    }
}

impl std::fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, outcome) in self.checks() {
            match outcome {
                ProbeOutcome::Refused => writeln!(f, "ok    {name}")?,
                ProbeOutcome::Accepted => writeln!(f, "FAIL  {name}: the store accepted the write")?,
                ProbeOutcome::Failed(e) => writeln!(f, "FAIL  {name}: could not tell, the store failed: {e}")?,
            }
        }
        if !self.cleaned_up {
            writeln!(
                f,
                "note  removing what the probes wrote under wasmkeep-bucket-check/ failed"
            )?;
        }
        Ok(())
    }
}

fn outcome<T>(r: Result<T, BucketError>) -> ProbeOutcome {
    match r {
        Err(BucketError::PreconditionFailed(_)) => ProbeOutcome::Refused,
        Ok(_) => ProbeOutcome::Accepted,
        Err(e) => ProbeOutcome::Failed(e),
    }
}

/// Runs the three probes against `b` under `wasmkeep-bucket-check/<nonce>/`
/// and removes what they wrote. Every body carries the nonce and differs
/// from the one before it (a store whose ETag is the body's hash, like S3's,
/// would otherwise pass a stale ETag by accident).
pub fn probe(b: &dyn ObjectStore) -> ProbeReport {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let nonce = format!("{}-{nanos}", std::process::id());
    let key = format!("wasmkeep-bucket-check/{nonce}/object");
    let missing = format!("wasmkeep-bucket-check/{nonce}/missing");
    let body = |n: u32| format!("bucket check {nonce} write {n}").into_bytes();

    let report = match b.put(&key, &body(1), &PutCondition::IfAbsent) {
        Err(e) => ProbeReport {
            second_create: ProbeOutcome::Failed(e.clone()),
            stale_update: ProbeOutcome::Failed(e.clone()),
            update_of_missing_key: ProbeOutcome::Failed(e),
            cleaned_up: true,
        },
        Ok(first) => {
            let second_create = outcome(b.put(&key, &body(2), &PutCondition::IfAbsent));
            // A second create that was accepted moved the ETag on; read it back.
            let stale_update = match b.get(&key) {
                Err(e) => ProbeOutcome::Failed(e),
                Ok(None) => ProbeOutcome::Failed(BucketError::Unavailable(format!("{key} vanished"))),
                Ok(Some((_, current))) => match b.put(&key, &body(3), &PutCondition::IfMatch(current.clone())) {
                    Err(e) => ProbeOutcome::Failed(e),
                    Ok(_) => outcome(b.put(&key, &body(4), &PutCondition::IfMatch(current))),
                },
            };
            let update_of_missing_key = outcome(b.put(&missing, &body(5), &PutCondition::IfMatch(first)));
            ProbeReport {
                second_create,
                stale_update,
                update_of_missing_key,
                cleaned_up: false,
            }
        }
    };
    let cleaned_up = b.delete(&key).is_ok() && b.delete(&missing).is_ok();
    ProbeReport { cleaned_up, ..report }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{ETag, MemoryBucket, ObjectMeta};
    use crate::clock::VirtualClock;
    use std::sync::Arc;

    #[test]
    fn a_store_with_conditional_writes_passes_and_is_left_clean() {
        let b = MemoryBucket::new(Arc::new(VirtualClock::default()));
        let report = probe(&b);
        assert!(report.passed(), "{report}");
        assert!(report.cleaned_up);
        assert_eq!(b.list("").expect("list"), vec![], "the probe's objects are gone");
    }

    /// A store that ignores every condition (as s3rver does).
    struct IgnoresConditions(MemoryBucket);

    impl ObjectStore for IgnoresConditions {
        fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
            self.0.get(key)
        }
        fn put(&self, key: &str, body: &[u8], _: &PutCondition) -> Result<ETag, BucketError> {
            self.0.put(key, body, &PutCondition::None)
        }
        fn delete(&self, key: &str) -> Result<(), BucketError> {
            self.0.delete(key)
        }
        fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
            self.0.list(prefix)
        }
    }

    #[test]
    fn a_store_that_ignores_conditions_fails_each_probe_by_name() {
        let report = probe(&IgnoresConditions(MemoryBucket::new(Arc::new(VirtualClock::default()))));
        assert!(!report.passed());
        assert_eq!(report.second_create, ProbeOutcome::Accepted);
        assert_eq!(report.stale_update, ProbeOutcome::Accepted);
        assert_eq!(report.update_of_missing_key, ProbeOutcome::Accepted);
    }

    /// A store that only refuses creates of existing keys (an update is
    /// unconditional), as a store without If-Match would.
    struct NoIfMatch(MemoryBucket);

    impl ObjectStore for NoIfMatch {
        fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
            self.0.get(key)
        }
        fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
            let cond = match cond {
                PutCondition::IfMatch(_) => &PutCondition::None,
                c => c,
            };
            self.0.put(key, body, cond)
        }
        fn delete(&self, key: &str) -> Result<(), BucketError> {
            self.0.delete(key)
        }
        fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
            self.0.list(prefix)
        }
    }

    #[test]
    fn a_store_without_if_match_fails_only_the_update_probes() {
        let report = probe(&NoIfMatch(MemoryBucket::new(Arc::new(VirtualClock::default()))));
        assert_eq!(report.second_create, ProbeOutcome::Refused);
        assert_eq!(report.stale_update, ProbeOutcome::Accepted);
        assert_eq!(report.update_of_missing_key, ProbeOutcome::Accepted);
    }

    #[test]
    fn a_store_that_fails_is_reported_as_failed_not_as_passing() {
        let faults = Arc::new(crate::faults::Faults::default());
        faults.arm(crate::faults::FaultKind::FailUpload, 1);
        let b =
            crate::bucket::FaultyBucket::new(Arc::new(MemoryBucket::new(Arc::new(VirtualClock::default()))), faults);
        let report = probe(&b);
        assert!(!report.passed());
        assert!(matches!(
            report.second_create,
            ProbeOutcome::Failed(BucketError::Unavailable(_))
        ));
    }
}
