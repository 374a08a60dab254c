//! Whether one actor's requests overlap: a request came while another of
//! its events from outside waited in its mailbox or ran. Under overlapping
//! requests (many connections to one actor) a quick read runs on the thread
//! that received it, which saves a hand-off to a third busy thread; one
//! request at a time keeps going to the worker's thread, whose caches stay
//! warm and whose short look for the next job catches it (ADR 048's
//! addenda, ADR 059).

use std::sync::atomic::{AtomicU32, Ordering};

/// For how many requests after the last one that came behind another the
/// actor's requests still count as overlapping. With many connections to
/// one actor, a request comes behind another every few requests, even
/// while reads run on the receiving threads (each of the server's threads
/// runs one at a time). A single client's requests do not overlap, so one
/// stray overlap (a worker descheduled between its answer and the end of
/// its event) moves at most this many requests. Counted in requests, not
/// time, so that it means the same in a test build as in a release one.
pub(crate) const OVERLAP_HOLDS_FOR: u32 = 32;

/// One mailbox's count of requests admitted since the last that came
/// behind another.
#[derive(Debug)]
pub(crate) struct RequestOverlap {
    since_last: AtomicU32,
}

impl Default for RequestOverlap {
    /// No request yet: not overlapping.
    fn default() -> Self {
        Self {
            since_last: AtomicU32::new(OVERLAP_HOLDS_FOR),
        }
    }
}

impl RequestOverlap {
    /// A request was admitted while `behind` other events from outside
    /// waited in the mailbox or ran.
    pub(crate) fn admitted(&self, behind: usize) {
        if behind > 0 {
            self.since_last.store(0, Ordering::Relaxed);
        } else if self.since_last.load(Ordering::Relaxed) < OVERLAP_HOLDS_FOR {
            // Two threads may both count one request: it only ends the
            // overlap a request early.
            self.since_last.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether one of the last [`OVERLAP_HOLDS_FOR`] requests came behind
    /// another.
    pub(crate) fn recent(&self) -> bool {
        self.since_last.load(Ordering::Relaxed) < OVERLAP_HOLDS_FOR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_one_at_a_time_do_not_overlap_and_one_behind_another_does_for_a_while() {
        let overlap = RequestOverlap::default();
        assert!(!overlap.recent(), "no request yet");
        overlap.admitted(0);
        assert!(!overlap.recent(), "nothing waited: no overlap");
        overlap.admitted(1);
        assert!(overlap.recent(), "one waited: overlap");
        for _ in 1..OVERLAP_HOLDS_FOR {
            overlap.admitted(0);
        }
        assert!(overlap.recent(), "it holds for {OVERLAP_HOLDS_FOR} requests");
        overlap.admitted(0);
        assert!(!overlap.recent(), "and no longer");
    }
}
