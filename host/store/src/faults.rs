//! Fault injection: make the host fail on purpose, so guests can be tested
//! against the outcomes ADR 0028 promises for failures.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// A kind of fault the host can be told to inject.
///
/// Each kind has a counter: "fail the next N". The cluster mode adds upload
/// faults here; every surface (library, admin API, harnesses) sets them by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The next attempts to remove an actor's files fail before anything is
    /// removed, as if the file system answered EIO.
    FailRemoval,
    /// Cluster: the next uploads to the bucket fail and do not land.
    FailUpload,
    /// Cluster: the next uploads land but report failure, and the read of
    /// each that follows fails too (the ambiguous case, which reading back
    /// cannot settle: ADR 066).
    UploadLandsButFails,
    /// Cluster: the next erases (deletes of history objects) fail.
    FailErase,
    /// Cluster: the next time an actor's hold is checked, another node has
    /// taken it (the hold is lost in the middle of an event).
    LoseHold,
    /// Cluster: the node answering the next request is cut off right after it
    /// answered (it stops; its holds are no longer valid).
    CutOffAfterAnswer,
    /// Any node count: the next request's event stops the moment its answer
    /// has gone out, as if the host's process crashed there. The guest runs
    /// no further (the end of its event, where its writes are kept, never
    /// comes): a transaction it had open is rolled back and the actor starts
    /// again from what was kept (on one node, what it committed; in a
    /// cluster, what the bucket holds).
    CrashAfterAnswer,
}

impl FaultKind {
    /// Every kind, in a stable order.
    pub const ALL: [FaultKind; 7] = [
        FaultKind::FailRemoval,
        FaultKind::FailUpload,
        FaultKind::UploadLandsButFails,
        FaultKind::FailErase,
        FaultKind::LoseHold,
        FaultKind::CutOffAfterAnswer,
        FaultKind::CrashAfterAnswer,
    ];

    /// The name used by the admin API and the harnesses.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::FailRemoval => "fail-removal",
            FaultKind::FailUpload => "fail-upload",
            FaultKind::UploadLandsButFails => "upload-lands-but-fails",
            FaultKind::FailErase => "fail-erase",
            FaultKind::LoseHold => "lose-hold",
            FaultKind::CutOffAfterAnswer => "cut-off-after-answer",
            FaultKind::CrashAfterAnswer => "crash-after-answer",
        }
    }

    /// Parses a name given by [`FaultKind::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The faults still to be injected.
#[derive(Debug, Default)]
pub struct Faults {
    pending: Mutex<Vec<(FaultKind, u32)>>,
    /// Whether anything is armed: `take` is asked on every request, every
    /// upload and every removal, and almost always nothing is, so it answers
    /// without the lock then.
    any_armed: AtomicBool,
}

impl Faults {
    /// Arms `kind` for the next `count` occurrences (replacing what was armed).
    pub fn arm(&self, kind: FaultKind, count: u32) {
        let mut p = self.lock();
        p.retain(|(k, _)| *k != kind);
        if count > 0 {
            p.push((kind, count));
        }
        self.any_armed.store(!p.is_empty(), Ordering::Release);
    }

    /// Disarms every fault.
    pub fn clear(&self) {
        let mut p = self.lock();
        p.clear();
        self.any_armed.store(false, Ordering::Release);
    }

    /// How many occurrences of `kind` are still armed.
    pub fn remaining(&self, kind: FaultKind) -> u32 {
        self.lock().iter().find(|(k, _)| *k == kind).map_or(0, |(_, n)| *n)
    }

    /// Every armed fault and its count.
    pub fn snapshot(&self) -> Vec<(FaultKind, u32)> {
        self.lock().clone()
    }

    /// Consumes one occurrence of `kind`: true if the caller must fail now.
    pub fn take(&self, kind: FaultKind) -> bool {
        if !self.any_armed.load(Ordering::Acquire) {
            return false;
        }
        let mut p = self.lock();
        let Some(pos) = p.iter().position(|(k, _)| *k == kind) else {
            return false;
        };
        p[pos].1 -= 1;
        if p[pos].1 == 0 {
            p.remove(pos);
            self.any_armed.store(!p.is_empty(), Ordering::Release);
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(FaultKind, u32)>> {
        // A panic while holding this lock cannot leave the list inconsistent.
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_armed_fault_fires_exactly_n_times() {
        let f = Faults::default();
        f.arm(FaultKind::FailRemoval, 2);
        assert!(f.take(FaultKind::FailRemoval), "first armed occurrence fails");
        assert!(f.take(FaultKind::FailRemoval), "second armed occurrence fails");
        assert!(
            !f.take(FaultKind::FailRemoval),
            "a fault armed for 2 does not fire a third time"
        );
    }

    #[test]
    fn names_round_trip() {
        for k in FaultKind::ALL {
            assert_eq!(FaultKind::from_name(k.name()), Some(k), "every fault name parses back");
        }
    }
}
