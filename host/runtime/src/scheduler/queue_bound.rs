//! How much may wait in one actor's mailbox: events from outside (requests,
//! calls, socket messages) are refused once 256 wait or their bodies add up
//! to 32 MiB, so that a hot actor's queue cannot take the host's memory
//! (ADR 012). The host's own jobs (alarms, closes, hibernation, deletes) are
//! never refused: they are few and must not be lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Events from outside that may wait in one mailbox.
pub(crate) const MAILBOX_EVENTS: usize = 256;
/// Bytes of their bodies that may wait (one event is let in whatever its size
/// when nothing waits: a body is bounded by the server's own limit).
pub(crate) const MAILBOX_BYTES: usize = 32 << 20;

/// One mailbox's count of waiting events and their bytes.
#[derive(Debug, Default)]
pub(crate) struct QueueBound {
    events: AtomicUsize,
    bytes: AtomicUsize,
}

/// An event's place in its mailbox's bound, given back when it is dropped
/// (it ran, was answered, or was skipped).
#[derive(Debug)]
pub(crate) struct QueuedShare {
    bound: Arc<QueueBound>,
    bytes: usize,
    /// How many other events from outside waited or ran when it came.
    behind: usize,
}

impl QueuedShare {
    /// How many other events from outside waited in the mailbox or ran
    /// when this one was admitted.
    pub(crate) fn behind(&self) -> usize {
        self.behind
    }
}

impl Drop for QueuedShare {
    fn drop(&mut self) {
        self.bound.events.fetch_sub(1, Ordering::AcqRel);
        self.bound.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl QueueBound {
    /// A place for an event of `bytes`, or `None` when the mailbox is full.
    pub(crate) fn admit(self: &Arc<Self>, bytes: usize) -> Option<QueuedShare> {
        let events = self.events.fetch_add(1, Ordering::AcqRel);
        let before = self.bytes.fetch_add(bytes, Ordering::AcqRel);
        let share = QueuedShare {
            bound: self.clone(),
            bytes,
            behind: events,
        };
        let full = events >= MAILBOX_EVENTS || (events > 0 && before + bytes > MAILBOX_BYTES);
        if full {
            drop(share);
            None
        } else {
            Some(share)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mailbox_admits_up_to_its_count_and_bytes_and_frees_on_drop() {
        let bound = Arc::new(QueueBound::default());
        let shares: Vec<_> = (0..MAILBOX_EVENTS).map(|_| bound.admit(1).expect("room")).collect();
        assert!(bound.admit(1).is_none(), "the 257th waits no more");
        drop(shares);
        let big = bound
            .admit(MAILBOX_BYTES * 2)
            .expect("one event is let in whatever its size");
        assert!(bound.admit(1).is_none(), "nothing more while its bytes are over");
        drop(big);
        let alone = bound.admit(1).expect("room again once it is dropped");
        assert_eq!(alone.behind(), 0, "nothing else waits");
        assert_eq!(bound.admit(1).expect("room").behind(), 1, "one waits before it");
    }
}
