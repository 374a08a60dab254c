//! Each actor's last guest event and its outcome, for listings (the
//! dashboard's "last event" column): kept in the actor's mailbox state, which
//! the event's cell locks anyway, so recording it takes no lock on a map
//! shared by every actor (docs/adr/025-dashboard.md, addendum).

use crate::failure_kind::FailureKind;
use serde::{Serialize, Serializer};

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_the_page_reads_it() {
        let e = LastEvent {
            at: 5,
            kind: EventKindName::SocketOpen,
            outcome: EventOutcome::Failed(FailureKind::Guest),
        };
        assert_eq!(
            serde_json::to_value(e).expect("json"),
            serde_json::json!({"at": 5, "kind": "socket-open", "outcome": "guest"})
        );
        assert_eq!(EventOutcome::Ok.as_str(), "ok");
    }
}
