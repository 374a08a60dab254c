//! Each actor's last guest event and its outcome, for listings (the
//! dashboard's "last event" column): kept in the actor's mailbox state, which
//! the event's cell locks anyway, so recording it takes no lock on a map
//! shared by every actor (docs/adr/025-dashboard.md, addendum).

use crate::failure_kind::FailureKind;
use serde::{Serialize, Serializer};
use std::sync::atomic::{AtomicU64, Ordering};

/// The order of last events in this process, across every node of it.
static ORDER: AtomicU64 = AtomicU64::new(0);

/// What kind of guest event it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKindName {
    /// An HTTP request.
    Request,
    /// A call from another actor (or from the host's API).
    Call,
    /// Its alarm (run by the alarm timer, `run_due_alarms` or the dashboard).
    Alarm,
    /// A WebSocket opened.
    SocketOpen,
    /// A WebSocket message.
    SocketMessage,
    /// A WebSocket closed.
    SocketClose,
}

/// How a guest event ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventOutcome {
    /// It ran and its writes are kept.
    Ok,
    /// It failed, of this kind (the guest trapped: `guest`; an upload was
    /// not acknowledged: `not-acknowledged`; ...).
    Failed(FailureKind),
}

impl EventOutcome {
    /// `ok`, or the failure's kind as answers name it.
    pub fn as_str(&self) -> &'static str {
        match self {
            EventOutcome::Ok => "ok",
            EventOutcome::Failed(kind) => kind.as_str(),
        }
    }
}

impl Serialize for EventOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// An actor's last guest event on this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LastEvent {
    /// When it ended, on the host's clock (ms; virtual under a virtual clock).
    pub at: u64,
    /// What it was.
    pub kind: EventKindName,
    /// How it ended.
    pub outcome: EventOutcome,
    /// Its place in the order of every node's events in this process: of two
    /// records with the same `at` (a virtual clock that did not move), the
    /// greater is the newer.
    #[serde(skip)]
    pub order: u64,
}

impl LastEvent {
    /// A record of an event of `kind` that ended at `at` with `outcome`, next in the order.
    pub(crate) fn new(at: u64, kind: EventKindName, outcome: EventOutcome) -> Self {
        Self {
            at,
            kind,
            outcome,
            order: ORDER.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether this record is newer than `other` (nodes of one process).
    pub fn is_newer_than(&self, other: &LastEvent) -> bool {
        (self.at, self.order) > (other.at, other.order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_the_page_reads_it() {
        let e = LastEvent::new(5, EventKindName::SocketOpen, EventOutcome::Failed(FailureKind::Guest));
        assert_eq!(
            serde_json::to_value(e).expect("json"),
            serde_json::json!({"at": 5, "kind": "socket-open", "outcome": "guest"})
        );
        assert_eq!(EventOutcome::Ok.as_str(), "ok");
    }

    #[test]
    fn of_two_records_at_the_same_time_the_later_one_is_newer() {
        let a = LastEvent::new(5, EventKindName::Request, EventOutcome::Ok);
        let b = LastEvent::new(5, EventKindName::Call, EventOutcome::Ok);
        assert!(b.is_newer_than(&a) && !a.is_newer_than(&b));
        let c = LastEvent::new(4, EventKindName::Call, EventOutcome::Ok);
        assert!(a.is_newer_than(&c), "the clock decides first");
    }
}
